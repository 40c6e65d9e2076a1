"""Rate limiters for the rate-limiting queue, with client-go's formulas.

A limiter answers "how long should this item wait before its next retry?". Like client-go,
:meth:`RateLimiter.when` **has side effects**: it counts a failure of the item (per-item
limiters) or reserves a token (the bucket limiter). :meth:`RateLimiter.forget` clears what the
limiter remembers of an item. All delays are in seconds.

Combinations behave as in client-go: :class:`MaxOfRateLimiter` calls ``when`` on **every**
limiter, so the bucket loses a token even when the exponential limiter's delay wins; with many
failing items the delays compound (the bucket then acts like a global backoff).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from typing import Any, Final, Generic, Protocol, TypeVar

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
]

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)

# The longest Go time.Duration, in seconds: client-go's overflow guard returns max_delay above it.
_MAX_DURATION_SECONDS: Final = (2**63 - 1) / 1e9


class RateLimiter(Protocol[T_contra]):
    """What a rate-limiting queue needs of a limiter (client-go ``TypedRateLimiter``)."""

    def when(self, item: T_contra) -> float:
        """Seconds ``item`` should wait now; also records the failure (or takes a token)."""
        ...

    def forget(self, item: T_contra) -> None:
        """Stop tracking ``item`` (it succeeded); the queue's ``done`` is still needed."""
        ...

    def num_requeues(self, item: T_contra) -> int:
        """How many failures of ``item`` the limiter is counting."""
        ...


class ItemExponentialFailureRateLimiter(Generic[T]):
    """Per-item exponential backoff: ``base_delay * 2**failures``, capped at ``max_delay``.

    ``failures`` is the item's count *before* the call; each ``when`` then increments it. So the
    delays are ``base, 2·base, 4·base, …, max_delay, max_delay, …`` until :meth:`forget`.

    :param base_delay: the first delay, seconds (>= 0).
    :param max_delay: the cap, seconds (>= 0).
    """

    def __init__(self, base_delay: float, max_delay: float) -> None:
        if not (base_delay >= 0 and max_delay >= 0):
            raise ValueError("base_delay and max_delay must be non-negative")
        self.base_delay = float(base_delay)
        self.max_delay = float(max_delay)
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        """The delay for this failure of ``item``; counts the failure."""
        exponent = self._failures.get(item, 0)
        self._failures[item] = exponent + 1
        try:
            backoff = math.ldexp(self.base_delay, exponent)
        except OverflowError:
            return self.max_delay
        if backoff > _MAX_DURATION_SECONDS or backoff > self.max_delay:
            return self.max_delay
        return backoff

    def forget(self, item: T) -> None:
        """Reset ``item``'s failure count."""
        self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        """``item``'s failure count."""
        return self._failures.get(item, 0)


class ItemFastSlowRateLimiter(Generic[T]):
    """Per-item two-speed retries: ``fast_delay`` for the first ``max_fast_attempts`` failures,
    then ``slow_delay``.

    :param fast_delay: seconds.
    :param slow_delay: seconds.
    :param max_fast_attempts: how many failures get ``fast_delay``.
    """

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay = float(fast_delay)
        self.slow_delay = float(slow_delay)
        self.max_fast_attempts = max_fast_attempts
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        """Count the failure, then: fast while failures <= ``max_fast_attempts``, else slow."""
        failures = self._failures.get(item, 0) + 1
        self._failures[item] = failures
        if failures <= self.max_fast_attempts:
            return self.fast_delay
        return self.slow_delay

    def forget(self, item: T) -> None:
        """Reset ``item``'s failure count."""
        self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        """``item``'s failure count."""
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """An overall token bucket (``golang.org/x/time/rate`` ``Reserve().Delay()`` semantics).

    The bucket starts full with ``burst`` tokens and refills at ``qps`` tokens a second up to
    ``burst``. Every :meth:`when` reserves one token and always succeeds: the token count may go
    negative, and the delay is how long until the reserved token exists. The item is ignored:
    :meth:`num_requeues` is always 0 and :meth:`forget` does nothing.

    :param qps: refill rate, tokens a second (> 0; ``math.inf`` means no limit).
    :param burst: bucket size (>= 1).
    :param clock: monotonic seconds. Default :func:`time.monotonic`.
    """

    def __init__(
        self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not qps > 0:
            raise ValueError("qps must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.qps = float(qps)
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last: float | None = None

    def tokens(self) -> float:
        """The tokens available now (negative while reservations are outstanding)."""
        if self.qps == math.inf:
            return float(self.burst)
        return self._advance(self._clock())

    def reserve(self) -> float:
        """Take one token; return the seconds until it is available (0 if it is now)."""
        if self.qps == math.inf:
            return 0.0
        now = self._clock()
        tokens = self._advance(now) - 1.0
        self._last = now
        self._tokens = tokens
        return -tokens / self.qps if tokens < 0 else 0.0

    def when(self, item: object) -> float:
        """Reserve a token for any item; the delay until it is available."""
        return self.reserve()

    def forget(self, item: object) -> None:
        """Do nothing: the bucket does not track items."""

    def num_requeues(self, item: object) -> int:
        """Always 0."""
        return 0

    def _advance(self, now: float) -> float:
        last = self._last if self._last is not None else now
        # A clock that went backwards refills nothing.
        elapsed = max(0.0, now - last)
        return min(self._tokens + elapsed * self.qps, float(self.burst))


class MaxOfRateLimiter(Generic[T]):
    """The longest delay of several limiters; ``when`` is called on **every** one of them.

    ``num_requeues`` is the largest count; ``forget`` goes to all. With no limiters the delay
    and the count are 0.
    """

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        self.limiters: tuple[RateLimiter[T], ...] = limiters

    def when(self, item: T) -> float:
        """Ask every limiter (each records the failure or takes a token); the maximum."""
        delays = [limiter.when(item) for limiter in self.limiters]
        return max(delays, default=0.0)

    def forget(self, item: T) -> None:
        """Forget ``item`` in every limiter."""
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """The largest count any limiter keeps for ``item``."""
        return max((limiter.num_requeues(item) for limiter in self.limiters), default=0)


class WithMaxWaitRateLimiter(Generic[T]):
    """Caps another limiter's delay at ``max_delay`` (client-go ``WithMaxWaitRateLimiter``).

    :param limiter: the limiter to cap.
    :param max_delay: the cap, seconds.
    """

    def __init__(self, limiter: RateLimiter[T], max_delay: float) -> None:
        self.limiter = limiter
        self.max_delay = float(max_delay)

    def when(self, item: T) -> float:
        """The wrapped limiter's delay, at most ``max_delay``."""
        return min(self.limiter.when(item), self.max_delay)

    def forget(self, item: T) -> None:
        """Forget ``item`` in the wrapped limiter."""
        self.limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """The wrapped limiter's count."""
        return self.limiter.num_requeues(item)


def default_controller_rate_limiter(
    *, clock: Callable[[], float] = time.monotonic
) -> MaxOfRateLimiter[Any]:
    """client-go's ``DefaultControllerRateLimiter``: the maximum of a per-item exponential
    backoff from 5 ms to 1000 s and an overall bucket of 10 qps with a burst of 100.

    :param clock: the bucket's clock. Default :func:`time.monotonic`.
    """
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock=clock),
    )


def default_item_based_rate_limiter() -> ItemExponentialFailureRateLimiter[Any]:
    """client-go's ``DefaultItemBasedRateLimiter``: per-item exponential, 1 ms to 1000 s."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)
