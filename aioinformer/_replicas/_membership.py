"""Dynamic sharding across replicas: the hand-over protocol as a pure state machine.

Each replica of a group holds its own Lease (name = holder = its identity, labelled with the
group) and publishes on it the hash ranges it **serves** (``_lease_view.SERVING_ANNOTATION``).
Every replica watches all the group's Leases (a :class:`~._lease_view.LeaseView`, possibly
stale) and computes the same assignment from the members it sees: a consistent-hash ring
(``_ring``). Nothing here does I/O or reads a clock: the driver calls :func:`plan` after every
change of the view, after every :func:`written` and :func:`drained`, and at ``Plan.wake_at``,
and carries out the actions (``_handover``).

**States of a range** on one replica (disjoint sets of :class:`ReplicaState`):

* *claimed* (``claims``): published, not started. A claim is *confirmed* at the resource
  version ``rv`` of the first successful write of the lease that contained it.
* *active*: taking new work (after :class:`Start` or :class:`Resume`).
* *draining*: no new work, running reconciles finish (after :class:`StopTaking`); released
  (left out of the next write) once :func:`drained` reports it.
  The replica **serves** active + draining: only those may be reconciled.

**Phases** (:class:`Phase`): ``JOINING`` (creating or adopting the lease; serves nothing) →
``MEMBER`` → (``leave()``) ``LEAVING`` (stops taking work everywhere, drains, publishes the
shrinking set) → ``RELEASED`` (lease released: holder ``""``) → ``LEFT`` (lease deleted).
A lease write answered 404 sends a member back to ``JOINING``. A member becomes *ready* (and
says so on its lease) once its view has watched for a lease duration since its first list;
only ready members are in anyone's ring, so a joiner's share is handed to it when it can take
it at once. A member whose lease was taken over (fenced) while it was paused or cut off
*rejoins*: it takes its lease back not ready, and is ready again only after watching for
another lease duration. So the ranges the others took over while it was away stay where they
are while its view catches up (no second move right after the hand-over); then it is a new
member like any joiner.

**Rules**, in the order :func:`plan` applies them:

1. *Stop everything* (:class:`StopAll`; all published ranges become unconfirmed claims) when
   no lease write succeeded for ``renew_deadline`` since the issue of the last one that did,
   when the own lease turns out to be held by someone else (the view shows it, or the read
   after a 409 does: it was fenced), or on 404; a fenced replica rejoins (not ready for a
   lease duration). The same deadline fences every write of a reconcile at
   the write itself (:func:`write_refusal`), whatever runs first after a pause.
2. *Lose*: active ranges outside the ring share → :class:`StopTaking` (draining); draining
   ranges inside it again → :class:`Resume`; claims outside it are dropped.
3. *Check*: a confirmed claim (rv ``v``) is checked once the view's rv ≥ ``v`` and the
   *horizon* has passed (one lease duration after the view's last list: a lease deleted
   before a list leaves no trace, and its holder may serve until its renew deadline): the
   part that another counting lease (held, or a tombstone younger than a lease duration) has
   served since a version < ``v`` (or since before this replica watched) is withdrawn; the
   rest starts (:class:`Start`).
4. *Gain* (after the horizon): the part of the share that is neither served, claimed nor
   served by any counting lease in the view is claimed: added to the next write.
5. *Write* (one at a time): the own lease whenever the published set would change, and at
   least every ``retry_period`` (renewal; also the wait after a failed write). Otherwise a
   ready member that holds its lease and whose view has caught up with its last write
   *fences* one lease that looks expired and serves something: a conditional write (its
   observed rv) that clears its holder and ranges (losing that race to another fencer is not
   a failure: no wait follows). ``LEAVING`` ends with release and delete.

**Safety: no hash is ever served by two replicas at once.** Assumptions: the API server
orders all writes of the group's Leases by resource version, and a conditional write
succeeds only if the record is unchanged (etcd); a view at rv ``c`` holds exactly the state
after all writes ≤ ``c``; identities are unique among running processes; clock rates err by
at most ``e`` with ``renew_deadline (1+e) < lease_duration (1-e)``; :class:`StopAll` takes
effect at once, and writes are fenced by the same deadline at the write
(:func:`write_refusal`), so a process that is paused or cut off never writes past it.
Nothing is assumed about how stale a view is or how long a write takes.

* Invariant A: a replica serves ``h`` only if ``h`` is in every write of its lease since its
  claim was confirmed: it stops serving ``h`` before it issues the write that leaves it out,
  and it confirms a claim only with a write that carried it.
* Invariant B: a replica starts ``h`` only after a check with the view at ``c`` ≥ ``v`` (the
  claim's rv) found no counting lease serving ``h`` since before ``v``.
* Take two serving periods of ``h`` by R (claim rv ``v``) and Q (``w``), ``v < w``. Q's check
  at ``c ≥ w > v`` saw R's lease as of ``c``. (a) It still served ``h`` since ≤ ``v`` < ``w``
  (the view tracks since when, or says 0): conflict, Q withdraws. (b) It no longer served
  ``h``: R released it after it stopped (A), before Q started. (c) It was fenced at ``f`` in
  ``(v, c]``: the fencer saw R's last record unchanged for ``lease_duration`` of its time
  since it first saw it, after it was written; R stops at the issue of that last successful
  write + ``renew_deadline`` of its time: earlier, by the clock assumption. R's later writes
  conflict; when it learns of the fence it has stopped, and it claims again with rv > ``f``.
  (d) It was deleted (by R after releasing, or by anyone): R stopped within
  ``renew_deadline`` of the issue of its last successful write, which came before the
  deletion; Q saw the deletion (tombstone) or listed after it (horizon) and waited a lease
  duration from then; R's later writes fail (404), and it comes back only as a new lease.
  So the later claimant never starts while the earlier still publishes ``h``; since
  ``v ≠ w``, one of the two is later.
* After a stop, claims are unconfirmed: an old rv could predate a fence of the own lease.
* Expiry alone never frees a range, only a fence does. Without fences (ranges of a lease
  that looks expired taken as free) the argument would also need every view to lag less than
  ``lease_duration - renew_deadline`` when it decides: a stale view can make a live lease
  look expired; the fence is conditional on the record being unchanged at the server.

**Liveness: within a bounded time after the last change every hash is served by exactly one
live member, its ring owner.** With views lagging at most ``L``, lease writes taking at most
``W`` (round trip), reconciles at most ``D``, ``x = 1/(1-e)``: the members settle within
``max(L + x·lease_duration + 3W, retry_period + 2W + L, D + 2W + L)`` (a dead member looks
expired and is fenced, a joiner or a relisted view passes its horizon; a healed member takes
its lease back; a leaver drains and releases; ``2W`` more per further lease to fence), then
one hand-over takes ``D + 4W + 2L`` (drain, release, seen, claim, caught up) and a claim
withdrawn while two replicas disagreed on the members one more round, ``4W + 3L``. With
client-go's timing, ``L`` = 1 s, ``W`` = 0.4 s, ``D`` = 3 s, 5% clock error: 29.2 s
(``tests/sharding/sim.py``, ``Config.bound``, asserts it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum

from .._election._lease import deadline_refusal
from .._sharding._ranges import EMPTY, HashRanges
from ._handover import (
    Action,
    Outcome,
    Resume,
    ShardTiming,
    Start,
    StopAll,
    StopTaking,
    WriteKind,
    WriteLease,
    WriteResult,
)
from ._lease_view import LeaseView
from ._ring import DEFAULT_VNODES, ring

__all__ = [
    "Assign",
    "Phase",
    "Plan",
    "ReplicaState",
    "drained",
    "leave",
    "plan",
    "ring_share",
    "write_refusal",
    "written",
]

#: Claimed parts, each with the rv that confirmed it (None: not yet in a successful write).
Claims = tuple[tuple[HashRanges, int | None], ...]
#: An assignment: the share of ``member`` (second argument) among ``members`` (first).
Assign = Callable[[frozenset[str], str], HashRanges]


class Phase(Enum):
    """Where a replica is in its life in the group."""

    JOINING = "joining"
    """Creating (or adopting) its lease; serves and claims nothing."""
    MEMBER = "member"
    """Holds its lease; claims, serves and releases its share of the ring."""
    LEAVING = "leaving"
    """Left the ring: takes no new work, drains, publishes what it still serves."""
    RELEASED = "released"
    """Serves nothing; its lease is released (holder ``""``); deleting it."""
    LEFT = "left"
    """Done; its lease is deleted (or gone)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaState:
    """One replica's protocol state. Start with ``ReplicaState(identity=...)``.

    :ivar published: the serving set of the last successful write of the own lease.
    :ivar lease_rv: the precondition for the next own-lease write (None: take it from the view).
    :ivar renewed_at: local issue time of the last successful own-lease write (None: lost).
    :ivar attempt_at: local issue time of the last write; ``failed``: whether it failed.
    :ivar fenced: fences tried, as (lease name, rv): each record is fenced at most once.
    :ivar lost: the own lease was taken over or deleted: stop everything at the next plan.
    :ivar ready: the view has watched for a lease duration since its first list (and since
        ``watched_from``): the replica takes a share (``published_ready``: as last written on
        the lease).
    :ivar watched_from: when the replica last found its lease taken over: it is ready again a
        lease duration after (it rejoins as a new member).
    """

    identity: str
    phase: Phase = Phase.JOINING
    active: HashRanges = EMPTY
    draining: HashRanges = EMPTY
    claims: Claims = ()
    published: HashRanges = EMPTY
    lease_rv: int | None = None
    renewed_at: float | None = None
    attempt_at: float | None = None
    failed: bool = False
    inflight: WriteLease | None = None
    fenced: frozenset[tuple[str, int]] = frozenset()
    lost: bool = False
    ready: bool = False
    published_ready: bool = False
    watched_from: float = float("-inf")

    @property
    def claimed(self) -> HashRanges:
        """Claimed, not started."""
        out = EMPTY
        for part, _ in self.claims:
            out |= part
        return out

    @property
    def serving(self) -> HashRanges:
        """What this replica may reconcile: active and draining."""
        return self.active | self.draining

    @property
    def publishing(self) -> HashRanges:
        """What the next write of the lease publishes: served and claimed."""
        return self.active | self.draining | self.claimed


