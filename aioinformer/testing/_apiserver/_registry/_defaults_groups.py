"""The defaults of the kinds of ``storage.k8s.io``, ``scheduling.k8s.io``,
``admissionregistration.k8s.io`` and the core ``LimitRange``.

Ports of the behaviour of kubernetes ``pkg/apis/storage/v1/defaults.go``
(``SetDefaults_StorageClass``, ``SetDefaults_CSIDriver``), ``pkg/apis/scheduling/v1/
defaults.go`` (``SetDefaults_PriorityClass``), ``pkg/apis/admissionregistration/v1/
defaults.go`` (``SetDefaults_ValidatingWebhook``, ``SetDefaults_MutatingWebhook``,
``SetDefaults_Rule``, ``SetDefaults_ServiceReference``,
``SetDefaults_ValidatingAdmissionPolicySpec``, ``SetDefaults_MatchResources``) and
``pkg/apis/core/v1/defaults.go`` (``SetDefaults_LimitRangeItem``). Each works in place and is
idempotent (:mod:`._defaults` runs it on every decode).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._defaults_pod import child_dict as _dict

__all__ = ["GROUP_DEFAULTERS"]


def _setdefault(obj: dict[str, Any], key: str, value: Any) -> None:
    if obj.get(key) is None:
        obj[key] = value


def _storage_class(obj: dict[str, Any]) -> None:
    _setdefault(obj, "reclaimPolicy", "Delete")
    _setdefault(obj, "volumeBindingMode", "Immediate")


def _csi_driver(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    _setdefault(spec, "attachRequired", True)
    _setdefault(spec, "podInfoOnMount", False)
    _setdefault(spec, "storageCapacity", False)
    _setdefault(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType")
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]
    _setdefault(spec, "requiresRepublish", False)
    _setdefault(spec, "seLinuxMount", False)


def _priority_class(obj: dict[str, Any]) -> None:
    _setdefault(obj, "preemptionPolicy", "PreemptLowerPriority")


def _rules(rules: Any) -> None:
    """``SetDefaults_Rule``: ``scope`` ``*``."""
    for rule in rules if isinstance(rules, list) else ():
        if isinstance(rule, dict):
            _setdefault(rule, "scope", "*")


def _match(match: dict[str, Any]) -> None:
    """``SetDefaults_MatchResources``."""
    _setdefault(match, "matchPolicy", "Equivalent")
    _setdefault(match, "namespaceSelector", {})
    _setdefault(match, "objectSelector", {})
    for key in ("resourceRules", "excludeResourceRules"):
        _rules(match.get(key))


def _webhooks(mutating: bool) -> Callable[[dict[str, Any]], None]:
    def default(obj: dict[str, Any]) -> None:
        for hook in obj.get("webhooks") or ():
            if not isinstance(hook, dict):
                continue
            _setdefault(hook, "failurePolicy", "Fail")
            _setdefault(hook, "matchPolicy", "Equivalent")
            _setdefault(hook, "namespaceSelector", {})
            _setdefault(hook, "objectSelector", {})
            _setdefault(hook, "timeoutSeconds", 10)
            if mutating:
                _setdefault(hook, "reinvocationPolicy", "Never")
            _rules(hook.get("rules"))
            service = (hook.get("clientConfig") or {}).get("service")
            if isinstance(service, dict):
                _setdefault(service, "port", 443)

    return default


def _policy(obj: dict[str, Any]) -> None:
    spec = _dict(obj, "spec")
    _setdefault(spec, "failurePolicy", "Fail")
    match = spec.get("matchConstraints")
    if isinstance(match, dict):
        _match(match)


def _binding(obj: dict[str, Any]) -> None:
    match = _dict(obj, "spec").get("matchResources")
    if isinstance(match, dict):
        _match(match)


def _limit_range(obj: dict[str, Any]) -> None:
    """``SetDefaults_LimitRangeItem``: a container's default limit is its max, its default
    request the default limit, else the min."""
    for item in (obj.get("spec") or {}).get("limits") or ():
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = dict(item.get("default") or {})
        request = dict(item.get("defaultRequest") or {})
        for key, value in (item.get("max") or {}).items():
            default.setdefault(key, value)
        for key, value in default.items():
            request.setdefault(key, value)
        for key, value in (item.get("min") or {}).items():
            request.setdefault(key, value)
        for key, values in (("default", default), ("defaultRequest", request)):
            if values:
                item[key] = values


_ADMISSION = "admissionregistration.k8s.io"

#: ``(group, version, kind)`` → its defaulter.
GROUP_DEFAULTERS: dict[tuple[str, str, str], Callable[[dict[str, Any]], None]] = {
    ("", "v1", "LimitRange"): _limit_range,
    ("storage.k8s.io", "v1", "StorageClass"): _storage_class,
    ("storage.k8s.io", "v1", "CSIDriver"): _csi_driver,
    ("scheduling.k8s.io", "v1", "PriorityClass"): _priority_class,
    (_ADMISSION, "v1", "ValidatingWebhookConfiguration"): _webhooks(mutating=False),
    (_ADMISSION, "v1", "MutatingWebhookConfiguration"): _webhooks(mutating=True),
    (_ADMISSION, "v1", "ValidatingAdmissionPolicy"): _policy,
    (_ADMISSION, "v1", "ValidatingAdmissionPolicyBinding"): _binding,
}
