"""LeaseView: the group's Leases as one replica knows them (a pure fold over its informer)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aioinformer._replicas._lease_view import (
    READY_ANNOTATION,
    SERVING_ANNOTATION,
    LeaseRecord,
    LeaseView,
    ObservedLease,
    record_from_lease,
)
from aioinformer._sharding._ranges import EMPTY, FULL, HashRanges

HALF = 1 << 63
LOW, HIGH = HashRanges([(0, HALF)]), HashRanges([(HALF, 1 << 64)])
Q1 = HashRanges([(0, HALF // 2)])
LD = 15.0


def rec(name: str, rv: int, serving: HashRanges = EMPTY, holder: str | None = None) -> LeaseRecord:
    holder = name if holder is None else holder
    return LeaseRecord(name=name, rv=rv, holder=holder, serving=serving, ready=True)


def test_a_list_knows_nothing_of_history() -> None:
    view = LeaseView.listed([rec("a", 5, LOW), rec("b", 7, Q1)], rv=9, now=100.0)
    assert view.rv == 9 and view.listed_at == 100.0
    assert view.leases["a"] == ObservedLease(rec("a", 5, LOW), 100.0, ((LOW, 0),))
    assert view.members(100.0, LD) == {"a", "b"}
    not_ready = view.applied("MODIFIED", replace(rec("b", 10, Q1), ready=False), now=101.0)
    assert not_ready.members(101.0, LD) == {"a"}  # not a member before it is ready


def test_a_relist_keeps_what_is_still_true() -> None:
    first = LeaseView.listed([rec("a", 5, LOW), rec("b", 7, HIGH), rec("c", 8)], rv=9, now=0)
    first = first.applied("MODIFIED", rec("a", 10, FULL), now=1.0)
    assert first.leases["a"].since == ((LOW, 0), (HIGH, 10))
    second = LeaseView.listed([rec("a", 10, FULL), rec("b", 12, HIGH)], rv=20, now=5.0,
                              previous=first)  # fmt: skip
    assert second.leases["a"] is first.leases["a"]  # unchanged: first seen at 1.0, since kept
    assert second.leases["b"].first_seen == 5.0 and second.leases["b"].since == ((HIGH, 0),)
    assert "c" not in second.leases and second.listed_at == 5.0
    released = LeaseView.listed([rec("a", 11, FULL, holder="")], rv=30, now=8.0)
    assert released.leases["a"].since == ()


def test_events_track_since_when_each_part_is_served() -> None:
    view = LeaseView.listed([rec("a", 3, Q1)], rv=3, now=0)
    view = view.applied("MODIFIED", rec("a", 4, LOW), now=1.0)
    assert view.leases["a"].since == ((Q1, 0), (LOW - Q1, 4))
    view = view.applied("MODIFIED", rec("a", 6, FULL - Q1), now=2.0)
    assert view.leases["a"].since == ((LOW - Q1, 4), (HIGH, 6))
    assert view.leases["a"].first_seen == 2.0 and view.rv == 6
    view = view.applied("MODIFIED", rec("a", 7, FULL, holder=""), now=3.0)  # fenced
    assert view.leases["a"].since == ()
    assert view.served_by_others("x", 3.0, LD) == EMPTY
    view = view.applied("ADDED", rec("b", 8, LOW), now=4.0)
    assert view.leases["b"].since == ((LOW, 8),)


@pytest.mark.parametrize(
    ("before", "kept"),
    [(rec("a", 2, LOW), True), (rec("a", 2, EMPTY), False), (rec("a", 2, LOW, holder=""), False)],
)
def test_a_deleted_lease_that_served_something_leaves_a_tombstone(
    before: LeaseRecord, kept: bool
) -> None:
    view = LeaseView.listed([before], rv=2, now=0)
    view = view.applied("DELETED", rec("a", 3, before.serving), now=10.0)
    assert ("a" in view.leases) is kept
    if kept:
        tomb = view.leases["a"]
        assert tomb.deleted and tomb.first_seen == 10.0
        assert tomb.counts(24.9, LD) and not tomb.counts(25.0, LD)
        assert view.served_by_others("x", 24.9, LD) == LOW
        assert view.members(11.0, LD) == frozenset()
        assert view.pruned(24.9, LD) is view
        assert "a" not in view.pruned(25.0, LD).leases


def test_events_must_come_in_order() -> None:
    view = LeaseView.listed([rec("a", 5)], rv=5, now=0)
    with pytest.raises(ValueError, match="not after"):
        view.applied("MODIFIED", rec("a", 5), now=1.0)
    assert view.bookmarked(9).rv == 9 and view.bookmarked(2).rv == 5


def test_expiry_is_local_observation_of_an_unchanged_record() -> None:
    view = LeaseView.listed([rec("a", 5, LOW), rec("b", 6)], rv=6, now=100.0)
    assert view.members(114.9, LD) == {"a", "b"}
    assert view.members(115.0, LD) == frozenset()
    assert view.next_expiry(100.0, LD) == 115.0
    assert view.next_expiry(115.0, LD) is None
    view = view.applied("MODIFIED", rec("a", 7, LOW), now=110.0)  # renewed: a fresh record
    assert view.members(115.0, LD) == {"a"}
    published = LeaseRecord(name="a", rv=8, holder="a", ready=True, lease_duration=30.0)
    view = view.applied("MODIFIED", published, now=120.0)  # observers use the published duration
    assert view.members(149.9, LD) == {"a"} and view.members(150.0, LD) == frozenset()


def test_an_expired_lease_still_counts_until_fenced() -> None:
    view = LeaseView.listed([rec("a", 5, LOW), rec("b", 6, EMPTY)], rv=6, now=0.0)
    assert view.served_by_others("x", 100.0, LD) == LOW
    assert view.conflicts("x", FULL, 7, 100.0, LD) == LOW
    assert [r.name for r in view.fence_candidates("x", 100.0, LD)] == ["a"]  # b serves nothing
    assert view.fence_candidates("x", 14.0, LD) == []
    assert view.fence_candidates("a", 100.0, LD) == []  # never itself


def test_conflicts_are_the_older_claims_only() -> None:
    view = LeaseView.listed([], rv=1, now=0)
    view = view.applied("ADDED", rec("a", 4, Q1), now=0)
    view = view.applied("MODIFIED", rec("a", 9, LOW), now=0)
    assert view.conflicts("x", FULL, 5, 0, LD) == Q1  # LOW - Q1 was claimed after rv 5
    assert view.conflicts("x", FULL, 10, 0, LD) == LOW
    assert view.conflicts("x", HIGH, 10, 0, LD) == EMPTY
    assert view.conflicts("a", FULL, 10, 0, LD) == EMPTY  # its own lease is no conflict


def _lease(annotations: dict[str, object] | None, **spec: object) -> dict[str, object]:
    metadata: dict[str, object] = {"name": "a", "resourceVersion": "42"}
    if annotations is not None:
        metadata["annotations"] = annotations
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata,
            "spec": spec}  # fmt: skip


@pytest.mark.parametrize(
    ("lease", "expected"),
    [
        (_lease(None, holderIdentity="a"), LeaseRecord(name="a", rv=42, holder="a")),
        (_lease({SERVING_ANNOTATION: LOW.encode(), READY_ANNOTATION: "true"}, holderIdentity="a",
                leaseDurationSeconds=20),
         LeaseRecord(name="a", rv=42, holder="a", serving=LOW, ready=True, lease_duration=20.0)),
        (_lease({SERVING_ANNOTATION: "garbage"}, holderIdentity="a"),
         LeaseRecord(name="a", rv=42, holder="a", serving=FULL)),
        (_lease({SERVING_ANNOTATION: 7, READY_ANNOTATION: "yes"}, holderIdentity="a"),
         LeaseRecord(name="a", rv=42, holder="a", serving=FULL)),
        (_lease({SERVING_ANNOTATION: ""}), LeaseRecord(name="a", rv=42)),
        (_lease(None, holderIdentity=None, leaseDurationSeconds=0), LeaseRecord(name="a", rv=42)),
    ],
)  # fmt: skip
def test_reading_a_lease(lease: dict[str, object], expected: LeaseRecord) -> None:
    assert record_from_lease(lease) == expected


@pytest.mark.parametrize(
    "metadata",
    [
        {},
        {"name": "a"},
        {"name": "a", "resourceVersion": "x1"},
        {"name": "", "resourceVersion": "1"},
    ],
)
def test_reading_a_lease_without_name_or_rv_fails(metadata: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="numeric resourceVersion"):
        record_from_lease({"metadata": metadata})
