"""Listeners: event streams, handlers, late joins, per-consumer sync and slow consumers."""

from __future__ import annotations

import asyncio
import gc
import logging
import random
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from aioinformer import State
from aioinformer._cache._compact import CacheMode
from aioinformer._informer._event_stream import (
    Event,
    EventStream,
    EventType,
    ResourceEventHandlerFuncs,
)
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._objects import KubeObject, meta_namespace_key
from aioinformer.testing import MemorySource

from .support import CONFIGMAPS, FAST_WATCH, Recorder, configmap, wait_until


@pytest.fixture
def source() -> MemorySource:
    """The objects the informers under test list and watch (no HTTP: these tests are about
    consumers, not the wire)."""
    return MemorySource()


def new_informer(source: MemorySource, **options: Any) -> SharedIndexInformer:
    """An informer of the source's ConfigMaps."""
    options.setdefault("watch", FAST_WATCH)
    return SharedIndexInformer(source.lister_watcher(CONFIGMAPS), **options)


async def create(source: MemorySource, *names: str) -> None:
    for name in names:
        source.create(CONFIGMAPS, configmap(name, v="0"))


def patch_data(source: MemorySource, name: str, **data: str) -> None:
    """Set ``data`` of the ConfigMap ``name`` (as a patch would)."""
    (current,) = [o for o in source.objects(CONFIGMAPS) if o["metadata"]["name"] == name]
    source.update(CONFIGMAPS, {**current, "data": dict(data)})


def delete(source: MemorySource, name: str) -> None:
    source.delete(CONFIGMAPS, name, namespace="default")


def is_closed(stream: EventStream) -> bool:
    """``stream.closed``, read anew (mypy would narrow the property across a close)."""
    return stream.closed


def keys(events: list[Event]) -> list[str]:
    return [meta_namespace_key(e.object) for e in events]


# -- leaving `async for` unregisters at once ---------------------------------------------------


@asynccontextmanager
async def synced_informer(
    source: MemorySource, *, cache: CacheMode
) -> AsyncIterator[SharedIndexInformer]:
    """A running, synced informer over three ConfigMaps."""
    await create(source, "a", "b", "c")
    informer = new_informer(source, cache=cache)
    async with informer:
        assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
        yield informer


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector off for the test: what it shows does not depend on it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def test_a_stream_has_no_finalizer() -> None:
    """Unsubscribing is never the work of ``__del__`` (issue 11): the stream has none."""
    assert "__del__" not in vars(EventStream)


@pytest.mark.usefixtures("no_cyclic_gc")
async def test_break_unregisters_at_once(source: MemorySource, cache_mode: CacheMode) -> None:
    """`break` out of `async for ev in informer.events()` removes the listener immediately."""
    async with synced_informer(source, cache=cache_mode) as synced:
        async for event in synced.events():
            assert len(synced.statistics().listeners) == 1
            assert event.type is EventType.ADDED and event.is_in_initial_list
            break
        assert synced.statistics().listeners == ()


