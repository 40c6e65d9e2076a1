"""Defaults of pod specs (Pods and every pod template), and what admission adds to a Pod.

Ports of the behaviour of kubernetes ``pkg/apis/core/v1/defaults.go`` and its generated
``SetObjectDefaults_*`` walk (``SetDefaults_PodSpec``, ``SetDefaults_Pod``,
``SetDefaults_Container``, ``SetDefaults_Probe``, ``SetDefaults_HTTPGetAction``,
``SetDefaults_Volume`` and the volume sources, ``SetDefaults_ObjectFieldSelector``,
``SetDefaults_ResourceList``, the ``+default`` markers such as ``protocol: TCP``), of the
v1 conversion that mirrors ``serviceAccountName`` into ``serviceAccount``, of the default
admission plugins that change Pods (ServiceAccount's name, Priority, DefaultTolerationSeconds),
and of ``qos.GetPodQOS``. Everything works in place on decoded JSON.
"""

from __future__ import annotations

from typing import Any

from .._schema._quantity import quantity_value, rounded_text

__all__ = [
    "admit_pod",
    "child_dict",
    "default_pod",
    "default_pod_spec",
    "default_resource_list",
    "pod_qos",
]

_LATEST_POLICY = "Always"


def child_dict(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """``parent[key]``, made an empty object first when it is not one."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = {}
        parent[key] = value
    return value


_dict = child_dict


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _image_tag(image: str) -> str:
    """The tag of an image reference (``parsers.ParseImageName``), ``latest`` when none."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if "@" in image else "latest"


def default_resource_list(resources: Any) -> None:
    """``SetDefaults_ResourceList``: quantities rounded up to milli-units, canonical."""
    if not isinstance(resources, dict):
        return
    for name, text in resources.items():
        resources[name] = rounded_text(str(text))


def _probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    for key, default in (
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ):
        if not probe.get(key):
            probe[key] = default
    _handler(probe)


def _handler(handler: dict[str, Any]) -> None:
    http = handler.get("httpGet")
    if isinstance(http, dict):
        if not http.get("path"):
            http["path"] = "/"
        if not http.get("scheme"):
            http["scheme"] = "HTTP"
    grpc = handler.get("grpc")
    if isinstance(grpc, dict) and grpc.get("service") is None:
        grpc["service"] = ""


def _container(container: dict[str, Any]) -> None:
    if not container.get("imagePullPolicy"):
        tag = _image_tag(str(container.get("image") or ""))
        container["imagePullPolicy"] = _LATEST_POLICY if tag == "latest" else "IfNotPresent"
    if not container.get("terminationMessagePath"):
        container["terminationMessagePath"] = "/dev/termination-log"
    if not container.get("terminationMessagePolicy"):
        container["terminationMessagePolicy"] = "File"
    for port in _dicts(container.get("ports")):
        if not port.get("protocol"):
            port["protocol"] = "TCP"
    for var in _dicts(container.get("env")):
        source = var.get("valueFrom")
        if isinstance(source, dict) and isinstance(source.get("fieldRef"), dict):
            field_ref = source["fieldRef"]
            if not field_ref.get("apiVersion"):
                field_ref["apiVersion"] = "v1"
    resources = _dict(container, "resources")
    default_resource_list(resources.get("limits"))
    default_resource_list(resources.get("requests"))
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(container.get(probe))
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in ("postStart", "preStop"):
            if isinstance(lifecycle.get(hook), dict):
                _handler(lifecycle[hook])


def _downward_items(items: Any) -> None:
    for item in _dicts(items):
        field_ref = item.get("fieldRef")
        if isinstance(field_ref, dict) and not field_ref.get("apiVersion"):
            field_ref["apiVersion"] = "v1"


def _volume(volume: dict[str, Any]) -> None:
    sources = {k: v for k, v in volume.items() if k != "name" and v is not None}
    if not sources:
        volume["emptyDir"] = {}
    for kind in ("secret", "configMap", "downwardAPI", "projected"):
        source = volume.get(kind)
        if isinstance(source, dict) and source.get("defaultMode") is None:
            source["defaultMode"] = 420
    if isinstance(volume.get("hostPath"), dict) and volume["hostPath"].get("type") is None:
        volume["hostPath"]["type"] = ""
    if isinstance(volume.get("downwardAPI"), dict):
        _downward_items(volume["downwardAPI"].get("items"))
    projected = volume.get("projected")
    if isinstance(projected, dict):
        for source in _dicts(projected.get("sources")):
            if isinstance(source.get("downwardAPI"), dict):
                _downward_items(source["downwardAPI"].get("items"))
            token = source.get("serviceAccountToken")
            if isinstance(token, dict) and token.get("expirationSeconds") is None:
                token["expirationSeconds"] = 3600
    ephemeral = volume.get("ephemeral")
    if isinstance(ephemeral, dict) and isinstance(ephemeral.get("volumeClaimTemplate"), dict):
        claim_spec = _dict(ephemeral["volumeClaimTemplate"], "spec")
        if claim_spec.get("volumeMode") is None:
            claim_spec["volumeMode"] = "Filesystem"


def default_pod_spec(spec: Any) -> None:
    """The defaults of every pod spec, Pods' and templates' (``SetDefaults_PodSpec`` and the
    generated walk over containers, probes, volumes and resource lists)."""
    if not isinstance(spec, dict):
        return
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    for volume in _dicts(spec.get("volumes")):
        _volume(volume)
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for container in _dicts(spec.get(kind)):
            _container(container)
    default_resource_list(spec.get("overhead"))
    if isinstance(spec.get("resources"), dict):
        default_resource_list(spec["resources"].get("limits"))
        default_resource_list(spec["resources"].get("requests"))
    # v1 conversion: the deprecated field mirrors serviceAccountName
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]


