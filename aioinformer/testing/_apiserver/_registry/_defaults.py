"""The defaults the API server fills into built-in objects when it decodes them.

Ports of the behaviour of kubernetes ``pkg/apis/{core,apps,batch,autoscaling}/v1*/defaults.go``
(with their generated ``SetObjectDefaults_*`` walks over pod templates) and of the v1
conversions that change what is stored (a Secret's ``stringData`` moves into ``data``).
:func:`apply_defaults` works in place and is idempotent; the real server runs it on every
decode, of a request body and of a stored object alike.

Pod specs are in :mod:`._defaults_pod`; what the server itself sets on create (status,
generation, a Job's selector, a Service's cluster IP) is in :mod:`._strategy`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from ._defaults_groups import GROUP_DEFAULTERS
from ._defaults_pod import child_dict as _dict
from ._defaults_pod import default_pod, default_pod_spec, default_resource_list

__all__ = ["apply_defaults"]


def _template(spec: dict[str, Any]) -> None:
    template = spec.get("template")
    if isinstance(template, dict):
        default_pod_spec(template.get("spec") if isinstance(template.get("spec"), dict) else None)


def _setdefault(obj: dict[str, Any], key: str, value: Any) -> None:
    if obj.get(key) is None:
        obj[key] = value


def _deployment(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    _setdefault(spec, "replicas", 1)
    strategy = _dict(spec, "strategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = _dict(strategy, "rollingUpdate")
        _setdefault(rolling, "maxUnavailable", "25%")
        _setdefault(rolling, "maxSurge", "25%")
    _setdefault(spec, "revisionHistoryLimit", 10)
    _setdefault(spec, "progressDeadlineSeconds", 600)
    _template(spec)


def _daemon_set(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    strategy = _dict(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = _dict(strategy, "rollingUpdate")
        _setdefault(rolling, "maxUnavailable", 1)
        _setdefault(rolling, "maxSurge", 0)
    _setdefault(spec, "revisionHistoryLimit", 10)
    _template(spec)


def _stateful_set(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = _dict(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        _dict(strategy, "rollingUpdate")
    rolling = strategy.get("rollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
        _setdefault(rolling, "partition", 0)
    retention = _dict(spec, "persistentVolumeClaimRetentionPolicy")
    for key in ("whenDeleted", "whenScaled"):
        if not retention.get(key):
            retention[key] = "Retain"
    _setdefault(spec, "replicas", 1)
    _setdefault(spec, "revisionHistoryLimit", 10)
    for claim in spec.get("volumeClaimTemplates") or []:
        if isinstance(claim, dict):
            # the apps/v1 encoding gives each claim template its type
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
            _persistent_volume_claim(claim)
    _template(spec)


def _replica_set(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    _setdefault(spec, "replicas", 1)
    _template(spec)


def _replication_controller(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    template = spec.get("template")
    labels = template.get("metadata", {}).get("labels") if isinstance(template, dict) else None
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = _dict(obj, "metadata")
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    _setdefault(spec, "replicas", 1)
    _template(spec)


def _failure_policy(spec: dict[str, Any]) -> None:
    failure_policy = spec.get("podFailurePolicy")
    if isinstance(failure_policy, dict):
        for rule in failure_policy.get("rules") or []:
            for pattern in (rule or {}).get("onPodConditions") or []:
                if isinstance(pattern, dict) and not pattern.get("status"):
                    pattern["status"] = "True"


def _job_spec(spec: dict[str, Any], labels_into: dict[str, Any]) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    _setdefault(spec, "parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    template = spec.get("template")
    labels = template.get("metadata", {}).get("labels") if isinstance(template, dict) else None
    if labels and not labels_into.get("labels"):
        labels_into["labels"] = dict(labels)
    _setdefault(spec, "completionMode", "NonIndexed")
    _setdefault(spec, "suspend", False)
    _failure_policy(spec)
    if spec.get("podReplacementPolicy") is None:
        failure_policy = spec.get("podFailurePolicy")
        spec["podReplacementPolicy"] = "Failed" if failure_policy else "TerminatingOrFailed"
    _setdefault(spec, "manualSelector", False)
    _template(spec)


def _job(obj: dict[str, Any]) -> None:
    _job_spec(_dict(obj, "spec"), _dict(obj, "metadata"))


def _cron_job(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    _setdefault(spec, "suspend", False)
    _setdefault(spec, "successfulJobsHistoryLimit", 3)
    _setdefault(spec, "failedJobsHistoryLimit", 1)
    # SetDefaults_Job takes a Job: a job template only gets its pod spec's defaults
    job_spec = _dict(_dict(spec, "jobTemplate"), "spec")
    _failure_policy(job_spec)
    _template(job_spec)


def _service(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client_ip, dict) or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    for port in spec.get("ports") or []:
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    kind = spec["type"]
    accessible = kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )
    if accessible and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and kind in (
        "NodePort",
        "LoadBalancer",
        "ClusterIP",
    ):
        spec["internalTrafficPolicy"] = "Cluster"
    if kind == "LoadBalancer":
        _setdefault(spec, "allocateLoadBalancerNodePorts", True)
        load_balancer = _dict(_dict(obj, "status"), "loadBalancer")
        for ingress in load_balancer.get("ingress") or []:
            if isinstance(ingress, dict) and ingress.get("ip") and ingress.get("ipMode") is None:
                ingress["ipMode"] = "VIP"


def _secret(obj: dict[str, Any]) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = _dict(obj, "data")
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


def _namespace(obj: dict[str, Any]) -> None:
    meta = _dict(obj, "metadata")
    name = meta.get("name")
    if name:
        _dict(meta, "labels")["kubernetes.io/metadata.name"] = name
    status = _dict(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Active"


def _pvc(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    _setdefault(spec, "volumeMode", "Filesystem")
    resources = spec.get("resources")
    if isinstance(resources, dict):
        default_resource_list(resources.get("limits"))
        default_resource_list(resources.get("requests"))


def _persistent_volume_claim(obj: dict[str, Any]) -> None:
    _pvc(obj)
    status = _dict(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


def _persistent_volume(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    _setdefault(spec, "volumeMode", "Filesystem")
    default_resource_list(spec.get("capacity"))
    status = _dict(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


def _endpoints(obj: dict[str, Any]) -> None:
    for subset in obj.get("subsets") or []:
        for port in (subset or {}).get("ports") or []:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


def _pod_template(obj: dict[str, Any]) -> None:
    template = obj.get("template")
    if isinstance(template, dict):
        default_pod_spec(template.get("spec"))


def _hpa_v2(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    _setdefault(spec, "minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _scaling_rules(behavior.get("scaleUp"), up=True)
        behavior["scaleDown"] = _scaling_rules(behavior.get("scaleDown"), up=False)


def _scaling_rules(given: Any, *, up: bool) -> dict[str, Any]:
    """``GenerateHPAScaleUpRules``/``GenerateHPAScaleDownRules``: fill what is unset."""
    rules: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    if up:
        policies = [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15},
        ]
    else:
        policies = [{"type": "Percent", "value": 100, "periodSeconds": 15}]
    _setdefault(rules, "stabilizationWindowSeconds", 0 if up else 300)
    _setdefault(rules, "selectPolicy", "Max")
    if not rules.get("policies"):
        rules["policies"] = policies
    return rules


def _hpa_v1(obj: dict[str, Any]) -> None:
    _setdefault(_dict(obj, "spec"), "minReplicas", 1)


_DEFAULTERS: dict[tuple[str, str, str], Callable[[dict[str, Any]], None]] = {
    ("", "v1", "Pod"): default_pod,
    ("", "v1", "PodTemplate"): _pod_template,
    ("", "v1", "ReplicationController"): _replication_controller,
    ("", "v1", "Service"): _service,
    ("", "v1", "Secret"): _secret,
    ("", "v1", "Namespace"): _namespace,
    ("", "v1", "PersistentVolumeClaim"): _persistent_volume_claim,
    ("", "v1", "PersistentVolume"): _persistent_volume,
    ("", "v1", "Endpoints"): _endpoints,
    ("apps", "v1", "Deployment"): _deployment,
    ("apps", "v1", "DaemonSet"): _daemon_set,
    ("apps", "v1", "StatefulSet"): _stateful_set,
    ("apps", "v1", "ReplicaSet"): _replica_set,
    ("batch", "v1", "Job"): _job,
    ("batch", "v1", "CronJob"): _cron_job,
    ("autoscaling", "v2", "HorizontalPodAutoscaler"): _hpa_v2,
    ("autoscaling", "v1", "HorizontalPodAutoscaler"): _hpa_v1,
    **GROUP_DEFAULTERS,
}


def apply_defaults(group: str, version: str, kind: str, obj: Any) -> None:
    """Fill in the defaults of one built-in object, in place (other kinds are left alone)."""
    defaulter = _DEFAULTERS.get((group, version, kind))
    if defaulter is not None and isinstance(obj, dict):
        defaulter(obj)
