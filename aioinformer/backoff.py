"""Jittered exponential backoff with a periodic reset (client-go's reflector backoff)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

__all__ = ["Backoff"]


class Backoff:
    """Delays between retries: ``initial * factor**n``, capped, jittered, reset periodically.

    Each :meth:`next_delay` returns the current step's duration ``d`` jittered into
    ``[d, d + jitter·d)`` and moves to the next step. Once ``d * factor`` would pass ``cap`` the
    duration stays at ``cap``. When more than ``reset_after`` seconds have passed since the last
    reset, the sequence starts over — measured from the last *reset*, not the last failure, so
    even under continuous failure the delay drops back to ``initial`` every ``reset_after``
    seconds (exactly like apimachinery's ``DelayWithReset``).

    The defaults are client-go's reflector backoff: 0.8 s doubling, jitter 1.0 (waits in
    ``[d, 2d)``), cap 30 s (waits settle in ``[30, 60)`` s), reset after 2 minutes.

    :param initial: first duration in seconds. Default 0.8.
    :param factor: growth per step. Default 2.0.
    :param jitter: maximum extra fraction added at random. Default 1.0 (0 disables jitter).
    :param cap: the largest duration before jitter. Default 30.0.
    :param reset_after: seconds after which the sequence restarts. Default 120.0.
    :param clock: monotonic seconds, injectable for tests. Default :func:`time.monotonic`.
    :param rand: uniform ``[0, 1)`` source, injectable for tests. Default :func:`random.random`.
    """

    __slots__ = (
        "_cap",
        "_clock",
        "_current",
        "_factor",
        "_initial",
        "_jitter",
        "_last_reset",
        "_rand",
        "_reset_after",
    )

    def __init__(
        self,
        *,
        initial: float = 0.8,
        factor: float = 2.0,
        jitter: float = 1.0,
        cap: float = 30.0,
        reset_after: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
    ) -> None:
        if initial < 0 or factor < 1 or jitter < 0 or cap < 0 or reset_after < 0:
            raise ValueError("backoff parameters must be non-negative (factor at least 1)")
        self._initial = initial
        self._factor = factor
        self._jitter = jitter
        self._cap = cap
        self._reset_after = reset_after
        self._clock = clock
        self._rand = rand
        self._current = initial
        self._last_reset = clock()

    def __repr__(self) -> str:
        return (
            f"Backoff(initial={self._initial}, factor={self._factor}, jitter={self._jitter}, "
            f"cap={self._cap}, reset_after={self._reset_after})"
        )

    def copy(self) -> Backoff:
        """A backoff with the same parameters and a fresh sequence (state is never shared)."""
        return Backoff(
            initial=self._initial,
            factor=self._factor,
            jitter=self._jitter,
            cap=self._cap,
            reset_after=self._reset_after,
            clock=self._clock,
            rand=self._rand,
        )

    def next_delay(self) -> float:
        """The next delay in seconds (advances the sequence)."""
        now = self._clock()
        if now - self._last_reset > self._reset_after:
            self._current = self._initial
            self._last_reset = now
        duration = self._current
        self._current = min(self._current * self._factor, self._cap)
        if self._jitter > 0:
            duration += self._rand() * self._jitter * duration
        return duration

    def reset(self) -> None:
        """Start the sequence over now."""
        self._current = self._initial
        self._last_reset = self._clock()
