"""SharedIndexInformer: handle_deltas, the cache, configuration hooks and the lifecycle."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from aioinformer import State
from aioinformer._cache._compact import CacheMode
from aioinformer._cache._delta_fifo import Delta, DeltaType
from aioinformer._informer._event_stream import (
    Event,
    EventType,
    Listener,
    ResourceEventHandlerFuncs,
)
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._listwatch import ListOptions, ListResult
from aioinformer._objects import DeletedFinalStateUnknown, KubeObject
from aioinformer.errors import ApiError, LifecycleError
from aioinformer.lowlevel import Reflector
from aioinformer.testing import FakeApiServer, FakeClock

from .support import Recorder, configmap, kube_client, new_informer

# -- handle_deltas, without a server -----------------------------------------------------------


class UnusedListerWatcher:
    """For informers that are never started."""

    async def list(self, options: ListOptions) -> ListResult:
        raise AssertionError("not expected to list")

    async def watch(self, options: ListOptions, *, idle_timeout: float | None = None) -> Any:
        raise AssertionError("not expected to watch")


def cm(name: str, rv: int, uid: str = "u", **data: str) -> KubeObject:
    """A stored ConfigMap with a resource version."""
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "resourceVersion": str(rv),
            "uid": f"{uid}-{name}",
        },
        "data": data,
    }


async def drain(listener: Listener) -> list[Event]:
    """Everything queued for a listener (returns at once)."""
    events = []
    while listener.backlog:
        event = await listener.next()
        assert event is not None
        events.append(event)
    return events


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1000.0)


@pytest.fixture
def informer(clock: FakeClock, cache_mode: CacheMode) -> Iterator[SharedIndexInformer]:
    """An unstarted informer (resync every 1 s) with two subscribers: one resyncing every 1 s
    and one never."""
    inf = SharedIndexInformer(
        UnusedListerWatcher(), resync_period=1.0, clock=clock, cache=cache_mode
    )
    # A stream unregisters when released: hold them for the test.
    streams = [inf.events(), inf.events(resync_period=0)]
    yield inf
    for stream in streams:
        stream.close()


def assert_cached(informer: SharedIndexInformer, key: str, obj: KubeObject) -> None:
    """The cache holds ``obj`` under ``key``: the same dict in the dict cache, an equal fresh
    one in the compact cache."""
    cached = informer.indexer.get_by_key(key)
    assert cached == obj
    if informer.cache_mode == "dict":
        assert cached is obj
    else:
        assert cached is not obj and cached is not informer.indexer.get_by_key(key)


def mark_syncing(informer: SharedIndexInformer, clock: FakeClock) -> None:
    """A resync check when the first listener is due and the second is not."""
    clock.jump(1.0)
    assert informer._should_resync() is True
    due, never = informer._listeners
    assert due.syncing and not never.syncing


@pytest.mark.parametrize(
    "delta_type", [DeltaType.ADDED, DeltaType.UPDATED, DeltaType.REPLACED, DeltaType.SYNC]
)
async def test_any_non_delete_delta_for_an_absent_key_is_an_add(
    informer: SharedIndexInformer, clock: FakeClock, delta_type: DeltaType
) -> None:
    """Added/Updated/Replaced/Sync for a key not cached adds it and notifies every listener."""
    mark_syncing(informer, clock)
    obj = cm("a", 5)
    informer.handle_deltas([Delta(delta_type, obj)], is_in_initial_list=True)
    assert_cached(informer, "default/a", obj)
    for listener in informer._listeners:
        assert await drain(listener) == [Event(EventType.ADDED, obj, is_in_initial_list=True)]


@pytest.mark.parametrize("delta_type", [DeltaType.ADDED, DeltaType.UPDATED, DeltaType.REPLACED])
async def test_a_changed_object_is_an_update_for_every_listener(
    informer: SharedIndexInformer, clock: FakeClock, delta_type: DeltaType
) -> None:
    """Added/Updated/Replaced with a new RV for a cached key update it; every listener hears."""
    old, new = cm("a", 5, v="1"), cm("a", 6, v="2")
    informer.handle_deltas([Delta(DeltaType.ADDED, old)])
    mark_syncing(informer, clock)
    for listener in informer._listeners:
        await drain(listener)
    informer.handle_deltas([Delta(delta_type, new)])
    assert_cached(informer, "default/a", new)
    for listener in informer._listeners:
        assert await drain(listener) == [Event(EventType.UPDATED, new, old, is_sync=False)]


@pytest.mark.parametrize("delta_type", [DeltaType.SYNC, DeltaType.REPLACED])
async def test_a_sync_goes_only_to_listeners_due_for_resync(
    informer: SharedIndexInformer, clock: FakeClock, delta_type: DeltaType
) -> None:
    """Sync, and Replaced with an unchanged RV, are sync updates for syncing listeners only."""
    old, same = cm("a", 5), cm("a", 5)
    informer.handle_deltas([Delta(DeltaType.ADDED, old)])
    mark_syncing(informer, clock)
    due, never = informer._listeners
    await drain(due), await drain(never)
    informer.handle_deltas([Delta(delta_type, same)])
    assert_cached(informer, "default/a", same)
    assert await drain(due) == [Event(EventType.UPDATED, same, old, is_sync=True)]
    assert never.backlog == 0


async def test_every_listener_is_syncing_until_the_first_resync_check(
    informer: SharedIndexInformer,
) -> None:
    """Before any resync check (or with resync off) every listener receives sync updates."""
    obj = cm("a", 5)
    informer.handle_deltas([Delta(DeltaType.ADDED, obj)])
    informer.handle_deltas([Delta(DeltaType.REPLACED, cm("a", 5))])
    for listener in informer._listeners:
        events = await drain(listener)
        assert [(e.type, e.is_sync) for e in events] == [
            (EventType.ADDED, False),
            (EventType.UPDATED, True),
        ]


async def test_delete_notifies_every_listener_with_the_last_cached_state(
    informer: SharedIndexInformer, clock: FakeClock
) -> None:
    """Deleted removes the key; the event carries the final object and the cached one."""
    cached, final = cm("a", 5), cm("a", 7)
    informer.handle_deltas([Delta(DeltaType.ADDED, cached)])
    mark_syncing(informer, clock)
    for listener in informer._listeners:
        await drain(listener)
    informer.handle_deltas([Delta(DeltaType.DELETED, final)])
    assert informer.indexer.get_by_key("default/a") is None
    for listener in informer._listeners:
        assert await drain(listener) == [Event(EventType.DELETED, final, cached)]


async def test_a_tombstone_delete_is_delivered_as_is(informer: SharedIndexInformer) -> None:
    """A DeletedFinalStateUnknown removes the key and reaches listeners unchanged."""
    cached = cm("a", 5)
    informer.handle_deltas([Delta(DeltaType.REPLACED, cached)], is_in_initial_list=True)
    tombstone = DeletedFinalStateUnknown("default/a", cached)
    informer.handle_deltas([Delta(DeltaType.DELETED, tombstone)])
    assert len(informer.indexer) == 0
    events = await drain(informer._listeners[0])
    assert events[-1] == Event(EventType.DELETED, tombstone, cached)


async def test_deltas_of_one_key_are_applied_oldest_first(
    informer: SharedIndexInformer,
) -> None:
    """Several deltas of one key give one notification each, in order."""
    a1, a2, a3 = cm("a", 1), cm("a", 2), cm("a", 3)
    informer.handle_deltas(
        [
            Delta(DeltaType.ADDED, a1),
            Delta(DeltaType.UPDATED, a2),
            Delta(DeltaType.DELETED, a2),
            Delta(DeltaType.ADDED, a3),
        ]
    )
    events = await drain(informer._listeners[0])
    assert events == [
        Event(EventType.ADDED, a1),
        Event(EventType.UPDATED, a2, a1),
        Event(EventType.DELETED, a2, a2),
        Event(EventType.ADDED, a3),
    ]
    assert_cached(informer, "default/a", a3)


async def test_an_object_the_cache_refuses_is_skipped_and_counted(
    caplog: pytest.LogCaptureFixture,
    cache_mode: CacheMode,
) -> None:
    """A failing index function skips that delta (counted, logged); the others go through."""

    def by_owner(obj: KubeObject) -> list[str]:
        return [obj["data"]["owner"]]  # KeyError when there is no owner

    informer = SharedIndexInformer(
        UnusedListerWatcher(), indexers={"owner": by_owner}, cache=cache_mode
    )
    stream = informer.events()
    good = cm("good", 1, owner="me")
    with caplog.at_level(logging.WARNING, logger="aioinformer"):
        informer.handle_deltas([Delta(DeltaType.ADDED, cm("bad", 2))])
        informer.handle_deltas([Delta(DeltaType.ADDED, good)])
    assert informer.statistics().store_errors == 1
    assert informer.indexer.list_keys() == ["default/good"]
    assert informer.indexer.by_index("owner", "me") == [good]
    assert await drain(informer._listeners[0]) == [Event(EventType.ADDED, good)]
    assert "cache refused" in caplog.text
    await stream.aclose()


# -- against the fake API server ---------------------------------------------------------------


async def test_initial_list_then_watch_events(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """The initial list arrives as initial adds; later changes as added, updated, deleted."""
    server = fake_apiserver
    for name in ("a", "b"):
        server.objects.create("configmaps", configmap(name, v="0"))
    async with kube_client(server) as api_client, anyio.create_task_group() as tg:
        informer = new_informer(api_client, cache=cache_mode)
        recorder = Recorder()
        tg.start_soon(recorder.consume, informer.events())
        async with informer:
            assert not informer.has_synced()
            assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            assert informer.has_synced()
            assert informer.last_sync_resource_version == server.objects.resource_version
            await recorder.wait_for_count(2)
            assert [(e.type, e.is_in_initial_list) for e in recorder.events] == [
                (EventType.ADDED, True),
                (EventType.ADDED, True),
            ]
            assert recorder.summary() == [("ADDED", "default/a"), ("ADDED", "default/b")]

            created = server.objects.create("configmaps", configmap("c", v="0"))
            updated = server.objects.patch("configmaps", "a", {"data": {"v": "1"}})
            final = server.objects.delete("configmaps", "b")
            await recorder.wait_for_count(5)
            added, update, deleted = recorder.events[2:]
            assert added == Event(EventType.ADDED, created)
            assert update.type is EventType.UPDATED and not update.is_sync
            assert update.object == updated
            assert update.old_object is not None and update.old_object["data"] == {"v": "0"}
            assert deleted.type is EventType.DELETED and deleted.object == final
            assert deleted.old_object is not None
            assert deleted.old_object["metadata"]["name"] == "b"
            assert sorted(informer.indexer.list_keys()) == ["default/a", "default/c"]
            assert informer.lister().get("a", "default") == updated
            assert informer.last_sync_resource_version == server.objects.resource_version
    assert informer.state is State.STOPPED


async def test_indexers_given_at_construction_and_added_later(
    fake_apiserver: FakeApiServer,
    cache_mode: CacheMode,
) -> None:
    """Index functions from the constructor and from add_indexers (after start) both work."""

    def by_color(obj: KubeObject) -> list[str]:
        return [obj["data"].get("color", "")]

    def by_size(obj: KubeObject) -> list[str]:
        return [obj["data"].get("size", "")]

    fake_apiserver.objects.create("configmaps", configmap("a", color="red", size="s"))
    fake_apiserver.objects.create("configmaps", configmap("b", color="blue", size="s"))
    async with kube_client(fake_apiserver) as api_client:
        informer = new_informer(api_client, indexers={"color": by_color}, cache=cache_mode)
        async with informer:
            assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            assert [o["metadata"]["name"] for o in informer.indexer.by_index("color", "red")] == [
                "a"
            ]
            informer.add_indexers({"size": by_size})
            assert sorted(informer.indexer.index_keys("size", "s")) == ["default/a", "default/b"]
            assert informer.indexer.index_keys("namespace", "default") == [
                "default/a",
                "default/b",
            ]
        with pytest.raises(LifecycleError):
            informer.add_indexers({"other": by_size})


async def test_transform_runs_before_the_cache(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """set_transform (before start) reshapes objects for the cache and every consumer."""

    def drop_managed_fields(obj: KubeObject) -> KubeObject:
        obj["metadata"].pop("managedFields", None)
        obj["metadata"]["annotations"] = {"transformed": "yes"}
        return obj

    # The server records managedFields for every write (an entry without an operation, as
    # this test once sent, is a 422 from ``ValidateManagedFields``).
    created = fake_apiserver.objects.create("configmaps", configmap("a", v="0"))
    assert created["metadata"]["managedFields"]
    async with kube_client(fake_apiserver) as api_client:
        informer = new_informer(api_client, cache=cache_mode)
        informer.set_transform(drop_managed_fields)
        recorder = Recorder()
        informer.add_event_handler(recorder)
        async with informer:
            await recorder.wait_for_count(1)
            cached = informer.indexer.get_by_key("default/a")
            assert cached is not None and "managedFields" not in cached["metadata"]
            assert recorder.events[0].object["metadata"]["annotations"] == {"transformed": "yes"}
            with pytest.raises(LifecycleError):
                informer.set_transform(None)


async def test_watch_error_handler_sees_list_errors(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """set_watch_error_handler's handler gets every list/watch error; later calls fail."""
    seen: list[tuple[Reflector, BaseException]] = []
    fake_apiserver.faults.fail_next(2, 500, verb="list", resource="configmaps")
    async with kube_client(fake_apiserver) as api_client:
        informer = new_informer(api_client, cache=cache_mode)
        informer.set_watch_error_handler(lambda reflector, exc: seen.append((reflector, exc)))
        async with informer:
            assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            assert len(seen) == 2
            assert all(isinstance(exc, ApiError) and exc.code == 500 for _, exc in seen)
            assert isinstance(seen[0][0], Reflector)
            with pytest.raises(LifecycleError):
                informer.set_watch_error_handler(None)


