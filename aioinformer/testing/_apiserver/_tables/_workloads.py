"""The printers of the workload kinds (``pkg/printers/internalversion/printers.go``).

Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job and CronJob:
``print<Kind>`` and the column definitions of ``AddHandlers``. A missing ``replicas`` is the
server's default, 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from ._format import (
    AGE,
    CONTAINERS,
    IMAGES,
    NAME,
    Column,
    age_of,
    col,
    container_cells,
    format_label_selector,
    format_labels,
    human_duration,
    integer,
    name_of,
    parse_time,
    part,
    selector_string,
    since,
)

__all__ = ["WORKLOADS"]

Obj = Mapping[str, Any]
SELECTOR = "Selector"


def _deployment(obj: Obj, now: datetime) -> list[Any]:
    selector = selector_string(part(obj, "spec", "selector"))
    return [
        name_of(obj),
        f"{integer(obj, 'status', 'readyReplicas')}/{integer(obj, 'spec', 'replicas', default=1)}",
        integer(obj, "status", "updatedReplicas"),
        integer(obj, "status", "availableReplicas"),
        age_of(obj, now),
        *container_cells(part(obj, "spec", "template", "spec", "containers")),
        "<invalid>" if selector is None else selector,
    ]


def _replica_set(obj: Obj, now: datetime) -> list[Any]:
    return [
        name_of(obj),
        integer(obj, "spec", "replicas", default=1),
        integer(obj, "status", "replicas"),
        integer(obj, "status", "readyReplicas"),
        age_of(obj, now),
        *container_cells(part(obj, "spec", "template", "spec", "containers")),
        format_label_selector(part(obj, "spec", "selector")),
    ]


def _replication_controller(obj: Obj, now: datetime) -> list[Any]:
    cells = _replica_set(obj, now)
    cells[-1] = format_labels(part(obj, "spec", "selector"))
    return cells


def _stateful_set(obj: Obj, now: datetime) -> list[Any]:
    desired = integer(obj, "spec", "replicas", default=1)
    ready = f"{integer(obj, 'status', 'readyReplicas')}/{desired}"
    containers = part(obj, "spec", "template", "spec", "containers")
    return [name_of(obj), ready, age_of(obj, now), *container_cells(containers)]


def _daemon_set(obj: Obj, now: datetime) -> list[Any]:
    status = [
        integer(obj, "status", field)
        for field in (
            "desiredNumberScheduled",
            "currentNumberScheduled",
            "numberReady",
            "updatedNumberScheduled",
            "numberAvailable",
        )
    ]
    template = part(obj, "spec", "template", "spec") or {}
    return [
        name_of(obj),
        *status,
        format_labels(template.get("nodeSelector")),
        age_of(obj, now),
        *container_cells(template.get("containers")),
        format_label_selector(part(obj, "spec", "selector")),
    ]


def _condition_true(conditions: Any, kind: str) -> bool:
    """``hasJobCondition``: the first condition of the type decides."""
    for condition in conditions or ():
        if condition.get("type") == kind:
            return bool(condition.get("status") == "True")
    return False


def _job(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    succeeded = status.get("succeeded") or 0
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif (spec.get("parallelism") or 0) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    start, end = parse_time(status.get("startTime")), parse_time(status.get("completionTime"))
    duration = "" if start is None else human_duration((end or now) - start)
    conditions = status.get("conditions")
    state = "Running"
    if _condition_true(conditions, "Complete"):
        state = "Complete"
    elif _condition_true(conditions, "Failed"):
        state = "Failed"
    elif part(obj, "metadata", "deletionTimestamp") is not None:
        state = "Terminating"
    elif _condition_true(conditions, "Suspended"):
        state = "Suspended"
    elif _condition_true(conditions, "FailureTarget"):
        state = "FailureTarget"
    return [
        name_of(obj),
        state,
        completions,
        duration,
        age_of(obj, now),
        *container_cells(part(spec, "template", "spec", "containers")),
        format_label_selector(spec.get("selector")),
    ]


def _cron_job(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    suspend = spec.get("suspend")
    last = status.get("lastScheduleTime")
    job_spec = part(spec, "jobTemplate", "spec") or {}
    return [
        name_of(obj),
        spec.get("schedule", ""),
        spec.get("timeZone") or "<none>",
        "<unset>" if suspend is None else ("True" if suspend else "False"),
        len(status.get("active") or ()),
        "<none>" if last is None else since(last, now),
        age_of(obj, now),
        *container_cells(part(job_spec, "template", "spec", "containers")),
        format_label_selector(job_spec.get("selector")),
    ]


_TEMPLATE = (CONTAINERS, IMAGES)
_RS_COLUMNS = (
    NAME,
    col("Desired", "integer", "apps.ReplicaSetSpec.replicas"),
    col("Current", "integer", "apps.ReplicaSetStatus.replicas"),
    col("Ready", "integer", "apps.ReplicaSetStatus.readyReplicas"),
    AGE,
    *_TEMPLATE,
    col(SELECTOR, doc="apps.ReplicaSetSpec.selector", p=1),
)

Printer = tuple[tuple[Column, ...], Callable[[Obj, datetime], list[Any]]]

#: ``(group, kind)`` → the columns and the printer of the cells.
WORKLOADS: dict[tuple[str, str], Printer] = {
    ("apps", "Deployment"): (
        (
            NAME,
            col("Ready", text="Number of the pod with ready state"),
            col("Up-to-date", doc="apps.DeploymentStatus.updatedReplicas"),
            col("Available", doc="apps.DeploymentStatus.availableReplicas"),
            AGE,
            *_TEMPLATE,
            col(SELECTOR, doc="apps.DeploymentSpec.selector", p=1),
        ),
        _deployment,
    ),
    ("apps", "ReplicaSet"): (_RS_COLUMNS, _replica_set),
    ("", "ReplicationController"): (_RS_COLUMNS, _replication_controller),
    ("apps", "StatefulSet"): (
        (NAME, col("Ready", text="Number of the pod with ready state"), AGE, *_TEMPLATE),
        _stateful_set,
    ),
    ("apps", "DaemonSet"): (
        (
            NAME,
            col("Desired", "integer", "apps.DaemonSetStatus.desiredNumberScheduled"),
            col("Current", "integer", "apps.DaemonSetStatus.currentNumberScheduled"),
            col("Ready", "integer", "apps.DaemonSetStatus.numberReady"),
            col("Up-to-date", "integer", "apps.DaemonSetStatus.updatedNumberScheduled"),
            col("Available", "integer", "apps.DaemonSetStatus.numberAvailable"),
            col("Node Selector", doc="core.PodSpec.nodeSelector"),
            AGE,
            *_TEMPLATE,
            col(SELECTOR, doc="apps.DaemonSetSpec.selector", p=1),
        ),
        _daemon_set,
    ),
    ("batch", "Job"): (
        (
            NAME,
            col("Status", text="Status of the job."),
            col("Completions", doc="batch.JobStatus.succeeded"),
            col("Duration", text="Time required to complete the job."),
            AGE,
            *_TEMPLATE,
            col(SELECTOR, doc="batch.JobSpec.selector", p=1),
        ),
        _job,
    ),
    ("batch", "CronJob"): (
        (
            NAME,
            col("Schedule", doc="batch.CronJobSpec.schedule"),
            col("Timezone", doc="batch.CronJobSpec.timeZone"),
            col("Suspend", "boolean", "batch.CronJobSpec.suspend"),
            col("Active", "integer", "batch.CronJobStatus.active"),
            col("Last Schedule", doc="batch.CronJobStatus.lastScheduleTime"),
            AGE,
            *_TEMPLATE,
            col(SELECTOR, doc="batch.JobSpec.selector", p=1),
        ),
        _cron_job,
    ),
}
