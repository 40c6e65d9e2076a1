"""Resync: per-consumer periods, the informer's check period, and who gets sync updates."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio

from aioinformer._cache._compact import CacheMode
from aioinformer._informer._event_stream import Event, EventType
from aioinformer._informer._informer import MINIMUM_RESYNC_PERIOD, SharedIndexInformer
from aioinformer._listwatch import ListOptions, ListResult
from aioinformer.testing import FakeApiServer, FakeClock

from .support import Recorder, configmap, kube_client, new_informer


class UnusedListerWatcher:
    async def list(self, options: ListOptions) -> ListResult:
        raise AssertionError("not expected to list")

    async def watch(self, options: ListOptions, *, idle_timeout: float | None = None) -> Any:
        raise AssertionError("not expected to watch")


def periods(informer: SharedIndexInformer) -> list[float]:
    return [listener.resync_period for listener in informer._listeners]


def syncs(events: list[Event]) -> list[Event]:
    return [e for e in events if e.is_sync]


def test_before_start_a_smaller_period_lowers_the_check_period(cache_mode: CacheMode) -> None:
    """Before start: periods under 1 s become 1 s, and a smaller one lowers the check period."""
    informer = SharedIndexInformer(UnusedListerWatcher(), resync_period=10.0, cache=cache_mode)
    assert informer.resync_check_period == 10.0
    streams = [informer.events()]  # the informer's default: 10 s
    assert periods(informer) == [10.0]
    streams.append(informer.events(resync_period=4.0))
    assert informer.resync_check_period == 4.0
    streams.append(informer.events(resync_period=0.3))  # raised to the minimum
    assert informer.resync_check_period == MINIMUM_RESYNC_PERIOD == 1.0
    streams.append(informer.events(resync_period=0))  # this one never resyncs
    streams.append(informer.events(resync_period=30.0))
    assert periods(informer) == [10.0, 4.0, 1.0, 0.0, 30.0]
    assert informer.resync_check_period == 1.0
    for stream in streams:
        stream.close()


def test_the_informer_default_applies_with_the_minimum(cache_mode: CacheMode) -> None:
    """An informer period under 1 s is its check period; consumers still resync every 1 s."""
    informer = SharedIndexInformer(UnusedListerWatcher(), resync_period=0.2, cache=cache_mode)
    stream = informer.events()
    assert informer.resync_check_period == 0.2
    assert periods(informer) == [1.0]
    stream.close()


def test_resync_disabled_ignores_every_handler_period(cache_mode: CacheMode) -> None:
    """With an informer period of 0, consumer periods are ignored and nothing is checked."""
    informer = SharedIndexInformer(UnusedListerWatcher(), cache=cache_mode)
    registration = informer.add_event_handler(Recorder(), resync_period=2.0)
    stream = informer.events(resync_period=0.5)
    assert informer.resync_check_period == 0.0
    assert periods(informer) == [0.0, 0.0]
    assert registration.listener.requested_resync_period == 2.0
    stream.close()


async def test_after_start_a_smaller_period_is_raised(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """After start, a period under the check period is raised to it; the check period stays."""
    async with kube_client(fake_apiserver) as api_client:
        informer = new_informer(api_client, resync_period=5.0, cache=cache_mode)
        async with informer:
            assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            registration = informer.add_event_handler(Recorder(), resync_period=2.0)
            assert registration.listener.resync_period == 5.0
            slower = informer.add_event_handler(Recorder(), resync_period=8.0)
            assert slower.listener.resync_period == 8.0
            never = informer.add_event_handler(Recorder(), resync_period=0)
            assert never.listener.resync_period == 0.0
            assert informer.resync_check_period == 5.0


async def test_resync_updates_reach_only_listeners_due(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """Every 1 s (on the informer's clock) the due consumer gets old==new updates; others, and
    resync-off informers, not."""
    for name in ("a", "b"):
        fake_apiserver.objects.create("configmaps", configmap(name))
    clock = FakeClock()
    async with kube_client(fake_apiserver) as api_client, anyio.create_task_group() as tg:
        informer = new_informer(api_client, resync_period=0.25, clock=clock, cache=cache_mode)
        due, never, later = Recorder(), Recorder(), Recorder()
        tg.start_soon(due.consume, informer.events())  # 1 s (the 0.25 s default, raised)
        tg.start_soon(never.consume, informer.events(resync_period=0))
        tg.start_soon(later.consume, informer.events(resync_period=30))
        # A second informer with resync off: its 1 s consumer must never get a sync update.
        quiet_informer = new_informer(api_client, resync_period=0, clock=clock, cache=cache_mode)
        quiet = Recorder()
        tg.start_soon(quiet.consume, quiet_informer.events(resync_period=1.0))
        async with informer, quiet_informer:
            assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            assert await asyncio.wait_for(quiet_informer.wait_for_cache_sync(), 10)
            await due.wait_for_count(2)
            await clock.advance(0.75)  # three checks, nobody due yet
            assert syncs(due.events) == []
            await clock.advance(0.25)  # 1 s: the first round
            await due.wait_for(lambda events: len(syncs(events)) == 2)
            await clock.advance(0.75)
            assert len(syncs(due.events)) == 2  # not every 0.25 s check
            await clock.advance(0.25)  # 2 s: the second round
            await due.wait_for(lambda events: len(syncs(events)) == 4)
        for event in syncs(due.events):
            assert event.type is EventType.UPDATED
            assert event.old_object == event.object  # replayed from the cache
            if cache_mode == "dict":
                assert event.old_object is event.object
        rounds = syncs(due.events)
        assert {e.object["metadata"]["name"] for e in rounds[:2]} == {"a", "b"}
        assert {e.object["metadata"]["name"] for e in rounds[2:4]} == {"a", "b"}
        for recorder in (never, later, quiet):
            assert syncs(recorder.events) == []
            assert len(recorder.events) == 2


async def test_with_resync_off_relist_updates_reach_every_listener(
    fake_apiserver: FakeApiServer,
    cache_mode: CacheMode,
) -> None:
    """With resync off every listener stays 'syncing': an unchanged relisted object reaches all."""
    for name in ("a", "b"):
        fake_apiserver.objects.create("configmaps", configmap(name))
    async with kube_client(fake_apiserver) as api_client, anyio.create_task_group() as tg:
        informer = new_informer(api_client, cache=cache_mode)
        first, second = Recorder(), Recorder()
        tg.start_soon(first.consume, informer.events())
        tg.start_soon(second.consume, informer.events(resync_period=0))
        async with informer:
            assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            with anyio.fail_after(10):
                await fake_apiserver.requests.wait_for_watches(1, resource="configmaps")
            lists = len([r for r in fake_apiserver.requests.records if r.verb == "list"])
            fake_apiserver.faults.inject_watch_error(500, "InternalError", "relist, please")
            for recorder in (first, second):
                await recorder.wait_for(lambda events: len(syncs(events)) == 2)
            assert (
                len([r for r in fake_apiserver.requests.records if r.verb == "list"]) == lists + 1
            )
        for recorder in (first, second):
            assert [(e.type, e.is_sync) for e in recorder.events[2:]] == [
                (EventType.UPDATED, True),
                (EventType.UPDATED, True),
            ]
            relisted = recorder.events[2]
            assert relisted.old_object is not None
            assert (
                relisted.old_object["metadata"]["resourceVersion"]
                == relisted.object["metadata"]["resourceVersion"]
            )