@dataclass(frozen=True, slots=True)
class Plan:
    """The new state, the actions to carry out in order, and when to call :func:`plan` again
    at the latest (local time; None: only on the next change)."""

    state: ReplicaState
    actions: tuple[Action, ...]
    wake_at: float | None


def _stop_all(
    s: ReplicaState, actions: list[Action], *, rejoin_at: float | None = None
) -> ReplicaState:
    """Stop everything; with ``rejoin_at`` (the lease was taken over) also drop readiness."""
    if s.serving:
        actions.append(StopAll())
    everything = s.publishing | s.published
    keep = s.phase is Phase.MEMBER and everything
    s = replace(
        s,
        active=EMPTY,
        draining=EMPTY,
        claims=((everything, None),) if keep else (),
        renewed_at=None,
        lost=False,
    )
    if rejoin_at is not None:
        s = replace(s, ready=False, watched_from=rejoin_at)
    return s


def _restrict(claims: Claims, allowed: HashRanges) -> Claims:
    return tuple((part & allowed, rv) for part, rv in claims if part & allowed)


def _confirm(claims: Claims, written_serving: HashRanges, rv: int) -> Claims:
    out: list[tuple[HashRanges, int | None]] = []
    for part, claim_rv in claims:
        if claim_rv is not None:
            out.append((part, claim_rv))
            continue
        if part & written_serving:
            out.append((part & written_serving, rv))
        if part - written_serving:
            out.append((part - written_serving, None))
    return tuple(out)


