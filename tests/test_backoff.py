"""BackoffPolicy (frozen configuration) and Backoff (the sequence walked on a clock)."""

from __future__ import annotations

import dataclasses

import pytest

from aioinformer import BackoffPolicy
from aioinformer.lowlevel import Backoff
from aioinformer.testing import FakeClock


def no_jitter() -> float:
    return 0.0


def test_backoff_doubles_from_800ms_to_a_30s_cap() -> None:
    """Without jitter the delays are 0.8 s doubling, capped at 30 s (client-go's reflector)."""
    backoff = Backoff(BackoffPolicy(), clock=FakeClock(), rand=no_jitter)
    delays = [backoff.next_delay() for _ in range(9)]
    assert delays == pytest.approx([0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0, 30.0])


def test_backoff_jitter_stays_within_d_and_2d() -> None:
    """Jitter 1.0 puts each delay in [d, 2d)."""
    draws = iter([0.0, 0.5, 0.999])
    backoff = Backoff(clock=FakeClock(), rand=lambda: next(draws))
    assert [next(backoff) for _ in range(3)] == pytest.approx([0.8, 2.4, 3.2 * 1.999])


def test_backoff_resets_two_minutes_after_the_last_reset() -> None:
    """It restarts 2 min after the last *reset*, not the last failure (apimachinery's
    ``DelayWithReset``)."""
    clock = FakeClock()
    backoff = Backoff(clock=clock, rand=no_jitter)
    for _ in range(5):
        clock.jump(10)  # continuous failure, 10 s apart
        backoff.next_delay()
    clock.jump(69)  # t = 119
    assert backoff.next_delay() == pytest.approx(25.6)
    clock.jump(2)  # t = 121: more than 120 s after the construction-time reset
    assert backoff.next_delay() == pytest.approx(0.8)
    clock.jump(79)  # t = 200: only 79 s after that reset
    assert backoff.next_delay() == pytest.approx(1.6)


def test_reset_starts_the_sequence_over() -> None:
    """reset() goes back to the initial delay at once."""
    backoff = Backoff(BackoffPolicy(initial=1.0, jitter=0), clock=FakeClock())
    assert [next(backoff) for _ in range(3)] == [1.0, 2.0, 4.0]
    backoff.reset()
    assert next(backoff) == 1.0


def test_one_policy_starts_independent_sequences() -> None:
    """The policy is frozen and shareable; each Backoff walks its own sequence."""
    policy = BackoffPolicy(initial=0.5, factor=3.0, jitter=0, cap=10.0)
    clock = FakeClock()
    first, second = Backoff(policy, clock=clock), Backoff(policy, clock=clock)
    assert [next(first), next(first), next(first)] == [0.5, 1.5, 4.5]
    assert next(second) == 0.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.initial = 2.0  # type: ignore[misc]


@pytest.mark.parametrize(
    "changes",
    [{"initial": -1.0}, {"factor": 0.5}, {"jitter": -0.1}, {"cap": -1.0}, {"reset_after": -1.0}],
)
def test_invalid_policies_are_refused(changes: dict[str, float]) -> None:
    """Negative values and a factor under 1 raise ValueError."""
    with pytest.raises(ValueError):
        BackoffPolicy(**changes)
