"""Rate limiters: client-go's exact delay sequences, side effects of when() included."""

from __future__ import annotations

import math

import pytest

from aioinformer.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
)
from aioinformer.workqueue._limiters import default_item_based_rate_limiter

from ._support import FakeClock


def test_exponential_doubles_per_failure_and_caps() -> None:
    """Exponential: base*2**n for the n-th failure of an item, capped at max_delay."""
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(0.001, 1.0)
    delays = [limiter.when("one") for _ in range(12)]
    expected = [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.0, 1.0]
    assert delays == pytest.approx(expected, rel=0, abs=1e-15)
    assert limiter.num_requeues("one") == 12


def test_exponential_tracks_items_separately_and_forget_resets() -> None:
    """Each item has its own failure count; forget() starts it over at base_delay."""
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        0.005, 1000.0
    )
    assert [limiter.when("a"), limiter.when("a"), limiter.when("b")] == [0.005, 0.01, 0.005]
    assert limiter.num_requeues("a") == 2
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.005
    assert limiter.num_requeues("b") == 1


def test_exponential_is_overflow_safe() -> None:
    """Thousands of failures return max_delay instead of overflowing."""
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        0.005, 1000.0
    )
    delays = [limiter.when("x") for _ in range(3000)]
    assert delays[-1] == 1000.0
    assert max(delays) == 1000.0
    # 5 ms * 2**17 = 655.36 s; the 19th failure (n = 18) is the first capped one.
    assert delays[17] == pytest.approx(655.36)
    assert delays[18] == 1000.0


def test_exponential_with_huge_cap_uses_go_duration_guard() -> None:
    """Above the largest Go duration (about 292 years) the cap is returned."""
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        1.0, math.inf
    )
    delays = [limiter.when("x") for _ in range(40)]
    assert delays[33] == 2.0**33
    assert delays[34] == math.inf  # 2**34 s exceeds the guard


def test_fast_slow_switches_after_max_fast_attempts() -> None:
    """Fast/slow: fast_delay for the first max_fast_attempts failures, then slow_delay."""
    limiter: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(0.005, 10.0, 3)
    assert [limiter.when("a") for _ in range(6)] == [0.005, 0.005, 0.005, 10.0, 10.0, 10.0]
    assert limiter.num_requeues("a") == 6
    assert limiter.when("b") == 0.005
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.005


def test_bucket_spends_the_burst_then_spaces_reservations() -> None:
    """Bucket: burst tokens free, then each reservation waits 1/qps longer."""
    clock = FakeClock()
    bucket = BucketRateLimiter(10.0, 3, clock=clock)
    delays = [bucket.when(f"item{i}") for i in range(7)]
    assert delays == pytest.approx([0.0, 0.0, 0.0, 0.1, 0.2, 0.3, 0.4], abs=1e-12)
    assert bucket.tokens() == pytest.approx(-4.0)


def test_bucket_refills_at_qps_up_to_burst() -> None:
    """Tokens come back at qps and never exceed burst."""
    clock = FakeClock()
    bucket = BucketRateLimiter(10.0, 2, clock=clock)
    assert [bucket.when("x") for _ in range(4)] == pytest.approx([0.0, 0.0, 0.1, 0.2])
    clock.advance(0.25)  # 2.5 tokens arrive: -2 -> 0.5
    assert bucket.tokens() == pytest.approx(0.5)
    assert bucket.when("x") == pytest.approx(0.05)
    clock.advance(100.0)
    assert bucket.tokens() == 2.0
    assert [bucket.when("x") for _ in range(3)] == pytest.approx([0.0, 0.0, 0.1])


def test_bucket_ignores_items_and_a_clock_going_backwards() -> None:
    """Bucket: num_requeues is 0, forget does nothing, a backwards clock refills nothing."""
    clock = FakeClock()
    bucket = BucketRateLimiter(1.0, 1, clock=clock)
    assert bucket.when("a") == 0.0
    bucket.forget("a")
    assert bucket.num_requeues("a") == 0
    clock.advance(-10.0)
    assert bucket.when("b") == pytest.approx(1.0)


