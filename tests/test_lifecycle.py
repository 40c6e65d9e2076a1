"""The one lifecycle every long-running component shares (``aioinformer._lifecycle``)."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.lowlevel
import pytest
from anyio.abc import TaskStatus

from aioinformer._lifecycle import Service, State, in_cancelled_scope
from aioinformer.errors import LifecycleError
from aioinformer.testing import FakeClock


class Worker(Service):
    """A component whose readiness, failure and stop behaviour tests control."""

    def __init__(self, *, stop_timeout: float = 5.0, obey_stop: bool = True) -> None:
        self.name = "w"
        self._stop_timeout = stop_timeout
        self.obey_stop = obey_stop
        self.make_ready = anyio.Event()
        self.fail_with: BaseException | None = None
        self.fail_now = anyio.Event()
        self.stop_hook_calls = 0
        self.stopped_hook_calls = 0
        self.cancelled = False

    def _on_stop_requested(self) -> None:
        self.stop_hook_calls += 1

    def _on_stopped(self) -> None:
        self.stopped_hook_calls += 1

    async def _serve(self, ready: Callable[[], None]) -> None:
        async with anyio.create_task_group() as tg:

            async def become_ready() -> None:
                await self.make_ready.wait()
                ready()

            async def fail() -> None:
                await self.fail_now.wait()
                assert self.fail_with is not None
                raise self.fail_with

            tg.start_soon(become_ready)
            tg.start_soon(fail)
            try:
                if self.obey_stop:
                    await self._wait_stop_requested()
                else:
                    await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.cancelled = True
                raise
            tg.cancel_scope.cancel()


async def test_task_group_start_returns_once_ready() -> None:
    """``await tg.start(c.run)`` returns when the component reports readiness."""
    worker = Worker()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_set_later, worker.make_ready)
        await tg.start(worker.run)
        assert worker.state is State.RUNNING
        await worker.aclose()
    assert worker.state is State.STOPPED


class _Started(TaskStatus[None]):
    """A task status that records readiness (what ``tg.start`` passes)."""

    def __init__(self) -> None:
        self.value: object = None
        self.called = False

    def started(self, value: object = None) -> None:
        self.called = True
        self.value = value


async def _set_later(event: anyio.Event) -> None:
    await anyio.lowlevel.checkpoint()
    event.set()


async def test_async_with_does_not_wait_for_readiness_and_stops_on_exit() -> None:
    """Entering returns while the component is still starting; leaving stops it gracefully."""
    worker = Worker()
    async with worker:
        await anyio.lowlevel.checkpoint()
        assert worker.state is State.STARTING
    assert worker.state.value == "stopped"
    assert worker.stop_hook_calls == 1
    assert not worker.cancelled


async def test_failure_of_run_comes_out_of_async_with_unwrapped() -> None:
    """A component's own failure surfaces as itself, never inside an ExceptionGroup."""
    worker = Worker()
    worker.fail_with = ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        async with worker:
            worker.fail_now.set()
            await anyio.sleep_forever()
    assert worker.state is State.STOPPED


async def test_exception_of_the_block_comes_out_unwrapped() -> None:
    """The block's own exception propagates unchanged and the component is stopped."""
    worker = Worker()
    with pytest.raises(KeyError):
        async with worker:
            raise KeyError("mine")
    assert worker.state is State.STOPPED
    assert worker.stop_hook_calls == 1


async def test_two_unrelated_failures_stay_grouped() -> None:
    """When the block and the component both fail, both are reported."""
    worker = Worker(obey_stop=False, stop_timeout=0.0)
    worker.fail_with = ValueError("component")
    with pytest.RaisesGroup(ValueError, KeyError, flatten_subgroups=True):
        async with worker:
            worker.fail_now.set()
            try:
                await anyio.sleep_forever()
            finally:
                raise KeyError("block")


async def test_aclose_is_idempotent_and_closing_before_run_makes_run_return() -> None:
    """Closing a component that never ran is allowed; its run() then returns at once."""
    worker = Worker()
    await worker.aclose()
    await worker.aclose()
    assert worker.state is State.STOPPED
    await worker.run()
    await worker.wait_stopped()
    assert worker.stop_hook_calls == 0


