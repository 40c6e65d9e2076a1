"""The pure leader-election rules: decide() and hold_break() as tables, and the lease bodies.

Origin: client-go ``tools/leaderelection/leaderelection.go`` (``tryAcquireOrRenew``: expiry
on the local clock from when the record was observed; takeover increments
``leaseTransitions``; ``release`` clears the holder and sets a one-second duration).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from aioinformer._election._lease import (
    Acquire,
    Decision,
    Held,
    LeaseRecord,
    Renew,
    decide,
    hold_break,
    new_lease,
    released,
    renewed,
    taken_over,
)
from aioinformer._objects import KubeObject

T0 = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
T1 = datetime(2026, 1, 2, 3, 4, 9, 1, tzinfo=UTC)


def record(holder: str | None, duration: int | None = 15) -> LeaseRecord:
    return LeaseRecord(
        holder_identity=holder,
        lease_duration_seconds=duration,
        acquire_time=None,
        renew_time=None,
        lease_transitions=3,
    )


@pytest.mark.parametrize(
    ("rec", "observed_at", "now", "decision"),
    [
        pytest.param(record(None), 100.0, 100.0, Acquire(), id="never held: acquire"),
        pytest.param(record(""), 100.0, 100.0, Acquire(), id="released: acquire at once"),
        pytest.param(record("me"), 100.0, 500.0, Renew(), id="ours: renew, even if stale"),
        pytest.param(record("other"), 100.0, 100.0, Held("other", 115.0), id="fresh: held"),
        pytest.param(record("other"), 100.0, 114.999, Held("other", 115.0), id="held until expiry"),
        pytest.param(record("other"), 100.0, 115.0, Acquire(), id="expired: take over"),
        pytest.param(
            record("other", duration=None),
            100.0,
            105.0,
            Held("other", 110.0),
            id="no duration in the record: our own (10 s)",
        ),
        pytest.param(
            record("other", duration=0),
            100.0,
            110.0,
            Acquire(),
            id="a zero duration counts as missing",
        ),
    ],
)
def test_decide(rec: LeaseRecord, observed_at: float, now: float, decision: Decision) -> None:
    """Expiry is observed_at + leaseDurationSeconds on the local clock, never renewTime."""
    assert decide(rec, me="me", observed_at=observed_at, now=now, lease_duration=9.5) == decision


def existing(holder: str = "other") -> KubeObject:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "lock", "namespace": "ns", "resourceVersion": "17"},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "acquireTime": "2026-01-01T00:00:00.000000Z",
            "renewTime": "2026-01-01T00:00:10.000000Z",
            "leaseTransitions": 4,
        },
    }


def test_new_lease() -> None:
    """A new lease: held, acquired and renewed now, duration rounded up, no transitions."""
    lease = new_lease(name="lock", namespace="ns", identity="me", lease_duration=9.2, now=T0)
    assert lease == {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "lock", "namespace": "ns"},
        "spec": {
            "holderIdentity": "me",
            "leaseDurationSeconds": 10,
            "acquireTime": "2026-01-02T03:04:05.678901Z",
            "renewTime": "2026-01-02T03:04:05.678901Z",
            "leaseTransitions": 0,
        },
    }


def test_renewed_moves_only_the_renew_time() -> None:
    """Renewing keeps acquireTime, transitions and the resourceVersion."""
    before = existing("me")
    lease = renewed(before, identity="me", lease_duration=15, now=T1)
    assert lease["metadata"] == before["metadata"]
    assert lease["spec"] == {**before["spec"], "renewTime": "2026-01-02T03:04:09.000001Z"}
    assert before["spec"]["renewTime"] == "2026-01-01T00:00:10.000000Z"  # not mutated


def test_taken_over_counts_a_transition() -> None:
    """Taking over sets the holder, acquireTime and renewTime, and one more transition."""
    lease = taken_over(existing(), identity="me", lease_duration=15, now=T1)
    assert lease["metadata"]["resourceVersion"] == "17"
    assert lease["spec"] == {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-01-02T03:04:09.000001Z",
        "renewTime": "2026-01-02T03:04:09.000001Z",
        "leaseTransitions": 5,
    }


def test_released_frees_the_lease_for_the_next_poll() -> None:
    """Releasing clears the holder and sets a one-second duration."""
    lease = released(existing("me"), now=T1)
    assert lease["spec"] == {
        "holderIdentity": "",
        "leaseDurationSeconds": 1,
        "acquireTime": "2026-01-02T03:04:09.000001Z",
        "renewTime": "2026-01-02T03:04:09.000001Z",
        "leaseTransitions": 4,
    }
    assert (
        decide(LeaseRecord.from_lease(lease), me="other", observed_at=0, now=0, lease_duration=15)
        == Acquire()
    )


# (situation, previous renewal issued at, this write issued at, a renewal of its own lease,
#  a new hold because (None: it continues the hold))
HOLD_ROWS: list[tuple[str, float | None, float, bool, str | None]] = [
    ("a renewal one retry period later", 100.0, 102.0, True, None),
    ("a renewal just before the deadline", 100.0, 109.9, True, None),
    ("a renewal issued at the deadline", 100.0, 110.0, True, "issued 10.0 s after"),
    ("a renewal issued long after (a pause)", 100.0, 130.0, True, "issued 30.0 s after"),
    ("the first write: nothing to continue", None, 100.0, True, "no earlier renewal"),
    ("created (the lease was gone)", 100.0, 101.0, False, "acquired anew"),
    ("taken over (another held or released it meanwhile)", 100.0, 101.0, False,
     "acquired anew"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("renewed_at", "issued_at", "renewal", "because"),
    [row[1:] for row in HOLD_ROWS],
    ids=[row[0] for row in HOLD_ROWS],
)
def test_hold_break(
    renewed_at: float | None, issued_at: float, renewal: bool, because: str | None
) -> None:
    """Whether a successful write continues the holder's unbroken hold (deadline 10 s)."""
    reason = hold_break(renewed_at=renewed_at, issued_at=issued_at, deadline=10.0, renewal=renewal)
    assert reason is None if because is None else (reason is not None and because in reason)
