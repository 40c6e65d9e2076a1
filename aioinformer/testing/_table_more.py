"""Printers of the other kinds kubectl creates: PriorityClass, ResourceQuota, HPA.

From ``pkg/printers/internalversion/printers.go``: ``printPriorityClass`` (PREEMPTIONPOLICY
has priority 0 but is filled only when wide, which a server always is),
``printResourceQuota`` (``resource: used/hard`` pairs sorted by resource, ``limits.*`` in
LIMIT) and ``printHorizontalPodAutoscaler`` (``formatHPAMetrics``). The HPA printer reads
the internal type, converted from ``autoscaling/v2`` or ``autoscaling/v1`` (whose
``targetCPUUtilizationPercentage`` becomes a cpu Resource metric).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ._table_format import AGE, NAME, age_of, col, integer, name_of, part
from ._table_workloads import Printer

__all__ = ["MORE"]

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