async def test_starting_a_closed_component_for_readiness_is_an_error() -> None:
    """``tg.start`` on a closed component says so instead of hanging or returning unready."""
    worker = Worker()
    await worker.aclose()
    with pytest.raises(LifecycleError, match="closed before it ran"):
        await worker.run(task_status=_Started())


async def test_stopping_before_ready_is_reported_to_a_starter() -> None:
    """A component stopped while still starting fails ``tg.start`` with a LifecycleError."""
    worker = Worker()

    async def close_soon() -> None:
        await anyio.lowlevel.checkpoint()
        await worker.aclose()

    with pytest.RaisesGroup(pytest.RaisesExc(LifecycleError, match="stopped before it was ready")):
        async with anyio.create_task_group() as tg:
            tg.start_soon(close_soon)
            await tg.start(worker.run)


async def test_runs_only_once() -> None:
    """A component cannot be restarted."""
    worker = Worker()
    async with worker:
        pass
    with pytest.raises(LifecycleError, match="runs only once"):
        await worker.run()
    with pytest.raises(LifecycleError, match="runs only once"):
        async with worker:
            pass


async def test_graceful_stop_is_bounded_then_cancels() -> None:
    """A component that ignores the stop request is cancelled once its bound expires, on its
    clock."""
    clock = FakeClock()
    worker = Worker(obey_stop=False, stop_timeout=10.0)
    worker._clock = clock
    async with anyio.create_task_group() as tg:
        tg.start_soon(worker.run)
        tg.start_soon(worker.aclose)
        await clock.advance(9.5)
        assert worker.state is State.STOPPING
        assert not worker.cancelled
        await clock.advance(0.5)
        await worker.wait_stopped()
    assert worker.cancelled
    assert worker.state is State.STOPPED
    assert worker.stopped_hook_calls == 1


async def test_the_stopped_hook_runs_once_whether_or_not_it_ran() -> None:
    """``_on_stopped`` runs once after run() returned, and once for a component closed
    before it ran."""
    ran = Worker()
    async with ran:
        pass
    await ran.aclose()
    never = Worker()
    await never.aclose()
    await never.aclose()
    assert (ran.stopped_hook_calls, never.stopped_hook_calls) == (1, 1)


async def test_a_stop_request_cancels_the_stop_scopes() -> None:
    """Waits inside ``_until_stop_requested()`` end at the stop request; a scope opened after
    it is cancelled from the start."""
    worker = Worker()
    outcome: list[bool] = []

    async def wait_in_scope() -> None:
        with worker._until_stop_requested() as scope:
            await anyio.sleep_forever()
        outcome.append(scope.cancelled_caught)

    async with anyio.create_task_group() as tg:
        tg.start_soon(worker.run)
        tg.start_soon(wait_in_scope)
        await anyio.wait_all_tasks_blocked()
        await worker.aclose()
    with worker._until_stop_requested() as late:
        await anyio.lowlevel.checkpoint()
    assert outcome == [True]
    assert late.cancelled_caught


async def test_in_cancelled_scope_tells_our_cancellation_from_an_awaited_one() -> None:
    """A cancelled scope is "ours"; a CancelledError from an awaited, cancelled future is not."""
    import asyncio

    seen: list[bool] = []
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    future.cancel()
    try:
        await future
    except asyncio.CancelledError:
        seen.append(in_cancelled_scope())
    with anyio.CancelScope() as scope:
        scope.cancel()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            seen.append(in_cancelled_scope())
            raise
    assert seen == [False, True]


async def test_cancelling_the_block_cancels_the_component_at_once() -> None:
    """A cancelled block is the hard stop: no graceful wait, whatever the bound."""
    worker = Worker(obey_stop=False, stop_timeout=3600.0)
    with anyio.fail_after(30):  # fail-safe only: the graceful bound above is an hour
        with anyio.CancelScope() as scope:
            async with worker:
                await anyio.lowlevel.checkpoint()
                scope.cancel()
                await anyio.sleep_forever()
    assert worker.cancelled
    assert worker.state is State.STOPPED


async def test_require_new_and_not_stopped() -> None:
    """Configuration calls check the state and name the component."""
    worker = Worker()
    worker._require_new("configure")
    async with worker:
        with pytest.raises(LifecycleError, match="configure must be called before Worker 'w'"):
            worker._require_new("configure")
    with pytest.raises(LifecycleError, match="Worker 'w' has stopped"):
        worker._require_not_stopped()
