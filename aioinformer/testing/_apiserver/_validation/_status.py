"""Validation of the status of the common workloads on a status update, kind by kind.

Ports of the behaviour of the ``Validate*StatusUpdate`` functions that the kinds' status
strategies call (``pkg/registry/<group>/<kind>/strategy.go``, ``<kind>StatusStrategy.
ValidateUpdate``), 1.37:

* **Job** (``pkg/apis/batch/validation/validation.go``: ``ValidateJobUpdateStatus`` →
  ``validateJobStatus`` and ``ValidateJobStatusUpdate``), with the options
  ``getStatusValidationOptions`` (``pkg/registry/batch/job/strategy.go``) switches on now
  that ``JobManagedBy`` is GA: most checks run only when the fields they look at changed,
  so a Job whose status already breaks a rule can still be updated elsewhere. A bare
  ``Complete=True`` is refused (``completionTime is required for Complete jobs``,
  ``startTime is required for finished job``), as are a ``completionTime`` before
  ``startTime``, a finished Job with active pods or uncounted terminated pods, terminal
  conditions switched off, decreasing counters, and malformed indexes;
* **Pod** (``pkg/apis/core/validation/validation.go``: ``ValidatePodStatusUpdate``):
  condition types (qualified names unless well known), ``nominatedNodeName``, the immutable
  ``qosClass``, containers that may not leave ``terminated`` (unless their restart policy
  restarts them), ``podIPs``/``hostIPs`` (valid IPs, at most one per family);
* **Deployment**, **ReplicaSet**, **StatefulSet**, **DaemonSet**
  (``pkg/apis/apps/validation/validation.go``): non-negative counters, the relations between
  them (``cannot be greater than status.replicas``...), ``collisionCount`` that
  ``cannot be decremented``;
* **Namespace** (``ValidateNamespaceStatusUpdate``): ``status.phase`` may only be ``Active``
  without a ``deletionTimestamp`` and ``Terminating`` with one.

Each function returns the errors in the order the real checks append them.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from ._content import is_dns1123_subdomain, is_qualified_name, is_valid_ip
from ._fielderrors import OMIT, FieldError, duplicate, forbidden, invalid, required
from ._meta import immutable, nonnegative, semantic

__all__ = ["status_update_errors"]

_GREATER = "cannot be greater than status.replicas"
_INTEGER = re.compile(r"[+-]?[0-9]+")


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return None


# -- Job --------------------------------------------------------------------------------------


def _condition_true(status: Mapping[str, Any], kind: str) -> bool:
    """``IsConditionTrue``: a condition of the type with status ``True``."""
    return any(
        _map(c).get("type") == kind and _map(c).get("status") == "True"
        for c in _list(status.get("conditions"))
    )


def _complete(status: Mapping[str, Any]) -> bool:
    return _condition_true(status, "Complete")


def _failed(status: Mapping[str, Any]) -> bool:
    return _condition_true(status, "Failed")


def _finished(status: Mapping[str, Any]) -> bool:
    return _complete(status) or _failed(status)


def _index(text: str) -> int | None:
    """Go's ``strconv.Atoi``."""
    return int(text) if _INTEGER.fullmatch(text) else None


def _indexes_error(text: str, completions: int) -> str:
    """``validateIndexesFormat``: why an index list (``1,3-5``) is malformed, or ``""``."""
    if not text:
        return ""
    last: int | None = None
    for interval in text.split(","):
        limits = interval.split("-")
        if len(limits) > 2:
            return (
                f'the fragment "{interval}" violates the requirement that an index interval '
                "can have at most two parts separated by '-'"
            )
        for limit in limits:
            index = _index(limit)
            if index is None:
                return f'cannot convert string to integer for index: "{limit}"'
            if index >= completions:
                return f'too large index: "{limit}"'
            if last is not None and last >= index:
                return f"non-increasing order, previous: {last}, current: {index}"
            last = index
    return ""


def _indexes(text: str) -> set[int]:
    found: set[int] = set()
    for interval in text.split(","):
        limits = interval.split("-")
        try:
            low, high = int(limits[0]), int(limits[-1])
        except ValueError:
            continue
        found.update(range(low, high + 1))
    return found