def ring_share(members: frozenset[str], member: str) -> HashRanges:
    """The default assignment: ``member``'s share of the ring of ``members`` (64 vnodes)."""
    return ring(members, vnodes=DEFAULT_VNODES).share(member)


def plan(
    state: ReplicaState,
    view: LeaseView,
    now: float,
    *,
    timing: ShardTiming = ShardTiming(),  # noqa: B008 (immutable)
    assign: Assign = ring_share,
) -> Plan:
    """Apply the rules (module docstring) to the state, given the view at local time ``now``.

    ``assign(members, me)`` is the assignment (every replica of a group must use the same).
    """
    s, me, duration = state, state.identity, timing.lease_duration
    actions: list[Action] = []
    own = view.leases.get(me)
    if own is not None and own.deleted:
        own = None
    gone = s.lease_rv is None and s.inflight is None and own is None
    if s.phase in (Phase.LEAVING, Phase.RELEASED) and gone:
        s = replace(s, phase=Phase.LEFT)  # no lease to release or delete
    elif s.phase is Phase.MEMBER and gone:
        s = replace(s, phase=Phase.JOINING, lost=True)  # 409 unread and the lease not in view
    if s.lost or (s.phase in (Phase.JOINING, Phase.RELEASED, Phase.LEFT) and s.publishing):
        s = _stop_all(s, actions)
    if s.phase is Phase.LEFT:
        return Plan(s, tuple(actions), None)

    # 1. the own lease taken over, or written by a write whose answer was lost; the deadline
    if own is not None and (s.lease_rv is None or own.record.rv > s.lease_rv):
        if own.record.holder != me and s.phase in (Phase.MEMBER, Phase.LEAVING):
            s = _stop_all(s, actions, rejoin_at=now)
        s = replace(s, lease_rv=own.record.rv)
    if s.renewed_at is not None and now >= s.renewed_at + timing.renew_deadline:
        s = _stop_all(s, actions)
    horizon = now < view.listed_at + duration  # a lease deleted before the list may be served
    if s.phase is Phase.MEMBER and not s.ready and now >= _ready_at(s, view, duration):
        s = replace(s, ready=True)

    # 2. lose what the ring no longer gives this replica
    desired = EMPTY
    if s.phase is Phase.MEMBER and s.ready:
        desired = assign(view.members(now, duration) | {me}, me)
    losing, regained = s.active - desired, s.draining & desired
    if losing:
        actions.append(StopTaking(losing))
    if regained:
        actions.append(Resume(regained))
    s = replace(
        s,
        active=(s.active - losing) | regained,
        draining=(s.draining - regained) | losing,
        claims=_restrict(s.claims, desired),
    )

    # 3. check the claims the view has caught up with (after the horizon)
    kept: list[tuple[HashRanges, int | None]] = []
    starting = EMPTY
    for part, rv in s.claims:
        if rv is None or view.rv < rv or horizon:
            kept.append((part, rv))
            continue
        free = part - view.conflicts(me, part, rv, now, duration)
        starting |= free
    if starting:
        actions.append(Start(starting))
    s = replace(s, active=s.active | starting, claims=tuple(kept))

    # 4. claim what nobody serves (after the horizon)
    if s.phase is Phase.MEMBER and not horizon:
        free = desired - s.publishing - view.served_by_others(me, now, duration)
        if free:
            s = replace(s, claims=(*s.claims, (free, None)))

    # 5. write
    if s.fenced:  # forget fences of records that changed since
        current = {(name, o.record.rv) for name, o in view.leases.items() if not o.deleted}
        s = replace(s, fenced=s.fenced & current)
    write = _next_write(s, view, now, timing)
    if write is not None:
        actions.append(write)
        fenced = s.fenced
        if write.kind is WriteKind.FENCE:
            assert write.expected_rv is not None
            fenced = fenced | {(write.name, write.expected_rv)}
        s = replace(s, inflight=write, attempt_at=now, fenced=fenced)
    return Plan(s, tuple(actions), _wake_at(s, view, now, timing))


