"""The Lease object of leader election: its record, the pure rules on it, and its REST calls.

The rules are pure functions (client-go ``tools/leaderelection``): :func:`decide` says what a
candidate should do with the lease it just read, and :func:`new_lease`, :func:`renewed`,
:func:`taken_over` and :func:`released` build the bodies it writes. The
:class:`~aioinformer.LeaderElector` only runs the campaign around them.

A ``coordination.k8s.io/v1`` Lease is read and written as a plain dict through a
:class:`~aioinformer.KubeClient`, like every other object in aioinformer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from .._listwatch import Resource
from .._objects import KubeObject

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = [
    "Acquire",
    "Decision",
    "Held",
    "LeaseAPI",
    "LeaseClient",
    "LeaseRecord",
    "Renew",
    "decide",
    "deadline_refusal",
    "int_or_none",
    "micro_time",
    "new_lease",
    "released",
    "renewed",
    "taken_over",
]


_LEASES = Resource.parse("coordination.k8s.io/v1/leases")


def micro_time(moment: datetime) -> str:
    """RFC 3339 in UTC with microseconds, as Kubernetes writes ``MicroTime``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def int_or_none(value: object) -> int | None:
    """An int field of a decoded object, or None when absent or not an int."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The leader-election fields of a Lease's ``spec``.

    :ivar holder_identity: who holds the lease (None or ``""``: nobody; ``""`` after a release).
    :ivar lease_duration_seconds: how long the holder's lease lasts after each renewal.
    :ivar acquire_time: when the current holder acquired it.
    :ivar renew_time: when the current holder last renewed it.
    :ivar lease_transitions: how many times the lease changed holders.
    """

    holder_identity: str | None
    lease_duration_seconds: int | None
    acquire_time: datetime | None
    renew_time: datetime | None
    lease_transitions: int

    @classmethod
    def from_lease(cls, lease: Mapping[str, Any]) -> LeaseRecord:
        """Read the record from a Lease object (a dict as decoded from JSON)."""
        spec = lease.get("spec")
        if not isinstance(spec, Mapping):
            spec = {}
        holder = spec.get("holderIdentity")
        return cls(
            holder_identity=holder if isinstance(holder, str) else None,
            lease_duration_seconds=int_or_none(spec.get("leaseDurationSeconds")),
            acquire_time=_parse_time(spec.get("acquireTime")),
            renew_time=_parse_time(spec.get("renewTime")),
            lease_transitions=int_or_none(spec.get("leaseTransitions")) or 0,
        )


# -- what to do with a lease -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Held:
    """Another candidate, ``holder``, holds the lease until ``until`` (local monotonic time):
    wait (at most until then) and look again."""

    holder: str
    until: float


@dataclass(frozen=True, slots=True)
class Acquire:
    """The lease is free (never held, or released) or its holder let it expire: take it
    over."""


@dataclass(frozen=True, slots=True)
class Renew:
    """This candidate holds the lease: renew it."""


Decision = Held | Acquire | Renew


def decide(
    record: LeaseRecord, *, me: str, observed_at: float, now: float, lease_duration: float
) -> Decision:
    """What candidate ``me`` should do with a lease whose record it first saw at
    ``observed_at`` (monotonic seconds), at ``now``.

    Expiry is measured on the local clock from ``observed_at`` plus the record's
    ``leaseDurationSeconds`` (``lease_duration`` when the record has none): the holder's
    ``renewTime`` is never compared with the local clock, so clock skew cannot elect two
    leaders (client-go's ``tryAcquireOrRenew``).
    """
    holder = record.holder_identity
    if not holder:
        return Acquire()
    if holder == me:
        return Renew()
    duration = record.lease_duration_seconds
    if duration is None or duration <= 0:
        duration = math.ceil(lease_duration)
    until = observed_at + duration
    return Held(holder, until) if now < until else Acquire()


