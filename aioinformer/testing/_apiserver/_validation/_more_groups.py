"""Validation of the kinds of ``policy``, ``autoscaling``, ``scheduling.k8s.io``,
``storage.k8s.io`` and ``admissionregistration.k8s.io``.

Ports of the behaviour of kubernetes ``pkg/apis/policy/validation``
(``ValidatePodDisruptionBudgetSpec``, ``ValidatePodDisruptionBudgetStatusUpdate``),
``pkg/apis/autoscaling/validation`` (``validateHorizontalPodAutoscalerSpec``,
``ValidateCrossVersionObjectReference``, ``ValidateHorizontalPodAutoscalerStatusUpdate``),
``pkg/apis/scheduling/validation`` (``ValidatePriorityClass``, ``ValidatePriorityClassUpdate``),
``pkg/apis/storage/validation`` (``ValidateStorageClass``, ``ValidateStorageClassUpdate``) and
``pkg/apis/admissionregistration/validation`` (the webhook rules every configuration must meet:
names, ``sideEffects``, ``admissionReviewVersions``, ``clientConfig``), on defaulted objects.

The other kinds of these groups (CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment,
VolumeAttributesClass, ValidatingAdmissionPolicy and its bindings) are checked against their
schema and metadata only; their CEL expressions are neither compiled nor enforced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ._apps import not_more_than_100_percent, positive_int_or_percent
from ._content import is_dns1123_subdomain, is_path_segment_name, is_qualified_name
from ._fielderrors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from ._meta import as_list, as_map, immutable, nonnegative, semantic, validate_label_selector

__all__ = [
    "HIGHEST_USER_PRIORITY",
    "SYSTEM_PRIORITY_CLASSES",
    "validate_hpa",
    "validate_hpa_status",
    "validate_pdb",
    "validate_pdb_status",
    "validate_priority_class",
    "validate_priority_class_update",
    "validate_storage_class",
    "validate_storage_class_update",
    "validate_webhook_configuration",
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
_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]
_PREEMPTION = ["Never", "PreemptLowerPriority"]


def _name(obj: Mapping[str, Any]) -> str:
    return str(as_map(obj.get("metadata")).get("name") or "")


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


# -- storage.k8s.io/v1 StorageClass ---------------------------------------------------------


def validate_storage_class(obj: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateStorageClass``: a provisioner (a qualified name), at most 512 parameters of
    256 KiB in all, ``reclaimPolicy`` and ``volumeBindingMode`` enums."""
    errors: list[FieldError] = []
    provisioner = str(obj.get("provisioner") or "")
    if not provisioner:
        errors.append(required("provisioner"))
    else:
        errors += [
            invalid("provisioner", provisioner, m) for m in is_qualified_name(provisioner.lower())
        ]
    parameters = as_map(obj.get("parameters"))
    if len(parameters) > 512:
        errors.append(too_long("parameters", 512))
    else:
        errors += [invalid("parameters", k, "field can not be empty.") for k in parameters if not k]
        if sum(len(k) + len(str(v)) for k, v in parameters.items()) > 256 * 1024:
            errors.append(too_long("parameters", 256 * 1024))
    policy = obj.get("reclaimPolicy")
    if policy is not None and policy not in ("Delete", "Retain"):
        errors.append(not_supported("reclaimPolicy", policy, ["Delete", "Retain"]))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        errors.append(required("volumeBindingMode"))
    elif mode not in ("Immediate", "WaitForFirstConsumer"):
        errors.append(
            not_supported("volumeBindingMode", mode, ["Immediate", "WaitForFirstConsumer"])
        )
    return errors


def validate_storage_class_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[FieldError]:
    """``ValidateStorageClassUpdate``: parameters, provisioner, reclaim policy and binding mode
    are fixed at creation."""
    errors: list[FieldError] = []
    if semantic(new.get("parameters")) != semantic(old.get("parameters")):
        errors.append(forbidden("parameters", "updates to parameters are forbidden."))
    if new.get("provisioner") != old.get("provisioner"):
        errors.append(forbidden("provisioner", "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errors.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    errors += immutable(
        new.get("volumeBindingMode"), old.get("volumeBindingMode"), "volumeBindingMode"
    )
    return errors


# -- admissionregistration.k8s.io/v1 webhook configurations --------------------------------


def _fully_qualified(name: str, path: str) -> list[FieldError]:
    """``IsFullyQualifiedName``: a DNS subdomain of at least three labels."""
    if not name:
        return [required(path)]
    name = name.removesuffix(".")
    problems = is_dns1123_subdomain(name)
    if problems:
        return [invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [
            invalid(path, name, "should be a domain with at least three segments separated by dots")
        ]
    return []


def _webhook(hook: Mapping[str, Any], path: str, names: set[str]) -> list[FieldError]:
    """``validateValidatingWebhook`` / ``validateMutatingWebhook`` (their common part)."""
    errors: list[FieldError] = []
    name = str(hook.get("name") or "")
    errors += _fully_qualified(name, f"{path}.name")
    if name and name in names:
        errors.append(duplicate(f"{path}.name", name))
    names.add(name)
    effects = hook.get("sideEffects")
    if effects is None:
        errors.append(required(f"{path}.sideEffects", "must specify one of None, NoneOnDryRun"))
    elif effects not in ("None", "NoneOnDryRun"):
        errors.append(not_supported(f"{path}.sideEffects", effects, ["None", "NoneOnDryRun"]))
    versions = as_list(hook.get("admissionReviewVersions"))
    if not versions:
        errors.append(
            required(f"{path}.admissionReviewVersions", "must specify one of v1, v1beta1")
        )
    elif not any(v in ("v1", "v1beta1") for v in versions):
        errors.append(
            invalid(
                f"{path}.admissionReviewVersions",
                versions,
                "must include at least one of v1, v1beta1",
            )
        )
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not 1 <= timeout <= 30:
        errors.append(
            invalid(
                f"{path}.timeoutSeconds",
                timeout,
                "the timeout value must be between 1 and 30 seconds",
            )
        )
    client = as_map(hook.get("clientConfig"))
    url, service = client.get("url"), client.get("service")
    if (url is None) == (service is None):
        errors.append(required(f"{path}.clientConfig", "exactly one of url or service is required"))
    elif url is not None and urlsplit(str(url)).scheme != "https":
        scheme = urlsplit(str(url)).scheme
        errors.append(
            invalid(f"{path}.clientConfig.url", scheme, "'https' is the only allowed URL scheme")
        )
    errors += validate_label_selector(hook.get("namespaceSelector"), f"{path}.namespaceSelector")
    errors += validate_label_selector(hook.get("objectSelector"), f"{path}.objectSelector")
    return errors


def validate_webhook_configuration(obj: Mapping[str, Any]) -> list[FieldError]:
    """The webhooks of a Validating- or MutatingWebhookConfiguration: unique fully qualified
    names, ``sideEffects``, ``admissionReviewVersions``, timeouts, one client config."""
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, hook in enumerate(as_list(obj.get("webhooks"))):
        errors += _webhook(as_map(hook), f"webhooks[{i}]", names)
    return errors
