"""WorkQueue: FIFO, dedup, never-concurrent processing, shutdown and drain."""

from __future__ import annotations

import asyncio

import pytest

from aioinformer.errors import QueueShutDown
from aioinformer.workqueue import WorkQueue

GUARD = 5.0


async def get(q: WorkQueue[str]) -> str:
    return await asyncio.wait_for(q.get(), GUARD)


async def test_items_come_out_in_fifo_order() -> None:
    """Items are handed out in the order they were first added."""
    q: WorkQueue[str] = WorkQueue()
    for item in ["a", "b", "c"]:
        q.add(item)
    assert [await get(q), await get(q), await get(q)] == ["a", "b", "c"]


async def test_duplicates_while_queued_collapse() -> None:
    """Adding an item that is already queued neither duplicates nor moves it."""
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("b")
    q.add("a")
    assert len(q) == 2
    assert await get(q) == "a"
    assert await get(q) == "b"
    assert len(q) == 0


async def test_item_added_while_processing_is_requeued_at_done() -> None:
    """An in-flight item re-added is not handed out again until done(), then it is re-queued."""
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    assert await get(q) == "a"
    q.add("a")
    q.add("a")
    assert len(q) == 0  # not handed to a second worker
    q.add("b")
    assert await get(q) == "b"
    q.done("a")
    assert len(q) == 1
    assert await get(q) == "a"
    q.done("a")
    assert len(q) == 0


async def test_done_without_readd_does_not_requeue() -> None:
    """done() of an item that was not re-added leaves the queue empty."""
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    await get(q)
    q.done("a")
    assert len(q) == 0


async def test_done_of_an_item_not_processing_is_ignored() -> None:
    """done() for a queued but not processing item does not duplicate it."""
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.done("a")
    q.done("zzz")
    assert len(q) == 1


async def test_get_waits_for_an_add() -> None:
    """A get() on an empty queue blocks until an item is added."""
    q: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    assert not getter.done()
    q.add("x")
    assert await asyncio.wait_for(getter, GUARD) == "x"


async def test_each_waiting_getter_gets_a_distinct_item() -> None:
    """Several blocked getters each receive one different item."""
    q: WorkQueue[str] = WorkQueue()
    getters = [asyncio.create_task(q.get()) for _ in range(3)]
    await asyncio.sleep(0)
    for item in ["a", "b", "c"]:
        q.add(item)
    got = await asyncio.wait_for(asyncio.gather(*getters), GUARD)
    assert sorted(got) == ["a", "b", "c"]


async def test_cancelled_woken_getter_passes_the_wakeup_on() -> None:
    """A getter cancelled after being woken does not strand the item: another getter takes it."""
    q: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.add("x")  # wakes `first`
    first.cancel()
    assert await asyncio.wait_for(second, GUARD) == "x"
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_shutdown_hands_out_queued_items_then_raises() -> None:
    """After shutdown(), get() drains what was queued, then raises QueueShutDown."""
    q: WorkQueue[str] = WorkQueue(name="q")
    q.add("a")
    q.add("b")
    q.shutdown()
    assert q.shutting_down
    assert await get(q) == "a"
    assert await get(q) == "b"
    with pytest.raises(QueueShutDown, match="'q' is shut down"):
        await get(q)


async def test_adds_after_shutdown_are_ignored() -> None:
    """add() once shutting down does nothing."""
    q: WorkQueue[str] = WorkQueue()
    q.shutdown()
    q.add("a")
    assert len(q) == 0
    with pytest.raises(QueueShutDown):
        await get(q)


async def test_shutdown_wakes_blocked_getters() -> None:
    """Getters blocked on an empty queue raise QueueShutDown when it shuts down."""
    q: WorkQueue[str] = WorkQueue()
    getters = [asyncio.create_task(q.get()) for _ in range(3)]
    await asyncio.sleep(0)
    q.shutdown()
    results = await asyncio.wait_for(asyncio.gather(*getters, return_exceptions=True), GUARD)
    assert all(isinstance(r, QueueShutDown) for r in results)


async def test_item_readded_in_flight_before_shutdown_is_still_handed_out() -> None:
    """An item made dirty while processing before shutdown is re-queued at done() and drained."""
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    await get(q)
    q.add("a")
    q.shutdown()
    q.done("a")
    assert await get(q) == "a"
    q.done("a")
    with pytest.raises(QueueShutDown):
        await get(q)


async def test_shutdown_with_drain_returns_at_once_when_idle() -> None:
    """shutdown_with_drain() on an idle queue returns immediately and shuts it down."""
    q: WorkQueue[str] = WorkQueue()
    await asyncio.wait_for(q.shutdown_with_drain(), GUARD)
    assert q.shutting_down


async def test_shutdown_with_drain_waits_for_queued_and_processing_items() -> None:
    """shutdown_with_drain() returns only when nothing is queued and nothing is processing."""
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("b")
    assert await get(q) == "a"
    drain = asyncio.create_task(q.shutdown_with_drain())
    await asyncio.sleep(0)
    q.done("a")
    await asyncio.sleep(0)
    assert not drain.done()  # "b" is still queued
    assert await get(q) == "b"
    await asyncio.sleep(0)
    assert not drain.done()  # "b" is processing
    q.done("b")
    await asyncio.wait_for(drain, GUARD)


async def test_shutdown_cancels_a_pending_drain() -> None:
    """shutdown() after shutdown_with_drain() makes the drain return (client-go behaviour)."""
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    await get(q)
    drain = asyncio.create_task(q.shutdown_with_drain())
    await asyncio.sleep(0)
    assert not drain.done()
    q.shutdown()
    await asyncio.wait_for(drain, GUARD)


async def test_items_of_any_hashable_type_work() -> None:
    """Tuples and ints are valid items."""
    q: WorkQueue[object] = WorkQueue()
    q.add(("ns", "name"))
    q.add(7)
    assert await asyncio.wait_for(q.get(), GUARD) == ("ns", "name")
    assert await asyncio.wait_for(q.get(), GUARD) == 7


def test_invalid_update_period_is_rejected() -> None:
    """A non-positive unfinished-work update period raises ValueError."""
    with pytest.raises(ValueError):
        WorkQueue(unfinished_work_update_period=0)