def deadline_refusal(renewed_at: float | None, *, deadline: float, now: float) -> str | None:
    """Why a holder whose last successful renewal was *issued* at ``renewed_at`` (local
    monotonic seconds; None: it does not hold the lease) can no longer count on it at ``now``,
    or None while ``now < renewed_at + deadline``.

    ``deadline`` is the renew deadline: the lease duration minus a safety margin (for the
    clocks' rate error and the write's travel time), so the holder stops before any other
    candidate can see its lease as expired. A paused or cut-off process finds its deadline
    passed by reading the clock, whoever runs first after it resumes.
    """
    if renewed_at is None:
        return "its lease is not held"
    late = now - (renewed_at + deadline)
    if late >= 0:
        return (
            f"its lease deadline passed {late:.1f} s ago (last renewal {now - renewed_at:.1f} s"
            f" ago, deadline {deadline:g} s)"
        )
    return None


# -- lease bodies --------------------------------------------------------------------------


def new_lease(
    *, name: str, namespace: str, identity: str, lease_duration: float, now: datetime
) -> KubeObject:
    """A Lease held by ``identity`` from ``now``, never transitioned."""
    stamp = micro_time(now)
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "holderIdentity": identity,
            "leaseDurationSeconds": math.ceil(lease_duration),
            "acquireTime": stamp,
            "renewTime": stamp,
            "leaseTransitions": 0,
        },
    }


def _spec(lease: Mapping[str, Any]) -> dict[str, Any]:
    spec = lease.get("spec")
    return dict(spec) if isinstance(spec, Mapping) else {}


def renewed(
    lease: KubeObject, *, identity: str, lease_duration: float, now: datetime
) -> KubeObject:
    """``lease`` (keeping its resourceVersion) renewed by its holder ``identity``: a new
    ``renewTime``; ``acquireTime`` and ``leaseTransitions`` kept."""
    spec = _spec(lease)
    stamp = micro_time(now)
    spec["holderIdentity"] = identity
    spec["leaseDurationSeconds"] = math.ceil(lease_duration)
    spec["renewTime"] = stamp
    spec.setdefault("acquireTime", stamp)
    return {**lease, "spec": spec}


def taken_over(
    lease: KubeObject, *, identity: str, lease_duration: float, now: datetime
) -> KubeObject:
    """``lease`` (keeping its resourceVersion) taken over by ``identity``: acquired and renewed
    ``now``, ``leaseTransitions`` plus one."""
    spec = _spec(lease)
    stamp = micro_time(now)
    spec["holderIdentity"] = identity
    spec["leaseDurationSeconds"] = math.ceil(lease_duration)
    spec["acquireTime"] = stamp
    spec["renewTime"] = stamp
    spec["leaseTransitions"] = (int_or_none(spec.get("leaseTransitions")) or 0) + 1
    return {**lease, "spec": spec}


def released(lease: KubeObject, *, now: datetime) -> KubeObject:
    """``lease`` given up: no holder, a one-second duration, so any candidate takes it at its
    next look."""
    spec = _spec(lease)
    stamp = micro_time(now)
    spec.update(holderIdentity="", leaseDurationSeconds=1, acquireTime=stamp, renewTime=stamp)
    return {**lease, "spec": spec}


# -- the REST calls ------------------------------------------------------------------------


class LeaseAPI(Protocol):
    """Reads and writes one Lease (:class:`LeaseClient` over HTTP; tests use memory)."""

    async def get(self) -> KubeObject:
        """The Lease. :raises NotFoundError: if it does not exist."""
        ...

    async def create(self, body: KubeObject) -> KubeObject:
        """Create it. :raises ConflictError: if it exists."""
        ...

    async def replace(self, body: KubeObject) -> KubeObject:
        """Update it. :raises ConflictError: if its resourceVersion is stale."""
        ...


class LeaseClient:
    """GET/POST/PUT of one Lease through a :class:`~aioinformer.KubeClient`, as plain dicts."""

    def __init__(self, client: KubeClient, namespace: str, name: str) -> None:
        self._client = client
        self.namespace = namespace
        self.name = name

    def __repr__(self) -> str:
        return f"<LeaseClient {self.namespace}/{self.name}>"

    async def get(self) -> KubeObject:
        return await self._client.get(_LEASES, self.name, namespace=self.namespace)

    async def create(self, body: KubeObject) -> KubeObject:
        return await self._client.create(_LEASES, body, namespace=self.namespace)

    async def replace(self, body: KubeObject) -> KubeObject:
        return await self._client.replace(_LEASES, body, namespace=self.namespace)