def _job_status(job: Mapping[str, Any], changed: Callable[[str], bool]) -> list[FieldError]:
    """``validateJobStatus`` with the options of ``getStatusValidationOptions``."""
    spec, status = _map(job.get("spec")), _map(job.get("status"))
    errors: list[FieldError] = []
    for name in ("active", "succeeded", "failed", "ready", "terminating"):
        errors += nonnegative(status.get(name), f"status.{name}")
    uncounted = status.get("uncountedTerminatedPods")
    if isinstance(uncounted, Mapping):
        seen: set[str] = set()
        for group in ("succeeded", "failed"):
            for i, uid in enumerate(_list(uncounted.get(group))):
                where = f"status.uncountedTerminatedPods.{group}[{i}]"
                if not uid:
                    errors.append(invalid(where, uid, "must not be empty"))
                elif uid in seen:
                    errors.append(duplicate(where, uid))
                else:
                    seen.add(uid)
    complete, failed = _complete(status), _failed(status)
    failure_target = _condition_true(status, "FailureTarget")
    completion, start = status.get("completionTime"), status.get("startTime")
    if (changed("complete") or changed("failed")) and complete and failed:
        errors.append(
            invalid(
                "status.conditions", OMIT, "cannot set Complete=True and Failed=true conditions"
            )
        )
    if (changed("complete") or changed("failureTarget")) and complete and failure_target:
        errors.append(
            invalid(
                "status.conditions",
                OMIT,
                "cannot set Complete=True and FailureTarget=true conditions",
            )
        )
    if (changed("complete") or changed("completionTime")) and completion and not complete:
        errors.append(
            invalid(
                "status.completionTime",
                completion,
                "cannot set completionTime when there is no Complete=True condition",
            )
        )
    if (changed("complete") or changed("completionTime")) and not completion and complete:
        errors.append(
            required("status.completionTime", "completionTime is required for Complete jobs")
        )
    if changed("startTime") or changed("completionTime"):
        began, ended = _time(start), _time(completion)
        if began is not None and ended is not None and ended < began:
            errors.append(
                invalid(
                    "status.completionTime",
                    completion,
                    "completionTime cannot be set before startTime",
                )
            )
    finished = _finished(status)
    active = _int(status.get("active"))
    if (changed("finished") or changed("active")) and active > 0 and finished:
        errors.append(invalid("status.active", active, "active>0 is invalid for finished job"))
    if (changed("finished") or changed("startTime")) and not start and finished:
        errors.append(required("status.startTime", "startTime is required for finished job"))
    left = _map(uncounted)
    if (
        (changed("finished") or changed("uncounted"))
        and finished
        and (_list(left.get("succeeded")) or _list(left.get("failed")))
    ):
        errors.append(
            invalid(
                "status.uncountedTerminatedPods",
                dict(left),
                "uncountedTerminatedPods needs to be empty for finished job",
            )
        )
    completions = spec.get("completions")
    completed_indexes = str(status.get("completedIndexes") or "")
    failed_indexes = status.get("failedIndexes")
    if changed("completedIndexes") and isinstance(completions, int):
        problem = _indexes_error(completed_indexes, completions)
        if problem:
            errors.append(
                invalid(
                    "status.completedIndexes",
                    completed_indexes,
                    f"error parsing completedIndexes: {problem}",
                )
            )
    limit_per_index = spec.get("backoffLimitPerIndex")
    if (
        changed("failedIndexes")
        and isinstance(completions, int)
        and limit_per_index is not None
        and isinstance(failed_indexes, str)
    ):
        problem = _indexes_error(failed_indexes, completions)
        if problem:
            errors.append(
                invalid(
                    "status.failedIndexes",
                    failed_indexes,
                    f"error parsing failedIndexes: {problem}",
                )
            )
    indexed = spec.get("completionMode") == "Indexed"
    if changed("completedIndexes") and completed_indexes and not indexed:
        errors.append(
            invalid(
                "status.completedIndexes",
                completed_indexes,
                "cannot set non-empty completedIndexes when non-indexed completion mode",
            )
        )
    if changed("failedIndexes") and limit_per_index is None and failed_indexes is not None:
        errors.append(
            invalid(
                "status.failedIndexes",
                failed_indexes,
                "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
            )
        )
    if (
        (changed("failedIndexes") or changed("completedIndexes"))
        and isinstance(failed_indexes, str)
        and completed_indexes
    ):
        overlap = sorted(_indexes(failed_indexes) & _indexes(completed_indexes))
        if overlap:
            errors.append(
                invalid(
                    "status.failedIndexes",
                    failed_indexes,
                    f"failedIndexes and completedIndexes overlap at index: {overlap[0]}",
                )
            )
    success = _condition_true(status, "SuccessCriteriaMet")
    if success and failed:
        errors.append(
            invalid(
                "status.conditions",
                OMIT,
                "cannot set SuccessCriteriaMet=True and Failed=true conditions",
            )
        )
    if success and failure_target:
        errors.append(
            invalid(
                "status.conditions",
                OMIT,
                "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
            )
        )
    if spec.get("successPolicy") is not None and not success and complete:
        errors.append(
            invalid(
                "status.conditions",
                OMIT,
                "cannot set Complete=True for Job with SuccessPolicy unless "
                "SuccessCriteriaMet=True",
            )
        )
    return errors


