"""What one replica knows about its group's Leases: a pure fold over the lease informer.

Every replica of a sharded group watches the group's Leases (one per replica, selected by a
label) with an informer. :class:`LeaseView` is that cache as the membership protocol needs it:
the records at one resource version, plus what only local observation can tell:

* ``first_seen``: the local (monotonic) time this replica first saw the current version of each
  record. A lease **looks expired** when its record has not changed for its lease duration of
  local time since then, as in client-go's leader election; clocks of other machines are never
  read. Looking expired is not enough to ignore what a lease serves: see ``_membership``.
* ``since``: for each part of what a lease serves, the resource version of the write that put
  it there, if this replica watched that write, else 0 ("before I started watching"). The
  protocol lets the earlier of two claims win with it.
* Tombstones: a lease deleted while it still served something keeps counting, from the local
  time the deletion was seen, for one lease duration (if someone else deleted it, its holder
  may still be serving until its own renew deadline).
* ``listed_at``: a lease deleted before the last list left no trace, and its holder may
  still serve for up to its renew deadline: until one lease duration after a list nothing is
  known to be free (the *horizon*, see ``_membership``).

Events must be applied in resource-version order, as a watch delivers them; a relist replaces
the records and keeps what is still valid (``first_seen`` and ``since`` of unchanged records).
:func:`record_from_lease` reads a Lease object (a decoded dict).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final, Literal

from .._sharding._ranges import EMPTY, FULL, HashRanges

__all__ = [
    "GROUP_LABEL",
    "EventKind",
    "READY_ANNOTATION",
    "SERVING_ANNOTATION",
    "LeaseRecord",
    "LeaseView",
    "ObservedLease",
    "record_from_lease",
]

SERVING_ANNOTATION: Final = "sharding.aioinformer.dev/serving"
"""The Lease annotation that publishes the ranges its holder serves (``HashRanges.encode``)."""
READY_ANNOTATION: Final = "sharding.aioinformer.dev/ready"
"""``"true"`` once the holder has watched the group's leases for a lease duration: only then
is it a member (others give it a share only when it can take it at once)."""
GROUP_LABEL: Final = "sharding.aioinformer.dev/group"
"""The Lease label that names the replica group."""

#: Parts of a serving set with the resource version from which each has been served.
Layers = tuple[tuple[HashRanges, int], ...]
EventKind = Literal["ADDED", "MODIFIED", "DELETED"]
EventType = EventKind


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseRecord:
    """One group Lease as the protocol reads it.

    ``name`` is the replica's identity; ``holder`` is ``spec.holderIdentity``: the name while the
    replica holds it, ``""`` once it was released or fenced (then it serves nothing, whatever it
    says). ``rv`` is ``metadata.resourceVersion`` as an integer: the protocol needs resource
    versions of one resource to be comparable, as etcd revisions are. ``ready``: see
    :data:`READY_ANNOTATION`.
    """

    name: str
    rv: int
    holder: str = ""
    serving: HashRanges = EMPTY
    ready: bool = False
    lease_duration: float | None = None

    @property
    def held(self) -> bool:
        """Whether the record counts: a holder is named (a released lease serves nothing)."""
        return self.holder != ""


def record_from_lease(lease: Mapping[str, Any]) -> LeaseRecord:
    """Read a ``coordination.k8s.io/v1`` Lease (a decoded dict).

    A serving annotation that does not parse (another version of the protocol, a hand edit)
    reads as the whole space: the lease then blocks every claim while it is held, which is safe.

    :raises ValueError: when the name or the resource version is missing or malformed.
    """
    metadata = lease.get("metadata") or {}
    spec = lease.get("spec") or {}
    name, rv = metadata.get("name"), metadata.get("resourceVersion")
    if not isinstance(name, str) or not name or not isinstance(rv, str) or not rv.isdigit():
        raise ValueError(f"not a lease with a name and a numeric resourceVersion: {name!r} {rv!r}")
    annotations = metadata.get("annotations") or {}
    text = annotations.get(SERVING_ANNOTATION, "")
    try:
        serving = HashRanges.decode(text) if isinstance(text, str) else FULL
    except ValueError:
        serving = FULL
    duration = spec.get("leaseDurationSeconds")
    holder = spec.get("holderIdentity")
    return LeaseRecord(
        name=name,
        rv=int(rv),
        holder=holder if isinstance(holder, str) else "",
        serving=serving,
        ready=annotations.get(READY_ANNOTATION) == "true",
        lease_duration=float(duration) if isinstance(duration, int) and duration > 0 else None,
    )


@dataclass(frozen=True, slots=True)
class ObservedLease:
    """A record plus local observation: when it was first seen, since when each part is served.

    ``deleted`` marks a tombstone (``first_seen`` is then when the deletion was seen).
    """

    record: LeaseRecord
    first_seen: float
    since: Layers
    deleted: bool = False

    def duration(self, default: float) -> float:
        return self.record.lease_duration or default

    def expired(self, now: float, default: float) -> bool:
        """Unchanged (or deleted) for a whole lease duration of local time."""
        return now >= self.first_seen + self.duration(default)

    def counts(self, now: float, default: float) -> bool:
        """Whether what it serves is taken as served: held and not deleted, or a fresh tombstone."""
        return self.record.held and (not self.deleted or not self.expired(now, default))


def _advance(layers: Layers, serving: HashRanges, rv: int) -> Layers:
    """The layers of a new serving set written at ``rv``: old parts keep their version."""
    kept = tuple((part & serving, since) for part, since in layers if part & serving)
    covered = EMPTY
    for part, _ in kept:
        covered |= part
    added = serving - covered
    return (*kept, (added, rv)) if added else kept


@dataclass(frozen=True, slots=True)
class LeaseView:
    """The group's Leases as one replica's informer holds them at resource version ``rv``."""

    rv: int = 0
    leases: Mapping[str, ObservedLease] = field(default_factory=lambda: MappingProxyType({}))
    listed_at: float = float("-inf")

    @classmethod
    def listed(
        cls,
        records: Iterable[LeaseRecord],
        *,
        rv: int,
        now: float,
        previous: LeaseView | None = None,
    ) -> LeaseView:
        """The view after a (re)list at ``rv``; ``previous`` is the view before a relist.

        Unchanged records keep when they were first seen and their ``since``; leases deleted in
        the gap leave no tombstone (the horizon after the list covers them).
        """
        old = previous.leases if previous is not None else {}
        leases: dict[str, ObservedLease] = {}
        for record in records:
            before = old.get(record.name)
            if before is not None and not before.deleted and before.record == record:
                leases[record.name] = before  # unchanged: keep when it was first seen
            else:
                layers = ((record.serving, 0),) if record.held and record.serving else ()
                leases[record.name] = ObservedLease(record, now, layers)
        return cls(rv, MappingProxyType(leases), now)

    def applied(self, kind: EventType, record: LeaseRecord, *, now: float) -> LeaseView:
        """The view after one watch event (``record.rv`` is the event's resource version)."""
        if record.rv <= self.rv:
            raise ValueError(f"lease event at rv {record.rv} is not after the view's {self.rv}")
        leases = dict(self.leases)
        before = leases.get(record.name)
        layers: Layers = before.since if before is not None and not before.deleted else ()
        if kind == "DELETED":
            if before is not None and before.record.held and before.record.serving:
                leases[record.name] = ObservedLease(before.record, now, layers, deleted=True)
            else:
                leases.pop(record.name, None)
        else:
            serving = record.serving if record.held else EMPTY
            leases[record.name] = ObservedLease(record, now, _advance(layers, serving, record.rv))
        return replace(self, rv=record.rv, leases=MappingProxyType(leases))

    def bookmarked(self, rv: int) -> LeaseView:
        """The view after a bookmark: nothing changed up to ``rv``."""
        return replace(self, rv=max(self.rv, rv))

    def pruned(self, now: float, default: float) -> LeaseView:
        """Without the tombstones that stopped counting."""
        if not any(o.deleted and not o.counts(now, default) for o in self.leases.values()):
            return self
        leases = {
            name: o for name, o in self.leases.items() if not o.deleted or o.counts(now, default)
        }
        return replace(self, leases=MappingProxyType(leases))

    # ---- what the protocol asks -----------------------------------------------------------

    def members(self, now: float, default: float) -> frozenset[str]:
        """Ready replicas holding their own lease that does not look expired."""
        return frozenset(
            name
            for name, o in self.leases.items()
            if not o.deleted
            and o.record.holder == name
            and o.record.ready
            and not o.expired(now, default)
        )

    def served_by_others(self, me: str, now: float, default: float) -> HashRanges:
        """What leases other than ``me``'s serve, as far as this view can tell."""
        served = EMPTY
        for name, o in self.leases.items():
            if name != me and o.counts(now, default):
                served |= o.record.serving
        return served

    def conflicts(
        self, me: str, claim: HashRanges, claim_rv: int, now: float, default: float
    ) -> HashRanges:
        """The part of ``claim`` (first published at ``claim_rv``) that another lease served
        since before ``claim_rv`` (or since before this replica watched)."""
        found = EMPTY
        for name, o in self.leases.items():
            if name != me and o.counts(now, default):
                for part, since in o.since:
                    if since < claim_rv:
                        found |= part & claim
        return found

    def fence_candidates(self, me: str, now: float, default: float) -> list[LeaseRecord]:
        """Others' held leases that serve something and look expired (in name order)."""
        return [
            o.record
            for name, o in sorted(self.leases.items())
            if name != me
            and not o.deleted
            and o.record.held
            and o.record.serving
            and o.expired(now, default)
        ]

    def next_expiry(self, now: float, default: float) -> float | None:
        """The earliest local time after ``now`` at which some lease will look expired."""
        times = [
            o.first_seen + o.duration(default)
            for o in self.leases.values()
            if o.record.held and not o.expired(now, default)
        ]
        return min(times, default=None)
