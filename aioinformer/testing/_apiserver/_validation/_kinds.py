"""Validation of built-in objects on create, update and status update, kind by kind.

The registry's strategies (kubernetes ``pkg/registry``) validate with the kind's functions
from ``pkg/apis/*/validation``; apiserver's ``rest.BeforeCreate``/``BeforeUpdate`` add the
common metadata checks. This module routes a kind to its rules (:mod:`._validation._pod`,
:mod:`._validation._apps`, :mod:`._validation._batch`, :mod:`._validation._core`,
:mod:`._immutable`) and reproduces what is common:

* create: the kind's ``Validate`` (metadata with the kind's name rule, then the spec);
* update: ``validateCommonFields`` (metadata as on create, with the path-segment name rule,
  and ``ValidateObjectMetaAccessorUpdate``) and the kind's ``ValidateUpdate`` (metadata
  update, spec, immutable fields). A real server reports a metadata problem once per pass
  that finds it; :func:`._fielderrors.invalid_failure` lists every cause and prints each
  message once, as ``errors.NewInvalid`` does;
* the warnings of ``WarningsOnCreate`` (names that are not DNS labels).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._api._conversion import event_to_core
from ._admission import validate_webhook_configuration
from ._apps import (
    validate_daemon_set_spec,
    validate_deployment_spec,
    validate_replica_set_spec,
    validate_stateful_set_spec,
)
from ._autoscaling import validate_hpa, validate_hpa_status
from ._batch import (
    validate_cron_job,
    validate_job_generated_selector,
    validate_job_name,
    validate_job_spec,
)
from ._content import (
    NameFunc,
    is_dns1123_label,
    is_path_segment_name,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
)
from ._core import (
    kube_finalizer_errors,
    validate_config_map,
    validate_namespace,
    validate_pvc,
    validate_secret,
    validate_service,
)
from ._events import validate_event_create, validate_event_update
from ._fielderrors import FieldError
from ._immutable import update_errors
from ._meta import nonnegative, validate_object_meta, validate_object_meta_update
from ._pod import validate_pod_spec
from ._policy import validate_pdb, validate_pdb_status
from ._scheduling import validate_priority_class, validate_priority_class_update
from ._status import status_update_errors
from ._storage import validate_storage_class, validate_storage_class_update

__all__ = ["validate_create", "validate_status_update", "validate_update", "warnings_on_create"]

Check = Callable[[Mapping[str, Any], Mapping[str, Any] | None], list[FieldError]]


def _none(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    return []


def _spec(check: Callable[[Any], list[FieldError]]) -> Check:
    def run(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
        return check(obj.get("spec"))

    return run


def _whole(check: Callable[[Any], list[FieldError]]) -> Check:
    def run(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
        return check(obj)

    return run


def _pod(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    return validate_pod_spec(obj.get("spec"), "spec", is_pod=True)


def _job(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    prefixed = True
    if old is not None:
        labels = ((old.get("spec") or {}).get("template") or {}).get("metadata") or {}
        present = labels.get("labels") or {}
        prefixed = (
            "batch.kubernetes.io/job-name" in present
            and "batch.kubernetes.io/controller-uid" in present
        )
    errors = validate_job_generated_selector(obj, prefixed_labels=prefixed)
    return errors + validate_job_spec(obj.get("spec")) + validate_job_name(obj)


def _cron_job(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    return validate_cron_job(obj, old)


def _priority_class(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    """Create: ``ValidatePriorityClass``; update: ``ValidatePriorityClassUpdate`` alone."""
    return validate_priority_class(obj) if old is None else validate_priority_class_update(obj, old)


def _storage_class(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    errors = validate_storage_class(obj)
    return errors if old is None else errors + validate_storage_class_update(obj, old)


def _event(*, strict: bool) -> Check:
    """An Event's ``ValidateEventCreate``/``ValidateEventUpdate`` for a request to core/v1
    (legacy only) or events.k8s.io/v1 (``strict``; checked under the internal names)."""

    def run(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
        new = event_to_core(obj) if strict else obj
        if old is None:
            return validate_event_create(new, strict=strict)
        return validate_event_update(new, event_to_core(old) if strict else old, strict=strict)

    return run


@dataclass(frozen=True, slots=True)
class _Kind:
    """A kind's validation: its name rule, its checks, whether its update validation
    repeats the create-time metadata checks, the name warning it gives on create."""

    name: NameFunc = name_is_dns_subdomain
    check: Check = _none
    revalidate_meta: bool = False
    warning: str = ""


def _path_segment_names(name: str, prefix: bool) -> list[str]:
    return is_path_segment_name(name, prefix)


_POD_NAMES = "this is used in Pod names and hostnames, which can result in surprising behavior"
_KINDS: dict[tuple[str, str], _Kind] = {
    ("", "Pod"): _Kind(
        check=_pod,
        revalidate_meta=True,
        warning="this is used in the Pod's hostname, which can result in surprising behavior",
    ),
    ("", "Service"): _Kind(name_is_dns1035_label, _whole(validate_service), True),
    ("", "ConfigMap"): _Kind(check=_whole(validate_config_map), revalidate_meta=True),
    ("", "Secret"): _Kind(check=_whole(validate_secret), revalidate_meta=True),
    ("", "Namespace"): _Kind(name_is_dns_label, _whole(validate_namespace)),
    ("", "PersistentVolumeClaim"): _Kind(check=_whole(validate_pvc)),
    ("apps", "Deployment"): _Kind(check=_spec(validate_deployment_spec), warning=_POD_NAMES),
    ("apps", "ReplicaSet"): _Kind(
        check=_spec(validate_replica_set_spec), revalidate_meta=True, warning=_POD_NAMES
    ),
    ("apps", "StatefulSet"): _Kind(name_is_dns_label, _spec(validate_stateful_set_spec)),
    ("apps", "DaemonSet"): _Kind(check=_spec(validate_daemon_set_spec), warning=_POD_NAMES),
    ("batch", "Job"): _Kind(check=_job, revalidate_meta=True, warning=_POD_NAMES),
    ("batch", "CronJob"): _Kind(check=_cron_job),
    ("policy", "PodDisruptionBudget"): _Kind(check=_whole(validate_pdb)),
    ("autoscaling", "HorizontalPodAutoscaler"): _Kind(check=_whole(validate_hpa)),
    ("scheduling.k8s.io", "PriorityClass"): _Kind(check=_priority_class),
    ("storage.k8s.io", "StorageClass"): _Kind(check=_storage_class),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _Kind(
        check=_whole(validate_webhook_configuration)
    ),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _Kind(
        check=_whole(validate_webhook_configuration)
    ),
    # The Event strategy validates only the event: the name rule is then the generic one
    # (rest.BeforeCreate's path-segment names), but for events.k8s.io/v1 (``ValidateObjectMeta``
    # with DNS subdomain names in the strict part).
    ("", "Event"): _Kind(name=_path_segment_names, check=_event(strict=False)),
    ("events.k8s.io", "Event"): _Kind(check=_event(strict=True)),
}
#: The status validation of the kinds that have their own (``Validate<Kind>StatusUpdate``).
_STATUS_CHECKS: dict[tuple[str, str], Callable[[Mapping[str, Any]], list[FieldError]]] = {
    ("policy", "PodDisruptionBudget"): validate_pdb_status,
    ("autoscaling", "HorizontalPodAutoscaler"): validate_hpa_status,
}
_DEFAULT = _Kind()


def _kind(group: str, kind: str, builtin: bool) -> _Kind:
    return _KINDS.get((group, kind), _DEFAULT) if builtin else _DEFAULT


def validate_create(
    group: str, kind: str, obj: Mapping[str, Any], *, namespaced: bool, builtin: bool = True
) -> list[FieldError]:
    """The errors of a create (after defaulting and ``PrepareForCreate``)."""
    rules = _kind(group, kind, builtin)
    meta = obj.get("metadata")
    errors = validate_object_meta(meta, namespaced=namespaced, name_fn=rules.name)
    if builtin:
        finalizers = meta.get("finalizers") if isinstance(meta, Mapping) else None
        errors.extend(kube_finalizer_errors(finalizers, "metadata.finalizers"))
    errors.extend(rules.check(obj, None))
    return errors


def _common_update(
    new: Mapping[str, Any], old: Mapping[str, Any], namespaced: bool
) -> list[FieldError]:
    errors = validate_object_meta(
        new.get("metadata"), namespaced=namespaced, name_fn=_path_segment_names
    )
    return errors + validate_object_meta_update(new.get("metadata"), old.get("metadata"))


def _meta_update(new: Mapping[str, Any], old: Mapping[str, Any], builtin: bool) -> list[FieldError]:
    errors = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    if builtin:
        meta = new.get("metadata")
        finalizers = meta.get("finalizers") if isinstance(meta, Mapping) else None
        errors.extend(kube_finalizer_errors(finalizers, "metadata.finalizers"))
    return errors


def validate_update(
    group: str,
    kind: str,
    new: Mapping[str, Any],
    old: Mapping[str, Any],
    *,
    namespaced: bool,
    builtin: bool = True,
) -> list[FieldError]:
    """The errors of an update of the main resource (after ``PrepareForUpdate``)."""
    rules = _kind(group, kind, builtin)
    errors = _common_update(new, old, namespaced) + _meta_update(new, old, builtin)
    if rules.revalidate_meta:
        errors.extend(
            validate_object_meta(new.get("metadata"), namespaced=namespaced, name_fn=rules.name)
        )
    errors.extend(rules.check(new, old))
    if builtin:
        errors.extend(update_errors(group, kind, new, old))
    return errors


_STATUS_COUNTERS = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "updatedReplicas",
    "unavailableReplicas",
    "currentReplicas",
    "fullyLabeledReplicas",
    "observedGeneration",
    "currentNumberScheduled",
    "numberMisscheduled",
    "desiredNumberScheduled",
    "numberReady",
    "updatedNumberScheduled",
    "numberAvailable",
    "numberUnavailable",
    "active",
    "succeeded",
    "failed",
)


def validate_status_update(
    group: str,
    kind: str,
    new: Mapping[str, Any],
    old: Mapping[str, Any],
    *,
    namespaced: bool,
    builtin: bool = True,
) -> list[FieldError]:
    """The errors of a status update: the metadata rules, then the kind's
    ``Validate*StatusUpdate`` (:mod:`._status`: Job, Pod, the apps workloads, Namespace;
    non-negative counters for the other apps and batch kinds)."""
    errors = _common_update(new, old, namespaced) + _meta_update(new, old, builtin)
    if not builtin:
        return errors
    own = status_update_errors(group, kind, new, old)
    if own is not None:
        return errors + own
    status = new.get("status")
    if group in ("apps", "batch") and isinstance(status, Mapping):
        for name in _STATUS_COUNTERS:
            errors.extend(nonnegative(status.get(name), f"status.{name}"))
    status_check = _STATUS_CHECKS.get((group, kind)) if builtin else None
    if status_check is not None:
        errors.extend(status_check(new))
    return errors


def warnings_on_create(group: str, kind: str, obj: Mapping[str, Any]) -> list[str]:
    """``WarningsOnCreate``: a Pod or pod-owning controller whose name is not a DNS label."""
    rules = _kind(group, kind, True)
    if not rules.warning:
        return []
    meta = obj.get("metadata")
    name = str(meta.get("name") or "") if isinstance(meta, Mapping) else ""
    problems = is_dns1123_label(name)
    if not problems:
        return []
    return [f"metadata.name: {rules.warning}; a DNS label is recommended: [{' '.join(problems)}]"]
