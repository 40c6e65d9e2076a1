"""A kubelet for every node, on the server's clock: scheduled pods run, deleted pods stop.

What a real kubelet (``pkg/kubelet``: the pod workers, the status manager
``pkg/kubelet/status/status_manager.go``) writes to the API server for a pod bound to its node
(``spec.nodeName`` set), in the shape a 1.37 kubelet writes it (``PATCH pods/<name>/status``
as field manager ``kubelet``):

* **accepted** (at once): ``phase: Pending``, ``startTime``, ``hostIP``/``hostIPs``,
  ``observedGeneration``, the five conditions in the kubelet's order
  (``PodReadyToStartContainers`` False, ``Initialized`` True, or False with
  ``ContainersNotInitialized`` while init containers have not run, ``Ready`` and
  ``ContainersReady`` False with ``ContainersNotReady`` and ``containers with unready status:
  [app]``, ``PodScheduled`` True), each container ``waiting: {reason: ContainerCreating}``
  (``PodInitializing`` behind init containers);
* **running** (after ``start_delay`` seconds on the clock): ``phase: Running``, a ``podIP``
  from 10.244.0.0/16, every condition True, init containers ``terminated: Completed``, each
  container ``running`` with ``startedAt``, ``ready``/``started`` true, a ``containerID``
  (``containerd://`` and 64 hex digits), the image fully qualified (``nginx:1.25`` →
  ``docker.io/library/nginx:1.25``) and an ``imageID`` (``…@sha256:…``); no readiness probe
  runs: containers are ready once started;
* **graceful deletion**: once the pod is marked (``deletionTimestamp``,
  ``deletionGracePeriodSeconds``), its containers stop after ``stop_delay`` seconds (a
  process that exits on SIGTERM), or are killed when the grace period ends first (``None``:
  they ignore SIGTERM and are always killed then). The kubelet writes the terminated states
  (exit code 0 ``Completed``, or 137 ``Error`` when killed), ``Ready``/``ContainersReady``
  False with ``PodCompleted``, the terminal phase (``Succeeded`` when every container exited
  0, else ``Failed``), then sends the status manager's final
  ``DELETE`` with ``gracePeriodSeconds: 0`` and the pod's ``uid`` as precondition, which
  removes the pod (``podStrategy.CheckGracefulDelete``). A shorter grace period given later
  brings the stop forward.

Pods that finished (``Succeeded``/``Failed``) are left alone; containers never exit on their
own. Timestamps are wall-clock time (as every timestamp the fake writes); the delays are on
the injected :class:`~aioinformer.Clock`, so a test with a fake clock decides when pods
start and stop. The node of a pod need not exist as a Node object: this kubelet serves every
node name (the host IP is the Node's ``InternalIP`` when there is one, else 172.18.0.2 and up,
one per node name).
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import anyio.lowlevel

from ...._clock import Clock
from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo, ResourceRegistry
from ._deletion import DeleteOptions
from ._history import DELETED, StoredEvent
from ._object_rules import now
from ._rest_types import WriteOptions, Written
from ._storage import Storage

__all__ = ["Kubelet", "KubeletHost", "qualified_image"]

logger = logging.getLogger(__name__)

#: The field manager of the kubelet's status writes.
MANAGER = "kubelet"
_ACCEPT, _START, _STOP = "accept", "start", "stop"
_TERMINAL = ("Succeeded", "Failed")
#: The kubelet's own condition types, in the order it writes them.
_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


class KubeletHost(Protocol):
    """What the kubelet needs of the REST layer (:class:`._rest.RestStorage`)."""

    @property
    def storage(self) -> Storage: ...

    @property
    def registry(self) -> ResourceRegistry: ...

    def patch(
        self,
        info: ResourceInfo,
        patch: Any,
        *,
        name: str,
        namespace: str = "",
        patch_type: str = "merge",
        subresource: str = "",
        options: WriteOptions = ...,
    ) -> Written: ...

    def delete(
        self,
        info: ResourceInfo,
        *,
        name: str,
        namespace: str = "",
        options: DeleteOptions | None = None,
    ) -> Written: ...


def qualified_image(image: str) -> str:
    """The image as the container runtime reports it: ``docker.io/library/`` added to a
    bare name, ``docker.io/`` to a name without a registry, ``:latest`` when untagged."""
    name, at, digest = image.partition("@")
    first, slash, _ = name.partition("/")
    if not slash:
        name = f"docker.io/library/{name}"
    elif not ("." in first or ":" in first or first == "localhost"):
        name = f"docker.io/{name}"
    if not at and ":" not in name.rpartition("/")[2]:
        name += ":latest"
    return f"{name}{at}{digest}"


def _hex(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


@dataclass(slots=True)
class _Pod:
    """What the kubelet knows of one pod it runs."""

    namespace: str
    name: str
    uid: str
    started: bool = False
    stopping_at: float | None = None
    killed: bool = False


def _names(pod: Mapping[str, Any], key: str) -> list[str]:
    items = (pod.get("spec") or {}).get(key) or []
    return [str(c.get("name")) for c in items if isinstance(c, dict)]


def _images(pod: Mapping[str, Any], key: str) -> dict[str, str]:
    items = (pod.get("spec") or {}).get(key) or []
    return {str(c.get("name")): str(c.get("image") or "") for c in items if isinstance(c, dict)}


class Kubelet:
    """The kubelets of a fake server's nodes (see the module docstring).

    It learns of pods from storage (a subscriber) and acts from :meth:`run`, which the
    server runs in its task group while it serves.

    :param rest: the REST layer it writes through.
    :param clock: the clock its delays are measured on.
    :param start_delay: seconds from accepting a pod (``ContainerCreating``) to running it.
    :param stop_delay: seconds its containers take to stop after the pod is marked for
        deletion, bounded by the grace period; None: they are killed when it ends.
    """

    def __init__(
        self,
        rest: KubeletHost,
        *,
        clock: Clock,
        start_delay: float = 1.0,
        stop_delay: float | None = 1.0,
    ) -> None:
        self._rest = rest
        self._clock = clock
        self.start_delay = start_delay
        self.stop_delay = stop_delay
        self._pods_info = rest.registry.resolve("v1/pods")
        self._nodes_info = rest.registry.resolve("v1/nodes")
        self._pods: dict[str, _Pod] = {}
        self._timers: list[tuple[float, int, str, str]] = []
        self._sequence = itertools.count()
        self._wake: anyio.Event | None = None
        self._pod_ips = itertools.count(2)
        self._host_ips: dict[str, str] = {}
        rest.storage.subscribe(self._observe)

    # -- what it learns from storage -------------------------------------------------------

    def _schedule(self, delay: float, uid: str, action: str) -> None:
        deadline = self._clock.now() + max(0.0, delay)
        heapq.heappush(self._timers, (deadline, next(self._sequence), uid, action))
        if self._wake is not None:
            self._wake.set()

    def _observe(self, info: ResourceInfo, event: StoredEvent) -> None:
        if (info.group, info.kind) != ("", "Pod"):
            return
        meta = event.obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        if event.type == DELETED:
            self._pods.pop(uid, None)
            return
        if not (event.obj.get("spec") or {}).get("nodeName"):
            return
        known = self._pods.get(uid)
        if known is None:
            if (event.obj.get("status") or {}).get("phase") in _TERMINAL:
                return
            known = self._pods[uid] = _Pod(
                str(meta.get("namespace") or ""), str(meta.get("name")), uid
            )
            self._schedule(0.0, uid, _ACCEPT)
            self._schedule(self.start_delay, uid, _START)
        if meta.get("deletionTimestamp"):
            grace = float(meta.get("deletionGracePeriodSeconds") or 0)
            delay = grace if self.stop_delay is None else min(self.stop_delay, grace)
            stop_at = self._clock.now() + delay
            if known.stopping_at is None or stop_at < known.stopping_at:
                known.stopping_at = stop_at
                known.killed = self.stop_delay is None or self.stop_delay >= grace
                self._schedule(delay, uid, _STOP)

    # -- the work --------------------------------------------------------------------------

    async def run(self) -> None:
        """Act on the pods as their timers fall due, until cancelled. An action that fails
        is logged and dropped; the others go on."""
        try:
            while True:
                self._wake = anyio.Event()
                due = []
                current = self._clock.now()
                while self._timers and self._timers[0][0] <= current:
                    due.append(heapq.heappop(self._timers))
                for _, _, uid, action in due:
                    try:
                        self._act(uid, action)
                    except Exception:
                        logger.exception("fake API server: the kubelet failed to %s a pod", action)
                if due:
                    await anyio.lowlevel.checkpoint()
                    continue
                wait = self._timers[0][0] - current if self._timers else None
                with self._clock.move_on_after(wait):
                    await self._wake.wait()
        finally:
            self._wake = None

    def _current(self, pod: _Pod) -> KubeObject | None:
        key = f"{pod.namespace}/{pod.name}"
        obj = self._rest.storage.objects(self._pods_info).get(key)
        if obj is None or (obj.get("metadata") or {}).get("uid") != pod.uid:
            return None
        return obj

    def _act(self, uid: str, action: str) -> None:
        pod = self._pods.get(uid)
        if pod is None:
            return
        obj = self._current(pod)
        if obj is None:
            self._pods.pop(uid, None)
            return
        marked = bool((obj.get("metadata") or {}).get("deletionTimestamp"))
        if action == _STOP:
            if pod.stopping_at is not None and pod.stopping_at <= self._clock.now():
                self._stop(pod, obj)
        elif not marked and (obj.get("status") or {}).get("phase") not in _TERMINAL:
            if action == _ACCEPT and not pod.started:
                self._write_status(obj, self._accepted(obj))
            elif action == _START and not pod.started:
                pod.started = True
                self._write_status(obj, self._running(obj))

    def _write_status(self, obj: KubeObject, status: dict[str, Any]) -> None:
        meta = obj["metadata"]
        self._rest.patch(
            self._pods_info,
            {"metadata": {"uid": meta.get("uid")}, "status": status},
            name=str(meta["name"]),
            namespace=str(meta.get("namespace") or ""),
            subresource="status",
            options=WriteOptions(field_manager=MANAGER),
        )

    def _stop(self, pod: _Pod, obj: KubeObject) -> None:
        """The containers have stopped: their final status, then the status manager's
        ``DELETE`` (``gracePeriodSeconds: 0``, the uid as precondition)."""
        if pod.started:
            self._write_status(obj, self._terminated(obj, killed=pod.killed))
        self._pods.pop(pod.uid, None)
        try:
            self._rest.delete(
                self._pods_info,
                name=pod.name,
                namespace=pod.namespace,
                options=DeleteOptions(grace_period_seconds=0, preconditions={"uid": pod.uid}),
            )
        except StatusFailure:
            pass  # gone or replaced meanwhile: nothing left to do, as for the real kubelet

    # -- the statuses ----------------------------------------------------------------------

    def _host_ip(self, node: str) -> str:
        found = self._rest.storage.objects(self._nodes_info).get(node)
        for address in ((found or {}).get("status") or {}).get("addresses") or ():
            if isinstance(address, dict) and address.get("type") == "InternalIP":
                return str(address.get("address"))
        if node not in self._host_ips:
            self._host_ips[node] = f"172.18.0.{2 + len(self._host_ips) % 250}"
        return self._host_ips[node]

    def _pod_ip(self) -> str:
        n = next(self._pod_ips)
        return f"10.244.{n // 254 % 256}.{n % 254 + 1}"

    @staticmethod
    def _condition(
        old: Mapping[str, Any], kind: str, state: bool, stamp: str, generation: Any, **why: str
    ) -> dict[str, Any]:
        """A condition; its ``lastTransitionTime`` kept while its status does not flip."""
        value = "True" if state else "False"
        before = next(
            (
                c
                for c in old.get("conditions") or ()
                if isinstance(c, dict) and c.get("type") == kind
            ),
            None,
        )
        since = stamp
        if (
            before is not None
            and before.get("status") == value
            and before.get("lastTransitionTime")
        ):
            since = before["lastTransitionTime"]
        condition: dict[str, Any] = {"type": kind, "status": value, "lastProbeTime": None}
        condition["lastTransitionTime"] = since
        if generation is not None:
            condition["observedGeneration"] = generation
        condition.update(why)
        return condition

    def _conditions(
        self,
        obj: KubeObject,
        stamp: str,
        *,
        sandbox: bool,
        initialized: bool,
        ready: bool,
        why_not_ready: dict[str, str],
    ) -> list[dict[str, Any]]:
        old = obj.get("status") or {}
        generation = (obj.get("metadata") or {}).get("generation")
        init = _names(obj, "initContainers")
        not_initialized = {
            "reason": "ContainersNotInitialized",
            "message": f"containers with incomplete status: [{' '.join(init)}]",
        }
        mine = [
            self._condition(old, _CONDITIONS[0], sandbox, stamp, generation),
            self._condition(
                old, _CONDITIONS[1], initialized, stamp, generation,
                **({} if initialized else not_initialized),
            ),
            self._condition(old, _CONDITIONS[2], ready, stamp, generation, **why_not_ready),
            self._condition(old, _CONDITIONS[3], ready, stamp, generation, **why_not_ready),
            self._condition(old, "PodScheduled", True, stamp, generation),
        ]  # fmt: skip
        others = [
            c
            for c in old.get("conditions") or ()
            if isinstance(c, dict) and c.get("type") not in (*_CONDITIONS, "PodScheduled")
        ]
        return mine + others

    def _base(self, obj: KubeObject, stamp: str) -> dict[str, Any]:
        old = obj.get("status") or {}
        host = self._host_ip(str(obj["spec"]["nodeName"]))
        status: dict[str, Any] = {"hostIP": host, "hostIPs": [{"ip": host}]}
        status["startTime"] = old.get("startTime") or stamp
        generation = (obj.get("metadata") or {}).get("generation")
        if generation is not None:
            status["observedGeneration"] = generation
        return status

    def _accepted(self, obj: KubeObject) -> dict[str, Any]:
        stamp = now()
        main, init = _names(obj, "containers"), _names(obj, "initContainers")
        images = {**_images(obj, "containers"), **_images(obj, "initContainers")}

        def waiting(name: str, reason: str) -> dict[str, Any]:
            return {
                "name": name,
                "image": images[name],
                "imageID": "",
                "lastState": {},
                "ready": False,
                "restartCount": 0,
                "started": False,
                "state": {"waiting": {"reason": reason}},
            }

        why = {
            "reason": "ContainersNotReady",
            "message": f"containers with unready status: [{' '.join(main)}]",
        }
        status = self._base(obj, stamp)
        status["phase"] = "Pending"
        status["conditions"] = self._conditions(
            obj, stamp, sandbox=False, initialized=not init, ready=False, why_not_ready=why
        )
        behind = "PodInitializing" if init else "ContainerCreating"
        status["containerStatuses"] = [waiting(name, behind) for name in main]
        if init:
            status["initContainerStatuses"] = [
                waiting(name, "ContainerCreating" if i == 0 else "PodInitializing")
                for i, name in enumerate(init)
            ]
        return status

    def _container(self, obj: KubeObject, name: str, image: str, state: dict[str, Any]) -> Any:
        uid = str((obj.get("metadata") or {}).get("uid"))
        qualified = qualified_image(image)
        repository = qualified.partition("@")[0].rpartition(":")[0] or qualified
        return {
            "containerID": f"containerd://{_hex(uid, name)}",
            "image": qualified,
            "imageID": f"{repository}@sha256:{_hex(qualified)}",
            "lastState": {},
            "name": name,
            "ready": "running" in state,
            "restartCount": 0,
            "started": "running" in state,
            "state": state,
        }

    def _running(self, obj: KubeObject) -> dict[str, Any]:
        stamp = now()
        status = self._base(obj, stamp)
        status["phase"] = "Running"
        status["conditions"] = self._conditions(
            obj, stamp, sandbox=True, initialized=True, ready=True, why_not_ready={}
        )
        ip = self._pod_ip()
        status["podIP"], status["podIPs"] = ip, [{"ip": ip}]
        running = {"running": {"startedAt": stamp}}
        status["containerStatuses"] = [
            self._container(obj, name, image, running)
            for name, image in _images(obj, "containers").items()
        ]
        init = _images(obj, "initContainers")
        if init:
            done = {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": stamp,
                    "finishedAt": stamp,
                }
            }
            status["initContainerStatuses"] = [
                self._container(obj, name, image, {"terminated": {**done["terminated"]}})
                for name, image in init.items()
            ]
            for entry in status["initContainerStatuses"]:
                entry["state"]["terminated"]["containerID"] = entry["containerID"]
        return status

    def _terminated(self, obj: KubeObject, *, killed: bool) -> dict[str, Any]:
        stamp = now()
        old = obj.get("status") or {}
        status = self._base(obj, stamp)
        exit_code = 137 if killed else 0
        status["phase"] = "Failed" if killed else "Succeeded"
        why = {"reason": "PodCompleted"}
        status["conditions"] = self._conditions(
            obj, stamp, sandbox=False, initialized=True, ready=False, why_not_ready=why
        )
        statuses = []
        for entry in old.get("containerStatuses") or ():
            if not isinstance(entry, dict):
                continue
            started = ((entry.get("state") or {}).get("running") or {}).get("startedAt")
            terminated = {
                "containerID": entry.get("containerID"),
                "exitCode": exit_code,
                "finishedAt": stamp,
                "reason": "Error" if killed else "Completed",
                "startedAt": started or stamp,
            }
            statuses.append(
                {**entry, "ready": False, "started": False, "state": {"terminated": terminated}}
            )
        status["containerStatuses"] = statuses
        for key in ("podIP", "podIPs", "initContainerStatuses"):
            if key in old:
                status[key] = old[key]
        return status
