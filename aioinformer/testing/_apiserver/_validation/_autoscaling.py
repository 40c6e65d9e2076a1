"""Validation of ``autoscaling`` HorizontalPodAutoscalers (kubernetes
``pkg/apis/autoscaling/validation``: ``validateHorizontalPodAutoscalerSpec``,
``ValidateCrossVersionObjectReference``, ``ValidateHorizontalPodAutoscalerStatusUpdate``), on
defaulted objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._content import is_path_segment_name
from ._fielderrors import FieldError, invalid, required
from ._meta import as_map, nonnegative

__all__ = [
    "validate_hpa",
    "validate_hpa_status",
]

# -- autoscaling/v2 HorizontalPodAutoscaler -------------------------------------------------


def _reference(ref: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateCrossVersionObjectReference``."""
    errors: list[FieldError] = []
    for key in ("kind", "name"):
        value = str(ref.get(key) or "")
        if not value:
            errors.append(required(f"{path}.{key}"))
        else:
            errors += [invalid(f"{path}.{key}", value, m) for m in is_path_segment_name(value)]
    return errors


def validate_hpa(obj: Mapping[str, Any]) -> list[FieldError]:
    """``validateHorizontalPodAutoscalerSpec``: replica bounds (``minReplicas`` at least 1:
    HPAScaleToZero is off) and the scale target (metrics and behavior: their schema only)."""
    spec = as_map(obj.get("spec"))
    errors: list[FieldError] = []
    low, high = spec.get("minReplicas"), spec.get("maxReplicas")
    high = high if isinstance(high, int) else 0
    if isinstance(low, int) and low < 1:
        errors.append(invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if high < 1:
        errors.append(invalid("spec.maxReplicas", high, "must be greater than 0"))
    if isinstance(low, int) and high < low:
        errors.append(
            invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`")
        )
    errors += _reference(as_map(spec.get("scaleTargetRef")), "spec.scaleTargetRef")
    return errors


def validate_hpa_status(obj: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateHorizontalPodAutoscalerStatusUpdate``."""
    status = as_map(obj.get("status"))
    errors: list[FieldError] = []
    for key in ("currentReplicas", "desiredReplicas"):
        errors += nonnegative(status.get(key), f"status.{key}")
    return errors
