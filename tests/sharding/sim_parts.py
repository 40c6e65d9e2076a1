"""The simulator's world: operations, configuration and the bound, the API server.

See :mod:`tests.sharding.sim`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from aioinformer._replicas._handover import Outcome, ShardTiming, WriteKind, WriteLease, WriteResult
from aioinformer._replicas._lease_view import EventType, LeaseRecord
from aioinformer._sharding._ranges import EMPTY

OpKind = Literal[
    "join", "leave", "kill", "partition", "stall", "delay", "heal", "slow", "delete", "pause"
]


@dataclass(frozen=True)
class Op:
    at: float
    kind: OpKind
    name: str
    option: bool = False


@dataclass(frozen=True, kw_only=True)
class Config:
    timing: ShardTiming = field(default_factory=ShardTiming)
    vnodes: int = 8
    max_lag: float = 1.0  # L
    max_write: float = 0.4  # W: a write's round trip
    max_reconcile: float = 3.0  # D
    clock_error: float = 0.05
    work_gap: float = 0.25  # mean time between two objects needing work
    objects: int = 48
    lost_replies: float = 0.05
    slow_write: float = 15.0  # how long a delayed replica's writes may take to land

    def bound(self, fences: int = 1) -> float:
        """How long after the last fault every hash has one live owner, its ring owner.

        Real time; ``L`` = ``max_lag``, ``W`` = ``max_write`` (a write's round trip), ``D`` =
        ``max_reconcile``, ``P`` = retry period, ``x = 1 / (1 - clock_error)`` turns local
        durations into real ones. Three parts:

        * Members settle, the slowest of: a dead member's last write is seen (``L``), looks
          expired (``x LD``), is fenced (``3W``: an own write may be in flight and a renewal
          due first; ``2W`` more for each further lease to fence, one write at a time); a
          healed (or resumed) member writes again (``P``), learns from the 409 that it was
          fenced, takes its lease back (``2W``), is seen (``L``) and is ready again a lease
          duration later (``x LD``: it rejoins); a leaver drains (``D``), releases (``2W``), is
          seen (``L``). Fresh tombstones and the horizon after a list end within the first.
        * One hand-over: the old server drains (``D``) and releases (``2W``), the owner sees it
          (``L``), claims (``2W``), its cache catches up (``L``) and it starts.
        * One withdrawn claim (two replicas that saw different members, or a relisted cache that
          cannot tell the older claim): published (``2W``), seen (``L``), claimed again (``2W``),
          caught up (``L``), plus ``L`` for the other side to see it.

        With the defaults (15/10/2, L = 1, W = 0.4, D = 3, 5% clock error): 31.5 s.
        """
        t, lag, w, d = self.timing, self.max_lag, self.max_write, self.max_reconcile
        x = 1 / (1 - self.clock_error)
        settle = max(
            lag + x * t.lease_duration + 3 * w + 2 * w * max(fences - 1, 0),
            t.retry_period + 2 * w + lag + x * t.lease_duration,
            d + 2 * w + lag,
        )
        return settle + (d + 4 * w + 2 * lag) + (4 * w + 3 * lag)


@dataclass
class Interval:
    """One reconcile: it writes its side effect when it finishes, if the fence lets it."""

    replica: str
    obj: int
    start: float
    end: float | None = None
    epoch: int = 0  # the replica's stop-everything count when it began
    paused: bool = False  # its replica was paused while it ran
    wrote: bool = False  # it finished and its write passed the fence
    refused: bool = False  # it finished and the fence refused its write


class Server:
    def __init__(self, timing: ShardTiming) -> None:
        self.rv = 0
        self.leases: dict[str, LeaseRecord] = {}
        self.log: list[tuple[EventType, LeaseRecord]] = []
        self.duration = timing.lease_duration

    def apply(self, w: WriteLease) -> WriteResult:
        current = self.leases.get(w.name)
        if w.kind is WriteKind.CREATE:
            if current is not None:
                return WriteResult(Outcome.CONFLICT, current=current)
        elif current is None:
            return WriteResult(Outcome.NOT_FOUND)
        elif current.rv != w.expected_rv:
            return WriteResult(Outcome.CONFLICT, current=current)  # as read after the 409
        self.rv += 1
        if w.kind is WriteKind.DELETE:
            assert current is not None
            del self.leases[w.name]
            self.log.append(("DELETED", replace(current, rv=self.rv)))
            return WriteResult(Outcome.OK, self.rv)
        held = w.kind in (WriteKind.CREATE, WriteKind.UPDATE)
        record = LeaseRecord(
            name=w.name,
            rv=self.rv,
            holder=w.name if held else "",
            serving=w.serving if held else EMPTY,
            ready=held and w.ready,
            lease_duration=self.duration,
        )
        self.leases[w.name] = record
        self.log.append(("ADDED" if current is None else "MODIFIED", record))
        return WriteResult(Outcome.OK, self.rv)


class Violation(AssertionError):
    pass


def fences(ops: list[Op]) -> int:
    """How many leases may need fencing after the last operation: killed or cut off."""
    dead: set[str] = set()
    for op in ops:
        if op.kind in ("kill", "partition", "pause"):
            dead.add(op.name)
        elif op.kind == "heal" and op.name in dead:
            dead.discard(op.name)
    return max(len(dead), 1)
