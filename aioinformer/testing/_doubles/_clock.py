"""A fake clock for tests: virtual time that moves only when the test says so."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import TracebackType

import anyio
import anyio.lowlevel
from anyio import CancelScope

__all__ = ["FakeClock"]

# Checkpoints taken before asking anyio whether every task is blocked: most wake-ups settle
# within them, and anyio's check then answers at once instead of polling.
_SETTLE_CHECKPOINTS = 5


class _Timer:
    """A deadline registered by a sleep or a timeout scope."""

    __slots__ = ("active", "deadline", "fire", "fired")

    def __init__(self, deadline: float, fire: Callable[[], None]) -> None:
        self.deadline = deadline
        self.fire = fire
        self.active = True
        self.fired = False


class _Timeout:
    """A cancel scope whose deadline is a timer of a :class:`FakeClock`."""

    __slots__ = ("_clock", "_fail", "_scope", "_seconds", "_timer")

    def __init__(self, clock: FakeClock, seconds: float | None, *, fail: bool) -> None:
        self._clock = clock
        self._seconds = seconds
        self._fail = fail
        self._scope = CancelScope()
        self._timer: _Timer | None = None

    def __enter__(self) -> CancelScope:
        scope = self._scope.__enter__()
        self._timer = self._clock._arm(self._seconds, scope)
        return scope

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        timer = self._timer
        self._clock._disarm(timer)
        swallowed = self._scope.__exit__(exc_type, exc, traceback)
        if self._fail and self._scope.cancelled_caught and timer is not None and timer.fired:
            raise TimeoutError
        return swallowed


class FakeClock:
    """A :class:`~aioinformer.Clock` whose time moves only in :meth:`advance` (or
    :meth:`jump`), for deterministic timing tests.

    Pass it as ``clock=`` to a reflector, informer, factory, work queue or leader elector.
    Sleeps and timeouts on it register deadlines; :meth:`advance` moves the time from one
    deadline to the next, in deadline order, and after each step lets the woken tasks run
    until every task is blocked again (:func:`anyio.wait_all_tasks_blocked`, after a few
    checkpoints). So ``await clock.advance(10)`` behaves like ten seconds passing, in
    microseconds, and each wake-up sees the time of its own deadline.

    Tasks waiting on real I/O count as blocked: when a woken task sends a request, wait for
    its effect (an event, a server request) rather than assuming ``advance`` covered it.

    :param start: the initial time. Default 0.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._heap: list[tuple[float, int, _Timer]] = []
        self._sequence = itertools.count()
        self._active = 0
        self._timer_added: anyio.Event | None = None

    def __repr__(self) -> str:
        return f"FakeClock(now={self._now}, timers={self._active})"

    # -- the Clock protocol --------------------------------------------------------------------

    def now(self) -> float:
        """The virtual time."""
        return self._now

    async def sleep(self, seconds: float) -> None:
        """Wait until :meth:`advance` reaches ``now() + seconds`` (a checkpoint if not
        positive)."""
        if seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return
        with self.move_on_after(seconds):
            await anyio.sleep_forever()

    def move_on_after(self, seconds: float | None) -> AbstractContextManager[CancelScope, bool]:
        """A cancel scope cancelled when virtual time reaches ``now() + seconds``."""
        return _Timeout(self, seconds, fail=False)

    def fail_after(self, seconds: float | None) -> AbstractContextManager[CancelScope]:
        """Like :meth:`move_on_after`; raises :class:`TimeoutError` if the deadline cancelled
        the block."""
        return _Timeout(self, seconds, fail=True)

    # -- driving time --------------------------------------------------------------------------

    @property
    def deadlines(self) -> tuple[float, ...]:
        """The pending deadlines of sleeps and timeout scopes, earliest first."""
        return tuple(sorted(timer.deadline for _, _, timer in self._heap if timer.active))

    async def advance(self, seconds: float) -> None:
        """Let ``seconds`` of virtual time pass.

        First every task runs until it blocks (so sleeps about to start are registered at the
        current time); then the time moves to each due deadline in turn, cancels the sleeps
        and scopes due at it, and lets the woken tasks run until all are blocked again.
        Deadlines those tasks register on the way are honoured in the same call.

        :raises ValueError: if ``seconds`` is negative.
        """
        if seconds < 0:
            raise ValueError("time only moves forward")
        target = self._now + seconds
        await self._settle()
        while (head := self._head()) is not None and head.deadline <= target:
            self._now = max(self._now, head.deadline)
            self._fire_due()
            await self._settle()
        self._now = target

    def jump(self, seconds: float) -> None:
        """Move the time at once and cancel whatever became due, without letting any task run
        (for synchronous tests; prefer :meth:`advance`).

        :raises ValueError: if ``seconds`` is negative.
        """
        if seconds < 0:
            raise ValueError("time only moves forward")
        self._now += seconds
        self._fire_due()

    async def wait_for_timers(self, count: int = 1) -> tuple[float, ...]:
        """Wait until at least ``count`` sleeps or timeout scopes are pending; returns
        :attr:`deadlines` (for example to check what a component is waiting for)."""
        while self._active < count:
            if self._timer_added is None:
                self._timer_added = anyio.Event()
            await self._timer_added.wait()
        return self.deadlines

    # -- internals -------------------------------------------------------------------------

    def _arm(self, seconds: float | None, scope: CancelScope) -> _Timer | None:
        if seconds is None:
            return None
        timer = _Timer(self._now + seconds, scope.cancel)
        if seconds <= 0:
            timer.active = False
            timer.fired = True
            scope.cancel()
            return timer
        heapq.heappush(self._heap, (timer.deadline, next(self._sequence), timer))
        self._active += 1
        event, self._timer_added = self._timer_added, None
        if event is not None:
            event.set()
        return timer

    def _disarm(self, timer: _Timer | None) -> None:
        if timer is not None and timer.active:
            timer.active = False
            self._active -= 1

    def _head(self) -> _Timer | None:
        heap = self._heap
        while heap and not heap[0][2].active:
            heapq.heappop(heap)
        return heap[0][2] if heap else None

    def _fire_due(self) -> None:
        while (head := self._head()) is not None and head.deadline <= self._now:
            heapq.heappop(self._heap)
            head.active = False
            head.fired = True
            self._active -= 1
            head.fire()

    @staticmethod
    async def _settle() -> None:
        for _ in range(_SETTLE_CHECKPOINTS):
            await anyio.lowlevel.checkpoint()
        await anyio.wait_all_tasks_blocked()
