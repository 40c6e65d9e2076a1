"""A deterministic discrete-event simulator of sharded replicas running the membership protocol.

Everything runs on virtual time from one seeded random generator: the same scenario and seed
give the same run. The parts:

* **API server** (:class:`Server`): the group's Leases; every write gets the next global
  resource version; updates, releases, fences and deletes carry a precondition and fail with
  a conflict when it is stale, 404 when the lease is gone. A write reaches the server
  ``U(0, W/2)`` after it was issued and its answer comes back ``U(0, W/2)`` later; with
  probability ``lost_replies`` a successful write's answer is lost (reported as failed).
* **Lease caches**: each replica sees every lease event in resource-version order, each
  ``U(0, lag)`` after it happened (never before the previous one), ``lag <= max_lag``.
* **Replicas** run :func:`plan` on their own clock (offset, rate within ``1 +- clock_error``)
  after every cache event, write answer and drain report, and at the wake-up time it asks for.
  **Work**: objects (random hashes) need reconciling at random times; a replica that takes
  work for an object's hash reconciles it for ``U(0, max_reconcile)``; intervals are recorded.
* **Faults** (:class:`Op`): ``join``; ``leave`` (graceful); ``kill`` (stops at once, in-flight
  writes may still land); ``partition`` (its writes fail; with ``option`` its cache stops too;
  it keeps running until its renew deadline); ``stall`` (its cache stops, its writes work);
  ``delay`` (its writes take up to ``slow_write`` to land); ``pause`` (SIGSTOP: nothing of it
  runs, its clock goes on, its writes in flight land and their answers wait, like its cache
  events, reconcile ends and wake-ups); ``heal`` (ends all of those; with ``option`` its
  cache relists, else it resumes; a paused replica resumes with the worst order: its
  reconciles' own timers first, then the rest as it came); ``slow`` (its cache lags up to
  ``max_lag``, others ``max_lag / 4``); ``delete`` (someone deletes its lease). Lost replies
  happen only before the last operation.

**Writes.** A reconcile writes its side effect when it ends, through the fence: the pure
:func:`write_refusal` on the replica's state, view and local clock at that moment, and the
replica's stop-everything count (a reconcile that began before a ``StopAll`` never writes).

:meth:`Sim.run` checks after every event that no two running replicas serve a common hash and
that every running reconcile is inside its replica's served ranges (a paused replica, and a
resumed one until its first plan, are left out: they cannot act, and their writes are fenced);
at the end that no two reconcile intervals of one object on different replicas overlap (a
reconcile whose write the fence refused, or that a pause froze and that never wrote, had no
effect and is left out), and that from :meth:`Config.bound` after the last fault on, the
running members' active ranges are exactly their ring shares (every hash served by exactly one
live replica) with nothing draining or claimed.

It also measures, in real (simulated) seconds, each **hand-over**: from a ``kill``,
``partition`` or ``pause`` until the other replicas' active ranges cover what the victim
served (``Sim.hand_overs``), and the **moves on return**: ranges other replicas stop taking
within a lease duration after a paused or cut-off replica comes back (``Sim.returns``).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from aioinformer._replicas._handover import (
    Outcome,
    Resume,
    Start,
    StopAll,
    StopTaking,
    WriteKind,
    WriteLease,
    WriteResult,
)
from aioinformer._replicas._lease_view import LeaseView
from aioinformer._replicas._membership import (
    Assign,
    Phase,
    Plan,
    ReplicaState,
    drained,
    leave,
    plan,
    write_refusal,
    written,
)
from aioinformer._replicas._ring import ring
from aioinformer._sharding._ranges import EMPTY, FULL, HashRanges

from .sim_parts import Config, Interval, Op, OpKind, Server, Violation, fences

__all__ = ["Config", "Interval", "Op", "OpKind", "Planner", "Server", "Sim", "Violation"]


@dataclass(eq=False)
class Replica:
    name: str
    offset: float
    rate: float
    state: ReplicaState
    view: LeaseView = field(default_factory=LeaseView)
    running: bool = True
    cut_writes: bool = False
    cut_cache: bool = False
    delayed: bool = False
    lag: float = 0.25
    cursor: int = 0  # the next server log entry to schedule for delivery
    applied: int = 0  # log entries delivered (or covered by a list)
    generation: int = 0  # bumped when scheduled deliveries are dropped (cut, relist)
    delivered_at: float = 0.0
    taking: HashRanges = EMPTY
    reconciling: dict[int, Interval] = field(default_factory=dict)
    stopping: HashRanges = EMPTY  # stopped taking, not yet reported drained
    wake_token: int = 0
    paused: bool = False
    stale: bool = False  # resumed, its plan not run since
    deferred: list[tuple[bool, Callable[[], None]]] = field(default_factory=list)
    epoch: int = 0  # StopAll decisions (a reconcile begun before one never writes)

    def local(self, t: float) -> float:
        return self.offset + self.rate * t

    def real(self, local: float) -> float:
        return (local - self.offset) / self.rate + 1e-9


Planner = Callable[..., Plan]


class Sim:
    def __init__(self, config: Config, seed: int, *, planner: Planner = plan) -> None:
        """``planner`` replaces :func:`plan` (tests show that the checks catch broken rules)."""
        self.config = config
        self.plan = planner
        self.rng = random.Random(seed)
        self.now = 0.0
        self.queue: list[tuple[float, int, Callable[[], None]]] = []
        self.seq = 0
        self.server = Server(config.timing)
        self.replicas: dict[str, Replica] = {}
        self.intervals: list[Interval] = []
        self.objects = [self.rng.getrandbits(64) for _ in range(config.objects)]
        vnodes = config.vnodes
        self.assign: Assign = lambda members, me: ring(members, vnodes=vnodes).share(me)
        self.converged_at: float | None = None
        self.steps = 0
        self.checks = 0  # how many times the invariants were checked
        self.last_fault = 0.0  # lost replies are faults too: none after the last op
        self.bound = 0.0  # the convergence bound for the scenario (``Config.bound``)
        self.dirty = False  # some replica's ranges or work changed: check the invariants
        #: (op, seconds until the others' active ranges covered the victim's; None: never)
        self.hand_overs: list[tuple[Op, float | None]] = []
        self._pending: list[tuple[Op, HashRanges]] = []
        #: A return (heal of a paused or cut-off replica) for each range another replica
        #: stopped taking within a lease duration after it: moves it caused.
        self.returns: list[Op] = []
        self._windows: list[tuple[Op, str, float]] = []
        self.refused = 0  # writes the fence refused

    # ---- the event loop ----------------------------------------------------------------

    def at(self, t: float, fn: Callable[[], None]) -> None:
        self.seq += 1
        heapq.heappush(self.queue, (max(t, self.now), self.seq, fn))

    def at_r(self, r: Replica, t: float, fn: Callable[[], None], *, timer: bool = False) -> None:
        """``fn`` of replica ``r`` at ``t``; while ``r`` is paused it waits (``timer``: one of
        its reconciles' own timers, run first on resume)."""

        def call() -> None:
            if r.paused:
                r.deferred.append((timer, fn))
            else:
                fn()

        self.at(t, call)

    def run(self, ops: list[Op], *, extra: float = 20.0) -> None:
        for op in ops:
            self.at(op.at, partial(self.fault, op))
        last = max((op.at for op in ops), default=0.0)
        if any(op.kind == "delay" for op in ops):  # a delayed write may land that much later
            last += self.config.slow_write
        self.last_fault = last
        self.bound = self.config.bound(fences(ops))
        settle = last + self.bound
        for t in (last, settle):  # evaluate convergence at these instants even if all is quiet
            self.at(t, self.touch)
        self.at(self.rng.expovariate(1 / self.config.work_gap), self.work)
        while self.queue and self.queue[0][0] <= settle + extra:
            self.now, _, fn = heapq.heappop(self.queue)
            fn()
            self.steps += 1
            if not self.dirty:
                continue  # no replica's ranges or work changed
            self.dirty = False
            self.check_serving()
            self.check_hand_overs()
            if self.now >= last:
                converged = self.converged()
                if converged and self.converged_at is None:
                    self.converged_at = self.now
                elif not converged:
                    self.converged_at = None
                    if self.now >= settle:
                        raise Violation(f"not converged {self.now - last:.1f}s after the last op")
        self.hand_overs.extend((op, None) for op, _ in self._pending)
        self._pending = []
        if self.converged_at is None or self.converged_at > settle:
            raise Violation(f"not converged {settle - last:.1f}s after the last op")
        self.check_intervals()

    def touch(self) -> None:
        self.dirty = True

    # ---- faults --------------------------------------------------------------------------

    def fault(self, op: Op) -> None:
        self.dirty = True
        r = self.replicas.get(op.name)
        if op.kind == "join":
            assert r is None
            e = self.config.clock_error
            r = Replica(
                op.name,
                offset=self.rng.uniform(-1000, 1000),
                rate=self.rng.uniform(1 - e, 1 + e),
                state=ReplicaState(identity=op.name),
                lag=self.config.max_lag / 4,
            )
            self.replicas[op.name] = r
            self.relist(r)
            return
        assert r is not None and r.running
        if op.kind in ("kill", "partition", "pause"):
            self._pending.append((op, r.state.serving))
        if op.kind == "pause":
            if not r.paused:
                r.paused = True
                for interval in r.reconciling.values():
                    interval.paused = True
            return
        if op.kind == "leave":
            r.state = leave(r.state)
        elif op.kind == "kill":
            r.running = False
            self.stop_work(r)
            return
        elif op.kind in ("partition", "stall"):
            r.cut_writes |= op.kind == "partition"
            if (op.kind == "stall" or op.option) and not r.cut_cache:
                r.cut_cache = True
                r.generation += 1
                r.cursor = r.applied
        elif op.kind == "delay":
            r.delayed = True
        elif op.kind == "heal":
            was_cut, was_impaired = r.cut_cache, r.cut_writes or r.paused
            r.cut_writes = r.cut_cache = r.delayed = False
            if was_impaired:
                self._windows.append((op, r.name, self.now))
            if r.paused:
                self.resume(r)
            if op.option:
                self.relist(r)
                return
            if was_cut:
                self.deliver(r)
        elif op.kind == "slow":
            r.lag = self.config.max_lag
        elif op.kind == "delete" and op.name in self.server.leases:
            self.server.apply(
                WriteLease(
                    kind=WriteKind.DELETE,
                    name=op.name,
                    expected_rv=self.server.leases[op.name].rv,
                    issued_at=0,
                )
            )
            self.fan_out()
        self.poke(r)

    def resume(self, r: Replica) -> None:
        """SIGCONT: the reconciles' own timers first (the worst order), then the rest."""
        r.paused, r.stale = False, True
        deferred, r.deferred = r.deferred, []
        for _, fn in sorted(deferred, key=lambda item: not item[0]):  # stable: timers first
            fn()

    # ---- lease caches ---------------------------------------------------------------------

    def relist(self, r: Replica) -> None:
        r.view = LeaseView.listed(
            self.server.leases.values(),
            rv=self.server.rv,
            now=r.local(self.now),
            previous=r.view if r.view.rv else None,
        )
        r.cursor = r.applied = len(self.server.log)
        r.generation += 1
        r.delivered_at = self.now
        self.poke(r)

    def fan_out(self) -> None:
        for r in self.replicas.values():
            self.deliver(r)

    def deliver(self, r: Replica) -> None:
        """Schedule the delivery of the next log entries (in order, each after a lag)."""
        while r.running and not r.cut_cache and r.cursor < len(self.server.log):
            index = r.cursor
            r.cursor += 1
            r.delivered_at = max(r.delivered_at, self.now + self.rng.uniform(0, r.lag))
            gen = r.generation
            self.at_r(r, r.delivered_at, partial(self.receive, r, index, gen))

    def receive(self, r: Replica, index: int, generation: int) -> None:
        if not r.running or generation != r.generation:
            return
        assert index == r.applied
        r.applied += 1
        kind, record = self.server.log[index]
        r.view = r.view.applied(kind, record, now=r.local(self.now))
        self.poke(r)

    # ---- replicas ---------------------------------------------------------------------------

    def poke(self, r: Replica) -> None:
        if not r.running:
            return
        if r.paused:
            r.deferred.append((False, partial(self.poke, r)))
            return
        r.stale = False
        result = self.plan(r.state, r.view, r.local(self.now), timing=self.config.timing,
                      assign=self.assign)  # fmt: skip
        r.state = result.state
        self.dirty = True
        for action in result.actions:
            if isinstance(action, Start | Resume):
                r.taking |= action.ranges
                r.stopping -= action.ranges
            elif isinstance(action, StopTaking):
                r.taking -= action.ranges
                r.stopping |= action.ranges
                self.report_drained(r)
                self.count_move(r)
            elif isinstance(action, StopAll):
                self.stop_work(r)
            else:
                self.send(r, action)
        r.wake_token += 1
        if result.wake_at is not None:
            token = r.wake_token
            self.at_r(
                r, r.real(result.wake_at), lambda: self.poke(r) if r.wake_token == token else None
            )

    def send(self, r: Replica, w: WriteLease) -> None:
        half = self.config.max_write / 2
        travel = self.config.slow_write if r.delayed else half

        def arrive() -> None:
            if r.cut_writes:
                answer = WriteResult(Outcome.FAILED)
            else:
                answer = self.server.apply(w)
                self.fan_out()
                lose = self.now < self.last_fault and self.rng.random() < self.config.lost_replies
                if answer.outcome is Outcome.OK and lose:
                    answer = WriteResult(Outcome.FAILED)
            self.at_r(r, self.now + self.rng.uniform(0, half), lambda: reply(answer))

        def reply(answer: WriteResult) -> None:
            if r.running:
                r.state = written(r.state, answer, r.local(self.now))
                self.poke(r)

        self.at(self.now + self.rng.uniform(0, travel), arrive)  # on the wire: lands anyway

    def idle(self, r: Replica, ranges: HashRanges) -> HashRanges:
        """The ranges (whole pieces) of ``ranges`` where no reconcile of ``r`` runs."""
        busy = [self.objects[o] for o in r.reconciling]
        return HashRanges(
            (start, end) for start, end in ranges if not any(start <= h < end for h in busy)
        )

    def report_drained(self, r: Replica) -> None:
        finished = self.idle(r, r.stopping)
        if finished:
            r.stopping -= finished
            self.at_r(r, self.now, partial(self.drain_reported, r, finished))

    def drain_reported(self, r: Replica, ranges: HashRanges) -> None:
        """The work layer reports drained ranges (checked again: work may have restarted)."""
        if r.running:
            finished = self.idle(r, ranges)
            r.stopping |= ranges - finished
            r.state = drained(r.state, finished)
            self.poke(r)

    def stop_work(self, r: Replica) -> None:
        r.epoch += 1
        for interval in r.reconciling.values():
            interval.end = self.now
        r.reconciling.clear()
        r.stopping = EMPTY
        r.taking = EMPTY

    # ---- work -----------------------------------------------------------------------------

    def work(self) -> None:
        obj = self.rng.randrange(len(self.objects))
        h = self.objects[obj]
        for r in self.replicas.values():
            if r.running and not r.paused and h in r.taking and obj not in r.reconciling:
                self.dirty = True
                interval = Interval(r.name, obj, self.now, epoch=r.epoch)
                r.reconciling[obj] = interval
                self.intervals.append(interval)
                duration = self.rng.uniform(0, self.config.max_reconcile)
                self.at_r(r, self.now + duration, partial(self.finish, r, interval), timer=True)
        self.at(self.now + self.rng.expovariate(1 / self.config.work_gap), self.work)

    def finish(self, r: Replica, interval: Interval) -> None:
        if r.reconciling.get(interval.obj) is not interval:
            return  # abandoned by StopAll or a kill
        interval.end = self.now
        del r.reconciling[interval.obj]
        reason = write_refusal(
            r.state, r.view, r.local(self.now), timing=self.config.timing,
            hash_value=self.objects[interval.obj],
        )  # fmt: skip
        if reason is None and interval.epoch == r.epoch:
            interval.wrote = True
        else:
            interval.refused = True
            self.refused += 1
        self.report_drained(r)

    # ---- invariants -----------------------------------------------------------------------

    def check_serving(self) -> None:
        """No hash served by two running replicas; work only where the replica may work."""
        self.checks += 1
        pieces: list[tuple[int, int, str]] = []
        for r in self.replicas.values():
            if not r.running or r.paused or r.stale:
                continue
            serving = r.state.serving
            pieces.extend((start, end, r.name) for start, end in serving)
            if not r.taking.issubset(r.state.active):
                raise Violation(f"t={self.now:.3f}: {r.name} takes work beyond its active ranges")
            for obj in r.reconciling:
                if self.objects[obj] not in serving:
                    raise Violation(f"t={self.now:.3f}: {r.name} reconciles outside its ranges")
        pieces.sort()
        reach, holder = 0, ""
        for start, end, name in pieces:
            if start < reach:
                raise Violation(f"t={self.now:.3f}: {holder} and {name} both serve {start:#x}")
            if end > reach:
                reach, holder = end, name

    def check_intervals(self) -> None:
        """No two reconciles of one object on different replicas overlap in time (of those
        that had an effect: not refused, and not frozen by a pause without writing)."""
        by_object: dict[int, list[Interval]] = {}
        for interval in self.intervals:
            if interval.refused or (interval.paused and not interval.wrote):
                continue
            by_object.setdefault(interval.obj, []).append(interval)
        for obj, intervals in by_object.items():
            intervals.sort(key=lambda iv: iv.start)
            for i, a in enumerate(intervals):
                a_end = self.now if a.end is None else a.end
                for b in intervals[i + 1 :]:
                    if b.start >= a_end:
                        break
                    if b.replica != a.replica:
                        raise Violation(f"object {obj}: {a} and {b} overlap")

    def check_hand_overs(self) -> None:
        """Hand-overs done: the others' active ranges cover what the victim served."""
        if not self._pending:
            return
        waiting = []
        for op, share in self._pending:
            covered = EMPTY
            for r in self.replicas.values():
                if r.name != op.name and r.running and not r.paused:
                    covered |= r.state.active
            if share.issubset(covered):
                self.hand_overs.append((op, self.now - op.at))
            else:
                waiting.append((op, share))
        self._pending = waiting

    def count_move(self, r: Replica) -> None:
        """``r`` stopped taking a range: a move if a replica came back less than a lease
        duration (of the fastest clock: the returner rejoins one lease duration of its own
        clock after it learned it was fenced) ago (``Sim.returns``)."""
        duration = self.config.timing.lease_duration * (1 - self.config.clock_error)
        for op, name, at in self._windows:
            if name != r.name and at <= self.now < at + duration:
                self.returns.append(op)

    def live(self) -> list[Replica]:
        return [
            r
            for r in self.replicas.values()
            if r.running
            and not (r.cut_writes or r.cut_cache or r.delayed or r.paused)
            and r.state.phase is Phase.MEMBER
            and r.state.ready
        ]

    def converged(self) -> bool:
        live = self.live()
        shares = ring([r.name for r in live], vnodes=self.config.vnodes)
        covered = EMPTY
        for r in live:
            s = r.state
            if s.active != shares.share(r.name) or s.draining or s.claims:
                return False
            covered |= s.active
        return covered == FULL or not live
