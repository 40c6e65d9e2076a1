"""The state of a jittered exponential backoff (its policy is a frozen
:class:`~aioinformer.BackoffPolicy`)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from ._clock import SYSTEM_CLOCK, Clock
from ._config import BackoffPolicy

__all__ = ["Backoff"]


class Backoff(Iterator[float]):
    """Walks a :class:`~aioinformer.BackoffPolicy`: each :meth:`next_delay` (or
    ``next(backoff)``) returns the current duration ``d`` jittered into
    ``[d, d + jitter·d)`` and moves to the next step.

    Once ``d * factor`` would pass ``cap`` the duration stays at ``cap``. When more than
    ``reset_after`` seconds have passed on ``clock`` since the last reset, the sequence starts
    over — counted from the last *reset*, not the last failure, so even under continuous
    failure the delay drops back to ``initial`` every ``reset_after`` seconds (exactly like
    apimachinery's ``DelayWithReset``).

    One policy can start any number of sequences; a sequence is never shared.

    :param policy: the delays. Default :class:`~aioinformer.BackoffPolicy` ``()``.
    :param clock: measures the time since the last reset. Default the system clock.
    :param rand: uniform ``[0, 1)`` source for the jitter. Default :func:`random.random`.
    """

    __slots__ = ("_clock", "_current", "_last_reset", "_rand", "policy")

    def __init__(
        self,
        policy: BackoffPolicy = BackoffPolicy(),
        *,
        clock: Clock = SYSTEM_CLOCK,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.policy = policy
        self._clock = clock
        self._rand = rand
        self._current = policy.initial
        self._last_reset = clock.now()

    def __repr__(self) -> str:
        return f"<Backoff {self.policy} next={self._current}>"

    def __next__(self) -> float:
        return self.next_delay()

    def next_delay(self) -> float:
        """The next delay in seconds (advances the sequence)."""
        policy = self.policy
        now = self._clock.now()
        if now - self._last_reset > policy.reset_after:
            self._current = policy.initial
            self._last_reset = now
        duration = self._current
        self._current = min(self._current * policy.factor, policy.cap)
        if policy.jitter > 0:
            duration += self._rand() * policy.jitter * duration
        return duration

    def reset(self) -> None:
        """Start the sequence over now."""
        self._current = self.policy.initial
        self._last_reset = self._clock.now()
