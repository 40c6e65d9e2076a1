"""The real server-side printers of the common kinds: columns and cells.

From ``pkg/printers/internalversion/printers.go`` (kubernetes/kubernetes, ``AddHandlers``
and the ``print<Kind>`` functions). A server always prints with ``Wide: true``
(``pkg/printers/storage``), so every row has the cells of every column, and kubectl hides
the columns of priority 1 unless ``-o wide``. The printers read the internal types; where
a field the real server defaults is missing from the stored object, the default is assumed
(a Deployment's ``replicas`` 1, a Service's ``type`` ClusterIP, a port's ``protocol`` TCP).

Also the other kinds kubectl creates: ``printPriorityClass`` (PREEMPTIONPOLICY has priority 0
but is filled only when wide, which a server always is), ``printResourceQuota``
(``resource: used/hard`` pairs sorted by resource, ``limits.*`` in LIMIT) and
``printHorizontalPodAutoscaler`` (``formatHPAMetrics``; the internal type, converted from
``autoscaling/v2`` or ``autoscaling/v1``, whose ``targetCPUUtilizationPercentage`` becomes a
cpu Resource metric).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from .._api._conversion import event_to_core
from ._format import (
    AGE,
    NAME,
    Column,
    age_of,
    col,
    format_labels,
    integer,
    name_of,
    part,
    since,
)
from ._pod import POD_COLUMNS, pod_cells, pod_conditions
from ._storage_admission import STORAGE_AND_ADMISSION
from ._workloads import WORKLOADS, Printer

__all__ = ["MORE", "PRINTERS", "Printer", "row_conditions"]

Obj = Mapping[str, Any]


def _priority_class(obj: Obj, now: datetime) -> list[Any]:
    return [
        name_of(obj),
        integer(obj, "value"),
        bool(obj.get("globalDefault")),
        age_of(obj, now),
        obj.get("preemptionPolicy") or "",
    ]


def _quota(obj: Obj, now: datetime) -> list[Any]:
    hard = part(obj, "status", "hard") or {}
    used = part(obj, "status", "used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        pieces = resource.split(".")
        target = limits if len(pieces) > 1 and pieces[0] == "limits" else requests
        target.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [name_of(obj), ", ".join(requests), ", ".join(limits), age_of(obj, now)]


def _metrics(obj: Obj) -> tuple[list[Any], list[Any]]:
    """The v2 metrics and current metrics (v1's CPU target converted)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if "targetCPUUtilizationPercentage" in spec or "metrics" not in spec:
        target = spec.get("targetCPUUtilizationPercentage")
        if target is None:
            return [], []
        resource = {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}
        current = status.get("currentCPUUtilizationPercentage")
        statuses = []
        if current is not None:
            found = {"name": "cpu", "current": {"averageUtilization": current}}
            statuses = [{"type": "Resource", "resource": found}]
        return [{"type": "Resource", "resource": resource}], statuses
    return list(spec.get("metrics") or ()), list(status.get("currentMetrics") or ())


def _metric(spec: Obj, current: Obj | None) -> str:
    kind = spec.get("type", "")
    key = {
        "External": "external",
        "Pods": "pods",
        "Object": "object",
        "Resource": "resource",
        "ContainerResource": "containerResource",
    }.get(kind)
    if key is None:
        return "<unknown type>"
    source = spec.get(key) or {}
    target = source.get("target") or {}
    now_value = ((current or {}).get(key) or {}).get("current") if current else None
    name = f"{(source.get('name') or '')}: " if kind in ("Resource", "ContainerResource") else ""
    if kind == "Pods" or target.get("averageValue") is not None:
        shown = (now_value or {}).get("averageValue") if now_value is not None else None
        average = " (avg)" if kind in ("External", "Object") else ""
        return f"{name}{shown or '<unknown>'}/{target.get('averageValue')}{average}"
    if kind in ("External", "Object"):
        shown = (now_value or {}).get("value") if now_value is not None else None
        return f"{shown or '<unknown>'}/{target.get('value')}"
    utilization = (now_value or {}).get("averageUtilization")
    shown = "<unknown>" if utilization is None else f"{utilization}%"
    goal = target.get("averageUtilization")
    return f"{name}{shown}/{'<auto>' if goal is None else f'{goal}%'}"


def _hpa(obj: Obj, now: datetime) -> list[Any]:
    specs, statuses = _metrics(obj)
    texts = [_metric(s, statuses[i] if i < len(statuses) else None) for i, s in enumerate(specs)]
    metrics = ", ".join(texts[:2]) or "<none>"
    if len(texts) > 2:
        metrics += f" + {len(texts) - 2} more..."
    ref = part(obj, "spec", "scaleTargetRef") or {}
    low = part(obj, "spec", "minReplicas")
    return [
        name_of(obj),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        metrics,
        "<unset>" if low is None else str(low),
        integer(obj, "spec", "maxReplicas"),
        integer(obj, "status", "currentReplicas"),
        age_of(obj, now),
    ]


_HPA_COLUMNS = (
    NAME,
    col("Reference", doc="autoscaling.HorizontalPodAutoscalerSpec.scaleTargetRef"),
    col("Targets", doc="autoscaling.HorizontalPodAutoscalerSpec.metrics"),
    col("MinPods", doc="autoscaling.HorizontalPodAutoscalerSpec.minReplicas"),
    col("MaxPods", doc="autoscaling.HorizontalPodAutoscalerSpec.maxReplicas"),
    col("Replicas", doc="autoscaling.HorizontalPodAutoscalerStatus.currentReplicas"),
    AGE,
)

#: ``(group, kind)`` → the columns and the printer of the cells.
MORE: dict[tuple[str, str], Printer] = {
    ("scheduling.k8s.io", "PriorityClass"): (
        (
            NAME,
            col("Value", "integer", "scheduling.PriorityClass.value"),
            col("Global-Default", "boolean", "scheduling.PriorityClass.globalDefault"),
            AGE,
            col("PreemptionPolicy", doc="scheduling.PriorityClass.preemptionPolicy"),
        ),
        _priority_class,
    ),
    ("", "ResourceQuota"): (
        (
            NAME,
            col(
                "Request",
                text="Request represents a minimum amount of cpu/memory that a container may "
                "consume.",
            ),
            col(
                "Limit",
                text="Limits control the maximum amount of cpu/memory that a container may use "
                "independent of contention on the node.",
            ),
            AGE,
        ),
        _quota,
    ),
    ("autoscaling", "HorizontalPodAutoscaler"): (_HPA_COLUMNS, _hpa),
}


SELECTOR = "Selector"


def _load_balancer(status: Any) -> str:
    """``loadBalancerStatusStringer`` (wide, so never clipped): sorted unique IPs/hostnames."""
    found = {i.get("ip") or i.get("hostname") for i in (status or {}).get("ingress") or ()}
    return ",".join(sorted(v for v in found if v))


def _service(obj: Obj, now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    external = spec.get("externalIPs") or []
    if kind in ("ClusterIP", "NodePort"):
        external_ip = ",".join(external) or "<none>"
    elif kind == "LoadBalancer":
        balanced = _load_balancer(part(obj, "status", "loadBalancer"))
        joined = [*(balanced.split(",") if balanced else []), *external]
        external_ip = ",".join(joined) or "<pending>"
    elif kind == "ExternalName":
        external_ip = spec.get("externalName", "")
    else:
        external_ip = "<unknown>"
    ports = []
    for port in spec.get("ports") or ():
        protocol = port.get("protocol") or "TCP"
        node_port = port.get("nodePort") or 0
        middle = f":{node_port}" if node_port > 0 else ""
        ports.append(f"{port.get('port', 0)}{middle}/{protocol}")
    return [
        name_of(obj),
        kind,
        cluster_ips[0] if cluster_ips else "<none>",
        external_ip,
        ",".join(ports) or "<none>",
        age_of(obj, now),
        format_labels(spec.get("selector")),
    ]


def _node(obj: Obj, now: datetime) -> list[Any]:
    status = obj.get("status") or {}
    state = [
        "Ready" if c.get("status") == "True" else "NotReady"
        for c in (status.get("conditions") or ())[::-1]
        if c.get("type") == "Ready"
    ][:1] or ["Unknown"]  # the last Ready condition wins (a map keyed by type)
    if part(obj, "spec", "unschedulable"):
        state.append("SchedulingDisabled")
    roles = set()
    for key, value in (part(obj, "metadata", "labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and len(key) > 24:
            roles.add(key[24:])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    info = status.get("nodeInfo") or {}
    addresses = status.get("addresses") or ()

    def address(kind: str) -> str:
        return next((a.get("address", "") for a in addresses if a.get("type") == kind), "<none>")

    return [
        name_of(obj),
        ",".join(state),
        ",".join(sorted(roles)) or "<none>",
        age_of(obj, now),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        *(info.get(k) or "<unknown>" for k in ("osImage", "kernelVersion")),
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _event(obj: Obj, now: datetime) -> list[Any]:
    first = obj.get("firstTimestamp")
    first_seen = since(first, now) if first else since(obj.get("eventTime"), now)
    last = obj.get("lastTimestamp")
    last_seen = since(last, now) if last else first_seen
    count = obj.get("count") or 0
    series = obj.get("series")
    if series is not None:
        last_seen = since(series.get("lastObservedTime"), now)
        count = series.get("count") or 0
    elif count == 0:
        count = 1  # singleton events of the new API carry no count
    involved = obj.get("involvedObject") or {}
    target = str(involved.get("kind", "")).lower()
    if involved.get("name"):
        target = f"{target}/{involved['name']}"
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    instance = source.get("host") or obj.get("reportingInstance") or ""
    return [
        last_seen,
        obj.get("type", ""),
        obj.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        f"{component}, {instance}" if instance else component,
        str(obj.get("message", "")).strip(),
        first_seen,
        count,
        name_of(obj),
    ]


def _events_v1_event(obj: Obj, now: datetime) -> list[Any]:
    """An events.k8s.io/v1 Event's row: the core Event's (one stored object, two names)."""
    return _event(event_to_core(obj), now)


_EVENT_COLUMNS = (
    col("Last Seen", doc="core.Event.lastTimestamp"),
    col("Type", doc="core.Event.type"),
    col("Reason", doc="core.Event.reason"),
    col("Object", doc="core.Event.involvedObject"),
    col("Subobject", doc="core.ObjectReference.fieldPath", p=1),
    col("Source", doc="core.Event.source", p=1),
    col("Message", doc="core.Event.message"),
    col("First Seen", doc="core.Event.firstTimestamp", p=1),
    col("Count", doc="core.Event.count", p=1),
    Column("Name", priority=1, format="name", doc="meta.ObjectMeta.name"),
)


def _subjects(obj: Obj) -> list[str]:
    """``rbac.SubjectsStrings``: users, groups, service accounts (``namespace/name``)."""
    users, groups, accounts = [], [], []
    for subject in obj.get("subjects") or ():
        name = subject.get("name", "")
        if subject.get("kind") == "User":
            users.append(name)
        elif subject.get("kind") == "Group":
            groups.append(name)
        elif subject.get("kind") == "ServiceAccount":
            accounts.append(f"{subject.get('namespace', '')}/{name}")
    return [", ".join(users), ", ".join(groups), ", ".join(accounts)]


def _binding(obj: Obj, now: datetime) -> list[Any]:
    ref = obj.get("roleRef") or {}
    role = f"{ref.get('kind', '')}/{ref.get('name', '')}"
    return [name_of(obj), role, age_of(obj, now), *_subjects(obj)]


def _pdb(obj: Obj, now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [
        name_of(obj),
        "N/A" if low is None else str(low),
        "N/A" if high is None else str(high),
        integer(obj, "status", "disruptionsAllowed"),
        age_of(obj, now),
    ]


def _ingress(obj: Obj, now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    rules = spec.get("rules") or []
    hosts: list[str] = []
    more = False
    for rule in rules:  # formatHosts: three hosts, then "+ N more..." (N counts rules)
        more = more or len(hosts) == 3
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    host_text = ",".join(hosts) or "*"
    if hosts and more:
        host_text += f" + {len(rules) - 3} more..."
    return [
        name_of(obj),
        spec.get("ingressClassName") or "<none>",
        host_text,
        _load_balancer(part(obj, "status", "loadBalancer")),
        "80, 443" if spec.get("tls") else "80",
        age_of(obj, now),
    ]


def _simple(*fields: Callable[[Obj], Any]) -> Callable[[Obj, datetime], list[Any]]:
    """A printer of ``name, <fields…>, age``."""

    def printer(obj: Obj, now: datetime) -> list[Any]:
        return [name_of(obj), *(f(obj) for f in fields), age_of(obj, now)]

    return printer


_BINDING_COLUMNS = (
    NAME,
    col("Role", doc="rbac.RoleBinding.roleRef"),
    AGE,
    col("Users", text="Users in the roleBinding", p=1),
    col("Groups", text="Groups in the roleBinding", p=1),
    col("ServiceAccounts", text="ServiceAccounts in the roleBinding", p=1),
)

#: ``(group, kind)`` → the columns and the printer of the cells.
PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Pod"): (POD_COLUMNS, pod_cells),
    **WORKLOADS,
    **MORE,
    **STORAGE_AND_ADMISSION,
    ("", "Service"): (
        (
            NAME,
            col("Type", doc="core.ServiceSpec.type"),
            col("Cluster-IP", doc="core.ServiceSpec.clusterIP"),
            col("External-IP", doc="core.ServiceSpec.externalIPs"),
            col("Port(s)", doc="core.ServiceSpec.ports"),
            AGE,
            col(SELECTOR, doc="core.ServiceSpec.selector", p=1),
        ),
        _service,
    ),
    ("", "ConfigMap"): (
        (NAME, col("Data", doc="core.ConfigMap.data"), AGE),
        _simple(lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {})),
    ),
    ("", "Secret"): (
        (NAME, col("Type", doc="core.Secret.type"), col("Data", doc="core.Secret.data"), AGE),
        _simple(
            lambda o: o.get("type") or "Opaque",
            lambda o: len({*(o.get("data") or {}), *(o.get("stringData") or {})}),
        ),
    ),
    ("", "Namespace"): (
        (NAME, col("Status", text="The status of the namespace"), AGE),
        _simple(lambda o: part(o, "status", "phase") or ""),
    ),
    ("", "ServiceAccount"): (
        (NAME, col("Secrets", doc="core.ServiceAccount.secrets"), AGE),
        _simple(lambda o: len(o.get("secrets") or ())),
    ),
    ("", "Node"): (
        (
            NAME,
            col("Status", text="The status of the node"),
            col("Roles", text="The roles of the node"),
            AGE,
            col("Version", doc="core.NodeSystemInfo.kubeletVersion"),
            col("Internal-IP", doc="core.NodeStatus.addresses", p=1),
            col("External-IP", doc="core.NodeStatus.addresses", p=1),
            col("OS-Image", doc="core.NodeSystemInfo.osImage", p=1),
            col("Kernel-Version", doc="core.NodeSystemInfo.kernelVersion", p=1),
            col("Container-Runtime", doc="core.NodeSystemInfo.containerRuntimeVersion", p=1),
        ),
        _node,
    ),
    ("", "Event"): (_EVENT_COLUMNS, _event),
    # The same storage and printer (``printEvent`` of the internal core.Event).
    ("events.k8s.io", "Event"): (_EVENT_COLUMNS, _events_v1_event),
    ("policy", "PodDisruptionBudget"): (
        (
            NAME,
            col("Min Available", text="The minimum number of pods that must be available."),
            col("Max Unavailable", text="The maximum number of pods that may be unavailable."),
            col(
                "Allowed Disruptions",
                "integer",
                text="Calculated number of pods that may be disrupted at this time.",
            ),
            AGE,
        ),
        _pdb,
    ),
    ("networking.k8s.io", "Ingress"): (
        (
            NAME,
            col(
                "Class",
                text="The name of the IngressClass resource that should be used "
                "for additional configuration",
            ),
            col(
                "Hosts",
                text="Hosts that incoming requests are matched against before the ingress rule",
            ),
            col(
                "Address", text="Address is a list containing ingress points for the load-balancer"
            ),
            col("Ports", text="Ports of TLS configurations that open"),
            AGE,
        ),
        _ingress,
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): (_BINDING_COLUMNS, _binding),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (
        tuple(
            col(c.name, text=c.text.replace("roleBinding", "clusterRoleBinding"), p=1)
            if c.priority
            else c
            for c in _BINDING_COLUMNS
        ),
        _binding,
    ),
    ("coordination.k8s.io", "Lease"): (
        (NAME, col("Holder", doc="coordination.LeaseSpec.holderIdentity"), AGE),
        _simple(lambda o: part(o, "spec", "holderIdentity") or ""),
    ),
}


def row_conditions(group: str, kind: str, obj: Obj) -> list[dict[str, Any]] | None:
    """The ``conditions`` of a row (only Pods have them: Completed for finished pods)."""
    return pod_conditions(obj) if (group, kind) == ("", "Pod") else None
