"""Chaos: an informer and four consumers against a fake API server that misbehaves.

A writer creates, patches and deletes ConfigMaps while a fault task drops, stalls and fails
watches, compacts history (410 Gone), answers 500s and 429s, refuses connections and restarts
the server. Once both stop, the test waits (on events) until everything is quiet, then checks:

* the informer's cache equals the server (keys and resource versions);
* every consumer's view, built only from the events it received, equals the server;
* every consumer's per-key event sequence is valid (see :class:`ConsumerModel`);
* nothing keeps running after the informer stopped.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from aioinformer import State, WatchConfig
from aioinformer._informer._event_stream import (
    Event,
    EventStream,
    EventType,
    ResourceEventHandlerFuncs,
)
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._objects import (
    DeletedFinalStateUnknown,
    KubeObject,
    deletion_handling_meta_namespace_key,
    meta_namespace_key,
)
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.testing import FakeApiServer
from tests.support import CONFIGMAPS, FAST_BACKOFF, configmap, kube_client, wait_until

SEEDS = [1, 2, 3, 4, 5]
FAULTS = [
    "drop",
    "stall",
    "stall_compact",
    "restart",
    "list_500",
    "watch_500",
    "watch_429",
    "watch_error_410",
    "watch_error_500",
    "refuse",
    "malformed",
]
NAMES = [f"cm-{i:02d}" for i in range(16)]


def _rv(obj: KubeObject) -> int:
    return int(obj["metadata"]["resourceVersion"])


def _uid(obj: KubeObject) -> str:
    return str(obj["metadata"]["uid"])


@dataclass
class ConsumerModel:
    """One consumer's view of the world, built from its events, and the rules they must obey.

    Per key: ADDED only when the key is absent; UPDATED and DELETED only when it is present,
    with ``old_object`` equal to the consumer's current state. An UPDATED keeps the uid and
    does not lower the RV (a sync keeps it), unless the object was deleted and re-created while
    the informer was not watching (client-go then reports one update with a new uid). A DELETED
    carries the final state of the same object, or a tombstone when the delete itself was
    missed. Tombstones and uid changes are checked at the end against the writer's deletions.
    """

    name: str
    changed: asyncio.Event
    view: dict[str, KubeObject] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    #: Uids the consumer saw disappear without a delete event (they must have been deleted).
    vanished_uids: list[str] = field(default_factory=list)
    #: ``(type, key, rv)`` of every event but same-RV updates (which depend on resync timing).
    trace: list[tuple[str, str, int]] = field(default_factory=list)
    seen_live_add: bool = False

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def _fail(self, key: str, message: str) -> None:
        self.errors.append(f"{self.name}: {key}: {message}")

    def added(self, obj: KubeObject, is_in_initial_list: bool) -> None:
        key = meta_namespace_key(obj)
        self._count("added")
        if is_in_initial_list:
            self._count("initial")
            if self.seen_live_add:
                self._fail(key, "initial-list ADDED after a live ADDED")
        else:
            self.seen_live_add = True
        if key in self.view:
            self._fail(key, "ADDED while present")
        self.view[key] = obj
        self.trace.append(("ADDED", key, _rv(obj)))
        self.changed.set()

    def updated(self, old: KubeObject, new: KubeObject) -> None:
        key = meta_namespace_key(new)
        self._count("updated")
        current = self.view.get(key)
        if current is None:
            self._fail(key, "UPDATED while absent")
        elif _rv(old) != _rv(current):
            self._fail(key, f"UPDATED old RV {_rv(old)} != current RV {_rv(current)}")
        elif _uid(new) != _uid(current):
            self._count("uid_change")
            self.vanished_uids.append(_uid(current))
        elif _rv(new) < _rv(current):
            self._fail(key, f"UPDATED went back from RV {_rv(current)} to {_rv(new)}")
        elif _rv(new) == _rv(current):
            self._count("sync")
        if current is None or _rv(new) != _rv(current):
            self.trace.append(("UPDATED", key, _rv(new)))
        self.view[key] = new
        self.changed.set()

    def deleted(self, obj: KubeObject | DeletedFinalStateUnknown, old: KubeObject | None) -> None:
        key = deletion_handling_meta_namespace_key(obj)
        self._count("deleted")
        current = self.view.pop(key, None)
        if current is None:
            self._fail(key, "DELETED while absent")
        elif isinstance(obj, DeletedFinalStateUnknown):
            self._count("tombstone")
            if obj.obj is None or _rv(obj.obj) != _rv(current):
                self._fail(key, "tombstone does not carry the last known state")
            self.vanished_uids.append(_uid(current))
        elif _uid(obj) != _uid(current) or _rv(obj) < _rv(current):
            self._fail(key, "DELETED final state is not a later state of the same object")
        if old is not None and current is not None and _rv(old) != _rv(current):
            self._fail(key, "DELETED old_object is not the current state")
        self.trace.append(("DELETED", key, -1 if current is None else _rv(current)))
        self.changed.set()

    def apply(self, event: Event) -> None:
        if event.type is EventType.ADDED:
            self.added(event.object, event.is_in_initial_list)
        elif event.type is EventType.UPDATED:
            assert event.old_object is not None
            if event.is_sync and _rv(event.old_object) != _rv(event.object):
                self._fail(meta_namespace_key(event.object), "is_sync with a changed RV")
            self.updated(event.old_object, event.object)
        else:
            self.deleted(event.object, event.old_object)

    def rvs(self) -> dict[str, int]:
        return {key: _rv(obj) for key, obj in self.view.items()}


@dataclass
class Writer:
    """Random creates, patches and deletes; remembers the uid of every object it deleted."""

    server: FakeApiServer
    rng: random.Random
    deleted_uids: set[str] = field(default_factory=set)
    ops: int = 0

    async def run(self, operations: int) -> None:
        for _ in range(operations):
            name = self.rng.choice(NAMES)
            existing = {o["metadata"]["name"] for o in self.server.objects.list("configmaps")}
            if name not in existing:
                self.server.objects.create("configmaps", configmap(name, v="0"))
            elif self.rng.random() < 0.3:
                final = self.server.objects.delete("configmaps", name, namespace="default")
                self.deleted_uids.add(_uid(final))
            else:
                patch = {"data": {"v": str(self.ops)}, "metadata": {"labels": {"n": str(self.ops)}}}
                self.server.objects.patch("configmaps", name, patch, namespace="default")
            self.ops += 1
            await asyncio.sleep(self.rng.uniform(0.0, 0.02))  # pacing, not waiting


async def inject_faults(
    server: FakeApiServer, rng: random.Random, done: asyncio.Event
) -> list[str]:
    """Fire random faults until ``done``; leaves the server listening and unarmed."""
    fired: list[str] = []
    # Every kind once, in a random order; then random ones while the writer goes on.
    first = rng.sample(FAULTS, len(FAULTS))
    while not done.is_set():
        await asyncio.sleep(rng.uniform(0.03, 0.12))  # pacing between faults
        fault = first.pop() if first else rng.choice(FAULTS)
        fired.append(fault)
        if fault == "drop":
            server.faults.drop_watches()
        elif fault == "stall":
            server.faults.stall_watches()
        elif fault == "stall_compact":
            # The writer goes on while the client hears nothing; its resume point expires.
            server.faults.stall_watches()
            await asyncio.sleep(rng.uniform(0.1, 0.3))
            server.faults.compact()
        elif fault == "restart":
            server.faults.restart()
        elif fault == "list_500":
            server.faults.fail_next(rng.randint(1, 3), 500, verb="list", resource="configmaps")
            server.faults.drop_watches()
        elif fault == "watch_500":
            server.faults.fail_next(1, 500, verb="watch", resource="configmaps")
            server.faults.drop_watches()
        elif fault == "watch_429":
            server.faults.fail_next(1, 429, retry_after=1, verb="watch", resource="configmaps")
            server.faults.drop_watches()
        elif fault == "watch_error_410":
            server.faults.inject_watch_error(410, "Expired", "too old resource version")
        elif fault == "watch_error_500":
            server.faults.inject_watch_error(500, "InternalError", "etcd hiccup")
        elif fault == "refuse":
            await server.faults.stop_listening()
            try:
                await asyncio.sleep(rng.uniform(0.02, 0.15))  # the outage's length
            finally:
                await server.faults.start_listening()
        elif fault == "malformed":
            server.faults.inject_malformed_line()
    return fired


def _server_rvs(objects: list[KubeObject]) -> dict[str, int]:
    return {meta_namespace_key(o): _rv(o) for o in objects}


async def _consume(stream: EventStream, model: ConsumerModel, log: list[Event]) -> None:
    async for event in stream:
        log.append(event)
        model.apply(event)


@pytest.mark.parametrize("seed", SEEDS)
async def test_informer_survives_chaos(seed: int) -> None:
    """Under random faults the cache and every consumer converge on the server, validly."""
    # Separate generators: the writer and the faults run concurrently.
    rng, fault_rng = random.Random(f"{seed}-writer"), random.Random(f"{seed}-faults")
    tasks_before = asyncio.all_tasks()
    changed = asyncio.Event()
    models = {name: ConsumerModel(name, changed) for name in ("stream", "handler", "async", "late")}
    logs: dict[str, list[Event]] = {"stream": [], "late": []}
    async with FakeApiServer(bookmark_interval=0.2) as server:
        for name in rng.sample(NAMES, 6):
            server.objects.create("configmaps", configmap(name, v="initial"))
        async with kube_client(server) as client:
            informer = SharedIndexInformer(
                KubeListerWatcher(client, CONFIGMAPS),
                resync_period=1.0,
                watch=WatchConfig(backoff=FAST_BACKOFF, min_watch_timeout=1.0, idle_timeout=0.6),
                name=f"chaos-{seed}",
            )
            handler = models["handler"]
            registration = informer.add_event_handler(
                ResourceEventHandlerFuncs(
                    on_add=handler.added,
                    on_update=handler.updated,
                    on_delete=lambda obj: handler.deleted(obj, None),
                ),
                resync_period=0,
            )

            async_model = models["async"]

            class AsyncHandler:
                async def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> None:
                    await anyio.lowlevel.checkpoint()  # an async handler that yields
                    async_model.added(obj, is_in_initial_list)

                async def on_update(self, old: KubeObject, new: KubeObject) -> None:
                    await anyio.lowlevel.checkpoint()  # an async handler that yields
                    async_model.updated(old, new)

                async def on_delete(self, obj: Any) -> None:
                    await anyio.lowlevel.checkpoint()  # an async handler that yields
                    async_model.deleted(obj, None)

            async_registration = informer.add_event_handler(AsyncHandler(), resync_period=1.0)
            stream = informer.events()
            writer = Writer(server, rng)
            faults_done = asyncio.Event()
            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg, informer:
                    tg.start_soon(_consume, stream, models["stream"], logs["stream"])
                    del stream  # the consumer task holds the only reference
                    assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
                    await registration.wait_for_cache_sync()
                    await async_registration.wait_for_cache_sync()

                    async with anyio.create_task_group() as chaos:
                        fault_log: list[list[str]] = []

                        async def faults() -> None:
                            fault_log.append(await inject_faults(server, fault_rng, faults_done))

                        chaos.start_soon(faults)
                        await writer.run(rng.randint(40, 70))
                        # A subscriber joins mid-stream: it must first see the cache, once.
                        late = informer.events()
                        joined_with = set(informer.indexer.list_keys())
                        tg.start_soon(_consume, late, models["late"], logs["late"])
                        del late
                        await writer.run(rng.randint(40, 70))
                        faults_done.set()

                    expected = _server_rvs(server.objects.list("configmaps"))

                    def quiet() -> bool:
                        cache = {
                            k: _rv(o)
                            for k in informer.indexer.list_keys()
                            if (o := informer.indexer.get_by_key(k)) is not None
                        }
                        return cache == expected and all(
                            m.rvs() == expected for m in models.values()
                        )

                    await wait_until(changed, quiet, within=20)
                # Leaving `async with informer` stopped it; the stream consumers then ended.

    for model in models.values():
        assert model.errors == [], model.errors
        assert model.rvs() == expected, model.name
        for uid in model.vanished_uids:
            assert uid in writer.deleted_uids, f"{model.name}: {uid} vanished but was never deleted"
    late_log = logs["late"]
    assert [e.type for e in late_log[: len(joined_with)]] == [EventType.ADDED] * len(joined_with)
    assert all(e.is_in_initial_list for e in late_log[: len(joined_with)])
    assert {meta_namespace_key(e.object) for e in late_log[: len(joined_with)]} == joined_with
    assert not any(e.is_in_initial_list for e in late_log[len(joined_with) :])
    # Consumers present from the start saw the same changes in the same order.
    assert models["stream"].trace == models["handler"].trace == models["async"].trace
    assert informer.statistics().listeners == ()
    assert informer.state is State.STOPPED
    stats = informer.statistics().reflector
    assert stats is not None and stats.errors > 0  # the faults were felt
    assert fault_log[0], "no fault fired"
    leftover = {t for t in asyncio.all_tasks() - tasks_before if not t.done()}
    leftover.discard(asyncio.current_task())
    assert leftover == set()
