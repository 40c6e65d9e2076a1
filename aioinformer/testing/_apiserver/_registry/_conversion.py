"""Built-in kinds served in more than one version: ``autoscaling/v1`` HorizontalPodAutoscalers.

kube-apiserver stores an HPA once, in ``autoscaling/v2``, and serves it as ``autoscaling/v1``
too (kubectl 1.32's ``autoscale`` writes v1), converting on the way in and out. A port of the
behaviour of kubernetes ``pkg/apis/autoscaling/v1/conversion.go``:

* a v1 ``targetCPUUtilizationPercentage`` is the v2 ``cpu`` ``Resource`` metric with a
  ``Utilization`` target, and back; a v1 ``currentCPUUtilizationPercentage`` the current
  ``cpu`` metric;
* what v1 cannot say travels in annotations and comes back: the other metrics
  (``autoscaling.alpha.kubernetes.io/metrics``, in v1's own ``MetricSpec`` form), the current
  metrics (``…/current-metrics``), the behavior (``…/behavior``) and the conditions
  (``…/conditions``);
* a v1 HPA without any metric gets the implicit 80% CPU target.

The versions share one table (``ResourceInfo.storage_version``): a v1 write is decoded,
defaulted and validated as v1, then stored converted; every read, list and watch of v1
converts the stored object.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from .._api._resources import ResourceInfo
from ._rest_types import Observer, ResourceStrategy
from ._writerules import BuiltinStrategy, Kind, decode, stored_form

__all__ = ["VersionConversion", "hpa_to_v1", "hpa_to_v2"]

_PREFIX = "autoscaling.alpha.kubernetes.io/"
_METRICS = _PREFIX + "metrics"
_CURRENT = _PREFIX + "current-metrics"
_BEHAVIOR = _PREFIX + "behavior"
_CONDITIONS = _PREFIX + "conditions"
_ROUND_TRIP = (_METRICS, _CURRENT, _BEHAVIOR, _CONDITIONS)

Obj = dict[str, Any]
#: The storage version of HPAs.
_STORED = Kind("autoscaling", "v2", "HorizontalPodAutoscaler", True, status_subresource=True)


def _clean(obj: Obj) -> Obj:
    """Leave out what ``omitempty`` leaves out (None)."""
    return {k: v for k, v in obj.items() if v is not None}


def _cpu_utilization(metric: Mapping[str, Any], part: str) -> Any:
    resource = metric.get("resource") or {}
    if metric.get("type") != "Resource" or resource.get("name") != "cpu":
        return None
    return (resource.get(part) or {}).get("averageUtilization")


# The other metrics, v2 ⇄ v1 (v1's MetricSpec/MetricStatus are v2beta1-shaped).


def _source_to_v1(kind: str, source: Mapping[str, Any], status: bool) -> Obj:
    value = source.get("current" if status else "target") or {}
    metric = source.get("metric") or {}
    word = "current" if status else "target"
    if kind in ("Resource", "ContainerResource"):
        out = {
            "name": source.get("name"),
            f"{word}AverageUtilization": value.get("averageUtilization"),
            f"{word}AverageValue": value.get("averageValue"),
        }
        if kind == "ContainerResource":
            out["container"] = source.get("container", "")
        return _clean(out)
    if kind == "Pods":
        average = value.get("averageValue") or "0"
        return _clean(
            {"metricName": metric.get("name", ""), f"{word}AverageValue": average,
             "selector": metric.get("selector")}
        )  # fmt: skip
    if kind == "Object":
        return _clean(
            {
                "target": source.get("describedObject") or {},
                "metricName": metric.get("name", ""),
                f"{word}Value": value.get("value") or "0",
                "selector": metric.get("selector"),
                "averageValue": value.get("averageValue"),
            }
        )
    return _clean(
        {
            "metricName": metric.get("name", ""),
            "metricSelector": metric.get("selector"),
            f"{word}Value": value.get("value"),
            f"{word}AverageValue": value.get("averageValue"),
        }
    )


def _source_to_v2(kind: str, source: Mapping[str, Any], status: bool) -> Obj:
    word = "current" if status else "target"
    if kind in ("Resource", "ContainerResource"):
        utilization = source.get(f"{word}AverageUtilization")
        value: Obj = _clean(
            {"averageUtilization": utilization, "averageValue": source.get(f"{word}AverageValue")}
        )
        if not status:
            value = {"type": "AverageValue" if utilization is None else "Utilization", **value}
        out: Obj = {"name": source.get("name"), word: value}
        if kind == "ContainerResource":
            out["container"] = source.get("container", "")
        return out
    if kind == "Pods":
        metric = _clean({"name": source.get("metricName", ""), "selector": source.get("selector")})
        average = {"averageValue": source.get(f"{word}AverageValue")}
        value = average if status else {"type": "AverageValue", **average}
        return {"metric": metric, word: value}
    if kind == "Object":
        metric = _clean({"name": source.get("metricName", ""), "selector": source.get("selector")})
        kind_word = "Value" if source.get("averageValue") is None else "AverageValue"
        value = _clean(
            {"value": source.get(f"{word}Value"), "averageValue": source.get("averageValue")}
        )
        if not status:
            value = {"type": kind_word, **value}
        return {"describedObject": source.get("target") or {}, "metric": metric, word: value}
    metric = _clean(
        {"name": source.get("metricName", ""), "selector": source.get("metricSelector")}
    )
    plain: Any = source.get(f"{word}Value")
    value = _clean({"value": plain, "averageValue": source.get(f"{word}AverageValue")})
    if not status:
        value = {"type": "Value" if plain is not None else "AverageValue", **value}
    return {"metric": metric, word: value}


_KEYS = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}


def _metric(metric: Mapping[str, Any], convert: Callable[..., Obj], status: bool) -> Obj:
    kind = str(metric.get("type") or "")
    key = _KEYS.get(kind)
    out: Obj = {"type": kind}
    if key is not None and isinstance(metric.get(key), Mapping):
        out[key] = convert(kind, metric[key], status)
    return out


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def hpa_to_v1(stored: Mapping[str, Any]) -> Obj:
    """``Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler``."""
    obj = copy.deepcopy(dict(stored))
    spec, status = dict(obj.get("spec") or {}), dict(obj.get("status") or {})
    meta = dict(obj.get("metadata") or {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _ROUND_TRIP}
    metrics = list(spec.pop("metrics", None) or ())
    cpu = next((u for u in (_cpu_utilization(m, "target") for m in metrics) if u is not None), None)
    others = [
        _metric(m, _source_to_v1, False) for m in metrics if _cpu_utilization(m, "target") is None
    ]
    if others:
        annotations[_METRICS] = _dumps(others)
    behavior = spec.pop("behavior", None)
    if behavior is not None:
        annotations[_BEHAVIOR] = _dumps(behavior)
    if cpu is not None:
        spec["targetCPUUtilizationPercentage"] = cpu
    current = list(status.pop("currentMetrics", None) or ())
    if current:
        annotations[_CURRENT] = _dumps([_metric(m, _source_to_v1, True) for m in current])
    used = next(
        (u for u in (_cpu_utilization(m, "current") for m in current) if u is not None), None
    )
    if used is not None:
        status["currentCPUUtilizationPercentage"] = used
    conditions = status.pop("conditions", None)
    if conditions:
        kept = [{k: c.get(k) for k in ("type", "status", "lastTransitionTime", "reason", "message")
                 if c.get(k) is not None} for c in conditions]  # fmt: skip
        annotations[_CONDITIONS] = _dumps(kept)
    status.setdefault("currentReplicas", 0)
    status.setdefault("desiredReplicas", 0)
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    obj.update(metadata=meta, spec=spec, status=status)
    if "apiVersion" in obj:  # list items carry none
        obj["apiVersion"] = "autoscaling/v1"
    return obj


def _annotation(annotations: Mapping[str, Any], key: str) -> Any:
    text = annotations.get(key)
    if not isinstance(text, str):
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def hpa_to_v2(v1: Mapping[str, Any]) -> Obj:
    """``Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler``."""
    obj = copy.deepcopy(dict(v1))
    spec, status = dict(obj.get("spec") or {}), dict(obj.get("status") or {})
    meta = dict(obj.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    metrics: list[Obj] = []
    for other in _annotation(annotations, _METRICS) or ():
        if isinstance(other, Mapping):
            metrics.append(_metric(other, _source_to_v2, False))
    cpu = spec.pop("targetCPUUtilizationPercentage", None)
    if cpu is not None:
        metrics.append(_cpu_metric(cpu))
    if not metrics:
        metrics.append(_cpu_metric(80))  # the implicit default of autoscaling/v1
    spec["metrics"] = metrics
    behavior = _annotation(annotations, _BEHAVIOR)
    if isinstance(behavior, Mapping):
        spec["behavior"] = behavior
    used = status.pop("currentCPUUtilizationPercentage", None)
    current = [
        _metric(m, _source_to_v2, True)
        for m in _annotation(annotations, _CURRENT) or ()
        if isinstance(m, Mapping)
    ]
    if not current and used is not None:
        current = [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "current": {"averageUtilization": used}},
            }
        ]
    if current:
        status["currentMetrics"] = current
    conditions = _annotation(annotations, _CONDITIONS)
    if isinstance(conditions, list) and conditions:
        status["conditions"] = conditions
    remaining = {k: v for k, v in annotations.items() if k not in _ROUND_TRIP}
    if remaining:
        meta["annotations"] = remaining
    else:
        meta.pop("annotations", None)
    obj.update(metadata=meta, spec=spec, status=status)
    if "apiVersion" in obj:
        obj["apiVersion"] = "autoscaling/v2"
    return obj


def _cpu_metric(utilization: Any) -> Obj:
    target = {"type": "Utilization", "averageUtilization": utilization}
    return {"type": "Resource", "resource": {"name": "cpu", "target": target}}


class _HpaV1(BuiltinStrategy):
    """The strategy of ``autoscaling/v1`` HPAs: the built-in steps in v1, storage in v2."""

    def stored(self, info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
        decoded, _ = decode(_STORED, hpa_to_v2(obj), directive="Ignore")
        return stored_form(_STORED, decoded)

    def view(self, info: ResourceInfo, obj: Mapping[str, Any]) -> Any:
        return hpa_to_v1(obj)

    def view_result(self, info: ResourceInfo, result: Mapping[str, Any]) -> Any:
        if result.get("kind") == "Status":
            return result
        if isinstance(result.get("items"), list):
            items = [hpa_to_v1(item) for item in result["items"]]
            return {**result, "apiVersion": "autoscaling/v1", "items": items}
        return hpa_to_v1(result)


class VersionConversion(Observer):
    """The registry's delegate for the built-in resources served in a version other than
    their storage version (``autoscaling/v1`` HorizontalPodAutoscalers)."""

    _V1 = _HpaV1()

    def strategy(self, info: ResourceInfo) -> ResourceStrategy | None:
        if (info.group, info.version, info.plural) == (
            "autoscaling",
            "v1",
            "horizontalpodautoscalers",
        ):
            return self._V1
        return None
