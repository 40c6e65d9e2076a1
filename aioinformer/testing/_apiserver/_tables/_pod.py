"""The Pod printer (``printPod`` of ``pkg/printers/internalversion/printers.go``).

READY counts ready containers over the containers plus the restartable (sidecar) init
containers; STATUS is the phase, replaced by the pod's reason, ``SchedulingGated``, the
first unfinished init container (``Init:…``), the last container's waiting or terminated
reason, ``Terminating`` or ``Unknown``; RESTARTS adds ``(<age> ago)`` of the last restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ._format import AGE, NAME, Column, parse_time, since

__all__ = ["POD_COLUMNS", "pod_cells", "pod_conditions"]

Obj = Mapping[str, Any]

POD_COLUMNS = (
    NAME,
    Column("Ready", text="The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", text="The aggregate status of the containers in this pod."),
    Column(
        "Restarts",
        text="The number of times the containers in this pod have been restarted and when the "
        "last container in this pod has restarted.",
    ),
    AGE,
    Column("IP", priority=1, doc="core.PodStatus.podIP"),
    Column("Node", priority=1, doc="core.PodSpec.nodeName"),
    Column("Nominated Node", priority=1, doc="core.PodStatus.nominatedNodeName"),
    Column("Readiness Gates", priority=1, doc="core.PodSpec.readinessGates"),
)


def pod_conditions(pod: Obj) -> list[dict[str, Any]] | None:
    """The row conditions: ``Completed`` for a pod that succeeded or failed."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Succeeded":
        message = "The pod has completed successfully."
    elif phase == "Failed":
        message = "The pod failed."
    else:
        return None
    return [{"type": "Completed", "status": "True", "reason": phase, "message": message}]


def _later(current: datetime | None, state: Obj) -> datetime | None:
    """The later of ``current`` and the finish time of the last termination."""
    finished = parse_time(
        ((state.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
    )
    if finished is not None and (current is None or current < finished):
        return finished
    return current


def _terminated_reason(terminated: Obj, prefix: str) -> str:
    if terminated.get("reason"):
        return prefix + str(terminated["reason"])
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode', 0)}"


def _condition(status: Obj, kind: str) -> Obj | None:
    return next((c for c in status.get("conditions") or () if c.get("type") == kind), None)


def pod_cells(pod: Obj, now: datetime) -> list[Any]:
    """The cells of one pod's row (wide: every column)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    meta = pod.get("metadata") or {}
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for condition in status.get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("reason") == (
            "SchedulingGated"
        ):
            reason = "SchedulingGated"
    init_specs = spec.get("initContainers") or []
    sidecars = {c.get("name") for c in init_specs if c.get("restartPolicy") == "Always"}
    total = len(spec.get("containers") or ()) + sum(
        1 for c in init_specs if c.get("restartPolicy") == "Always"
    )
    restarts = sidecar_restarts = ready = 0
    last: datetime | None = None
    last_sidecar: datetime | None = None
    initializing = False
    for index, state in enumerate(status.get("initContainerStatuses") or ()):
        restarts += state.get("restartCount") or 0
        last = _later(last, state)
        sidecar = state.get("name") in sidecars
        if sidecar:
            sidecar_restarts += state.get("restartCount") or 0
            last_sidecar = _later(last_sidecar, state)
        current = state.get("state") or {}
        terminated, waiting = current.get("terminated"), current.get("waiting")
        if terminated is not None and terminated.get("exitCode", 0) == 0:
            continue
        if sidecar and state.get("started"):
            ready += 1 if state.get("ready") else 0
            continue
        if terminated is not None:
            reason = _terminated_reason(terminated, "Init:")
        elif waiting is not None and waiting.get("reason") not in (None, "", "PodInitializing"):
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{index}/{len(init_specs)}"
        initializing = True
        break
    initialized = _condition(status, "Initialized")
    if not initializing or (initialized is not None and initialized.get("status") == "True"):
        restarts, last = sidecar_restarts, last_sidecar
        running = False
        for state in reversed(status.get("containerStatuses") or ()):
            restarts += state.get("restartCount") or 0
            last = _later(last, state)
            current = state.get("state") or {}
            terminated, waiting = current.get("terminated"), current.get("waiting")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated is not None:
                reason = _terminated_reason(terminated, "")
            elif state.get("ready") and current.get("running") is not None:
                running = True
                ready += 1
        if reason == "Completed" and running:
            ready_condition = _condition(status, "Ready")
            is_ready = ready_condition is not None and ready_condition.get("status") == "True"
            reason = "Running" if is_ready else "NotReady"
    if meta.get("deletionTimestamp") is not None:
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Failed", "Succeeded"):
            reason = "Terminating"
    restart_text = str(restarts)
    if restarts and last is not None:
        restart_text = f"{restarts} ({since(last.isoformat(), now)} ago)"
    pod_ips = status.get("podIPs") or ()
    pod_ip = (pod_ips[0].get("ip") if pod_ips else status.get("podIP")) or "<none>"
    gates = spec.get("readinessGates") or []
    gate_text = "<none>"
    if gates:
        true = 0
        for gate in gates:
            found = _condition(status, str(gate.get("conditionType")))
            true += 1 if found is not None and found.get("status") == "True" else 0
        gate_text = f"{true}/{len(gates)}"
    return [
        meta.get("name", ""),
        f"{ready}/{total}",
        reason,
        restart_text,
        since(meta.get("creationTimestamp"), now),
        pod_ip,
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gate_text,
    ]
