"""RateLimitingQueue: add_rate_limited uses the limiter's delay; forget and num_requeues."""

from __future__ import annotations

import asyncio

from aioinformer.testing import FakeClock
from aioinformer.workqueue import (
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimitingQueue,
)

from ._support import RecordingProvider

GUARD = 5.0


async def test_add_rate_limited_waits_the_limiters_delay() -> None:
    """Each add_rate_limited schedules the item at now + limiter.when(item)."""
    clock = FakeClock(1000.0)
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1.0, 60.0)
    q: RateLimitingQueue[str] = RateLimitingQueue(limiter, clock=clock)
    q.add_rate_limited("a")
    assert q.next_ready_at == clock.now() + 1.0
    q.add_rate_limited("a")  # 2 s: later than the waiting deadline, which is kept
    assert q.next_ready_at == clock.now() + 1.0
    assert q.num_requeues("a") == 2
    q.forget("a")
    assert q.num_requeues("a") == 0
    q.shutdown()


async def test_rate_limited_item_is_delivered() -> None:
    """An item added rate-limited with a small delay is handed out after it."""
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(0.02, 1.0)
    q: RateLimitingQueue[str] = RateLimitingQueue(limiter)
    q.add_rate_limited("a")
    assert len(q) == 0
    assert await asyncio.wait_for(q.get(), GUARD) == "a"
    q.done("a")
    q.shutdown()


async def test_default_limiter_is_the_controller_default() -> None:
    """Without a limiter the queue uses max(exponential 5 ms..1000 s, bucket 10 qps/100)."""
    clock = FakeClock(1000.0)
    q: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    assert isinstance(q.rate_limiter, MaxOfRateLimiter)
    q.add_rate_limited("a")
    assert q.next_ready_at == clock.now() + 0.005
    q.shutdown()


async def test_add_rate_limited_during_shutdown_still_counts_the_failure() -> None:
    """As in client-go, when() runs (and counts) even though the add is ignored."""
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1.0, 60.0)
    provider = RecordingProvider()
    q: RateLimitingQueue[str] = RateLimitingQueue(limiter, name="rl", metrics_provider=provider)
    q.shutdown()
    q.add_rate_limited("a")
    assert q.num_requeues("a") == 1
    assert q.waiting_count == 0
    assert provider.metrics[("rl", "retries")].value == 0


async def test_retries_metric_counts_rate_limited_adds() -> None:
    """Every add_rate_limited counts one retry."""
    provider = RecordingProvider()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(0.0, 0.0), name="rl", metrics_provider=provider
    )
    for _ in range(3):
        q.add_rate_limited("a")
    assert provider.metrics[("rl", "retries")].value == 3
    assert len(q) == 1  # zero delay: added at once, deduplicated
    q.shutdown()
