"""Values of the membership protocol (``_membership``): timing, actions, write results, exits.

A replica's :func:`~aioinformer._replicas._membership.plan` returns *actions*; the I/O layer
carries them out and reports back. Two kinds:

* **Work** (the replica's informers, queue and workers): :class:`Start`, :class:`StopTaking`,
  :class:`Resume`, :class:`StopAll`. The work layer reports, through
  :func:`~aioinformer._replicas._membership.drained`, the ranges it stopped taking once no
  reconcile on them is running any more.
* **Lease writes** (:class:`WriteLease`), one at a time; its result goes back through
  :func:`~aioinformer._replicas._membership.written` as a :class:`WriteResult`.

:class:`RangeExit` is what the consumer of a sharded informer sees when an object leaves the
cache because its range moved to another replica, so that it can tell it from a real delete.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .._sharding._ranges import EMPTY, HashRanges
from ._lease_view import LeaseRecord

__all__ = [
    "Action",
    "Outcome",
    "RangeExit",
    "Resume",
    "Start",
    "StopAll",
    "StopTaking",
    "ShardTiming",
    "WriteKind",
    "WriteLease",
    "WriteResult",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardTiming:
    """Lease timing, in seconds of each replica's local monotonic clock (client-go's defaults).

    :ivar lease_duration: how long a lease record must stay unchanged, as observed locally,
        before it looks expired (default 15). Published on the lease
        (``leaseDurationSeconds``); observers use the published value.
    :ivar renew_deadline: a replica whose lease writes have all failed for this long, counted
        from the start of the last one that succeeded, stops everything (default 10).
    :ivar retry_period: renewal interval, and the wait before retrying a failed write
        (default 2).

    Safety needs ``renew_deadline * (1 + e) < lease_duration * (1 - e)`` where ``e`` bounds the
    rate error of every replica's clock; the defaults allow e below 0.2.
    """

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def __post_init__(self) -> None:
        if not 0 < self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError(
                "need 0 < retry_period < renew_deadline < lease_duration, got "
                f"{self.retry_period}, {self.renew_deadline}, {self.lease_duration}"
            )


@dataclass(frozen=True, slots=True)
class Start:
    """Start taking work for ``ranges``: this replica alone serves them now."""

    ranges: HashRanges


@dataclass(frozen=True, slots=True)
class StopTaking:
    """Take no new work for ``ranges``; let running reconciles finish, then report them drained.

    The ranges stay served (and in the cache) until drained: a reconcile that is running may
    still read and write their objects.
    """

    ranges: HashRanges


@dataclass(frozen=True, slots=True)
class Resume:
    """Take work for ``ranges`` again: they were stopping, and are this replica's again."""

    ranges: HashRanges


@dataclass(frozen=True, slots=True)
class StopAll:
    """The lease may be lost: stop at once, abandon running reconciles, serve nothing.

    Issued when no lease write succeeded for ``renew_deadline``, when the lease was taken over
    (fenced) or deleted, or when the replica lost its lease while leaving. The work layer must
    have stopped every reconcile before the lease can look expired to others: it has
    ``lease_duration - renew_deadline`` (minus clock error) for that.
    """


class WriteKind(Enum):
    """The lease writes. Every write but ``CREATE`` carries ``expected_rv`` as a precondition
    (``metadata.resourceVersion``: a stale write fails with 409 Conflict)."""

    CREATE = "create"
    """Create the replica's own lease: holder = its name, the group label, ``serving``,
    ``ready``, ``leaseDurationSeconds``."""
    UPDATE = "update"
    """Renew the own lease: holder = its name, ``renewTime`` = now, publish ``serving`` and
    ``ready``."""
    RELEASE = "release"
    """Release the own lease when leaving: holder ``""``, serving nothing."""
    DELETE = "delete"
    """Delete the own (released) lease."""
    FENCE = "fence"
    """Take over another replica's expired lease: holder ``""``, serving nothing."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteLease:
    """One lease write for the I/O layer to carry out; report its result with ``written``."""

    kind: WriteKind
    name: str
    serving: HashRanges = EMPTY
    ready: bool = False
    expected_rv: int | None = None
    issued_at: float


class Outcome(Enum):
    """How a lease write ended."""

    OK = "ok"
    """Written; ``WriteResult.rv`` is the resource version it produced."""
    CONFLICT = "conflict"
    """409: the precondition was stale, or (create) the lease exists already."""
    NOT_FOUND = "not-found"
    """404: the lease does not exist (any more)."""
    FAILED = "failed"
    """Anything else: the write may or may not have happened."""


@dataclass(frozen=True, slots=True)
class WriteResult:
    """The result of a :class:`WriteLease`.

    After a 409 on its own lease the I/O layer should read the lease (GET: a fresh read, not
    the cache) and pass it as ``current``: the replica then retries at once with its resource
    version, or stops at once if someone else holds it. Without it, the replica waits until its
    cache shows the lease (up to the cache lag, plus a retry period).
    """

    outcome: Outcome
    rv: int | None = None
    current: LeaseRecord | None = None
    error: BaseException | None = field(default=None, compare=False)
    """What went wrong, for the logs and counters (the protocol reads ``outcome`` only)."""


Action = Start | StopTaking | Resume | StopAll | WriteLease


@dataclass(frozen=True, slots=True)
class RangeExit:
    """An object left this replica's cache because its hash range moved to another replica.

    It was not deleted in the cluster: another replica serves it now. Delivered where a delete
    would be, after the range was released (or at :class:`StopAll`), so a consumer can drop
    local state for ``key`` without treating the object as gone. ``obj`` is its last known
    state.
    """

    key: str
    obj: Mapping[str, Any]
