"""What an update may not change, per kind, with the real messages.

Ports of the behaviour of the update validations of kubernetes ``pkg/apis/*/validation``:
``ValidatePodUpdate`` (only images, ``activeDeadlineSeconds`` (lowered),
``terminationGracePeriodSeconds`` (a negative one to 1), added tolerations and removed
scheduling gates), the immutable selectors of Deployments, ReplicaSets and DaemonSets
(``ValidateImmutableField``), ``ValidateStatefulSetUpdate``, ``ValidateJobSpecUpdate``
(selector, template, completions, completion mode, failure and success policies, managedBy),
a Service's cluster IP (``validateUpgradeDowngradeClusterIPs``), ConfigMaps and Secrets marked
``immutable`` (and a Secret's ``type``), and a PersistentVolumeClaim's spec. The metadata
rules (name, namespace, uid, creation time) are in :mod:`._validation._meta`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from ._fielderrors import FieldError, forbidden, invalid, required
from ._meta import as_list as _list
from ._meta import as_map as _map
from ._meta import immutable, semantic

__all__ = ["POD_UPDATABLE", "update_errors"]

#: ``updatablePodSpecFieldsNoResources``, as the pod-update message lists them.
POD_UPDATABLE = ",".join(
    [
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
        "negative)",
    ]
)
_IMMUTABLE_SET = "field is immutable when `immutable` is set"
_MAX_INT32 = 2**31 - 1


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(obj.get("spec"))


def _containers(new: Any, old: Any, path: str) -> tuple[list[FieldError], bool]:
    """``ValidateContainerUpdates``."""
    new_list, old_list = _list(new), _list(old)
    if len(new_list) != len(old_list):
        return [forbidden(path, "pod updates may not add or remove containers")], True
    errors = []
    for i, container in enumerate(new_list):
        image = str(_map(container).get("image") or "")
        if not image:
            errors.append(required(f"{path}[{i}].image"))
        if image != image.strip():
            errors.append(
                invalid(f"{path}[{i}].image", image, "must not have leading or trailing whitespace")
            )
    return errors, False


def _only_added_tolerations(new: Any, old: Any) -> list[FieldError]:
    news = [dict(_map(t)) for t in _list(new)]
    for toleration in _list(old):
        base = dict(_map(toleration))
        base.pop("tolerationSeconds", None)
        if not any({k: v for k, v in t.items() if k != "tolerationSeconds"} == base for t in news):
            return [
                forbidden(
                    "spec.tolerations",
                    "existing toleration can not be modified except its tolerationSeconds",
                )
            ]
    return []


def _pod(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    spec, old_spec = _spec(new), _spec(old)
    errors: list[FieldError] = []
    for kind in ("containers", "initContainers"):
        found, stop = _containers(spec.get(kind), old_spec.get(kind), f"spec.{kind}")
        errors.extend(found)
        if stop:
            return errors
    deadline, old_deadline = (
        spec.get("activeDeadlineSeconds"),
        old_spec.get("activeDeadlineSeconds"),
    )
    if isinstance(deadline, int):
        if not 0 <= deadline <= _MAX_INT32:
            detail = f"must be between 0 and {_MAX_INT32}, inclusive"
            return [*errors, invalid("spec.activeDeadlineSeconds", deadline, detail)]
        if isinstance(old_deadline, int) and old_deadline < deadline:
            detail = "must be less than or equal to previous value"
            return [*errors, invalid("spec.activeDeadlineSeconds", deadline, detail)]
    elif old_deadline is not None:
        detail = "must not update from a positive integer to nil value"
        errors.append(invalid("spec.activeDeadlineSeconds", None, detail))
    munged = copy.deepcopy(dict(spec))
    for kind in ("containers", "initContainers"):
        for container, old_container in zip(
            _list(munged.get(kind)), _list(old_spec.get(kind)), strict=False
        ):
            if isinstance(container, dict):
                container["image"] = _map(old_container).get("image")
    for key in ("activeDeadlineSeconds", "tolerations"):
        munged.pop(key, None)
        if key in old_spec:
            munged[key] = old_spec[key]
    grace, old_grace = (
        spec.get("terminationGracePeriodSeconds"),
        old_spec.get("terminationGracePeriodSeconds"),
    )
    if isinstance(old_grace, int) and old_grace < 0 and grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    gates = _list(spec.get("schedulingGates"))
    if all(gate in _list(old_spec.get("schedulingGates")) for gate in gates):
        munged.pop("schedulingGates", None)
        if "schedulingGates" in old_spec:
            munged["schedulingGates"] = old_spec["schedulingGates"]
    errors.extend(_only_added_tolerations(spec.get("tolerations"), old_spec.get("tolerations")))
    if semantic(munged) != semantic(dict(old_spec)):
        errors.append(
            forbidden("spec", f"pod updates may not change fields other than {POD_UPDATABLE}")
        )
    return errors


def _selector(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    return immutable(_spec(new).get("selector"), _spec(old).get("selector"), "spec.selector")


def _stateful_set(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    mutable = (
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "minReadySeconds",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
    )
    rest = {k: v for k, v in _spec(new).items() if k not in mutable}
    old_rest = {k: v for k, v in _spec(old).items() if k not in mutable}
    if semantic(rest) != semantic(old_rest):
        return [
            forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                "'template', 'updateStrategy', 'revisionHistoryLimit', "
                "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            )
        ]
    return []


def _job(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    spec, old_spec = _spec(new), _spec(old)
    errors: list[FieldError] = []
    indexed = spec.get("completionMode") == "Indexed"
    if not indexed:
        errors.extend(
            immutable(spec.get("completions"), old_spec.get("completions"), "spec.completions")
        )
    elif semantic(spec.get("completions")) != semantic(old_spec.get("completions")):
        completions = spec.get("completions")
        if completions is not None and completions != spec.get("parallelism"):
            errors.append(
                invalid(
                    "spec.completions",
                    completions,
                    "can only be modified in tandem with spec.parallelism",
                )
            )
    errors.extend(immutable(spec.get("selector"), old_spec.get("selector"), "spec.selector"))
    template, old_template = copy.deepcopy(spec.get("template")), old_spec.get("template")
    suspended = old_spec.get("suspend") is True and not _map(old.get("status")).get("startTime")
    if suspended and isinstance(template, dict) and isinstance(old_template, Mapping):
        # scheduling directives may change while a suspended job never started
        old_copy = copy.deepcopy(dict(old_template))
        old_pod, pod = old_copy.setdefault("spec", {}), template.get("spec") or {}
        for key in ("nodeSelector", "tolerations", "schedulingGates", "affinity"):
            old_pod.pop(key, None)
            if key in pod:
                old_pod[key] = pod[key]
        old_meta, meta = old_copy.setdefault("metadata", {}), template.get("metadata") or {}
        for key in ("labels", "annotations"):
            old_meta.pop(key, None)
            if key in meta:
                old_meta[key] = meta[key]
        old_template = old_copy
    errors.extend(immutable(template, old_template, "spec.template"))
    for key in (
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ):
        errors.extend(immutable(spec.get(key), old_spec.get(key), f"spec.{key}"))
    return errors


def _service(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    spec, old_spec = _spec(new), _spec(old)
    if "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return []
    ips, old_ips = _list(spec.get("clusterIPs")), _list(old_spec.get("clusterIPs"))
    if ips and old_ips and ips[0] != old_ips[0]:
        return [invalid("spec.clusterIPs[0]", ips, "may not change once set")]
    return []


def _immutable_data(
    keys: tuple[str, ...],
) -> Callable[[Mapping[str, Any], Mapping[str, Any]], list[FieldError]]:
    def check(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
        errors: list[FieldError] = []
        if "type" in keys:
            errors.extend(immutable(new.get("type"), old.get("type"), "type"))
        if old.get("immutable") is True:
            if new.get("immutable") is not True:
                errors.append(forbidden("immutable", _IMMUTABLE_SET))
            for key in keys:
                if key != "type" and semantic(new.get(key)) != semantic(old.get(key)):
                    errors.append(forbidden(key, _IMMUTABLE_SET))
        return errors

    return check


def _pvc(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    bound = _map(old.get("status")).get("phase") == "Bound"
    specs = []
    for obj in (new, old):
        spec = copy.deepcopy(dict(_spec(obj)))
        spec.pop("volumeAttributesClassName", None)
        if bound and isinstance(spec.get("resources"), dict):
            spec["resources"].pop("requests", None)
        specs.append(spec)
    if semantic(specs[0]) != semantic(specs[1]):
        return [
            forbidden(
                "spec",
                "spec is immutable after creation except resources.requests and "
                "volumeAttributesClassName for bound claims",
            )
        ]
    return []


_RULES: dict[
    tuple[str, str], Callable[[Mapping[str, Any], Mapping[str, Any]], list[FieldError]]
] = {
    ("", "Pod"): _pod,
    ("", "Service"): _service,
    ("", "ConfigMap"): _immutable_data(("data", "binaryData")),
    ("", "Secret"): _immutable_data(("type", "data")),
    ("", "PersistentVolumeClaim"): _pvc,
    ("apps", "Deployment"): _selector,
    ("apps", "ReplicaSet"): _selector,
    ("apps", "DaemonSet"): _selector,
    ("apps", "StatefulSet"): _stateful_set,
    ("batch", "Job"): _job,
}


def update_errors(group: str, kind: str, new: Any, old: Any) -> list[FieldError]:
    """The kind's update rules on two decoded, defaulted objects (after the strategy kept the
    stored status)."""
    check = _RULES.get((group, kind))
    return check(_map(new), _map(old)) if check is not None else []