def _ready_at(s: ReplicaState, view: LeaseView, duration: float) -> float:
    """When a member that is not ready becomes ready: a lease duration after its view's last
    list and after it last found its lease taken over."""
    return max(view.listed_at, s.watched_from) + duration


def _next_write(
    s: ReplicaState, view: LeaseView, now: float, timing: ShardTiming
) -> WriteLease | None:
    if s.inflight is not None:
        return None
    if s.failed and s.attempt_at is not None and now < s.attempt_at + timing.retry_period:
        return None
    me, ready = s.identity, s.ready
    if s.phase is Phase.JOINING:
        if s.lease_rv is None:
            return WriteLease(kind=WriteKind.CREATE, name=me, ready=ready, issued_at=now)
        return WriteLease(
            kind=WriteKind.UPDATE, name=me, ready=ready, expected_rv=s.lease_rv, issued_at=now
        )
    if s.lease_rv is None:
        return None  # after a conflict: wait until the view shows the own lease
    serving = s.publishing
    if s.phase is Phase.RELEASED:
        return WriteLease(kind=WriteKind.DELETE, name=me, expected_rv=s.lease_rv, issued_at=now)
    if s.phase is Phase.LEAVING and not serving:
        return WriteLease(kind=WriteKind.RELEASE, name=me, expected_rv=s.lease_rv, issued_at=now)
    renew_due = s.attempt_at is None or now >= s.attempt_at + timing.retry_period
    changed = serving != s.published or ready != s.published_ready
    if changed or s.renewed_at is None or renew_due:
        return WriteLease(
            kind=WriteKind.UPDATE,
            name=me,
            serving=serving,
            ready=ready,
            expected_rv=s.lease_rv,
            issued_at=now,
        )
    caught_up = s.lease_rv is not None and view.rv >= s.lease_rv
    if s.phase is Phase.MEMBER and s.ready and s.renewed_at is not None and caught_up:
        # Only on a view that has seen the own last write: after a pause the view's records
        # may all look expired until the events of the pause are applied.
        for record in view.fence_candidates(me, now, timing.lease_duration):
            if (record.name, record.rv) not in s.fenced:
                return WriteLease(
                    kind=WriteKind.FENCE, name=record.name, expected_rv=record.rv, issued_at=now
                )
    return None