def test_bucket_with_infinite_qps_never_waits() -> None:
    """qps = inf disables the bucket."""
    bucket = BucketRateLimiter(math.inf, 1, clock=FakeClock())
    assert [bucket.when("x") for _ in range(5)] == [0.0] * 5


@pytest.mark.parametrize(("qps", "burst"), [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_bucket_rejects_invalid_parameters(qps: float, burst: int) -> None:
    """qps must be positive and burst at least 1."""
    with pytest.raises(ValueError):
        BucketRateLimiter(qps, burst)


def test_max_of_returns_the_largest_delay_and_forgets_everywhere() -> None:
    """MaxOf: the maximum of all limiters' delays; forget and num_requeues cover all."""
    fast_slow: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(0.5, 3.0, 2)
    exponential: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        0.1, 100.0
    )
    limiter = MaxOfRateLimiter(fast_slow, exponential)
    delays = [limiter.when("a") for _ in range(8)]
    assert delays == pytest.approx([0.5, 0.5, 3.0, 3.0, 3.0, 3.2, 6.4, 12.8])
    assert limiter.num_requeues("a") == 8
    limiter.forget("a")
    assert fast_slow.num_requeues("a") == 0
    assert exponential.num_requeues("a") == 0


def test_max_of_consumes_bucket_tokens_even_when_exponential_wins() -> None:
    """MaxOf calls every limiter's when(): the bucket loses a token on every call."""
    clock = FakeClock()
    bucket = BucketRateLimiter(1.0, 2, clock=clock)
    exponential: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        10.0, 1000.0
    )
    limiter = MaxOfRateLimiter(exponential, bucket)
    assert limiter.when("a") == 10.0  # exponential wins; bucket 2 -> 1
    assert limiter.when("a") == 20.0  # bucket 1 -> 0
    assert bucket.tokens() == 0.0
    assert limiter.when("b") == 10.0  # bucket 0 -> -1 (1 s), exponential still wins
    assert bucket.tokens() == -1.0
    assert bucket.when("c") == 2.0  # the bucket paid for all three calls


def test_default_controller_limiter_sequence() -> None:
    """Default: 5 ms doubling per item, and after a burst of 100 the bucket spaces at 100 ms."""
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock=clock)
    # One failing item: exponential delays while the burst lasts.
    first = [limiter.when("hot") for _ in range(5)]
    assert first == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08])
    # 95 more distinct items drain the burst of 100 (5 ms each: exponential).
    assert {limiter.when(f"k{i}") for i in range(95)} == {0.005}
    # The bucket is empty now: new items wait 0.1, 0.2, 0.3 s instead of 5 ms.
    assert [limiter.when(f"new{i}") for i in range(3)] == pytest.approx([0.1, 0.2, 0.3])
    assert limiter.num_requeues("hot") == 5
    limiter.forget("hot")
    assert limiter.num_requeues("hot") == 0


def test_default_item_based_limiter_starts_at_one_millisecond() -> None:
    """The item-based default: exponential from 1 ms, capped at 1000 s."""
    limiter = default_item_based_rate_limiter()
    assert [limiter.when("x") for _ in range(3)] == [0.001, 0.002, 0.004]
    assert limiter.max_delay == 1000.0


def test_with_max_wait_caps_the_delay() -> None:
    """WithMaxWait returns the wrapped delay but never more than max_delay."""
    inner: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1.0, 1000.0)
    limiter = WithMaxWaitRateLimiter(inner, 5.0)
    assert [limiter.when("x") for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert limiter.num_requeues("x") == 5
    limiter.forget("x")
    assert inner.num_requeues("x") == 0


def test_exponential_rejects_negative_delays() -> None:
    """Negative base or max delay raises ValueError."""
    with pytest.raises(ValueError):
        ItemExponentialFailureRateLimiter(-1.0, 1.0)