def _job(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateJobStatusUpdate`` (after the metadata checks)."""
    status, old_status = _map(new.get("status")), _map(old.get("status"))
    probes: dict[str, Callable[[Mapping[str, Any]], Any]] = {
        "finished": _finished,
        "complete": _complete,
        "failed": _failed,
        "failureTarget": lambda s: _condition_true(s, "FailureTarget"),
        "completedIndexes": lambda s: s.get("completedIndexes") or "",
        "failedIndexes": lambda s: s.get("failedIndexes"),
        "active": lambda s: _int(s.get("active")),
        "startTime": lambda s: _time(s.get("startTime")),
        "completionTime": lambda s: _time(s.get("completionTime")),
        "uncounted": lambda s: semantic(s.get("uncountedTerminatedPods")),
    }

    def changed(name: str) -> bool:
        probe = probes[name]
        return bool(probe(status) != probe(old_status))

    errors = _job_status(new, changed)
    for kind in ("Failed", "Complete", "FailureTarget"):
        if _condition_true(old_status, kind) and not _condition_true(status, kind):
            errors.append(
                invalid(
                    "status.conditions", OMIT, f"cannot disable the terminal {kind}=True condition"
                )
            )
    if _int(old_status.get("failed")) > _int(status.get("failed")):
        errors.append(
            invalid(
                "status.failed", _int(status.get("failed")), "cannot decrease the failed counter"
            )
        )
    spec = _map(new.get("spec"))
    indexed = spec.get("completionMode") == "Indexed"
    scalable = indexed and spec.get("completions") == spec.get("parallelism")
    if not scalable and _int(old_status.get("succeeded")) > _int(status.get("succeeded")):
        errors.append(
            invalid(
                "status.succeeded",
                _int(status.get("succeeded")),
                "cannot decrease the succeeded counter",
            )
        )
    before, after = _time(old_status.get("completionTime")), _time(status.get("completionTime"))
    if before is not None and after is not None and before != after:
        errors.append(
            invalid(
                "status.completionTime",
                status.get("completionTime"),
                "completionTime cannot be mutated",
            )
        )
    if (
        _time(old_status.get("startTime")) is not None
        and probes["startTime"](status) != probes["startTime"](old_status)
        and spec.get("suspend") is not True
    ):
        errors.append(
            required("status.startTime", "startTime cannot be removed for unsuspended job")
        )
    if _condition_true(old_status, "SuccessCriteriaMet") and not _condition_true(
        status, "SuccessCriteriaMet"
    ):
        errors.append(
            invalid(
                "status.conditions", OMIT, "cannot disable the SuccessCriteriaMet=True condition"
            )
        )
    return errors


# -- Pod --------------------------------------------------------------------------------------

#: The condition types ``validatePodConditions`` takes without checking their name.
_POD_CONDITIONS = frozenset(
    {
        "PodScheduled",
        "Ready",
        "Initialized",
        "ContainersReady",
        "PodReadyToStartContainers",
        "DisruptionTarget",
        "PodResizePending",
        "PodResizeInProgress",
    }
)


def _container_transitions(
    new: list[Any], old: list[Any], path: str, restart: Callable[[Mapping[str, Any]], bool]
) -> list[FieldError]:
    """``ValidateContainerStateTransition``: a terminated container may not leave
    ``terminated`` unless it would be restarted (``restart(old_status)``)."""
    errors: list[FieldError] = []
    for i, before in enumerate(old):
        state = _map(_map(before).get("state"))
        if state.get("terminated") is None:
            continue
        if restart({**_map(state["terminated"]), "name": _map(before).get("name")}):
            continue
        for after in new:
            same = _map(after).get("name") == _map(before).get("name")
            if same and _map(_map(after).get("state")).get("terminated") is None:
                errors.append(
                    forbidden(
                        f"{path}[{i}].state", "may not be transitioned to non-terminated state"
                    )
                )
    return errors


def _ips(new: Mapping[str, Any], old: Mapping[str, Any], key: str) -> list[FieldError]:
    """``validatePodIPs`` / ``validateHostIPs``."""
    path = f"status.{key}"
    entries = _list(_map(new.get("status")).get(key))
    errors: list[FieldError] = []
    texts = []
    for i, entry in enumerate(entries):
        text = str(_map(entry).get("ip") or "")
        texts.append(text)
        errors += [invalid(f"{path}[{i}]", text, problem) for problem in is_valid_ip(text)]
    if len(entries) > 1 and not errors:
        families = []
        for text in texts:
            families.append(ipaddress.ip_address(text).version)
        if len(texts) > 2 or len(set(families)) != len(families):
            errors.append(
                invalid(path, entries, "may specify no more than one IP for each IP family")
            )
    return errors


def _pod(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePodStatusUpdate`` (after the metadata checks)."""
    status, old_status = _map(new.get("status")), _map(old.get("status"))
    errors: list[FieldError] = []
    for i, condition in enumerate(_list(status.get("conditions"))):
        kind = str(_map(condition).get("type") or "")
        if kind not in _POD_CONDITIONS:
            errors += [
                invalid(f"status.conditions[{i}].Type", kind, problem)
                for problem in is_qualified_name(kind)
            ]
        errors += nonnegative(
            _map(condition).get("observedGeneration"), f"status.conditions[{i}].observedGeneration"
        )
    if _map(new.get("spec")).get("nodeName") != _map(old.get("spec")).get("nodeName"):
        errors.append(forbidden("status.nodeName", "may not be changed directly"))
    nominated = str(status.get("nominatedNodeName") or "")
    if nominated and nominated != old_status.get("nominatedNodeName"):
        errors += [
            invalid("status.nominatedNodeName", nominated, problem)
            for problem in is_dns1123_subdomain(nominated)
        ]
    errors += immutable(status.get("qosClass"), old_status.get("qosClass"), "status.qosClass")
    spec = _map(old.get("spec"))
    policy = spec.get("restartPolicy")

    def restarts(terminated: Mapping[str, Any]) -> bool:
        if policy == "Always":
            return True
        return policy == "OnFailure" and _int(terminated.get("exitCode")) != 0

    sidecars = {
        str(_map(c).get("name"))
        for c in _list(spec.get("initContainers"))
        if _map(c).get("restartPolicy") == "Always"
    }

    def init_restarts(terminated: Mapping[str, Any]) -> bool:
        return terminated.get("name") in sidecars or restarts(terminated)

    errors += _container_transitions(
        _list(status.get("containerStatuses")),
        _list(old_status.get("containerStatuses")),
        "status.containerStatuses",
        restarts,
    )
    errors += _container_transitions(
        _list(status.get("initContainerStatuses")),
        _list(old_status.get("initContainerStatuses")),
        "status.initContainerStatuses",
        init_restarts,
    )
    errors += _container_transitions(
        _list(status.get("ephemeralContainerStatuses")),
        _list(old_status.get("ephemeralContainerStatuses")),
        "status.ephemeralContainerStatuses",
        lambda _: False,
    )
    return errors + _ips(new, old, "podIPs") + _ips(new, old, "hostIPs")


# -- apps -------------------------------------------------------------------------------------


def _counters(status: Mapping[str, Any], names: tuple[str, ...]) -> list[FieldError]:
    errors: list[FieldError] = []
    for name in names:
        errors += nonnegative(status.get(name), f"status.{name}")
    return errors


def _not_above(
    status: Mapping[str, Any], names: tuple[str, ...], limit: str, detail: str
) -> list[FieldError]:
    ceiling = _int(status.get(limit))
    return [
        invalid(f"status.{name}", _int(status.get(name)), detail)
        for name in names
        if _int(status.get(name)) > ceiling
    ]


def _collision(status: Mapping[str, Any], old_status: Mapping[str, Any]) -> list[FieldError]:
    """``IsDecremented(collisionCount)``: ``cannot be decremented``."""
    before, after = old_status.get("collisionCount"), status.get("collisionCount")
    if before is None:
        return []
    if after is None or _int(after) < _int(before):
        return [invalid("status.collisionCount", _int(after), "cannot be decremented")]
    return []


def _deployment(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateDeploymentStatusUpdate``."""
    status = _map(new.get("status"))
    errors = _counters(
        status,
        (
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "terminatingReplicas",
            "collisionCount",
        ),
    )
    errors += _not_above(
        status, ("updatedReplicas", "readyReplicas", "availableReplicas"), "replicas", _GREATER
    )
    errors += _not_above(
        status, ("availableReplicas",), "readyReplicas", "cannot be greater than readyReplicas"
    )
    return errors + _collision(status, _map(old.get("status")))


def _replica_set(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateReplicaSetStatusUpdate``."""
    status = _map(new.get("status"))
    errors = _counters(
        status,
        (
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
            "terminatingReplicas",
        ),
    )
    errors += _not_above(
        status,
        ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
        "replicas",
        _GREATER,
    )
    return errors + _not_above(
        status, ("availableReplicas",), "readyReplicas", "cannot be greater than readyReplicas"
    )


def _stateful_set(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateStatefulSetStatusUpdate``."""
    status = _map(new.get("status"))
    errors = _counters(
        status,
        (
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
            "observedGeneration",
            "collisionCount",
        ),
    )
    errors += _not_above(
        status,
        ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"),
        "replicas",
        _GREATER,
    )
    errors += _not_above(
        status,
        ("availableReplicas",),
        "readyReplicas",
        "cannot be greater than status.readyReplicas",
    )
    return errors + _collision(status, _map(old.get("status")))


def _daemon_set(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateDaemonSetStatusUpdate``."""
    status = _map(new.get("status"))
    errors = _counters(
        status,
        (
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
            "collisionCount",
        ),
    )
    return errors + _collision(status, _map(old.get("status")))


def _namespace(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateNamespaceStatusUpdate``."""
    phase = _map(new.get("status")).get("phase")
    if not _map(new.get("metadata")).get("deletionTimestamp"):
        if phase != "Active":
            return [
                invalid(
                    "status.Phase",
                    phase or "",
                    "may only be 'Active' if `deletionTimestamp` is empty",
                )
            ]
    elif phase != "Terminating":
        return [
            invalid(
                "status.Phase",
                phase or "",
                "may only be 'Terminating' if `deletionTimestamp` is not empty",
            )
        ]
    return []


_BY_KIND: dict[
    tuple[str, str], Callable[[Mapping[str, Any], Mapping[str, Any]], list[FieldError]]
] = {
    ("batch", "Job"): _job,
    ("", "Pod"): _pod,
    ("apps", "Deployment"): _deployment,
    ("apps", "ReplicaSet"): _replica_set,
    ("apps", "StatefulSet"): _stateful_set,
    ("apps", "DaemonSet"): _daemon_set,
    ("", "Namespace"): _namespace,
}


def status_update_errors(
    group: str, kind: str, new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[FieldError] | None:
    """The kind's own status-update errors (after the metadata checks); None for a kind
    without rules of its own here."""
    check = _BY_KIND.get((group, kind))
    return None if check is None else check(new, old)