def _wake_at(s: ReplicaState, view: LeaseView, now: float, timing: ShardTiming) -> float | None:
    times: list[float] = []
    if s.inflight is None and s.attempt_at is not None and s.phase is not Phase.LEFT:
        times.append(s.attempt_at + timing.retry_period)
    if s.renewed_at is not None:
        times.append(s.renewed_at + timing.renew_deadline)
    expiry = view.next_expiry(now, timing.lease_duration)
    if expiry is not None:
        times.append(expiry)
    times.append(view.listed_at + timing.lease_duration)  # the horizon
    if s.phase is Phase.MEMBER and not s.ready:
        times.append(_ready_at(s, view, timing.lease_duration))
    return min((t for t in times if t > now), default=None)


def written(state: ReplicaState, result: WriteResult, now: float) -> ReplicaState:
    """Take the result of the write in flight into account (then call :func:`plan`)."""
    write = state.inflight
    if write is None:
        raise ValueError("no lease write is in flight")
    s = replace(state, inflight=None, failed=result.outcome is not Outcome.OK)
    if write.kind is WriteKind.FENCE:
        if result.outcome is Outcome.FAILED:  # may not have happened: may be tried again
            assert write.expected_rv is not None
            return replace(s, fenced=s.fenced - {(write.name, write.expected_rv)})
        # Done, or the record changed (another fencer won, its holder renewed, it is gone):
        # the view will tell. Not a failure of this replica's: its next write goes at once.
        return replace(s, failed=False)
    if result.outcome is Outcome.OK:
        if result.rv is None:
            raise ValueError("a successful write needs the resource version it produced")
        if write.kind is WriteKind.DELETE:
            return replace(s, phase=Phase.LEFT, lease_rv=None)
        if write.kind is WriteKind.RELEASE:
            return replace(s, phase=Phase.RELEASED, lease_rv=result.rv, published=EMPTY)
        return replace(
            s,
            phase=Phase.MEMBER if s.phase is Phase.JOINING else s.phase,
            lease_rv=result.rv,
            renewed_at=write.issued_at,
            published=write.serving,
            published_ready=write.ready,
            claims=_confirm(s.claims, write.serving, result.rv),
        )
    if result.outcome is Outcome.NOT_FOUND:
        gone = s.phase in (Phase.LEAVING, Phase.RELEASED)
        phase = Phase.LEFT if gone else Phase.JOINING
        return replace(s, phase=phase, lease_rv=None, failed=False, lost=True)
    if result.outcome is Outcome.CONFLICT:
        current = result.current
        if current is None or current.name != s.identity:
            return replace(s, lease_rv=None)
        if current.holder == s.identity or s.phase is Phase.JOINING:
            return replace(s, lease_rv=current.rv, failed=False)  # retry at once
        if s.phase is Phase.RELEASED:
            return replace(s, lease_rv=current.rv, failed=False)
        # Taken over (fenced): stop, take it back, and rejoin (not ready for a while).
        return replace(
            s, lease_rv=current.rv, failed=False, lost=True, ready=False, watched_from=now
        )
    return s  # FAILED: may have been written; a stale precondition will tell