@pytest.mark.usefixtures("no_cyclic_gc")
async def test_an_exception_in_the_loop_unregisters_at_once(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """An exception leaving the loop has removed the listener when the except block runs."""
    async with synced_informer(source, cache=cache_mode) as synced:
        counts = []
        try:
            async for _ in synced.events():
                raise ValueError("consumer failed")
        except ValueError:
            counts.append(len(synced.statistics().listeners))
        assert counts == [0]


@pytest.mark.usefixtures("no_cyclic_gc")
async def test_cancellation_while_waiting_unregisters_at_once(
    source: MemorySource,
    cache_mode: CacheMode,
) -> None:
    """Cancelling a consumer blocked in `async for` removes its listener right away."""
    async with synced_informer(source, cache=cache_mode) as synced:
        drained = asyncio.Event()
        counts: list[int] = []

        consumer = anyio.CancelScope()

        async def consume() -> None:
            with consumer:
                try:
                    async for event in synced.events():
                        if event.object["metadata"]["name"] == "c":
                            drained.set()  # the cache is read: the next __anext__ blocks
                except anyio.get_cancelled_exc_class():
                    counts.append(len(synced.statistics().listeners))
                    raise

        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await drained.wait()
            assert len(synced.statistics().listeners) == 1
            consumer.cancel()
        assert consumer.cancelled_caught
        assert counts == [0]
        assert synced.statistics().listeners == ()


@pytest.mark.usefixtures("no_cyclic_gc")
async def test_cancelling_a_scope_around_the_loop_unregisters(
    source: MemorySource,
    cache_mode: CacheMode,
) -> None:
    """A cancel scope around the loop (as timeouts use) cancelling it also unregisters at once."""
    async with synced_informer(source, cache=cache_mode) as synced:
        with anyio.CancelScope() as scope:
            async for event in synced.events():
                if event.object["metadata"]["name"] == "c":
                    scope.cancel()  # lands in the next, blocking, __anext__
        assert scope.cancelled_caught
        assert synced.statistics().listeners == ()


async def test_aclose_and_async_with_unregister(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """aclose() and the end of `async with informer.events()` unregister (idempotently)."""
    async with synced_informer(source, cache=cache_mode) as synced:
        stream = synced.events()
        assert len(synced.statistics().listeners) == 1 and not stream.closed
        await stream.aclose()
        await stream.aclose()
        assert synced.statistics().listeners == () and is_closed(stream)
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
        async with synced.events() as other:
            assert (await anext(other)).type is EventType.ADDED
            assert len(synced.statistics().listeners) == 1
        assert synced.statistics().listeners == ()


@pytest.mark.usefixtures("no_cyclic_gc")
async def test_async_with_closes_a_stream_still_referenced(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """The explicit form closes at the end of the block even though a variable (and here a
    list) still references the stream, after a `break` or an exception alike."""
    async with synced_informer(source, cache=cache_mode) as synced:
        kept: list[EventStream] = []
        async with synced.events() as stream:
            kept.append(stream)
            async for _ in stream:
                break
            assert not stream.closed and len(synced.statistics().listeners) == 1
        assert is_closed(stream) and synced.statistics().listeners == ()
        with pytest.raises(ValueError):
            async with synced.events() as stream:
                kept.append(stream)
                async for _ in stream:
                    raise ValueError("consumer failed")
        assert all(s.closed for s in kept) and synced.statistics().listeners == ()


async def test_a_held_stream_survives_a_timed_out_read(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """A timeout on one `anext()` does not close a stream the caller still holds."""
    async with synced_informer(source, cache=cache_mode) as synced:
        stream = synced.events()
        for _ in range(3):
            await anext(stream)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(stream), 0.05)  # nothing to read: times out
        assert not stream.closed and len(synced.statistics().listeners) == 1
        await stream.aclose()


async def test_a_stream_ends_when_the_informer_stops(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """A consumer's `async for` ends by itself when the informer stops."""
    await create(source, "a")
    async with anyio.create_task_group() as tg:
        informer = new_informer(source, cache=cache_mode)
        recorder = Recorder()
        tg.start_soon(recorder.consume, informer.events())
        async with informer:
            await recorder.wait_for_count(1)
        assert informer.statistics().listeners == ()
    assert recorder.summary() == [("ADDED", "default/a")]


# -- joining late --------------------------------------------------------------------------------


async def test_a_late_subscriber_sees_each_existing_object_once(
    source: MemorySource,
    cache_mode: CacheMode,
) -> None:
    """Subscribers joining mid-stream get the cache as adds, then every later change, once."""
    rng = random.Random(7)
    names = [f"cm-{i}" for i in range(12)]
    await create(source, *names[:4])
    async with anyio.create_task_group() as tg:
        informer = new_informer(source, cache=cache_mode)
        joined: list[tuple[Recorder, set[str]]] = []
        async with informer:
            assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            for step in range(60):
                if step % 10 == 5:
                    # Join while the informer is busy delivering the writer's changes.
                    recorder = Recorder()
                    stream = informer.events()
                    joined.append((recorder, set(informer.indexer.list_keys())))
                    tg.start_soon(recorder.consume, stream)
                    del stream
                name = rng.choice(names)
                if name in {o["metadata"]["name"] for o in source.objects(CONFIGMAPS)}:
                    patch_data(source, name, v=str(step))
                else:
                    source.create(CONFIGMAPS, configmap(name, v=str(step)))
                await anyio.lowlevel.checkpoint()  # the informer delivers between writes
            expected = {
                meta_namespace_key(o): o["metadata"]["resourceVersion"]
                for o in source.objects(CONFIGMAPS)
            }

            def view(events: list[Event]) -> dict[str, str]:
                return {
                    meta_namespace_key(e.object): e.object["metadata"]["resourceVersion"]
                    for e in events
                }

            for recorder, _ in joined:
                await recorder.wait_for(lambda events: view(events) == expected)
    assert len(joined) == 6
    for recorder, snapshot in joined:
        events = recorder.events
        initial = events[: len(snapshot)]
        assert all(e.type is EventType.ADDED and e.is_in_initial_list for e in initial)
        assert sorted(keys(initial)) == sorted(snapshot)
        later = events[len(snapshot) :]
        assert not any(e.is_in_initial_list for e in later)
        # No object was deleted: each key is added exactly once, and never updated before that.
        added = [k for k, e in zip(keys(events), events, strict=True) if e.type is EventType.ADDED]
        assert sorted(added) == sorted(set(added))
        seen: dict[str, int] = {}
        for event in events:
            key, rv = (
                meta_namespace_key(event.object),
                int(event.object["metadata"]["resourceVersion"]),
            )
            if event.type is EventType.UPDATED:
                assert event.old_object is not None
                assert int(event.old_object["metadata"]["resourceVersion"]) == seen[key] < rv
            seen[key] = rv


async def test_a_handler_added_after_start_gets_the_cache(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """add_event_handler after sync replays the cache as initial adds; then it is synced."""
    await create(source, "a", "b")
    informer = new_informer(source, cache=cache_mode)
    async with informer:
        assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
        recorder = Recorder()
        registration = informer.add_event_handler(recorder)
        with anyio.fail_after(10):
            await registration.wait_for_cache_sync()
        assert registration.has_synced()
        assert recorder.summary() == [("ADDED", "default/a"), ("ADDED", "default/b")]
        assert all(e.is_in_initial_list for e in recorder.events)
        await create(source, "c")
        await recorder.wait_for_count(3)
        assert not recorder.events[2].is_in_initial_list


# -- handlers ------------------------------------------------------------------------------------


async def test_handlers_of_every_shape(source: MemorySource, cache_mode: CacheMode) -> None:
    """Handler objects and ResourceEventHandlerFuncs, sync or async, with any subset of methods."""
    calls: dict[str, list[Any]] = {"funcs": [], "async": [], "deletes": []}
    changed = asyncio.Event()

    def note(kind: str, *args: Any) -> None:
        calls[kind].append(args)
        changed.set()

    async def async_add(obj: KubeObject) -> None:  # one-argument form: no initial-list flag
        await anyio.lowlevel.checkpoint()  # an async handler that yields
        note("async", "add", obj["metadata"]["name"])

    async def async_update(old: KubeObject, new: KubeObject) -> None:
        await anyio.lowlevel.checkpoint()
        note("async", "update", new["data"]["v"])

    class OnlyDeletes:
        def on_delete(self, obj: KubeObject) -> None:
            note("deletes", obj["metadata"]["name"])

    await create(source, "a")
    informer = new_informer(source, cache=cache_mode)
    informer.add_event_handler(
        ResourceEventHandlerFuncs(
            on_add=lambda obj, initial: note("funcs", "add", obj["metadata"]["name"], initial),
            on_update=lambda old, new: note("funcs", "update", old["data"], new["data"]),
            on_delete=lambda obj: note("funcs", "delete", obj["metadata"]["name"]),
        )
    )
    informer.add_event_handler(ResourceEventHandlerFuncs(on_add=async_add, on_update=async_update))
    informer.add_event_handler(OnlyDeletes())
    async with informer:
        assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
        patch_data(source, "a", v="1")
        delete(source, "a")
        await wait_until(changed, lambda: len(calls["funcs"]) == 3 and len(calls["deletes"]) == 1)
        await wait_until(changed, lambda: len(calls["async"]) == 2)
    assert calls["funcs"] == [
        ("add", "a", True),
        ("update", {"v": "0"}, {"v": "1"}),
        ("delete", "a"),
    ]
    assert calls["async"] == [("add", "a"), ("update", "1")]
    assert calls["deletes"] == [("a",)]


async def test_each_handler_runs_in_its_own_task(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """Every handler has one task of its own, used for all of its calls."""
    tasks: dict[str, set[asyncio.Task[Any] | None]] = {"x": set(), "y": set()}
    recorder = Recorder()

    def handler(name: str) -> ResourceEventHandlerFuncs:
        def on_add(obj: KubeObject) -> None:
            tasks[name].add(asyncio.current_task())
            if name == "y":
                recorder.record(Event(EventType.ADDED, obj))

        return ResourceEventHandlerFuncs(on_add=on_add)

    await create(source, "a", "b", "c")
    informer = new_informer(source, cache=cache_mode)
    x = informer.add_event_handler(handler("x"))
    informer.add_event_handler(handler("y"))
    async with informer:
        await x.wait_for_cache_sync()
        await recorder.wait_for_count(3)
    assert len(tasks["x"]) == len(tasks["y"]) == 1
    assert tasks["x"] != tasks["y"]


async def test_a_failing_handler_is_logged_counted_and_fed_on(
    source: MemorySource, caplog: pytest.LogCaptureFixture, cache_mode: CacheMode
) -> None:
    """A handler's exception is logged and counted; its later events are still delivered."""
    recorder = Recorder()

    class Flaky:
        def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> None:
            if obj["metadata"]["name"] in ("a", "c"):
                raise RuntimeError("boom")
            recorder.on_add(obj, is_in_initial_list)

        async def on_update(self, old: KubeObject, new: KubeObject) -> None:
            raise KeyError("async boom")

        def on_delete(self, obj: KubeObject) -> None:
            recorder.on_delete(obj)

    await create(source, "a", "b")
    informer = new_informer(source, cache=cache_mode)
    registration = informer.add_event_handler(Flaky())
    with caplog.at_level(logging.ERROR, logger="aioinformer._informer._event_stream"):
        async with informer:
            # A failed initial add still counts as done.
            await registration.wait_for_cache_sync()
            await create(source, "c")
            patch_data(source, "b", v="1")
            delete(source, "b")
            await recorder.wait_for_count(2)
    assert recorder.summary() == [("ADDED", "default/b"), ("DELETED", "default/b")]
    assert registration.handler_errors == 3
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 3
    assert "RuntimeError" in errors[0].getMessage() and "KeyError" in errors[2].getMessage()


async def test_remove_event_handler_stops_delivery(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """After remove_event_handler a handler receives nothing more; removing twice is fine."""
    await create(source, "a")
    informer = new_informer(source, cache=cache_mode)
    removed, kept = Recorder(), Recorder()
    registration = informer.add_event_handler(removed)
    informer.add_event_handler(kept)
    async with informer:
        await removed.wait_for_count(1)
        informer.remove_event_handler(registration)
        informer.remove_event_handler(registration)
        assert registration.listener.closed
        assert len(informer.statistics().listeners) == 1
        await create(source, "b")
        await kept.wait_for_count(2)
    assert removed.summary() == [("ADDED", "default/a")]
    assert kept.summary() == [("ADDED", "default/a"), ("ADDED", "default/b")]


async def test_a_handler_removed_before_start_never_runs(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """remove_event_handler before start: the handler gets nothing and no task is started."""
    await create(source, "a")
    informer = new_informer(source, cache=cache_mode)
    removed, kept = Recorder(), Recorder()
    registration = informer.add_event_handler(removed)
    kept_registration = informer.add_event_handler(kept)
    informer.remove_event_handler(registration)
    assert len(informer.statistics().listeners) == 1
    async with informer:
        await kept_registration.wait_for_cache_sync()
    assert removed.events == [] and kept.summary() == [("ADDED", "default/a")]


async def test_registration_syncs_when_its_handler_processed_the_initial_list(
    source: MemorySource,
    cache_mode: CacheMode,
) -> None:
    """reg.has_synced() waits for that handler; informer.has_synced() does not."""
    release = asyncio.Event()

    class Blocked:
        async def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> None:
            await release.wait()

    await create(source, "a", "b")
    informer = new_informer(source, cache=cache_mode)
    blocked = informer.add_event_handler(Blocked())
    fast = informer.add_event_handler(Recorder())
    async with informer:
        assert not blocked.has_synced() and not fast.has_synced()
        assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
        await fast.wait_for_cache_sync()
        assert fast.has_synced()
        assert not blocked.has_synced()
        assert blocked.backlog == 1  # one add in progress, one waiting
        release.set()
        with anyio.fail_after(10):
            await blocked.wait_for_cache_sync()
        assert blocked.has_synced() and blocked.backlog == 0
        assert blocked.peak_backlog >= 1


async def test_a_stream_syncs_when_it_read_past_the_initial_list(
    source: MemorySource,
    cache_mode: CacheMode,
) -> None:
    """A stream's has_synced() turns true once the consumer asked for the event after the list."""
    await create(source, "a")
    informer = new_informer(source, cache=cache_mode)
    stream = informer.events()
    async with informer:
        first = await anext(stream)
        assert first.is_in_initial_list
        assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
        assert not stream.has_synced()  # still processing the initial add
        async with anyio.create_task_group() as tg:
            tg.start_soon(anext, stream)  # asks for the event after the list: blocks
            with anyio.fail_after(10):
                await stream.wait_for_cache_sync()
            assert stream.has_synced()
            tg.cancel_scope.cancel()
    await stream.aclose()


# -- slow consumers ------------------------------------------------------------------------------


async def test_a_slow_handler_does_not_delay_a_fast_consumer(
    source: MemorySource,
    cache_mode: CacheMode,
) -> None:
    """A handler stuck on its first event leaves another consumer's delivery undelayed; it
    catches up once it proceeds."""
    release = asyncio.Event()
    slow_done = asyncio.Event()
    slow_seen: list[str] = []

    class Slow:
        async def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> None:
            await release.wait()  # the behaviour under test: a handler that takes its time
            slow_seen.append(obj["metadata"]["name"])
            if len(slow_seen) == 2:
                slow_done.set()

    await create(source, "a")
    async with anyio.create_task_group() as tg:
        informer = new_informer(source, cache=cache_mode)
        slow = informer.add_event_handler(Slow())
        fast = Recorder()
        tg.start_soon(fast.consume, informer.events())
        async with informer:
            assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            await create(source, "b")
            await fast.wait_for_count(2)
            assert slow_seen == []  # still on its first event
            assert slow.backlog >= 1
            release.set()
            with anyio.fail_after(10):
                await slow_done.wait()
    assert fast.summary() == [("ADDED", "default/a"), ("ADDED", "default/b")]
    assert slow_seen == ["a", "b"]


async def test_an_unread_stream_only_grows_its_backlog(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """Nobody reading a stream blocks nothing: its backlog (and peak) just grows."""
    await create(source, "a")
    async with anyio.create_task_group() as tg:
        informer = new_informer(source, cache=cache_mode)
        idle: EventStream = informer.events()
        reader = Recorder()
        tg.start_soon(reader.consume, informer.events())
        async with informer:
            for name in ("b", "c", "d", "e"):
                await create(source, name)
            await reader.wait_for_count(5)
            assert idle.backlog == 5 and idle.peak_backlog == 5
            for _ in range(2):
                await anext(idle)
            assert idle.backlog == 3 and idle.peak_backlog == 5
            listener = next(item for item in informer._listeners if item.backlog == 3)
            assert listener.peak_backlog == 5
        assert idle.closed


# -- review fixes -------------------------------------------------------------------------------


async def test_a_handler_raising_cancelled_error_is_a_handler_error_not_a_stop(
    source: MemorySource,
    cache_mode: CacheMode,
) -> None:
    """A handler that awaited something cancelled elsewhere fails alone; the informer goes on."""
    seen = asyncio.Event()

    async def on_add(obj: KubeObject) -> None:
        if obj["metadata"]["name"] == "boom":
            never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            never.cancel()
            await never  # raises CancelledError, though nobody cancelled the handler's task
        elif obj["metadata"]["name"] == "after":
            seen.set()

    informer = new_informer(source, cache=cache_mode)
    registration = informer.add_event_handler(ResourceEventHandlerFuncs(on_add=on_add))
    async with informer:
        await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
        source.create(CONFIGMAPS, configmap("boom"))
        source.create(CONFIGMAPS, configmap("after"))
        with anyio.fail_after(10):
            await seen.wait()
        assert informer.state is not State.STOPPED
        assert registration.handler_errors == 1


async def test_wait_for_cache_sync_is_false_for_a_handler_removed_before_processing_the_list(
    source: MemorySource,
    cache_mode: CacheMode,
) -> None:
    """Removing a handler does not count its unprocessed initial list as processed."""
    for i in range(3):
        source.create(CONFIGMAPS, configmap(f"cm-{i}"))
    gate = asyncio.Event()

    async def on_add(obj: KubeObject) -> None:
        await gate.wait()  # never processes anything

    informer = new_informer(source, cache=cache_mode)
    async with informer:
        await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
        registration = informer.add_event_handler(ResourceEventHandlerFuncs(on_add=on_add))
        informer.remove_event_handler(registration)
        with anyio.fail_after(5):
            assert await registration.wait_for_cache_sync() is False
        assert not registration.has_synced()


def test_a_defaulted_second_parameter_is_not_the_initial_list_flag() -> None:
    """on_add=lambda obj, k=k: ... gets only the object; a named flag or two required get both."""
    from aioinformer._informer._handlers import _takes_initial_list_flag

    k = "captured"
    assert not _takes_initial_list_flag(lambda obj, k=k: None)
    assert _takes_initial_list_flag(lambda obj, is_in_initial_list=False: None)
    assert _takes_initial_list_flag(lambda obj, initial: None)
    assert _takes_initial_list_flag(lambda *args: None)
    assert not _takes_initial_list_flag(lambda obj: None)


async def test_a_late_joiner_replays_a_large_cache_lazily(
    source: MemorySource, cache_mode: CacheMode
) -> None:
    """Joining replays the cache as events made on demand; the backlog counts them."""
    for i in range(50):
        source.create(CONFIGMAPS, configmap(f"cm-{i:02d}"))
    informer = new_informer(source, cache=cache_mode)
    async with informer:
        await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
        async with informer.events() as stream:
            assert stream.backlog == 50
            names = [(await anext(stream)).object["metadata"]["name"] for _ in range(50)]
            assert stream.backlog == 0
    assert sorted(names) == [f"cm-{i:02d}" for i in range(50)]


async def test_a_late_joiner_peak_backlog_counts_its_replay(source: MemorySource) -> None:
    """A consumer joining a synced informer starts with the cache replayed; notifications
    arriving on top of that replay raise the peak with the whole backlog (issue 15: the peak
    read lower than the backlog)."""
    await create(source, "a", "b", "c")
    async with anyio.create_task_group() as tg:
        informer = new_informer(source)
        reader = Recorder()
        tg.start_soon(reader.consume, informer.events())
        async with informer:
            await reader.wait_for_count(3)
            late: EventStream = informer.events()
            assert late.backlog == 3 and late.peak_backlog == 3
            await create(source, "d")
            await reader.wait_for_count(4)
            assert late.backlog == 4
            assert late.peak_backlog == 4
            await late.aclose()
