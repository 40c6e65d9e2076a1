"""Realistic Pod objects for the benchmarks, and their wire encodings.

A Pod here is shaped like what a kubelet-managed cluster serves for a replica of a small
Deployment: four labels and an annotation, an owner reference, two ``managedFields`` entries
(controller-manager and kubelet), two containers with resources, a port and a mount,
and a status with four conditions and two container statuses. Encoded it is about 2.5 KB of
JSON (2,482 bytes on average as a list item), typical of a Pod in a real cluster's list;
decoded, 33 containers the cyclic garbage collector tracks.

Every Pod is a pure function of its index, resource version and revision, so the server and
the clients agree on the data without sharing state. :func:`make_pod` builds the dict;
:class:`PodEncoder` produces the very same JSON (byte for byte) about 20 times faster, from a
template, which is what the benchmark server uses to encode 100,000 Pods in a second or two.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

__all__ = [
    "NAMESPACE",
    "PodEncoder",
    "list_body",
    "make_pod",
    "watch_line",
]

#: The namespace of every generated Pod.
NAMESPACE = "bench"

_TIERS = ("frontend", "backend", "cache")


def _values(i: int, resource_version: int, revision: int) -> dict[str, str]:
    """The strings that vary between Pods (plain ASCII: never escaped in JSON)."""
    digest = hashlib.blake2b(b"pod-%d" % i, digest_size=64).hexdigest()
    app = f"web-{i % 40}"
    template_hash = digest[:10]
    name = f"{app}-{template_hash[:5]}-{i:06d}"
    return {
        "name": name,
        "generate_name": f"{app}-{template_hash[:5]}-",
        "uid": f"{digest[10:18]}-{digest[18:22]}-{digest[22:26]}-{digest[26:30]}-{digest[30:42]}",
        "rv": str(resource_version),
        "app": app,
        "hash": template_hash,
        "tier": _TIERS[i % 3],
        "revision": str(revision),
        "checksum": digest[42:58] if revision == 0 else f"{revision:016x}",
        "owner": f"{app}-{template_hash[:5]}",
        "owner_uid": f"{digest[58:66]}-{digest[66:70]}-{digest[70:74]}-{digest[74:78]}-"
        f"{digest[78:90]}",
        "minute": f"{int(digest[90:92], 16) % 60:02d}",
        "cpu": f"{50 + int(digest[92:94], 16) % 200}m",
        "tag": f"1.{int(digest[94:96], 16) % 90}",
        "node": f"node-{int(digest[96:98], 16) % 200:03d}",
        "host_ip": f"192.168.{int(digest[98:100], 16)}.{int(digest[100:102], 16)}",
        "pod_ip": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}",
        "cid_app": digest[102:118],
        "cid_proxy": digest[112:128],
    }


def _build(v: dict[str, str], namespace: str) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": v["name"],
            "generateName": v["generate_name"],
            "namespace": namespace,
            "uid": v["uid"],
            "resourceVersion": v["rv"],
            "creationTimestamp": "2026-11-01T10:00:00Z",
            "labels": {
                "app": v["app"],
                "pod-template-hash": v["hash"],
                "tier": v["tier"],
                "revision": v["revision"],
            },
            "annotations": {"example.com/checksum": v["checksum"]},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": v["owner"],
                    "uid": v["owner_uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": f"2026-11-01T10:{v['minute']}:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {
                            "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                            "f:ownerReferences": {".": {}},
                        },
                        "f:spec": {"f:containers": {'k:{"name":"app"}': {".": {}}}},
                    },
                },
                {
                    "manager": "kubelet",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": f"2026-11-01T10:{v['minute']}:07Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:status": {"f:conditions": {".": {}}, "f:podIP": {}}},
                    "subresource": "status",
                },
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": f"registry.example.com/{v['app']}:{v['tag']}",
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    "resources": {
                        "limits": {"cpu": "500m", "memory": "256Mi"},
                        "requests": {"cpu": v["cpu"], "memory": "128Mi"},
                    },
                    "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets"}],
                    "imagePullPolicy": "IfNotPresent",
                },
                {
                    "name": "proxy",
                    "image": "registry.example.com/proxy:2.3",
                    "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}},
                },
            ],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420}}],
            "nodeName": v["node"],
            "restartPolicy": "Always",
            "serviceAccountName": "default",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": kind, "status": "True", "lastTransitionTime": "2026-11-01T10:00:05Z"}
                for kind in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": v["host_ip"],
            "podIP": v["pod_ip"],
            "containerStatuses": [
                {
                    "name": "app",
                    "ready": True,
                    "restartCount": 0,
                    "image": f"registry.example.com/{v['app']}:{v['tag']}",
                    "imageID": f"sha256:{v['cid_app']}",
                    "state": {"running": {"startedAt": "2026-11-01T10:00:04Z"}},
                },
                {
                    "name": "proxy",
                    "ready": True,
                    "restartCount": 0,
                    "image": "registry.example.com/proxy:2.3",
                    "imageID": f"sha256:{v['cid_proxy']}",
                    "state": {"running": {"startedAt": "2026-11-01T10:00:04Z"}},
                },
            ],
            "qosClass": "Burstable",
        },
    }


def make_pod(
    i: int, *, resource_version: int | None = None, revision: int = 0, namespace: str = NAMESPACE
) -> dict[str, Any]:
    """Pod number ``i`` as a watch event carries it (with ``kind`` and ``apiVersion``).

    :param resource_version: its ``metadata.resourceVersion`` (default ``i + 2``).
    :param revision: changes a label and the checksum annotation, for MODIFIED events.
    """
    rv = i + 2 if resource_version is None else resource_version
    return _build(_values(i, rv, revision), namespace)


class PodEncoder:
    """Encodes Pods fast: the JSON of :func:`make_pod` from a template, byte for byte.

    :param list_item: encode as an item of a ``PodList`` (without ``kind`` and ``apiVersion``,
        as API servers send list items) instead of as a watch event's object.
    """

    def __init__(self, *, list_item: bool = False, namespace: str = NAMESPACE) -> None:
        keys = list(_values(0, 0, 0))
        markers = {key: f"\x01{n}\x01" for n, key in enumerate(keys)}
        template = _build(markers, namespace)
        if list_item:
            del template["kind"], template["apiVersion"]
        encoded = orjson.dumps(template)
        # orjson escapes the marker bytes as \u0001; split the template at them.
        parts = encoded.split(b"\\u0001")
        self._literals = parts[0::2]
        self._order = [keys[int(index)] for index in parts[1::2]]

    def encode(self, i: int, *, resource_version: int | None = None, revision: int = 0) -> bytes:
        """The JSON of ``make_pod(i, resource_version=..., revision=...)`` (list item or not)."""
        rv = i + 2 if resource_version is None else resource_version
        values = _values(i, rv, revision)
        literals = self._literals
        out = [literals[0]]
        for n, key in enumerate(self._order, start=1):
            out.append(values[key].encode())
            out.append(literals[n])
        return b"".join(out)


def watch_line(event_type: str, encoded_object: bytes) -> bytes:
    """One line of a watch stream around an encoded object, newline included."""
    return b'{"type":"' + event_type.encode() + b'","object":' + encoded_object + b"}\n"


def list_body(
    items: list[bytes],
    resource_version: int,
    *,
    continue_token: str | None = None,
    remaining: int | None = None,
) -> bytes:
    """A ``PodList`` response body around already encoded items."""
    metadata: dict[str, Any] = {"resourceVersion": str(resource_version)}
    if continue_token:
        metadata["continue"] = continue_token
        if remaining is not None:
            metadata["remainingItemCount"] = remaining
    head = b'{"kind":"PodList","apiVersion":"v1","metadata":' + orjson.dumps(metadata)
    return head + b',"items":[' + b",".join(items) + b"]}"
