"""``pods/log``: the containers' logs, as a test sets them, served as the kubelet would.

On a cluster the API server proxies ``GET pods/<name>/log`` to the kubelet
(``pkg/registry/core/pod/rest/log.go``); the fake keeps what the test writes
(``server.objects.append_pod_log``) and answers the same way:

* ``text/plain`` lines; ``container`` selects one (required when the pod has several:
  400 "a container name must be specified for pod …, choose one of: […]"; an unknown one is
  400 "container … is not valid for pod …");
* a pod without ``spec.nodeName`` has no kubelet: 400 "pod … does not have a host assigned";
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

    def check(self, pod: Mapping[str, Any], options: LogOptions) -> str:
        """The container to read, after the checks a real server makes.

        :raises StatusFailure: 400.
        """
        container = pick_container(pod, options.container)
        name = str(pod["metadata"]["name"])
        if not (pod.get("spec") or {}).get("nodeName"):
            raise status.bad_request(f"pod {name} does not have a host assigned")
        if options.previous:
            raise status.bad_request(
                f'previous terminated container "{container}" in pod "{name}" not found'
            )
        if options.tail_lines is not None and options.tail_lines < 0:
            error = invalid("tailLines", options.tail_lines, "must be greater than or equal to 0")
            raise invalid_failure("", "PodLogOptions", name, [error])
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
