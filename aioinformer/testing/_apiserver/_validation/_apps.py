"""Validation of the workload controllers: Deployments, ReplicaSets, StatefulSets, DaemonSets.

Ports of the behaviour of kubernetes ``pkg/apis/apps/validation`` (``ValidateDeploymentSpec``,
``ValidateDeploymentStrategy``, ``ValidateRollingUpdateDeployment``,
``ValidatePositiveIntOrPercent``, ``IsNotMoreThan100Percent``, ``ValidateReplicaSetSpec``,
``ValidatePodTemplateSpecForReplicaSet``, ``ValidateStatefulSetSpec``,
``ValidateDaemonSetSpec``, ``ValidateDaemonSetUpdateStrategy``) on defaulted objects. The
update rules (immutable selectors, the StatefulSet spec) are in :mod:`._immutable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._content import is_valid_percent
from ._fielderrors import FieldError, forbidden, invalid, not_supported, required
from ._meta import (
    as_map as _map,
)
from ._meta import (
    label_selector_matches,
    nonnegative,
    validate_annotations,
    validate_label_selector,
    validate_labels,
)
from ._pod import validate_pod_template

__all__ = [
    "not_more_than_100_percent",
    "positive_int_or_percent",
    "validate_daemon_set_spec",
    "validate_deployment_spec",
    "validate_replica_set_spec",
    "validate_stateful_set_spec",
]

_SELECTOR_MISMATCH = "`selector` does not match template `labels`"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _selector(spec: Mapping[str, Any], path: str, kind: str) -> list[FieldError]:
    selector = spec.get("selector")
    if selector is None:
        return [required(f"{path}.selector")]
    errors = validate_label_selector(selector, f"{path}.selector")
    selector = _map(selector)
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        errors.append(
            invalid(f"{path}.selector", selector, f"empty selector is invalid for {kind}")
        )
    return errors


def _template_for_replicas(spec: Mapping[str, Any], path: str, kind: str) -> list[FieldError]:
    """``ValidatePodTemplateSpecForReplicaSet`` (and the StatefulSet variant)."""
    template = _map(spec.get("template"))
    where = f"{path}.template"
    errors: list[FieldError] = []
    selector = spec.get("selector")
    labels = _map(template.get("metadata")).get("labels")
    if not label_selector_matches(selector, labels):
        errors.append(invalid(f"{where}.metadata.labels", labels, _SELECTOR_MISMATCH))
    if kind == "StatefulSet":
        # ValidatePodTemplateSpecForStatefulSet leaves the pod spec unchecked (its volume
        # mounts may name claim templates): labels and annotations only
        meta = _map(template.get("metadata"))
        errors.extend(validate_labels(meta.get("labels"), f"{where}.labels"))
        errors.extend(validate_annotations(meta.get("annotations"), f"{where}.annotations"))
    else:
        errors.extend(validate_pod_template(template, where))
    pod_spec = _map(template.get("spec"))
    restart = pod_spec.get("restartPolicy") or ""
    if restart != "Always":
        errors.append(not_supported(f"{where}.spec.restartPolicy", restart, ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errors.append(
            forbidden(
                f"{where}.spec.activeDeadlineSeconds",
                f"activeDeadlineSeconds in {kind} is not Supported",
            )
        )
    return errors


def _int_or_percent(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, str):
        return [invalid(path, value, msg) for msg in is_valid_percent(value)]
    if isinstance(value, int) and not isinstance(value, bool):
        return nonnegative(value, path)
    return [invalid(path, value, "must be an integer or percentage (e.g '5%')")]


def positive_int_or_percent(value: Any, path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``: a percent string, or an integer at least 0."""
    return _int_or_percent(value, path)


def not_more_than_100_percent(value: Any, path: str) -> list[FieldError]:
    """``IsNotMoreThan100Percent``: a percent string up to ``100%`` (integers pass)."""
    if isinstance(value, str) and _int_or_percent_value(value) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def _int_or_percent_value(value: Any) -> int:
    if isinstance(value, str):
        digits = value.rstrip("%")
        return int(digits) if digits.isdigit() else 0
    return _int(value)


