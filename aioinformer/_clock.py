"""One clock for everything that waits or measures time.

The reflector (backoff, watch deadlines, resync ticker), the informer's resync schedule, the
delaying work queue and the leader elector read the time and wait through a :class:`Clock`,
so tests can swap in :class:`aioinformer.testing.FakeClock` and advance virtual time instead
of sleeping. Production code uses :data:`SYSTEM_CLOCK`.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from typing import Final, Protocol

import anyio
from anyio import CancelScope

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock"]


class Clock(Protocol):
    """Monotonic time, sleeping, and timeouts measured on that time.

    The two timeout helpers behave like :func:`anyio.move_on_after` and
    :func:`anyio.fail_after`, with the deadline on this clock: ``None`` means no deadline.
    """

    def now(self) -> float:
        """Monotonic seconds (the origin is arbitrary)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on this clock (a checkpoint when ``seconds <= 0``)."""
        ...

    def move_on_after(self, seconds: float | None) -> AbstractContextManager[CancelScope, bool]:
        """A cancel scope cancelled once ``seconds`` have passed on this clock."""
        ...

    def fail_after(self, seconds: float | None) -> AbstractContextManager[CancelScope]:
        """Like :meth:`move_on_after`, but raises :class:`TimeoutError` when the deadline
        cancelled the block."""
        ...


class SystemClock:
    """The real clock: :func:`time.monotonic` (the event loop's time on asyncio) with
    :func:`anyio.sleep`, :func:`anyio.move_on_after` and :func:`anyio.fail_after`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SystemClock()"

    def now(self) -> float:
        """:func:`time.monotonic`."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """:func:`anyio.sleep`."""
        await anyio.sleep(max(0.0, seconds))

    def move_on_after(self, seconds: float | None) -> AbstractContextManager[CancelScope, bool]:
        """:func:`anyio.move_on_after`."""
        return anyio.move_on_after(seconds)

    def fail_after(self, seconds: float | None) -> AbstractContextManager[CancelScope]:
        """:func:`anyio.fail_after`."""
        return anyio.fail_after(seconds)


#: The clock every component uses unless it is given another.
SYSTEM_CLOCK: Final[Clock] = SystemClock()
