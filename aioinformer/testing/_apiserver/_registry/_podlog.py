"""``pods/log``: the containers' logs, as a test sets them, served as the kubelet would.

On a cluster the API server proxies ``GET pods/<name>/log`` to the kubelet
(``pkg/registry/core/pod/rest/log.go``); the fake keeps what the test writes
(``server.objects.append_pod_log``) and answers the same way:

* ``text/plain`` lines; ``container`` selects one (required when the pod has several:
  400 "a container name must be specified for pod …, choose one of: […]"; an unknown one is
  400 "container … is not valid for pod …");
* a pod without ``spec.nodeName`` has no kubelet to ask: 204 No Content (``LogLocation``
  returns no location, which ``StreamObject`` answers with 204);
* lines the test wrote are served as the container's log (the test speaks for the kubelet);
* otherwise the node's kubelet answers from the container's status
  (``validateContainerLogStatus`` in ``pkg/kubelet/kubelet_pods.go``): 400 "container "app"
  in pod "web" is waiting to start: ContainerCreating" (``image can't be pulled`` for
  ``ErrImagePull``, ``trying and failing to pull image`` for ``ImagePullBackOff``), "… is
  waiting to start - no logs yet" without a state, "… is not available" without a status,
  "… is terminated" for a terminated container without ``containerID``; a running or
  terminated container's log is empty. Without the fake's kubelet a pod on a node that has
  no Node object is 404 ``nodes "<node>" not found`` (the API server cannot find the
  kubelet to proxy to);
* ``tailLines``, ``limitBytes``, ``timestamps`` (each line prefixed with its RFC 3339 time),
  ``sinceSeconds``; ``previous=true`` is 400 (the fake keeps no previous container);
* ``follow=true`` streams what is appended until the container is finished
  (``append_pod_log(..., finished=True)``), the pod is gone or the client leaves.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio

from .._api import _status as status
from .._validation._fielderrors import invalid, invalid_failure

__all__ = ["LogOptions", "PodLogs", "pick_container"]


@dataclass(slots=True)
class _Log:
    lines: list[tuple[float, str]] = field(default_factory=list)
    finished: bool = False
    #: The followers waiting for more (events made in their task: appends may come before
    #: any event loop runs).
    waiters: list[anyio.Event] = field(default_factory=list)

    def wake(self) -> None:
        for waiter in self.waiters:
            waiter.set()
        self.waiters.clear()


@dataclass(frozen=True, kw_only=True, slots=True)
class LogOptions:
    """The query of a ``pods/log`` request (``PodLogOptions``)."""

    container: str = ""
    follow: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    timestamps: bool = False
    since_seconds: int | None = None
    previous: bool = False

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> LogOptions:
        """:raises StatusFailure: 400 for a number or boolean that does not parse."""

        def number(name: str) -> int | None:
            text = query.get(name)
            if text is None:
                return None
            try:
                return int(text)
            except ValueError:
                raise status.bad_request(
                    f'strconv.ParseInt: parsing "{text}": invalid syntax'
                ) from None

        def flag(name: str) -> bool:
            return query.get(name, "false").lower() in ("true", "1", "t")

        return cls(
            container=query.get("container", ""),
            follow=flag("follow"),
            tail_lines=number("tailLines"),
            limit_bytes=number("limitBytes"),
            timestamps=flag("timestamps"),
            since_seconds=number("sinceSeconds"),
            previous=flag("previous"),
        )


def _containers(pod: Mapping[str, Any], key: str) -> list[str]:
    items = (pod.get("spec") or {}).get(key) or []
    return [str(c.get("name")) for c in items if isinstance(c, dict)]


def pick_container(pod: Mapping[str, Any], wanted: str) -> str:
    """The container a log request reads (``podLogOptions`` defaulting in ``log.go``).

    :raises StatusFailure: 400 as the real server words it.
    """
    name = str(pod["metadata"]["name"])
    main, init = _containers(pod, "containers"), _containers(pod, "initContainers")
    ephemeral = _containers(pod, "ephemeralContainers")
    if not wanted:
        if len(main) == 1:
            return main[0]
        message = (
            f"a container name must be specified for pod {name}, choose one of: [{' '.join(main)}]"
        )
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        if ephemeral:
            message += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
        raise status.bad_request(message)
    if wanted not in main + init + ephemeral:
        raise status.bad_request(f"container {wanted} is not valid for pod {name}")
    return wanted


def _stamp(moment: float) -> str:
    text = datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
    return text + "000Z"


def _container_log_status(
    pod: Mapping[str, Any], container: str, *, previous: bool, written: bool
) -> None:
    """``validateContainerLogStatus``: whether the kubelet has a log to serve.

    :raises StatusFailure: 400 with the kubelet's words.
    """
    name = str(pod["metadata"]["name"])
    about = f'container "{container}" in pod "{name}"'
    pod_status = pod.get("status") or {}
    entry = None
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for candidate in pod_status.get(key) or ():
            if isinstance(candidate, dict) and candidate.get("name") == container:
                entry = candidate
    last = ((entry or {}).get("lastState") or {}).get("terminated")
    if previous:
        if (last or {}).get("containerID"):
            return
        raise status.bad_request(
            f'previous terminated container "{container}" in pod "{name}" not found'
        )
    if written:
        return
    if entry is None:
        raise status.bad_request(f"{about} is not available")
    state = entry.get("state") or {}
    if state.get("running") is not None:
        return
    if state.get("terminated") is not None:
        if state["terminated"].get("containerID") or (last or {}).get("containerID"):
            return
        raise status.bad_request(f"{about} is terminated")
    if last is not None:
        if last.get("containerID"):
            return
        raise status.bad_request(f"{about} is terminated")
    waiting = state.get("waiting")
    if waiting is not None:
        reason = str(waiting.get("reason") or "")
        shown = {
            "ErrImagePull": "image can't be pulled",
            "ImagePullBackOff": "trying and failing to pull image",
        }.get(reason, reason)
        raise status.bad_request(f"{about} is waiting to start: {shown}")
    raise status.bad_request(f"{about} is waiting to start - no logs yet")


class PodLogs:
    """The logs of every container the test wrote to, by namespace, pod and container."""

    def __init__(self) -> None:
        self._logs: dict[tuple[str, str, str], _Log] = {}

    def _log(self, namespace: str, pod: str, container: str) -> _Log:
        return self._logs.setdefault((namespace, pod, container), _Log())

    def append(
        self, namespace: str, pod: str, container: str, text: str, *, finished: bool = False
    ) -> None:
        """Add lines (``text`` split on newlines) to a container's log."""
        log = self._log(namespace, pod, container)
        now = time.time()
        log.lines.extend((now, line) for line in text.splitlines())
        log.finished = log.finished or finished
        log.wake()

    def forget(self, namespace: str, pod: str) -> None:
        """A pod is gone: drop its logs and end the streams following them."""
        for key in [k for k in self._logs if k[:2] == (namespace, pod)]:
            log = self._logs.pop(key)
            log.finished = True
            log.wake()

    def check(self, pod: Mapping[str, Any], options: LogOptions, *, node_found: bool) -> str | None:
        """The container to read after the checks a real server makes, or None when there
        is nothing to read (no node: 204).

        :param node_found: the pod's node has a kubelet to ask (the fake's kubelet runs, or
            its Node object exists).
        :raises StatusFailure: 400, 404 (no Node).
        """
        container = pick_container(pod, options.container)
        name = str(pod["metadata"]["name"])
        if options.tail_lines is not None and options.tail_lines < 0:
            error = invalid("tailLines", options.tail_lines, "must be greater than or equal to 0")
            raise invalid_failure("", "PodLogOptions", name, [error])
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        if not node:
            return None
        ns = str(pod["metadata"].get("namespace") or "")
        log = self._logs.get((ns, name, container))
        written = log is not None and bool(log.lines or log.finished)
        if not (node_found or written):
            raise status.status_error(
                404,
                "NotFound",
                f'nodes "{node}" not found',
                details={"name": node, "kind": "nodes"},
            )
        _container_log_status(pod, container, previous=options.previous, written=written)
        return container

    def text(self, namespace: str, pod: str, container: str, options: LogOptions) -> bytes:
        """What a request without ``follow`` answers."""
        lines = self._log(namespace, pod, container).lines
        if options.since_seconds is not None:
            since = time.time() - options.since_seconds
            lines = [entry for entry in lines if entry[0] >= since]
        if options.tail_lines is not None:
            lines = lines[len(lines) - options.tail_lines :] if options.tail_lines else []
        body = "".join(
            (f"{_stamp(at)} " if options.timestamps else "") + line + "\n" for at, line in lines
        ).encode()
        if options.limit_bytes is not None and options.limit_bytes >= 0:
            body = body[: options.limit_bytes]
        return body

    async def follow(
        self, namespace: str, pod: str, container: str, options: LogOptions, write: Any
    ) -> None:
        """Send the log, then every appended line until the container finishes."""
        log = self._log(namespace, pod, container)
        first = self.text(namespace, pod, container, options)
        sent = len(log.lines)
        if first:
            await write(first)
        while not log.finished:
            waiter = anyio.Event()
            log.waiters.append(waiter)
            await waiter.wait()
            fresh, sent = log.lines[sent:], len(log.lines)
            if fresh:
                stamp = options.timestamps
                await write(
                    "".join(
                        (f"{_stamp(at)} " if stamp else "") + t + "\n" for at, t in fresh
                    ).encode()
                )
