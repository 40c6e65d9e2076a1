"""Controller: reconcile outcomes, counters, graceful and hard stop, concurrency under stress."""

from __future__ import annotations

import asyncio
import logging
import random

import anyio
import anyio.lowlevel
import pytest

from aioinformer import State
from aioinformer._control._controller import Controller, ControllerStatistics, Result
from aioinformer.errors import LifecycleError
from aioinformer.testing import FakeClock
from aioinformer.workqueue import (
    ItemExponentialFailureRateLimiter,
    RateLimitingQueue,
)

GUARD = 5.0


def instant_limiter() -> ItemExponentialFailureRateLimiter[str]:
    """Retries at once, but still counts failures."""
    return ItemExponentialFailureRateLimiter(0.0, 0.0)


async def test_successful_reconcile_forgets_the_key() -> None:
    """A key that fails twice then succeeds is retried, and its failure count resets."""
    calls: list[int] = []
    finished = asyncio.Event()

    async def reconcile(key: str) -> None:
        calls.append(controller.queue.num_requeues(key))
        if len(calls) < 3:
            raise RuntimeError("not yet")
        finished.set()

    controller: Controller[str] = Controller(
        name="forget", reconcile=reconcile, rate_limiter=instant_limiter()
    )
    async with controller:
        controller.enqueue("ns/a")
        await asyncio.wait_for(finished.wait(), GUARD)
    assert calls == [0, 1, 2]
    assert controller.queue.num_requeues("ns/a") == 0
    stats = controller.statistics()
    assert (stats.reconciles, stats.errors, stats.requeues) == (3, 2, 0)


