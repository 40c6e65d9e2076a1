"""Helpers shared by the reflector, informer and leader-election tests."""

from __future__ import annotations

import asyncio
import copy
import random
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from aioinformer import BackoffPolicy, Clock, KubeClient, WatchConfig
from aioinformer._cache._delta_fifo import Delta, DeltaFIFO, DeltaType
from aioinformer._cache._store import Indexer
from aioinformer._clock import SYSTEM_CLOCK
from aioinformer._informer._event_stream import Event, EventType
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._listwatch import ListerWatcher, Resource, WatchEvent
from aioinformer._objects import (
    KubeObject,
    deletion_handling_meta_namespace_key,
    meta_namespace_key,
)
from aioinformer._reflector import WatchErrorHandler
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.errors import ConflictError, FIFOClosedError, NotFoundError, TransportError
from aioinformer.lowlevel import Reflector
from aioinformer.testing import FakeApiServer, FakeClock

CONFIGMAPS = Resource.parse("v1/configmaps")


#: A backoff short enough for tests (10 ms doubling to 50 ms, no jitter).
FAST_BACKOFF = BackoffPolicy(initial=0.01, cap=0.05, jitter=0.0)
#: Informers in tests: fast backoff, short watches, a short idle timeout.
FAST_WATCH = WatchConfig(backoff=FAST_BACKOFF, min_watch_timeout=2.0, idle_timeout=1.0)
#: Reflector pipelines in tests: fast backoff, client-go's watch timeouts.
PIPELINE_WATCH = WatchConfig(backoff=FAST_BACKOFF)


def kube_client(server: FakeApiServer, **options: Any) -> KubeClient:
    """A client of the fake API server (its ``ApiClient``, closed with the client)."""
    return KubeClient(server.api_client(), **options)


def configmap(name: str, namespace: str = "default", **data: str) -> KubeObject:
    """A ConfigMap body."""
    return {"metadata": {"name": name, "namespace": namespace}, "data": dict(data)}


async def wait_until(
    changed: asyncio.Event, predicate: Callable[[], bool], *, within: float = 10.0
) -> None:
    """Wait until ``predicate()`` holds, re-checking each time ``changed`` is set (failing
    after ``within`` seconds: a fail-safe, not a timing)."""
    with anyio.fail_after(within):
        while not predicate():
            changed.clear()
            await changed.wait()


@dataclass
class Pipeline:
    """Reflector → DeltaFIFO → Indexer, with the consumer applying deltas like an informer."""

    server: FakeApiServer
    reflector: Reflector
    fifo: DeltaFIFO
    indexer: Indexer
    popped: list[list[Delta]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def apply(self, deltas: list[Delta]) -> None:
        self.changed.set()
        self.popped.append(deltas)
        for delta in deltas:
            if delta.type is DeltaType.DELETED:
                self.indexer.delete(delta.object)
            else:
                self.indexer.update(delta.object)

    async def consume(self) -> None:
        while True:
            try:
                await self.fifo.pop(self.apply)
            except FIFOClosedError:
                return

    def requests(self, verb: str, start: int = 0) -> list[Any]:
        return [r for r in self.server.requests.records[start:] if r.verb == verb]

    def cache(self) -> dict[str, str]:
        """``{key: resourceVersion}`` of the cache."""
        return {
            key: obj["metadata"]["resourceVersion"]
            for key in self.indexer.list_keys()
            if (obj := self.indexer.get_by_key(key)) is not None
        }

    async def server_state(self, resource: Resource = CONFIGMAPS) -> dict[str, str]:
        """``{key: resourceVersion}`` of the server."""
        objects = self.server.objects.list(str(resource))
        return {meta_namespace_key(o): o["metadata"]["resourceVersion"] for o in objects}

    async def converged(self, *, within: float = 10.0) -> None:
        """Wait until the cache holds exactly the server's objects (keys and RVs)."""
        expected = await self.server_state()
        await wait_until(self.changed, lambda: self.cache() == expected, within=within)


@asynccontextmanager
async def running_pipeline(
    server: FakeApiServer,
    *,
    resource: Resource = CONFIGMAPS,
    lister_watcher: ListerWatcher | None = None,
    config: WatchConfig = PIPELINE_WATCH,
    resync_period: float = 0.0,
    should_resync: Callable[[], bool] | None = None,
    watch_error_handler: WatchErrorHandler | None = None,
    clock: Clock = SYSTEM_CLOCK,
    rand: Callable[[], float] = random.random,
) -> AsyncIterator[Pipeline]:
    """Run a reflector (with a fast backoff unless configured) and a consumer until the block
    ends."""
    async with kube_client(server) as client:
        indexer = Indexer()
        fifo = DeltaFIFO(known_objects=indexer)
        reflector = Reflector(
            lister_watcher or KubeListerWatcher(client, resource),
            fifo,
            config=config,
            name="test",
            resync_period=resync_period,
            should_resync=should_resync,
            watch_error_handler=watch_error_handler,
            clock=clock,
            rand=rand,
        )
        pipeline = Pipeline(server, reflector, fifo, indexer)
        async with anyio.create_task_group() as tg:
            tg.start_soon(reflector.run)
            tg.start_soon(pipeline.consume)
            try:
                yield pipeline
            finally:
                tg.cancel_scope.cancel()
                fifo.close()


# -- informer tests ----------------------------------------------------------------------------


def new_informer(
    client: KubeClient, resource: Resource = CONFIGMAPS, **options: Any
) -> SharedIndexInformer:
    """A SharedIndexInformer with test-friendly timeouts (fast backoff, short watches)."""
    options.setdefault("watch", FAST_WATCH)
    return SharedIndexInformer(KubeListerWatcher(client, resource), **options)


@dataclass
class Recorder:
    """Records what a consumer receives: stream events, or handler calls as Event objects."""

    events: list[Event] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def record(self, event: Event) -> None:
        self.events.append(event)
        self.changed.set()

    async def consume(self, stream: Any) -> None:
        """Record every event of a stream until it ends."""
        async for event in stream:
            self.record(event)

    # Handler methods (a Recorder is also a ResourceEventHandler).
    def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> None:
        self.record(Event(EventType.ADDED, obj, is_in_initial_list=is_in_initial_list))

    def on_update(self, old: KubeObject, new: KubeObject) -> None:
        self.record(Event(EventType.UPDATED, new, old))

    def on_delete(self, obj: Any) -> None:
        self.record(Event(EventType.DELETED, obj))

    async def wait_for(
        self, predicate: Callable[[list[Event]], bool], within: float = 10.0
    ) -> None:
        """Wait until ``predicate(events)`` holds."""
        await wait_until(self.changed, lambda: predicate(self.events), within=within)

    async def wait_for_count(self, n: int, within: float = 10.0) -> None:
        """Wait until at least ``n`` events were recorded."""
        await self.wait_for(lambda events: len(events) >= n, within=within)

    def summary(self) -> list[tuple[str, str]]:
        """``(type, key)`` of every event."""
        return [(e.type.value, deletion_handling_meta_namespace_key(e.object)) for e in self.events]


# -- in-memory doubles on virtual time ---------------------------------------------------


def obj(name: str, rv: str) -> KubeObject:
    """A ConfigMap with a resource version."""
    return {"metadata": {"name": name, "namespace": "default", "resourceVersion": rv}}


def event(event_type: str, name: str, rv: str) -> WatchEvent:
    """A watch event for :func:`obj`."""
    return WatchEvent(event_type, obj(name, rv))


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