async def test_wait_for_cache_sync_is_bounded_by_the_caller_and_ends_at_stop(
    fake_apiserver: FakeApiServer,
    cache_mode: CacheMode,
) -> None:
    """Without a successful list, wait_for_cache_sync waits (the caller bounds it with a
    cancel scope) and returns False once the informer stopped."""
    fake_apiserver.faults.fail_next(10_000, 500, verb="list", resource="configmaps")
    async with kube_client(fake_apiserver) as api_client:
        informer = new_informer(api_client, cache=cache_mode)
        async with anyio.create_task_group() as tg:
            tg.start_soon(informer.run)
            with anyio.fail_after(10):
                await fake_apiserver.requests.wait_for(
                    lambda r: r.verb == "list" and r.status == 500
                )
            with anyio.move_on_after(0) as bound:
                await informer.wait_for_cache_sync()
            assert bound.cancelled_caught
            assert not informer.has_synced()
            waiting: list[bool] = []

            async def wait() -> None:
                waiting.append(await informer.wait_for_cache_sync())

            tg.start_soon(wait)
            await informer.aclose()
        assert waiting == [False]


async def test_run_and_stop(fake_apiserver: FakeApiServer, cache_mode: CacheMode) -> None:
    """`await run()` lists, watches and returns after aclose(); an informer runs only
    once."""
    async with kube_client(fake_apiserver) as api_client:
        informer = new_informer(api_client, cache=cache_mode)
        assert informer.statistics().state is State.NEW  # (not narrowing .state for mypy)
        async with anyio.create_task_group() as tg:
            tg.start_soon(informer.run)
            assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            assert informer.state is not State.NEW
            with anyio.fail_after(10):
                await fake_apiserver.requests.wait_for_watches(1, resource="configmaps")
            await informer.aclose()
            await informer.aclose()  # idempotent
        assert informer.state is State.STOPPED
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for_watches(0, resource="configmaps", exactly=True)
        with pytest.raises(LifecycleError):
            await informer.run()
        with pytest.raises(LifecycleError):
            async with informer:
                pass
        with pytest.raises(LifecycleError):
            informer.events()
        with pytest.raises(LifecycleError):
            informer.add_event_handler(Recorder())


