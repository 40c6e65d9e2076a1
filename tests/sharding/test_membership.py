"""The hand-over protocol as tables: situation -> actions (and the state that matters).

Replica ``a`` at local time 100 with timing 15/10/2 (lease duration, renew deadline, retry
period). The assignment splits the hash space in equal halves by sorted member name, so with
members {a, b} ``a`` owns LOW and ``b`` owns HIGH; alone, ``a`` owns everything.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

from aioinformer._replicas._handover import (
    Action,
    Outcome,
    RangeExit,
    Resume,
    ShardTiming,
    Start,
    StopAll,
    StopTaking,
    WriteKind,
    WriteLease,
    WriteResult,
)
from aioinformer._replicas._lease_view import LeaseRecord, LeaseView, ObservedLease
from aioinformer._replicas._membership import (
    Phase,
    ReplicaState,
    drained,
    leave,
    plan,
    ring_share,
    written,
)
from aioinformer._sharding import shard_boundary
from aioinformer._sharding._ranges import EMPTY, FULL, HashRanges

NOW = 100.0
HALF = 1 << 63
LOW, HIGH = HashRanges([(0, HALF)]), HashRanges([(HALF, 1 << 64)])
Q1 = HashRanges([(0, HALF // 2)])


def halves(members: frozenset[str], me: str) -> HashRanges:
    ordered = sorted(members)
    i, n = ordered.index(me), len(ordered)
    return HashRanges([(shard_boundary(i, n), shard_boundary(i + 1, n))])


def lease(
    name: str,
    rv: int,
    serving: HashRanges = EMPTY,
    *,
    seen: float = 99.0,
    since: int = 0,
    holder: str | None = None,
    deleted: bool = False,
) -> ObservedLease:
    record = LeaseRecord(name=name, rv=rv, holder=name if holder is None else holder,
                         serving=serving, ready=True)  # fmt: skip
    layers = ((serving, since),) if serving and record.held else ()
    return ObservedLease(record, seen, layers, deleted)


def view(*leases: ObservedLease, rv: int = 20, listed_at: float = 0.0) -> LeaseView:
    return LeaseView(rv, MappingProxyType({o.record.name: o for o in leases}), listed_at)


def member(**fields: Any) -> ReplicaState:
    """Replica a, ready, holding its lease (rv 10, written at 99 with ``published``)."""
    base: dict[str, Any] = {
        "identity": "a",
        "phase": Phase.MEMBER,
        "lease_rv": 10,
        "renewed_at": 99.0,
        "attempt_at": 99.0,
        "ready": True,
        "published_ready": True,
    }
    base.update(fields)
    base.setdefault("published", base.get("active", EMPTY) | base.get("draining", EMPTY))
    return ReplicaState(**base)


def own(state: ReplicaState) -> ObservedLease:
    return lease("a", state.lease_rv or 10, state.published)


def update(serving: HashRanges, rv: int = 10, ready: bool = True) -> WriteLease:
    return WriteLease(kind=WriteKind.UPDATE, name="a", serving=serving, ready=ready,
                      expected_rv=rv, issued_at=NOW)  # fmt: skip


B_MEMBER = lease("b", 7)
B_OLD_Q1 = lease("b", 7, Q1, since=11)  # b serves Q1 since rv 11
B_NEW_Q1 = lease("b", 7, Q1, since=13)
B_EXPIRED_Q1 = lease("b", 7, Q1, seen=80.0)
CLAIM_ALL = member(claims=((FULL, 12),), published=FULL)
SERVING_LOW_AND_Q1 = member(active=LOW)

# (situation, state, other leases, view fields, expected actions, expected state fields)
Row = tuple[str, ReplicaState, list[ObservedLease], dict[str, Any], list[Action], dict[str, Any]]
ROWS: list[Row] = [
    ("joining, no lease: create it", ReplicaState(identity="a"), [], {},
     [WriteLease(kind=WriteKind.CREATE, name="a", issued_at=NOW)], {"ready": False}),
    ("alone right after the list: nothing is known free yet", member(), [],
     {"listed_at": 95.0}, [], {"claims": ()}),
    ("a new member waits a lease duration, then says it is ready",
     member(ready=False, published_ready=False), [B_MEMBER], {"listed_at": 95.0}, [],
     {"ready": False, "claims": ()}),
    ("ready: publish it, claim the share",
     member(ready=False, published_ready=False), [B_MEMBER], {"listed_at": 85.0},
     [update(LOW)], {"ready": True, "claims": ((LOW, None),)}),
    ("b is not ready: not a member yet", member(), [replace(B_MEMBER, record=replace(
     B_MEMBER.record, ready=False))], {}, [update(FULL)], {"claims": ((FULL, None),)}),
    ("alone after the horizon: claim everything", member(), [], {},
     [update(FULL)], {"claims": ((FULL, None),)}),
    ("claim confirmed, cache behind it: wait", CLAIM_ALL, [], {"rv": 11}, [], {"active": EMPTY}),
    ("cache caught up, nobody else: start", CLAIM_ALL, [], {"rv": 12},
     [Start(FULL)], {"active": FULL, "claims": ()}),
    ("b claimed part earlier: withdraw it, start the rest", CLAIM_ALL, [B_OLD_Q1], {"rv": 12},
     [Start(LOW - Q1), update(LOW - Q1)], {"active": LOW - Q1}),
    ("b claimed part later: start all (b withdraws)", CLAIM_ALL, [B_NEW_Q1], {"rv": 13},
     [Start(LOW), update(LOW)], {"active": LOW}),
    ("b's part seen only in a list: withdraw it", CLAIM_ALL, [lease("b", 7, Q1)], {},
     [Start(LOW - Q1), update(LOW - Q1)], {"active": LOW - Q1}),
    ("b looks expired but is not fenced: still a conflict", CLAIM_ALL, [B_EXPIRED_Q1], {},
     [Start(FULL - Q1), update(FULL - Q1)], {"active": FULL - Q1}),
    ("nothing to write: fence the expired lease", member(active=FULL - Q1), [B_EXPIRED_Q1], {},
     [WriteLease(kind=WriteKind.FENCE, name="b", expected_rv=7, issued_at=NOW)],
     {"fenced": frozenset({("b", 7)}), "claims": ()}),
    ("a fence is tried once per record",
     member(active=FULL - Q1, fenced=frozenset({("b", 7)})), [B_EXPIRED_Q1], {}, [], {}),
    ("b joins: stop taking its share", member(active=FULL), [B_MEMBER], {},
     [StopTaking(HIGH)], {"active": LOW, "draining": HIGH}),
    ("b left before the drain ended: resume", member(active=LOW, draining=HIGH), [], {},
     [Resume(HIGH)], {"active": FULL, "draining": EMPTY}),
    ("claims outside the share are dropped", member(claims=((FULL, None),)), [B_MEMBER], {},
     [update(LOW)], {"claims": ((LOW, None),)}),
    ("b still serves part of the share: claim only the rest", member(), [B_OLD_Q1], {},
     [update(LOW - Q1)], {"claims": ((LOW - Q1, None),)}),
    ("renew deadline passed: stop everything, claims unconfirmed",
     member(active=LOW, draining=HIGH, renewed_at=90.0), [], {},
     [StopAll(), update(FULL)], {"renewed_at": None, "claims": ((FULL, None),)}),
    ("own lease fenced: stop, take it back, rejoin (not ready, claims nothing)",
     member(active=FULL), [lease("a", 15, holder="")], {"rv": 15},
     [StopAll(), update(EMPTY, rv=15, ready=False)],
     {"lease_rv": 15, "claims": (), "ready": False, "watched_from": NOW}),
    ("rejoining: not ready until a lease duration after the lease was lost",
     member(ready=False, published_ready=False, watched_from=90.0), [], {}, [],
     {"ready": False, "claims": ()}),
    ("rejoining: ready again, takes its share like a joiner",
     member(ready=False, published_ready=False, watched_from=85.0), [B_MEMBER], {},
     [update(LOW)], {"ready": True, "claims": ((LOW, None),)}),
    ("rejoining: b keeps the share it took over meanwhile", member(ready=False,
     published_ready=False, watched_from=90.0), [lease("b", 17, FULL, since=16)], {}, [],
     {"ready": False}),
    ("not ready: does not fence", member(ready=False, published_ready=False,
     watched_from=90.0), [B_EXPIRED_Q1], {}, [], {}),
    ("not holding its lease (after a stop): renews, does not fence", member(renewed_at=None,
     attempt_at=99.9, active=FULL - Q1), [B_EXPIRED_Q1], {},
     [update(FULL - Q1)], {"fenced": frozenset()}),
    ("the view is behind the own last write: no fence yet",
     member(active=FULL - Q1, lease_rv=25), [B_EXPIRED_Q1], {"rv": 24}, [], {}),
    ("own lease rewritten by a write whose answer was lost: adopt it", member(active=FULL),
     [lease("a", 11, FULL)], {}, [], {"lease_rv": 11, "active": FULL}),
    ("a fresh tombstone blocks its ranges", member(active=LOW),
     [lease("b", 7, HIGH, seen=95.0, deleted=True)], {}, [], {"claims": ()}),
    ("an old tombstone does not", member(active=LOW),
     [lease("b", 7, HIGH, seen=80.0, deleted=True)], {}, [update(FULL)],
     {"claims": ((HIGH, None),)}),
    ("within the horizon after a list: no claim", member(active=LOW), [],
     {"listed_at": 95.0}, [], {"claims": ()}),
    ("within the horizon after a list: a confirmed claim waits",
     member(active=LOW, claims=((HIGH, 12),), published=FULL),
     [], {"listed_at": 95.0}, [], {"claims": ((HIGH, 12),)}),
    ("leaving: stop taking everything, drop claims",
     member(phase=Phase.LEAVING, active=LOW, claims=((HIGH, None),)), [], {},
     [StopTaking(LOW)], {"draining": LOW, "claims": ()}),
    ("leaving, drained: release", member(phase=Phase.LEAVING, published=LOW), [], {},
     [WriteLease(kind=WriteKind.RELEASE, name="a", expected_rv=10, issued_at=NOW)], {}),
    ("released: delete", member(phase=Phase.RELEASED), [lease("a", 10, holder="")], {},
     [WriteLease(kind=WriteKind.DELETE, name="a", expected_rv=10, issued_at=NOW)], {}),
    ("leaving without a lease: done", member(phase=Phase.LEAVING, lease_rv=None), [], {},
     [], {"phase": Phase.LEFT}),
    ("a write in flight: no second one", member(inflight=update(EMPTY)), [], {}, [], {}),
    ("the last write failed: wait for the retry period", member(failed=True), [], {}, [], {}),
    ("after a conflict: wait until the cache shows the lease", member(lease_rv=None),
     [lease("a", 12)], {}, [update(FULL, rv=12)], {"lease_rv": 12}),
    ("after a conflict, no lease in the cache: start over", member(active=LOW, lease_rv=None),
     [], {}, [StopAll(), WriteLease(kind=WriteKind.CREATE, name="a", ready=True, issued_at=NOW)],
     {"phase": Phase.JOINING}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("state", "others", "view_fields", "actions", "fields"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_plan(
    state: ReplicaState,
    others: list[ObservedLease],
    view_fields: dict[str, Any],
    actions: list[Action],
    fields: dict[str, Any],
) -> None:
    leases = [*others]
    if (
        state.phase is not Phase.JOINING
        and state.lease_rv
        and "a" not in {o.record.name for o in others}
    ):
        leases.append(own(state))
    result = plan(state, view(*leases, **view_fields), NOW, assign=halves)
    assert list(result.actions) == actions
    for name, value in fields.items():
        assert getattr(result.state, name) == value, name
    assert result.state.active.isdisjoint(result.state.draining)
    assert result.state.serving.issubset(result.state.publishing)


@pytest.mark.parametrize(
    ("state", "wake_at"),
    [
        (member(), 101.0),  # renewal (before the horizon ends at 110)
        (member(failed=True, attempt_at=99.5), 101.5),  # retry
        (member(attempt_at=100.0, inflight=update(EMPTY)), 109.0),  # renew deadline
        (ReplicaState(identity="a", phase=Phase.LEFT), None),
    ],
)
def test_wake_up(state: ReplicaState, wake_at: float | None) -> None:
    v = view(own(state), listed_at=95.0)
    assert plan(state, v, NOW, assign=halves).wake_at == wake_at


def test_wake_up_at_an_expiry_and_the_horizon() -> None:
    state = member(attempt_at=99.9, renewed_at=99.9, inflight=update(EMPTY))
    v = view(own(state), lease("b", 7, seen=88.0), listed_at=90.0)
    assert plan(state, v, NOW, assign=halves).wake_at == 103.0  # b looks expired at 88 + 15
    v = view(own(state), lease("b", 7, seen=96.0), listed_at=90.0)
    assert plan(state, v, NOW, assign=halves).wake_at == 105.0  # the horizon ends at 90 + 15


SENT = update(LOW)
CURRENT_MINE = LeaseRecord(name="a", rv=14, holder="a", serving=LOW)
CURRENT_TAKEN = LeaseRecord(name="a", rv=14, holder="")

WRITTEN: list[tuple[str, ReplicaState, WriteResult, dict[str, Any]]] = [
    ("created", ReplicaState(identity="a", inflight=WriteLease(kind=WriteKind.CREATE, name="a",
     issued_at=98.0)), WriteResult(Outcome.OK, 3),
     {"phase": Phase.MEMBER, "lease_rv": 3, "renewed_at": 98.0, "failed": False}),
    ("updated: confirms the claims it carried",
     member(claims=((FULL, None),), inflight=SENT), WriteResult(Outcome.OK, 12),
     {"lease_rv": 12, "renewed_at": NOW, "published": LOW, "claims": ((LOW, 12), (HIGH, None))}),
    ("conflict, own lease still held: retry at once with its rv", member(inflight=SENT),
     WriteResult(Outcome.CONFLICT, current=CURRENT_MINE),
     {"lease_rv": 14, "failed": False, "lost": False}),
    ("conflict, own lease taken: stop, take it back, rejoin", member(inflight=SENT),
     WriteResult(Outcome.CONFLICT, current=CURRENT_TAKEN),
     {"lease_rv": 14, "lost": True, "failed": False, "ready": False, "watched_from": NOW}),
    ("conflict, not read: wait for the cache", member(inflight=SENT),
     WriteResult(Outcome.CONFLICT), {"lease_rv": None, "failed": True}),
    ("gone: join again", member(active=LOW, inflight=SENT), WriteResult(Outcome.NOT_FOUND),
     {"phase": Phase.JOINING, "lost": True, "lease_rv": None}),
    ("gone while leaving: done", member(phase=Phase.LEAVING, inflight=SENT),
     WriteResult(Outcome.NOT_FOUND), {"phase": Phase.LEFT}),
    ("failed: may have been written", member(inflight=SENT), WriteResult(Outcome.FAILED),
     {"lease_rv": 10, "failed": True, "published": EMPTY}),
    ("fence answered: nothing to do", member(inflight=WriteLease(kind=WriteKind.FENCE, name="b",
     expected_rv=7, issued_at=NOW)), WriteResult(Outcome.OK, 13), {"lease_rv": 10}),
    ("fence lost to another fencer: not a failure, the next write goes at once",
     member(inflight=WriteLease(kind=WriteKind.FENCE, name="b", expected_rv=7, issued_at=NOW)),
     WriteResult(Outcome.CONFLICT), {"failed": False}),
    ("fence failed: may be tried again", member(fenced=frozenset({("b", 7)}),
     inflight=WriteLease(kind=WriteKind.FENCE, name="b", expected_rv=7, issued_at=NOW)),
     WriteResult(Outcome.FAILED), {"fenced": frozenset(), "failed": True}),
    ("released", member(phase=Phase.LEAVING, inflight=WriteLease(kind=WriteKind.RELEASE,
     name="a", expected_rv=10, issued_at=NOW)), WriteResult(Outcome.OK, 13),
     {"phase": Phase.RELEASED, "lease_rv": 13}),
    ("deleted", member(phase=Phase.RELEASED, inflight=WriteLease(kind=WriteKind.DELETE,
     name="a", expected_rv=13, issued_at=NOW)), WriteResult(Outcome.OK, 14),
     {"phase": Phase.LEFT}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("state", "result", "fields"), [row[1:] for row in WRITTEN], ids=[row[0] for row in WRITTEN]
)
def test_written(state: ReplicaState, result: WriteResult, fields: dict[str, Any]) -> None:
    after = written(state, result, NOW)
    assert after.inflight is None
    for name, value in fields.items():
        assert getattr(after, name) == value, name


def test_a_lost_lease_stops_everything_at_the_next_plan() -> None:
    taken = written(member(active=LOW, inflight=SENT), WriteResult(Outcome.CONFLICT,
                    current=CURRENT_TAKEN), NOW)  # fmt: skip
    result = plan(taken, view(lease("a", 10, LOW)), NOW, assign=halves)
    # It takes its lease back and rejoins: not ready, so nobody gives it a share yet.
    assert result.actions == (StopAll(), update(EMPTY, rv=14, ready=False))
    assert (result.state.ready, result.state.watched_from) == (False, NOW)
    gone = written(member(active=LOW, inflight=SENT), WriteResult(Outcome.NOT_FOUND), NOW)
    result = plan(gone, view(), NOW, assign=halves)
    create = WriteLease(kind=WriteKind.CREATE, name="a", ready=True, issued_at=NOW)
    assert result.actions == (StopAll(), create)
    assert result.state.claims == ()


def test_written_needs_a_write_and_an_rv() -> None:
    with pytest.raises(ValueError, match="in flight"):
        written(member(), WriteResult(Outcome.OK, 1), NOW)
    with pytest.raises(ValueError, match="resource version"):
        written(member(inflight=SENT), WriteResult(Outcome.OK), NOW)


def test_drained_and_leave() -> None:
    state = member(active=LOW, draining=HIGH)
    assert drained(state, HIGH).draining == EMPTY
    assert drained(state, Q1).draining == HIGH
    assert leave(state).phase is Phase.LEAVING
    assert leave(ReplicaState(identity="a")).phase is Phase.LEAVING
    released = replace(state, phase=Phase.RELEASED)
    assert leave(released) is released


def test_timing_is_validated() -> None:
    ShardTiming(lease_duration=3, renew_deadline=2, retry_period=1)
    with pytest.raises(ValueError, match="retry_period < renew_deadline < lease_duration"):
        ShardTiming(lease_duration=10, renew_deadline=10)


def test_the_default_assignment_is_the_ring() -> None:
    members = frozenset({"a", "b", "c"})
    shares = [ring_share(members, m) for m in sorted(members)]
    assert shares[0] | shares[1] | shares[2] == FULL
    state = member()
    result = plan(state, view(own(state)), NOW)
    assert result.state.claims == ((FULL, None),)


def test_a_range_exit_is_a_value() -> None:
    exit_ = RangeExit("ns/a", {"metadata": {"name": "a", "namespace": "ns", "uid": "u"}})
    assert exit_ == RangeExit("ns/a", {"metadata": {"name": "a", "namespace": "ns", "uid": "u"}})
    with pytest.raises(AttributeError):
        exit_.key = "ns/b"  # type: ignore[misc]
