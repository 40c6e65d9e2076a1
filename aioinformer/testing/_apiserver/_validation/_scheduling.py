"""Validation of ``scheduling.k8s.io`` PriorityClasses (kubernetes
``pkg/apis/scheduling/validation``: ``ValidatePriorityClass``, ``ValidatePriorityClassUpdate``)
and the system priority classes a cluster has."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._fielderrors import FieldError, forbidden, not_supported
from ._meta import as_map, immutable

__all__ = [
    "HIGHEST_USER_PRIORITY",
    "SYSTEM_PRIORITY_CLASSES",
    "validate_priority_class",
    "validate_priority_class_update",
]

#: ``scheduling.HighestUserDefinablePriority``.
HIGHEST_USER_PRIORITY = 1_000_000_000
#: ``systemPriorityClasses`` (``pkg/apis/scheduling/helpers.go``): name → value, description.
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": (
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    "system-cluster-critical": (
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to "
        "another node if necessary.",
    ),
}
_PREEMPTION = ["Never", "PreemptLowerPriority"]


def _name(obj: Mapping[str, Any]) -> str:
    return str(as_map(obj.get("metadata")).get("name") or "")


# -- scheduling.k8s.io/v1 PriorityClass -----------------------------------------------------


def _system_class_problem(name: str, value: Any, default: bool) -> str:
    """``IsKnownSystemPriorityClass``'s error, or ``""``."""
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if value != known[0]:
        return f"value of {name} PriorityClass must be {known[0]}"
    if default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def validate_priority_class(obj: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePriorityClass``: ``system-`` names are reserved for the built-in classes;
    user classes may not exceed 1,000,000,000; ``preemptionPolicy`` an enum."""
    name, value = _name(obj), obj.get("value")
    errors: list[FieldError] = []
    if name.startswith("system-"):
        problem = _system_class_problem(name, value, bool(obj.get("globalDefault")))
        if problem:
            errors.append(
                forbidden(
                    "metadata.name",
                    "priority class names with 'system-' prefix are reserved for system use "
                    f"only. error: {problem}",
                )
            )
    elif isinstance(value, int) and value > HIGHEST_USER_PRIORITY:
        errors.append(
            forbidden(
                "value",
                f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}",
            )
        )
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in _PREEMPTION:
        errors.append(not_supported("preemptionPolicy", policy, _PREEMPTION))
    return errors


def validate_priority_class_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[FieldError]:
    """``ValidatePriorityClassUpdate``: ``value`` and ``preemptionPolicy`` are immutable."""
    errors: list[FieldError] = []
    if new.get("value") != old.get("value"):
        errors.append(forbidden("value", "may not be changed in an update."))
    errors += immutable(
        new.get("preemptionPolicy"), old.get("preemptionPolicy"), "preemptionPolicy"
    )
    return errors