async def test_leaving_async_with_at_once_stops_cleanly(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """`async with informer:` with an empty body stops without error (and never lists)."""
    async with kube_client(fake_apiserver) as api_client:
        informer = new_informer(api_client, cache=cache_mode)
        async with informer:
            pass
        assert informer.state is State.STOPPED and not informer.has_synced()
        assert await informer.wait_for_cache_sync() is False
    assert not [r for r in fake_apiserver.requests.records if r.resource == "configmaps"]


async def test_stop_before_run_makes_run_return(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """aclose() on an informer that never ran makes a later run() return at once."""
    async with kube_client(fake_apiserver) as api_client:
        informer = new_informer(api_client, cache=cache_mode)
        await informer.aclose()
        assert informer.state is State.STOPPED
        with anyio.fail_after(5):
            await informer.run()
        with pytest.raises(LifecycleError):
            informer.events()


async def test_wait_for_cache_sync_returns_false_when_the_informer_stops_before_syncing(
    fake_apiserver: FakeApiServer,
    cache_mode: CacheMode,
) -> None:
    """A consumer waiting for sync is released (with False) when the informer stops first."""
    fake_apiserver.faults.fail_next(1000, 500, verb="list")  # never syncs
    async with kube_client(fake_apiserver) as client:
        informer = new_informer(client, cache=cache_mode)
        registration = informer.add_event_handler(
            ResourceEventHandlerFuncs(on_add=lambda obj: None)
        )
        stream = informer.events()
        async with informer:
            with anyio.fail_after(10):
                await fake_apiserver.requests.wait_for(lambda r: r.verb == "list")
        with anyio.fail_after(5):
            assert await registration.wait_for_cache_sync() is False
            assert await stream.wait_for_cache_sync() is False
    assert not registration.has_synced()


async def test_freeze_gc_after_sync_freezes_once_the_cache_is_synced(
    fake_apiserver: FakeApiServer, monkeypatch: pytest.MonkeyPatch, cache_mode: CacheMode
) -> None:
    """With freeze_gc_after_sync the informer calls gc.freeze() once, after the initial list."""
    import gc

    calls: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(1))
    fake_apiserver.objects.create("configmaps", configmap("a"))
    async with kube_client(fake_apiserver) as client:
        informer = new_informer(client, freeze_gc_after_sync=True, cache=cache_mode)
        plain = new_informer(client, cache=cache_mode)
        async with informer, plain:
            assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            assert await asyncio.wait_for(plain.wait_for_cache_sync(), 10)
            # The freeze happens in the same step that marks the cache synced.
            assert calls == [1]
    assert calls == [1]


def test_an_unknown_cache_mode_is_refused(cache_mode: CacheMode) -> None:
    """``cache`` is "compact" or "dict"; anything else is a ValueError at construction."""
    with pytest.raises(ValueError, match="unknown cache mode"):
        SharedIndexInformer(UnusedListerWatcher(), cache="json")  # type: ignore[arg-type]


async def test_the_old_object_is_decoded_once_and_shared(informer: SharedIndexInformer) -> None:
    """An update's old object comes from the cache: equal to the replaced state, and the same
    dict for every consumer (decoded at most once)."""
    old, new = cm("a", 5, v="1"), cm("a", 6, v="2")
    informer.handle_deltas([Delta(DeltaType.ADDED, old)])
    informer.handle_deltas([Delta(DeltaType.UPDATED, new)])
    first, second = [await drain(listener) for listener in informer._listeners]
    assert first[-1].old_object == old and first[-1].old_object is second[-1].old_object
    assert first[-1].object is new