async def test_reconcile_error_is_logged_without_contents(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An exception is logged with the key and exception type/message, then rate-limited."""
    failed = asyncio.Event()

    async def reconcile(key: str) -> None:
        failed.set()
        raise ValueError("boom")

    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(60.0, 60.0)
    controller: Controller[str] = Controller(name="errs", reconcile=reconcile, rate_limiter=limiter)
    with caplog.at_level(logging.ERROR, logger="aioinformer._control._controller"):
        async with controller:
            controller.enqueue("ns/secret-holder")
            await asyncio.wait_for(failed.wait(), GUARD)
    messages = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("'ns/secret-holder'" in m and "ValueError: boom" in m for m in messages)
    assert controller.queue.num_requeues("ns/secret-holder") == 1
    assert controller.statistics().errors == 1


async def test_requeue_after_forgets_and_adds_after_the_delay() -> None:
    """Result(requeue_after=s) resets the backoff and reconciles the key again exactly s later
    (on the controller's clock)."""
    clock = FakeClock()
    times: list[float] = []
    again = asyncio.Event()
    requeues_seen: list[int] = []

    async def reconcile(key: str) -> Result | None:
        times.append(clock.now())
        requeues_seen.append(controller.queue.num_requeues(key))
        if len(times) == 1:
            raise RuntimeError("first attempt fails")
        if len(times) == 2:
            return Result(requeue_after=30.0)
        again.set()
        return None

    controller: Controller[str] = Controller(
        name="after", reconcile=reconcile, rate_limiter=instant_limiter(), clock=clock
    )
    async with controller:
        controller.enqueue("k")
        await clock.advance(29.0)
        assert len(times) == 2
        await clock.advance(1.0)
        await asyncio.wait_for(again.wait(), GUARD)
    assert requeues_seen == [0, 1, 0]  # forget() ran before add_after
    assert times == [0.0, 0.0, 30.0]
    assert controller.statistics().requeues == 1


async def test_requeue_true_is_rate_limited() -> None:
    """Result(requeue=True) re-adds the key through the rate limiter (failures count up)."""
    seen: list[int] = []
    done = asyncio.Event()

    async def reconcile(key: str) -> Result:
        seen.append(controller.queue.num_requeues(key))
        if len(seen) == 3:
            done.set()
            return Result()
        return Result(requeue=True)

    controller: Controller[str] = Controller(
        name="requeue", reconcile=reconcile, rate_limiter=instant_limiter()
    )
    async with controller:
        controller.enqueue("k")
        await asyncio.wait_for(done.wait(), GUARD)
    assert seen == [0, 1, 2]
    assert controller.queue.num_requeues("k") == 0
    assert controller.statistics().requeues == 2


async def test_non_result_return_counts_as_error() -> None:
    """A reconcile returning something other than Result/None is an error and is retried."""
    calls = 0
    done = asyncio.Event()

    async def reconcile(key: str) -> Result | None:
        nonlocal calls
        calls += 1
        if calls == 1:
            return "oops"  # type: ignore[return-value]
        done.set()
        return None

    controller: Controller[str] = Controller(
        name="bad", reconcile=reconcile, rate_limiter=instant_limiter()
    )
    async with controller:
        controller.enqueue("k")
        await asyncio.wait_for(done.wait(), GUARD)
    assert controller.statistics().errors == 1


async def test_key_added_during_reconcile_is_reconciled_again() -> None:
    """Enqueueing a key while it is reconciled leads to exactly one more reconcile after it."""
    started = asyncio.Event()
    release = asyncio.Event()
    second = asyncio.Event()
    calls = 0

    async def reconcile(key: str) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            started.set()
            await release.wait()
        else:
            second.set()

    controller: Controller[str] = Controller(name="readd", reconcile=reconcile, workers=4)
    async with controller:
        controller.enqueue("k")
        await asyncio.wait_for(started.wait(), GUARD)
        controller.enqueue("k")
        controller.enqueue("k")
        await anyio.wait_all_tasks_blocked()
        assert calls == 1  # no second worker took it
        release.set()
        await asyncio.wait_for(second.wait(), GUARD)
    assert calls == 2


async def test_graceful_stop_finishes_in_flight_and_starts_nothing_new() -> None:
    """aclose(): in-flight reconciles complete; queued keys are not started; run() returns."""
    started = asyncio.Event()
    release = asyncio.Event()
    completed: list[str] = []
    begun: list[str] = []

    async def reconcile(key: str) -> None:
        begun.append(key)
        started.set()
        await release.wait()
        completed.append(key)

    controller: Controller[str] = Controller(name="graceful", reconcile=reconcile)
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            await tg.start(controller.run)
            controller.enqueue("first")
            controller.enqueue("second")
            await started.wait()
            tg.start_soon(controller.aclose)
            await anyio.wait_all_tasks_blocked()
            assert controller.state is State.STOPPING
            assert controller.statistics().in_flight == 1
            release.set()
    assert controller.state is State.STOPPED
    assert begun == ["first"]
    assert completed == ["first"]
    assert controller.queue.shutting_down


async def test_stop_cancels_reconciles_that_overrun_the_timeout() -> None:
    """A reconcile still running stop_timeout after aclose() (on the controller's clock)
    is cancelled, and run() returns."""
    clock = FakeClock()
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def reconcile(key: str) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    controller: Controller[str] = Controller(
        name="overrun", reconcile=reconcile, stop_timeout=30.0, clock=clock
    )
    async with anyio.create_task_group() as tg:
        await tg.start(controller.run)
        controller.enqueue("stuck")
        await asyncio.wait_for(started.wait(), GUARD)
        tg.start_soon(controller.aclose)
        await clock.advance(29.9)
        assert not cancelled.is_set() and controller.state is State.STOPPING
        await clock.advance(0.1)
        await asyncio.wait_for(controller.wait_stopped(), GUARD)
    assert cancelled.is_set()
    assert controller.statistics().in_flight == 0
    assert controller.statistics().reconciles == 0


async def test_cancelling_run_cancels_in_flight_reconciles_at_once() -> None:
    """Cancelling the run task is the hard stop: reconciles get CancelledError immediately."""
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def reconcile(key: str) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    controller: Controller[str] = Controller(name="hard", reconcile=reconcile)
    propagated = anyio.Event()

    async def run() -> None:
        try:
            await controller.run()
        except anyio.get_cancelled_exc_class():
            propagated.set()  # run() ends with the cancellation, as it must
            raise

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            controller.enqueue("k")
            await started.wait()
            tg.cancel_scope.cancel()
    assert propagated.is_set()
    assert cancelled.is_set()
    assert controller.queue.shutting_down
    await asyncio.wait_for(controller.wait_stopped(), GUARD)


async def test_cancelled_async_with_block_stops_at_once() -> None:
    """Cancelling the task inside ``async with controller`` cancels reconciles and propagates."""
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def reconcile(key: str) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    controller: Controller[str] = Controller(
        name="ctx-cancel", reconcile=reconcile, stop_timeout=60.0
    )

    propagated = anyio.Event()

    async def body() -> None:
        try:
            async with controller:
                controller.enqueue("k")
                await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            propagated.set()  # the block's cancellation comes out of it
            raise

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(body)
            await started.wait()
            tg.cancel_scope.cancel()
    assert propagated.is_set()
    assert cancelled.is_set()


async def test_exception_in_async_with_block_propagates_unchanged() -> None:
    """An error raised in the ``async with`` body is not wrapped; the controller stops."""

    async def reconcile(key: str) -> None:
        return None

    controller: Controller[str] = Controller(name="ctx-error", reconcile=reconcile)
    with pytest.raises(KeyError):
        async with controller:
            raise KeyError("mine")
    await asyncio.wait_for(controller.wait_stopped(), GUARD)


async def test_run_returns_when_the_queue_is_shut_down_elsewhere() -> None:
    """If the queue is shut down from outside, the workers end and run() returns."""

    async def reconcile(key: str) -> None:
        return None

    queue: RateLimitingQueue[str] = RateLimitingQueue(instant_limiter())
    controller: Controller[str] = Controller(
        name="external", reconcile=reconcile, queue=queue, workers=3
    )
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(controller.run)
            await anyio.wait_all_tasks_blocked()  # the workers wait for keys
            queue.shutdown()
        # The task group ended: run() returned.
    assert controller.state is State.STOPPED
    assert controller.queue is queue


async def test_a_controller_runs_only_once() -> None:
    """run() or ``async with`` a second time raises LifecycleError."""

    async def reconcile(key: str) -> None:
        return None

    controller: Controller[str] = Controller(name="once", reconcile=reconcile)
    async with controller:
        pass
    with pytest.raises(LifecycleError):
        await controller.run()
    with pytest.raises(LifecycleError):
        async with controller:
            pass


def test_invalid_options_are_rejected() -> None:
    """workers < 1, a negative timeout, or a queue together with a limiter raise ValueError."""

    async def reconcile(key: str) -> None:
        return None

    with pytest.raises(ValueError):
        Controller(name="x", reconcile=reconcile, workers=0)
    with pytest.raises(ValueError):
        Controller(name="x", reconcile=reconcile, stop_timeout=-1)
    with pytest.raises(ValueError):
        Controller(
            name="x",
            reconcile=reconcile,
            queue=RateLimitingQueue(),
            rate_limiter=instant_limiter(),
        )


def test_statistics_is_a_frozen_snapshot() -> None:
    """statistics() returns an immutable snapshot with zeros before anything ran."""

    async def reconcile(key: str) -> None:
        return None

    controller: Controller[str] = Controller(name="stats", reconcile=reconcile)
    stats = controller.statistics()
    assert stats == ControllerStatistics(
        state=State.NEW,
        leading=False,
        reconciles=0,
        errors=0,
        requeues=0,
        in_flight=0,
        queue_depth=0,
    )
    with pytest.raises(AttributeError):
        stats.errors = 1  # type: ignore[misc]


async def test_stress_sixteen_workers_random_adds_and_failures() -> None:
    """16 workers, random concurrent enqueues and failures: never two reconciles of one key
    at once, and every key is reconciled after its last enqueue."""
    rng = random.Random(7)
    keys = [f"ns/k{i}" for i in range(30)]
    generation = dict.fromkeys(keys, 0)
    seen = dict.fromkeys(keys, 0)
    active: set[str] = set()
    overlaps: list[str] = []
    max_parallel = 0

    async def reconcile(key: str) -> None:
        nonlocal max_parallel
        if key in active:
            overlaps.append(key)
        active.add(key)
        max_parallel = max(max_parallel, len(active))
        try:
            seen[key] = max(seen[key], generation[key])
            for _ in range(rng.randrange(4)):
                await anyio.lowlevel.checkpoint()  # hold the key across other tasks' steps
            if rng.random() < 0.2:
                raise RuntimeError("transient")
        finally:
            active.discard(key)

    controller: Controller[str] = Controller(
        name="stress", reconcile=reconcile, workers=16, rate_limiter=instant_limiter()
    )

    async def producer(seed: int) -> None:
        local = random.Random(seed)
        for _ in range(400):
            key = local.choice(keys)
            generation[key] += 1
            controller.enqueue(key)
            for _ in range(local.randrange(3)):
                await anyio.lowlevel.checkpoint()  # interleave with the workers

    async with controller:
        async with asyncio.TaskGroup() as producers:
            for i in range(6):
                producers.create_task(producer(i))
        await asyncio.wait_for(controller.queue.shutdown_with_drain(), 30.0)
    assert overlaps == []
    assert seen == generation
    assert max_parallel > 1
    stats = controller.statistics()
    assert stats.errors > 0
    assert stats.in_flight == 0


async def test_a_reconcile_raising_cancelled_error_is_a_failure_not_a_dead_worker() -> None:
    """reconcile awaiting something cancelled elsewhere fails that key; the worker goes on."""
    done: asyncio.Event = asyncio.Event()
    seen: list[str] = []

    async def reconcile(key: str) -> None:
        seen.append(key)
        if key == "bad" and seen.count("bad") == 1:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            future.cancel()
            await future
        if key == "good":
            done.set()

    controller: Controller[str] = Controller(name="c", reconcile=reconcile, workers=1)
    async with controller:
        controller.enqueue("bad")
        controller.enqueue("good")
        async with asyncio.timeout(10):
            await done.wait()
        stats = controller.statistics()
    assert stats.errors == 1
    assert "good" in seen