def write_refusal(
    state: ReplicaState,
    view: LeaseView,
    now: float,
    *,
    timing: ShardTiming,
    hash_value: int | None = None,
) -> str | None:
    """Why a write on behalf of this replica (by a reconcile of an object whose hash is
    ``hash_value``, when given) is not safe at local time ``now``, or None when it is.

    The replica must be a member (or leaving: draining reconciles finish), must not have lost
    its lease (as far as its state and view tell), must be within its renew deadline: less than
    ``renew_deadline`` since the issue of its last successful lease write (the rule that stops
    everything, read from the clock at the write, so a paused or cut-off replica finds it passed
    before anything else of it runs), and must still serve ``hash_value``.
    """
    if state.phase not in (Phase.MEMBER, Phase.LEAVING):
        return f"it is not a member of its group (it is {state.phase.value})"
    own = view.leases.get(state.identity)
    if state.lost or (own is not None and own.deleted):
        return "its lease was taken over or deleted"
    newer = own is not None and (state.lease_rv is None or own.record.rv > state.lease_rv)
    if newer and own is not None and own.record.holder != state.identity:
        return "its lease was taken over"
    reason = deadline_refusal(state.renewed_at, deadline=timing.renew_deadline, now=now)
    if reason is not None:
        return reason
    if hash_value is not None and hash_value not in state.serving:
        return "its hash range is not this replica's any more"
    return None


def drained(state: ReplicaState, ranges: HashRanges) -> ReplicaState:
    """No reconcile runs any more on ``ranges`` (which were stopping): release them.

    Report only ranges on which no reconcile runs at all, whichever :class:`StopTaking` they
    came from (a range may be resumed and stopped again while an older reconcile still runs).
    """
    return replace(state, draining=state.draining - ranges)


def leave(state: ReplicaState) -> ReplicaState:
    """Leave the group gracefully: drain everything, release and delete the lease."""
    if state.phase in (Phase.JOINING, Phase.MEMBER):
        return replace(state, phase=Phase.LEAVING)
    return state