def default_pod(pod: Any) -> None:
    """``SetDefaults_Pod`` then the spec's defaults: requests default to limits, service links
    are on, and with host networking container ports default their host port."""
    if not isinstance(pod, dict):
        return
    spec = _dict(pod, "spec")
    for kind in ("containers", "initContainers"):
        for container in _dicts(spec.get(kind)):
            resources = container.get("resources")
            if isinstance(resources, dict) and isinstance(resources.get("limits"), dict):
                requests = _dict(resources, "requests")
                for name, value in resources["limits"].items():
                    requests.setdefault(name, value)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork") is True:
        for kind in ("containers", "initContainers"):
            for container in _dicts(spec.get(kind)):
                for port in _dicts(container.get("ports")):
                    if not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
    default_pod_spec(spec)


_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"


def _tolerates(tolerations: list[dict[str, Any]], key: str) -> bool:
    for toleration in tolerations:
        effect = toleration.get("effect") or ""
        if effect not in ("", "NoExecute"):
            continue
        if toleration.get("key") == key or (
            not toleration.get("key") and toleration.get("operator") == "Exists"
        ):
            return True
    return False


def admit_pod(pod: Any) -> None:
    """What the default mutating admission plugins do to a new Pod: ServiceAccount names the
    ``default`` account (no token volume is mounted), Priority sets ``priority: 0`` and
    ``preemptionPolicy: PreemptLowerPriority`` when no class is named, and
    DefaultTolerationSeconds tolerates ``not-ready``/``unreachable`` nodes for 300 s."""
    if not isinstance(pod, dict):
        return
    spec = _dict(pod, "spec")
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec["serviceAccount"] = "default"
    if not spec.get("priorityClassName"):
        spec.setdefault("priority", 0)
        if spec.get("preemptionPolicy") is None:
            spec["preemptionPolicy"] = "PreemptLowerPriority"
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = []
    existing = _dicts(tolerations)
    for key in (_NOT_READY, _UNREACHABLE):
        if not _tolerates(existing, key):
            tolerations.append(
                {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            )
    if tolerations:
        spec["tolerations"] = tolerations


def pod_qos(spec: Any) -> str:
    """``qos.GetPodQOS``: BestEffort without CPU or memory requests and limits, Guaranteed
    when every container limits both and requests what it limits, else Burstable."""
    if not isinstance(spec, dict):
        return "BestEffort"
    containers = _dicts(spec.get("containers")) + _dicts(spec.get("initContainers"))
    pod_resources = spec.get("resources")
    if isinstance(pod_resources, dict) and (
        pod_resources.get("limits") or pod_resources.get("requests")
    ):
        containers = [{"resources": pod_resources}]
    compute = ("cpu", "memory")
    any_set, guaranteed = False, True
    for container in containers:
        resources = container.get("resources") if isinstance(container, dict) else None
        resources = resources if isinstance(resources, dict) else {}
        limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
        for name in compute:
            limit, request = limits.get(name), requests.get(name)
            if _positive(limit) or _positive(request):
                any_set = True
            if not _positive(limit) or (request is not None and _amount(request) != _amount(limit)):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _amount(text: Any) -> Any:
    return quantity_value(str(text))


def _positive(text: Any) -> bool:
    amount = _amount(text) if text is not None else None
    return amount is not None and amount > 0
