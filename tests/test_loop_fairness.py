"""A consumer draining a large backlog shares the event loop (issue 10, item 2).

Reading a buffered notification does not suspend, so a handler that never really awaits
would otherwise run a whole backlog in one go: a late handler of 50 µs per object on a
20,000-object cache froze the loop for about a second, stalling the watch, every other
consumer and a web server's health endpoints.
"""

from __future__ import annotations

import gc
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel
import pytest

from aioinformer._informer._event_stream import EventStream
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._objects import KubeObject
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.testing import FakeApiServer

from .support import CONFIGMAPS, configmap, kube_client

#: Objects in the cache when the late consumer joins.
BACKLOG = 20_000
#: CPU each notification costs the consumer (a busy loop, like real work).
WORK = 50e-6
#: The longest the loop may be unavailable to another task (the issue's bound).
LONGEST_STALL = 0.050
#: A fail-safe for waits (not a measurement).
GUARD = 120.0


def work() -> None:
    """Burn :data:`WORK` seconds of CPU without giving the loop a chance to run."""
    end = time.perf_counter() + WORK
    while time.perf_counter() < end:
        pass


class SyncHandler:
    """A plain (sync) handler doing some work per object."""

    def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> None:
        work()


class NeverAwaitingHandler:
    """An async handler that never awaits anything that suspends."""

    async def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> None:
        work()


class StallMeter:
    """A ticker task that records the longest gap between two of its turns on the loop."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.turns = 0

    async def run(self, stop: anyio.Event) -> None:
        # CPU time of the loop's thread, not wall time: a stall is work the loop did without
        # giving the ticker a turn; time the OS gave to other processes is not one.
        last = time.thread_time()
        while not stop.is_set():
            await anyio.lowlevel.checkpoint()
            now = time.thread_time()
            self.longest = max(self.longest, now - last)
            self.turns += 1
            last = now


@asynccontextmanager
async def synced_informer() -> AsyncIterator[SharedIndexInformer]:
    """An informer whose cache holds :data:`BACKLOG` ConfigMaps (a context manager, not a
    fixture: its task group must be left in the task that entered it)."""
    async with FakeApiServer() as server, kube_client(server) as client:
        for i in range(BACKLOG):
            server.objects.create("configmaps", configmap(f"cm-{i:05}"))
        informer = SharedIndexInformer(KubeListerWatcher(client, CONFIGMAPS))
        async with informer:
            with anyio.fail_after(GUARD):
                assert await informer.wait_for_cache_sync()
            yield informer


async def measure(drain: Callable[[], Awaitable[None]]) -> StallMeter:
    """The loop's longest stall while ``drain()`` runs."""
    meter, stop = StallMeter(), anyio.Event()
    # The cyclic collector's pauses grow with everything the test process holds (the issue 13
    # performance work is about them); this measures how the library shares the loop.
    gc.collect()
    gc.disable()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(meter.run, stop)
            await anyio.lowlevel.checkpoint()  # the meter's first turn
            with anyio.fail_after(GUARD):
                await drain()
            stop.set()
    finally:
        gc.enable()
    return meter


@pytest.mark.parametrize("handler_type", [SyncHandler, NeverAwaitingHandler])
async def test_a_late_handler_draining_a_large_cache_never_stalls_the_loop_long(
    handler_type: type[object],
) -> None:
    """A handler joining a 20,000-object cache late (the cache is replayed to it) leaves the
    loop to other tasks at least every few milliseconds: the longest stall a ticker task sees
    is under 50 ms, where it was the whole drain (about a second) before."""

    async def drain() -> None:
        registration = informer.add_event_handler(handler_type())
        assert await registration.wait_for_cache_sync()  # it processed the whole replayed cache

    async with synced_informer() as informer:
        meter = await measure(drain)
    assert meter.turns > 10, "the ticker barely ran: the drain monopolised the loop"
    assert meter.longest < LONGEST_STALL, f"the loop stalled for {meter.longest * 1000:.1f} ms"


async def test_an_async_for_body_without_await_shares_the_loop_too() -> None:
    """The same holds for ``async for ev in informer.events()`` whose body never awaits."""

    async def drain() -> None:
        stream: EventStream = informer.events()
        async with stream:
            seen = 0
            async for _ in stream:
                work()
                seen += 1
                if seen == BACKLOG:
                    break

    async with synced_informer() as informer:
        meter = await measure(drain)
    assert meter.turns > 10
    assert meter.longest < LONGEST_STALL, f"the loop stalled for {meter.longest * 1000:.1f} ms"
