"""Realistic Pod objects for benchmarks (about 9 KB of JSON each, managedFields included)."""

from __future__ import annotations

import random
from typing import Any


def make_pod(i: int, *, namespace: str = "bench", node_count: int = 50) -> dict[str, Any]:
    """A Pod shaped like what a kubelet-managed cluster serves (two containers, probes, status)."""
    rng = random.Random(i)
    name = f"web-{i:06d}"
    containers = []
    for c in range(2):
        containers.append(
            {
                "name": f"c{c}",
                "image": f"registry.example.com/team/app-{c}:1.{rng.randrange(100)}.{c}",
                "ports": [{"containerPort": 8080 + c, "protocol": "TCP", "name": f"http-{c}"}],
                "env": [
                    {"name": f"ENV_{k}", "value": f"value-{rng.randrange(10**6)}"} for k in range(8)
                ],
                "resources": {
                    "limits": {"cpu": "500m", "memory": "512Mi"},
                    "requests": {"cpu": "100m", "memory": "128Mi"},
                },
                "volumeMounts": [
                    {"name": "config", "mountPath": "/etc/app", "readOnly": True},
                    {"name": "kube-api-access", "mountPath": "/var/run/secrets", "readOnly": True},
                ],
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": 8080 + c, "scheme": "HTTP"},
                    "initialDelaySeconds": 10,
                    "periodSeconds": 10,
                    "timeoutSeconds": 1,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                "readinessProbe": {
                    "httpGet": {"path": "/readyz", "port": 8080 + c, "scheme": "HTTP"},
                    "periodSeconds": 5,
                    "timeoutSeconds": 1,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }
        )
    managed = [
        {
            "manager": manager,
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2026-11-01T10:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                f"f:{section}": {f"f:field{k}": {} for k in range(20)}
                for section in ("metadata", "spec", "status")
            },
        }
        for manager in ("kube-controller-manager", "kubelet")
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": f"web-{i % 20}", "tier": "frontend", "release": "stable"},
            "annotations": {"example.com/checksum": f"{rng.getrandbits(128):032x}"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"web-{i % 20}-abcde",
                    "uid": f"{rng.getrandbits(128):032x}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": managed,
        },
        "spec": {
            "containers": containers,
            "volumes": [
                {"name": "config", "configMap": {"name": "app-config", "defaultMode": 420}},
                {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": []}},
            ],
            "nodeName": f"node-{i % node_count:03d}",
            "restartPolicy": "Always",
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
        },
        "status": {
            "phase": "Running",
            "hostIP": f"10.0.{i % 250}.{i % 200}",
            "podIP": f"10.244.{i % 250}.{i % 240}",
            "startTime": "2026-11-01T10:00:00Z",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-11-01T10:00:05Z"}
                for t in (
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                    "PodReadyToStartContainers",
                )
            ],
            "containerStatuses": [
                {
                    "name": f"c{c}",
                    "ready": True,
                    "restartCount": 0,
                    "image": f"registry.example.com/team/app-{c}:1.0.{c}",
                    "imageID": f"registry.example.com/app-{c}@sha256:{rng.getrandbits(256):064x}",
                    "containerID": f"containerd://{rng.getrandbits(256):064x}",
                    "started": True,
                    "state": {"running": {"startedAt": "2026-11-01T10:00:03Z"}},
                }
                for c in range(2)
            ],
            "qosClass": "Burstable",
        },
    }
