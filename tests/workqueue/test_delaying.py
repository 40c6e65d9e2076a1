"""DelayingQueue on real event-loop timers: deadlines, earliest wins, shutdown."""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from aioinformer.errors import QueueShutDown
from aioinformer.workqueue import DelayingQueue

GUARD = 5.0
DELAY = 0.03


async def test_add_after_delivers_the_item_after_the_delay() -> None:
    """An item added with a delay is handed out no earlier than the delay."""
    q: DelayingQueue[str] = DelayingQueue()
    start = time.monotonic()
    q.add_after("a", DELAY)
    assert len(q) == 0
    assert q.waiting_count == 1
    assert await asyncio.wait_for(q.get(), GUARD) == "a"
    assert time.monotonic() - start >= DELAY * 0.9
    assert q.waiting_count == 0
    q.shutdown()


async def test_items_become_ready_in_deadline_order() -> None:
    """Items with different delays come out earliest deadline first."""
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("late", 3 * DELAY)
    q.add_after("early", DELAY)
    q.add_after("middle", 2 * DELAY)
    got = [await asyncio.wait_for(q.get(), GUARD) for _ in range(3)]
    assert got == ["early", "middle", "late"]
    q.shutdown()


async def test_earlier_deadline_replaces_a_later_one() -> None:
    """Re-adding a waiting item with a shorter delay makes it ready sooner."""
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("a", 60.0)
    q.add_after("a", DELAY)
    assert q.waiting_count == 1
    assert await asyncio.wait_for(q.get(), GUARD) == "a"
    assert q.waiting_count == 0
    q.shutdown()


async def test_later_deadline_does_not_postpone_an_item() -> None:
    """Re-adding a waiting item with a longer delay keeps the earlier deadline."""
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("a", DELAY)
    before = q.next_ready_at
    q.add_after("a", 60.0)
    assert q.next_ready_at == before
    assert await asyncio.wait_for(q.get(), GUARD) == "a"
    q.shutdown()


async def test_zero_or_negative_delay_adds_at_once() -> None:
    """add_after with delay <= 0 queues the item immediately."""
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("a", 0)
    q.add_after("b", -5)
    assert len(q) == 2
    assert q.waiting_count == 0


async def test_waiting_item_also_queued_is_handed_out_once() -> None:
    """An item both queued and waiting is deduplicated when its deadline passes."""
    q: DelayingQueue[str] = DelayingQueue()
    q.add("a")
    q.add_after("a", DELAY)
    q.add_after("b", 2 * DELAY)
    assert await asyncio.wait_for(q.get(), GUARD) == "a"
    # "a" fires while processing: only marked dirty, re-queued at done().
    assert await asyncio.wait_for(q.get(), GUARD) == "b"
    q.done("a")
    assert await asyncio.wait_for(q.get(), GUARD) == "a"
    q.shutdown()


async def test_shutdown_discards_waiting_items_and_cancels_the_timer() -> None:
    """Waiting items are dropped at shutdown and no timer stays scheduled."""
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("a", DELAY)
    q.add("b")
    q.shutdown()
    assert q.waiting_count == 0
    assert q._timer is None
    assert await asyncio.wait_for(q.get(), GUARD) == "b"
    with pytest.raises(QueueShutDown):
        await asyncio.wait_for(q.get(), GUARD)


async def test_add_after_during_shutdown_is_ignored() -> None:
    """add_after() once shutting down neither queues nor schedules anything."""
    q: DelayingQueue[str] = DelayingQueue()
    q.shutdown()
    q.add_after("a", 0)
    q.add_after("b", DELAY)
    assert len(q) == 0
    assert q.waiting_count == 0
    assert q._timer is None


async def test_blocked_getter_is_woken_by_a_due_item() -> None:
    """A get() waiting on an empty queue receives a delayed item when it becomes due."""
    q: DelayingQueue[str] = DelayingQueue()
    getter = asyncio.create_task(q.get())
    q.add_after("a", DELAY)
    assert await asyncio.wait_for(getter, GUARD) == "a"
    q.shutdown()


async def test_one_timer_serves_many_waiting_items() -> None:
    """However many items wait, the queue keeps one timer, armed for the earliest deadline."""
    q: DelayingQueue[int] = DelayingQueue()
    for i in range(100):
        q.add_after(i, 60.0 + i)
    first = q._timer
    assert first is not None
    assert q._timer_deadline == q.next_ready_at
    q.add_after(500, 70.0)  # later than the head: the timer is kept
    assert q._timer is first
    q.add_after(501, 1.0)  # earlier: the timer is replaced
    assert q._timer is not first
    assert first.cancelled()
    q.shutdown()


async def test_infinite_delay_never_fires() -> None:
    """An item with an infinite delay waits forever (until shutdown) without error."""
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("never", math.inf)
    q.add_after("soon", DELAY)
    assert await asyncio.wait_for(q.get(), GUARD) == "soon"
    assert q.waiting_count == 1
    q.shutdown()


def test_nan_delay_is_rejected() -> None:
    """add_after with a NaN delay raises ValueError."""
    q: DelayingQueue[str] = DelayingQueue()
    with pytest.raises(ValueError):
        q.add_after("a", math.nan)


def test_positive_delay_needs_a_running_loop() -> None:
    """add_after with a positive delay outside an event loop raises RuntimeError."""
    q: DelayingQueue[str] = DelayingQueue()
    with pytest.raises(RuntimeError):
        q.add_after("a", 1.0)
    assert q.waiting_count == 0
