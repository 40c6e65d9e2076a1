"""WorkQueue: FIFO, dedup, never-concurrent processing, shutdown and drain."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from aioinformer.errors import QueueShutDown
from aioinformer.workqueue import WorkQueue

GUARD = 5.0


async def get(q: WorkQueue[str]) -> str:
    with anyio.fail_after(GUARD):
        return await q.get()


async def collect(q: WorkQueue[str], into: list[str | QueueShutDown]) -> None:
    """One get(), its item (or its QueueShutDown) appended to ``into``."""
    try:
        into.append(await q.get())
    except QueueShutDown as exc:
        into.append(exc)


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
    got: list[str | QueueShutDown] = []
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(collect, q, got)
            await anyio.wait_all_tasks_blocked()
            assert got == []  # blocked in get()
            q.add("x")
    assert got == ["x"]


async def test_each_waiting_getter_gets_a_distinct_item() -> None:
    """Several blocked getters each receive one different item."""
    q: WorkQueue[str] = WorkQueue()
    got: list[str | QueueShutDown] = []
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(collect, q, got)
            await anyio.wait_all_tasks_blocked()
            for item in ["a", "b", "c"]:
                q.add(item)
    assert sorted(map(str, got)) == ["a", "b", "c"]


async def test_cancelled_woken_getter_passes_the_wakeup_on() -> None:
    """A getter cancelled after being woken does not strand the item: another getter takes it.

    asyncio's ``Task.cancel`` itself is under test (it lands even in a task already woken, where
    an anyio scope would let the woken get() return first), so the tasks are asyncio's, owned by
    an ``asyncio.TaskGroup``."""
    q: WorkQueue[str] = WorkQueue()
    with anyio.fail_after(GUARD):
        async with asyncio.TaskGroup() as tg:
            first = tg.create_task(q.get())
            second = tg.create_task(q.get())
            await anyio.wait_all_tasks_blocked()
            q.add("x")  # wakes `first`
            first.cancel()
    assert first.cancelled()
    assert second.result() == "x"


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
    results: list[str | QueueShutDown] = []
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(collect, q, results)
            await anyio.wait_all_tasks_blocked()
            q.shutdown()
    assert len(results) == 3 and all(isinstance(r, QueueShutDown) for r in results)


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
    with anyio.fail_after(GUARD):
        await q.shutdown_with_drain()
    assert q.shutting_down


async def drain(q: WorkQueue[str], drained: anyio.Event) -> None:
    await q.shutdown_with_drain()
    drained.set()


async def test_shutdown_with_drain_waits_for_queued_and_processing_items() -> None:
    """shutdown_with_drain() returns only when nothing is queued and nothing is processing."""
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("b")
    assert await get(q) == "a"
    drained = anyio.Event()
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain, q, drained)
            await anyio.wait_all_tasks_blocked()
            q.done("a")
            await anyio.wait_all_tasks_blocked()
            assert not drained.is_set()  # "b" is still queued
            assert await get(q) == "b"
            await anyio.wait_all_tasks_blocked()
            assert not drained.is_set()  # "b" is processing
            q.done("b")
    assert drained.is_set()


async def test_shutdown_cancels_a_pending_drain() -> None:
    """shutdown() after shutdown_with_drain() makes the drain return (client-go behaviour)."""
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    await get(q)
    drained = anyio.Event()
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain, q, drained)
            await anyio.wait_all_tasks_blocked()
            assert not drained.is_set()
            q.shutdown()
    assert drained.is_set()


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