def _rolling_update(rolling: Mapping[str, Any], path: str) -> list[FieldError]:
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errors = _int_or_percent(unavailable, f"{path}.maxUnavailable")
    errors.extend(_int_or_percent(surge, f"{path}.maxSurge"))
    if _int_or_percent_value(unavailable) == 0 and _int_or_percent_value(surge) == 0:
        errors.append(
            invalid(f"{path}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0")
        )
    if isinstance(unavailable, str) and _int_or_percent_value(unavailable) > 100:
        errors.append(
            invalid(f"{path}.maxUnavailable", unavailable, "must not be greater than 100%")
        )
    return errors


def _deployment_strategy(strategy: Mapping[str, Any], path: str) -> list[FieldError]:
    kind = strategy.get("type") or ""
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [
                forbidden(
                    f"{path}.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            ]
        return []
    if kind == "RollingUpdate":
        if rolling is None:
            return [required(f"{path}.rollingUpdate", "this should be defaulted and never be nil")]
        return _rolling_update(_map(rolling), f"{path}.rollingUpdate")
    return [not_supported(f"{path}.type", kind, ["Recreate", "RollingUpdate"])]


def validate_deployment_spec(spec: Any, path: str = "spec") -> list[FieldError]:
    """``ValidateDeploymentSpec``: replicas, selector, template (matching the selector,
    ``restartPolicy: Always``), strategy, minReadySeconds, revision history and the
    progress deadline (greater than minReadySeconds)."""
    spec = _map(spec)
    errors = nonnegative(spec.get("replicas"), f"{path}.replicas")
    errors.extend(_selector(spec, path, "deployment"))
    errors.extend(_template_for_replicas(spec, path, "ReplicaSet"))
    errors.extend(_deployment_strategy(_map(spec.get("strategy")), f"{path}.strategy"))
    errors.extend(nonnegative(spec.get("minReadySeconds"), f"{path}.minReadySeconds"))
    errors.extend(nonnegative(spec.get("revisionHistoryLimit"), f"{path}.revisionHistoryLimit"))
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int):
        errors.extend(nonnegative(deadline, f"{path}.progressDeadlineSeconds"))
        if deadline <= _int(spec.get("minReadySeconds")):
            errors.append(
                invalid(
                    f"{path}.progressDeadlineSeconds",
                    deadline,
                    "must be greater than minReadySeconds",
                )
            )
    return errors


def validate_replica_set_spec(spec: Any, path: str = "spec") -> list[FieldError]:
    """``ValidateReplicaSetSpec`` (its empty-selector message says ``deployment``, as real)."""
    spec = _map(spec)
    errors = nonnegative(spec.get("replicas"), f"{path}.replicas")
    errors.extend(nonnegative(spec.get("minReadySeconds"), f"{path}.minReadySeconds"))
    errors.extend(_selector(spec, path, "deployment"))
    errors.extend(_template_for_replicas(spec, path, "ReplicaSet"))
    return errors


def validate_stateful_set_spec(spec: Any, path: str = "spec") -> list[FieldError]:
    """``ValidateStatefulSetSpec``: pod management policy, update strategy, replicas,
    minReadySeconds, ordinals, selector and template."""
    spec = _map(spec)
    errors: list[FieldError] = []
    policy = spec.get("podManagementPolicy") or ""
    if not policy:
        errors.append(required(f"{path}.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        errors.append(
            invalid(f"{path}.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )
    strategy = _map(spec.get("updateStrategy"))
    kind, rolling = strategy.get("type") or "", strategy.get("rollingUpdate")
    if not kind:
        errors.append(required(f"{path}.updateStrategy"))
    elif kind == "OnDelete" and rolling is not None:
        errors.append(
            invalid(
                f"{path}.updateStrategy.rollingUpdate",
                rolling,
                "only allowed for updateStrategy 'RollingUpdate'",
            )
        )
    elif kind == "RollingUpdate" and rolling is not None:
        rolling = _map(rolling)
        errors.extend(
            nonnegative(rolling.get("partition"), f"{path}.updateStrategy.rollingUpdate.partition")
        )
        if "maxUnavailable" in rolling:
            where = f"{path}.updateStrategy.rollingUpdate.maxUnavailable"
            errors.extend(_int_or_percent(rolling["maxUnavailable"], where))
    elif kind not in ("OnDelete", "RollingUpdate"):
        errors.append(
            invalid(
                f"{path}.updateStrategy", dict(strategy), "must be 'RollingUpdate' or 'OnDelete'"
            )
        )
    errors.extend(nonnegative(spec.get("replicas"), f"{path}.replicas"))
    errors.extend(nonnegative(spec.get("minReadySeconds"), f"{path}.minReadySeconds"))
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, Mapping):
        errors.extend(nonnegative(ordinals.get("start"), f"{path}.ordinals.start"))
    errors.extend(_selector(spec, path, "statefulset"))
    errors.extend(_template_for_replicas(spec, path, "StatefulSet"))
    return errors


def validate_daemon_set_spec(spec: Any, path: str = "spec") -> list[FieldError]:
    """``ValidateDaemonSetSpec``: the selector (a null one matches no template), the template
    (``restartPolicy: Always``, no deadline), minReadySeconds and the update strategy."""
    spec = _map(spec)
    template = _map(spec.get("template"))
    selector = spec.get("selector")
    errors = validate_label_selector(selector, f"{path}.selector")
    labels = _map(template.get("metadata")).get("labels")
    if not label_selector_matches(selector, labels):
        errors.append(invalid(f"{path}.template.metadata.labels", labels, _SELECTOR_MISMATCH))
    if isinstance(selector, Mapping) and not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        errors.append(
            invalid(f"{path}.selector", selector, "empty selector is invalid for daemonset")
        )
    errors.extend(validate_pod_template(template, f"{path}.template"))
    pod_spec = _map(template.get("spec"))
    restart = pod_spec.get("restartPolicy") or ""
    if restart != "Always":
        errors.append(not_supported(f"{path}.template.spec.restartPolicy", restart, ["Always"]))
    deadline = pod_spec.get("activeDeadlineSeconds")
    if deadline is not None:
        errors.append(
            invalid(
                f"{path}.template.spec.activeDeadlineSeconds",
                deadline,
                "activeDeadlineSeconds must be nil for DaemonSets",
            )
        )
    errors.extend(nonnegative(spec.get("minReadySeconds"), f"{path}.minReadySeconds"))
    strategy = _map(spec.get("updateStrategy"))
    kind = strategy.get("type") or ""
    where = f"{path}.updateStrategy"
    if kind == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if rolling is None:
            errors.append(required(f"{where}.rollingUpdate"))
        else:
            errors.extend(_daemon_rolling_update(_map(rolling), f"{where}.rollingUpdate"))
    elif kind != "OnDelete":
        errors.append(not_supported(where, dict(strategy), ["RollingUpdate", "OnDelete"]))
    errors.extend(nonnegative(spec.get("revisionHistoryLimit"), f"{path}.revisionHistoryLimit"))
    return errors


def _daemon_rolling_update(rolling: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateRollingUpdateDaemonSet``: exactly one of the two may be non-zero."""
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errors = _int_or_percent(unavailable, f"{path}.maxUnavailable")
    errors.extend(_int_or_percent(surge, f"{path}.maxSurge"))
    for name, value in (("maxUnavailable", unavailable), ("maxSurge", surge)):
        if isinstance(value, str) and _int_or_percent_value(value) > 100:
            errors.append(invalid(f"{path}.{name}", value, "must not be greater than 100%"))
    has_unavailable = _int_or_percent_value(unavailable) != 0
    has_surge = _int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        errors.append(
            invalid(f"{path}.maxSurge", surge, "may not be set when maxUnavailable is non-zero")
        )
    elif not has_unavailable and not has_surge:
        errors.append(required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errors
