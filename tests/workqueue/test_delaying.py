"""DelayingQueue on virtual time: deadlines, earliest wins, waiting getters, shutdown.

Semantics: client-go ``util/workqueue/delaying_queue.go``.
"""

from __future__ import annotations

import math

import anyio
import pytest

from aioinformer.errors import QueueShutDown
from aioinformer.testing import FakeClock
from aioinformer.workqueue import DelayingQueue

GUARD = 5.0


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1000.0)


@pytest.fixture
def q(clock: FakeClock) -> DelayingQueue[str]:
    return DelayingQueue(clock=clock)


async def get_at(q: DelayingQueue[str], clock: FakeClock, got: list[tuple[str, float]]) -> None:
    """Get one item; record it with the virtual time."""
    item = await q.get()
    got.append((item, clock.now()))


async def test_add_after_hands_the_item_out_at_its_deadline(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    """An item added with a delay waits exactly that long; a getter receives it then."""
    got: list[tuple[str, float]] = []
    q.add_after("a", 3.0)
    assert len(q) == 0 and q.waiting_count == 1
    async with anyio.create_task_group() as tg:
        tg.start_soon(get_at, q, clock, got)
        await clock.advance(2.999)
        assert got == []
        await clock.advance(0.001)
        assert got == [("a", 1003.0)]
    assert q.waiting_count == 0


async def test_items_become_ready_in_deadline_order(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    """Items with different delays come out earliest deadline first."""
    q.add_after("late", 3.0)
    q.add_after("early", 1.0)
    q.add_after("middle", 2.0)
    await clock.advance(3.0)
    assert [await q.get() for _ in range(3)] == ["early", "middle", "late"]


async def test_earlier_deadline_replaces_a_later_one(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    """Re-adding a waiting item with a shorter delay makes it ready sooner."""
    q.add_after("a", 60.0)
    q.add_after("a", 1.0)
    assert q.waiting_count == 1 and q.next_ready_at == 1001.0
    await clock.advance(1.0)
    assert len(q) == 1 and q.waiting_count == 0


async def test_later_deadline_does_not_postpone_an_item(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    """Re-adding a waiting item with a longer delay keeps the earlier deadline."""
    q.add_after("a", 1.0)
    q.add_after("a", 60.0)
    assert q.next_ready_at == 1001.0
    await clock.advance(1.0)
    assert len(q) == 1


def test_zero_or_negative_delay_adds_at_once(q: DelayingQueue[str]) -> None:
    """add_after with delay <= 0 queues the item immediately."""
    q.add_after("a", 0)
    q.add_after("b", -5)
    assert len(q) == 2
    assert q.waiting_count == 0


async def test_waiting_item_also_queued_is_handed_out_once(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    """An item both queued and waiting is deduplicated when its deadline passes."""
    q.add("a")
    q.add_after("a", 1.0)
    q.add_after("b", 2.0)
    assert await q.get() == "a"
    await clock.advance(2.0)
    # "a" fell due while processing: only marked dirty, re-queued at done().
    assert await q.get() == "b"
    assert len(q) == 0
    q.done("a")
    assert await q.get() == "a"


async def test_items_due_before_a_plain_add_come_first(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    """An item whose deadline passed was added at its deadline: before a later plain add,
    even when no getter was waiting to notice."""
    q.add_after("due", 1.0)
    clock.jump(5.0)
    q.add("plain")
    assert [await q.get(), await q.get()] == ["due", "plain"]


async def test_shutdown_discards_waiting_items_but_keeps_due_ones(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    """At shutdown waiting items are dropped (items already due were added before it)."""
    q.add_after("due", 1.0)
    q.add_after("waiting", 5.0)
    q.add("b")
    clock.jump(1.0)
    q.shutdown()
    assert q.waiting_count == 0 and q.next_ready_at is None
    assert [await q.get(), await q.get()] == ["b", "due"]
    with pytest.raises(QueueShutDown):
        await q.get()


def test_add_after_during_shutdown_is_ignored(q: DelayingQueue[str]) -> None:
    """add_after() once shutting down neither queues nor schedules anything."""
    q.shutdown()
    q.add_after("a", 0)
    q.add_after("b", 1.0)
    assert len(q) == 0
    assert q.waiting_count == 0


async def test_a_waiting_getter_waits_for_the_earliest_deadline(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    """A get() blocked on an empty queue waits until the earliest deadline only, and moves
    to an earlier one when it arrives; a later one changes nothing."""
    got: list[tuple[str, float]] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(get_at, q, clock, got)
        await clock.advance(0)
        assert not clock.deadlines  # nothing waits: neither does the getter
        q.add_after("late", 60.0)
        await clock.advance(0)
        assert clock.deadlines == (1060.0,)
        q.add_after("later", 70.0)
        await clock.advance(0)
        assert clock.deadlines == (1060.0,)
        q.add_after("soon", 5.0)
        await clock.advance(0)
        assert clock.deadlines == (1005.0,)
        await clock.advance(5.0)
        assert got == [("soon", 1005.0)]
    assert q.waiting_count == 2


async def test_a_waiting_getter_is_woken_by_a_plain_add(
    q: DelayingQueue[str], clock: FakeClock
) -> None:
    """While waiting for a deadline, a getter still takes an item added at once."""
    got: list[tuple[str, float]] = []
    q.add_after("later", 60.0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(get_at, q, clock, got)
        await clock.advance(1.0)
        q.add("now")
        await clock.advance(0)
        assert got == [("now", 1001.0)]


async def test_infinite_delay_never_fires(q: DelayingQueue[str], clock: FakeClock) -> None:
    """An item with an infinite delay waits forever (until shutdown) without error."""
    q.add_after("never", math.inf)
    q.add_after("soon", 1.0)
    got: list[tuple[str, float]] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(get_at, q, clock, got)
        await clock.advance(1e9)
    assert got == [("soon", 1001.0)]
    assert q.waiting_count == 1


def test_nan_delay_is_rejected(q: DelayingQueue[str]) -> None:
    """add_after with a NaN delay raises ValueError."""
    with pytest.raises(ValueError):
        q.add_after("a", math.nan)


def test_add_after_needs_no_running_loop(q: DelayingQueue[str], clock: FakeClock) -> None:
    """Deadlines live on the clock: add_after works outside an event loop."""
    q.add_after("a", 1.0)
    assert q.waiting_count == 1
    clock.jump(1.0)
    assert len(q) == 1


async def test_the_system_clock_fires_deadlines_too() -> None:
    """With the default clock a waiting getter receives an item when its delay passed."""
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("a", 0.01)
    with anyio.fail_after(GUARD):
        assert await q.get() == "a"
