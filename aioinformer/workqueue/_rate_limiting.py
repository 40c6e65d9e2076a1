"""The rate-limiting queue: a delaying queue that asks a rate limiter how long to wait.

Semantics are client-go's ``rateLimitingType``: ``add_rate_limited(item)`` is
``add_after(item, rate_limiter.when(item))`` (``when`` is called even during shutdown, so it
still counts the failure); ``forget(item)`` clears the limiter's memory of the item and must be
called when the item succeeded, **in addition to** ``done``; ``num_requeues(item)`` asks the
limiter.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from .._clock import SYSTEM_CLOCK, Clock
from ._delaying import DelayingQueue
from ._limiters import RateLimiter, default_controller_rate_limiter
from ._metrics import MetricsProvider
from ._queue import DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD

__all__ = ["RateLimitingQueue"]

T = TypeVar("T", bound=Hashable)


class RateLimitingQueue(DelayingQueue[T]):
    """A :class:`~aioinformer.workqueue.DelayingQueue` with per-item rate-limited retries.

    :param rate_limiter: decides each retry's delay. Default None:
        :func:`~aioinformer.workqueue.default_controller_rate_limiter` on this queue's clock.
    :param name: the queue's name; metrics are recorded only for a named queue. Default None.
    :param metrics_provider: creates the queue's metric objects. Default None: no metrics.
    :param clock: time for deadlines, metrics and the default limiter. Default the system
        clock.
    :param unfinished_work_update_period: see :class:`~aioinformer.workqueue.WorkQueue`.
        Default 0.5 s.
    """

    def __init__(
        self,
        rate_limiter: RateLimiter[T] | None = None,
        *,
        name: str | None = None,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock = SYSTEM_CLOCK,
        unfinished_work_update_period: float = DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD,
    ) -> None:
        super().__init__(
            name=name,
            metrics_provider=metrics_provider,
            clock=clock,
            unfinished_work_update_period=unfinished_work_update_period,
        )
        if rate_limiter is None:
            rate_limiter = default_controller_rate_limiter(clock=clock.now)
        self.rate_limiter: RateLimiter[T] = rate_limiter

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the delay the rate limiter gives (which counts a failure)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Tell the rate limiter ``item`` succeeded; you must still call ``done``."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many failures of ``item`` the rate limiter counts."""
        return self.rate_limiter.num_requeues(item)
