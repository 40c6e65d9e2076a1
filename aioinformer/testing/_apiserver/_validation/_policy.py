"""Validation of ``policy/v1`` PodDisruptionBudgets (kubernetes
``pkg/apis/policy/validation``: ``ValidatePodDisruptionBudgetSpec``,
``ValidatePodDisruptionBudgetStatusUpdate``), on defaulted objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._apps import not_more_than_100_percent, positive_int_or_percent
from ._fielderrors import FieldError, invalid, not_supported, required
from ._meta import as_list, as_map, nonnegative, validate_label_selector

__all__ = [
    "validate_pdb",
    "validate_pdb_status",
]

_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]


# -- policy/v1 PodDisruptionBudget ----------------------------------------------------------


def validate_pdb(obj: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePodDisruptionBudgetSpec`` (on create and on update: the spec may change)."""
    spec = as_map(obj.get("spec"))
    errors: list[FieldError] = []
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    if low is not None and high is not None:
        errors.append(
            invalid("spec", dict(spec), "minAvailable and maxUnavailable cannot be both set")
        )
    for key, value in (("minAvailable", low), ("maxUnavailable", high)):
        if value is not None:
            errors += positive_int_or_percent(value, f"spec.{key}")
            errors += not_more_than_100_percent(value, f"spec.{key}")
    errors += validate_label_selector(spec.get("selector"), "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in _EVICTION_POLICIES:
        errors.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, _EVICTION_POLICIES))
    return errors


def _conditions(conditions: Any, path: str) -> list[FieldError]:
    """``metav1validation.ValidateConditions``: type and status required, status one of
    True/False/Unknown, reason required, types unique."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(as_list(conditions)):
        where = f"{path}[{i}]"
        condition = as_map(condition)
        kind = str(condition.get("type") or "")
        if not kind:
            errors.append(required(f"{where}.type", "must be set"))
        elif kind in seen:
            errors.append(invalid(f"{where}.type", kind, "must be unique"))
        seen.add(kind)
        state = condition.get("status")
        if state not in ("True", "False", "Unknown"):
            errors.append(not_supported(f"{where}.status", state, ["False", "True", "Unknown"]))
        if not condition.get("reason"):
            errors.append(required(f"{where}.reason", "must be set"))
        if condition.get("lastTransitionTime") is None:
            errors.append(required(f"{where}.lastTransitionTime", "must be set"))
    return errors


def validate_pdb_status(obj: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePodDisruptionBudgetStatusUpdate`` (``policy/v1``)."""
    status = as_map(obj.get("status"))
    errors = _conditions(status.get("conditions"), "status.conditions")
    for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        errors += nonnegative(status.get(key), f"status.{key}")
    return errors
