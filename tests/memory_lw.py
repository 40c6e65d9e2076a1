"""In-memory fakes for tests on virtual time: a lister-watcher and a store for reflector
and informer tests, and a Lease for leader-election tests."""

from __future__ import annotations

import builtins
import copy
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio

from aioinformer import Clock
from aioinformer._listwatch import ListOptions, ListResult, WatchEvent
from aioinformer._objects import KubeObject
from aioinformer.errors import ConflictError, NotFoundError, TransportError
from aioinformer.testing import FakeClock


def obj(name: str, rv: str) -> KubeObject:
    """A ConfigMap with a resource version."""
    return {"metadata": {"name": name, "namespace": "default", "resourceVersion": rv}}


def event(event_type: str, name: str, rv: str) -> WatchEvent:
    """A watch event for :func:`obj`."""
    return WatchEvent(event_type, obj(name, rv))


class MemoryStream:
    """A watch stream the test feeds: events, errors (which end it, as an ERROR event or a
    broken connection does) and a clean end."""

    def __init__(self) -> None:
        self._items: deque[WatchEvent | Exception | None] = deque()
        self._arrived: anyio.Event | None = None
        self.closed = False

    def push(self, *events: WatchEvent) -> None:
        """Deliver events."""
        for item in events:
            self._put(item)

    def fail(self, error: Exception) -> None:
        """Deliver an error: the stream raises it (a malformed-line error leaves it usable)."""
        self._put(error)

    def end(self) -> None:
        """End the stream cleanly."""
        self._put(None)

    def __aiter__(self) -> MemoryStream:
        return self

    async def __anext__(self) -> WatchEvent:
        while not self._items:
            if self._arrived is None:
                self._arrived = anyio.Event()
            await self._arrived.wait()
        item = self._items.popleft()
        if item is None:
            raise StopAsyncIteration
        if isinstance(item, Exception):
            raise item
        return item

    async def aclose(self) -> None:
        self.closed = True

    def _put(self, item: WatchEvent | Exception | None) -> None:
        self._items.append(item)
        arrived, self._arrived = self._arrived, None
        if arrived is not None:
            arrived.set()


@dataclass
class Request:
    """One list or watch request, with the virtual time it was made."""

    verb: str
    options: ListOptions
    at: float


@dataclass
class MemoryListerWatcher:
    """Answers lists and watches from scripts; records every request.

    A list takes the next scripted result (a :class:`ListResult` or an exception to raise),
    else returns ``default_list``. A watch takes the next scripted stream or exception, else
    opens a fresh :class:`MemoryStream` (see :attr:`streams`).
    """

    clock: Clock
    default_list: ListResult = field(default_factory=lambda: ListResult([], "10"))
    list_script: deque[ListResult | Exception] = field(default_factory=deque)
    watch_script: deque[MemoryStream | Exception] = field(default_factory=deque)
    requests: builtins.list[Request] = field(default_factory=list)
    streams: builtins.list[MemoryStream] = field(default_factory=list)
    refreshes: int = 0
    _changed: anyio.Event | None = None

    async def list(self, options: ListOptions) -> ListResult:
        self._record("list", options)
        answer = self.list_script.popleft() if self.list_script else self.default_list
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def watch(self, options: ListOptions, *, idle_timeout: float | None = None) -> Any:
        self._record("watch", options)
        answer = self.watch_script.popleft() if self.watch_script else MemoryStream()
        if isinstance(answer, Exception):
            raise answer
        self.streams.append(answer)
        return answer

    async def refresh_credentials(self) -> None:
        self.refreshes += 1

    def made(self, verb: str) -> builtins.list[Request]:
        """The requests of one verb."""
        return [r for r in self.requests if r.verb == verb]

    async def wait_for(self, verb: str, count: int) -> Request:
        """Wait until ``count`` requests of ``verb`` were made; returns the last."""
        with anyio.fail_after(5):
            while len(self.made(verb)) < count:
                if self._changed is None:
                    self._changed = anyio.Event()
                await self._changed.wait()
        return self.made(verb)[count - 1]

    def _record(self, verb: str, options: ListOptions) -> None:
        self.requests.append(Request(verb, options, self.clock.now()))
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()


@dataclass
class RecordingStore:
    """A reflector store that records each call as ``(method, virtual time, detail)``."""

    clock: Clock
    calls: list[tuple[str, float, Any]] = field(default_factory=list)

    async def add(self, obj: KubeObject) -> None:
        self.calls.append(("add", self.clock.now(), obj))

    async def update(self, obj: KubeObject) -> None:
        self.calls.append(("update", self.clock.now(), obj))

    async def delete(self, obj: Any) -> None:
        self.calls.append(("delete", self.clock.now(), obj))

    async def replace(self, objs: Iterable[KubeObject], resource_version: str) -> None:
        self.calls.append(("replace", self.clock.now(), resource_version))

    async def resync(self) -> None:
        self.calls.append(("resync", self.clock.now(), None))

    def times(self, method: str) -> list[float]:
        """When ``method`` was called."""
        return [at for name, at, _ in self.calls if name == method]


@dataclass
class MemoryLease:
    """One Lease held in memory, with the API server's optimistic concurrency: ``replace``
    needs the stored resourceVersion (409 otherwise), ``create`` a missing lease."""

    clock: FakeClock
    lease: KubeObject | None = None
    version: int = 0
    down: bool = False
    #: ``(virtual time, verb, holder)`` of every successful write.
    writes: list[tuple[float, str, str]] = field(default_factory=list)

    async def get(self) -> KubeObject:
        self._check_up()
        if self.lease is None:
            raise NotFoundError(code=404, reason="NotFound")
        return copy.deepcopy(self.lease)

    async def create(self, body: KubeObject) -> KubeObject:
        self._check_up()
        if self.lease is not None:
            raise ConflictError(code=409, reason="AlreadyExists")
        return self._store("create", body)

    async def replace(self, body: KubeObject) -> KubeObject:
        self._check_up()
        if self.lease is None or body["metadata"].get("resourceVersion") != str(self.version):
            raise ConflictError(code=409, reason="Conflict")
        return self._store("replace", body)

    def holder(self) -> str | None:
        return None if self.lease is None else self.lease["spec"]["holderIdentity"]

    def _check_up(self) -> None:
        if self.down:
            raise TransportError("the API server is unreachable")

    def _store(self, verb: str, body: KubeObject) -> KubeObject:
        self.version += 1
        stored = copy.deepcopy(body)
        stored["metadata"]["resourceVersion"] = str(self.version)
        self.lease = stored
        self.writes.append((self.clock.now(), verb, stored["spec"]["holderIdentity"]))
        return copy.deepcopy(stored)
