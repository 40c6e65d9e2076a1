"""One candidate's view of the Lease and its requests on it (for
:class:`~aioinformer.LeaderElector`, which runs the campaign around them).

Every request follows client-go's ``tryAcquireOrRenew``: read the lease (a leader first tries
to update the one it wrote last, without reading), decide with the pure
:func:`~aioinformer._election._lease.decide`, and write with optimistic concurrency.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from enum import Enum

import anyio

from .._clock import Clock
from .._lifecycle import in_cancelled_scope
from .._objects import KubeObject
from ..errors import ApiError, ConflictError, NotFoundError, TransportError, UnauthorizedError
from ._lease import (
    Held,
    LeaseAPI,
    LeaseRecord,
    Renew,
    decide,
    new_lease,
    released,
    renewed,
    taken_over,
)

__all__ = ["Candidate", "Outcome"]

logger = logging.getLogger(__name__)


class Outcome(Enum):
    """What one request achieved."""

    ACQUIRED = "acquired"  # we hold the lease (created, taken over or renewed)
    HELD = "held"  # another candidate holds a lease that has not expired
    FAILED = "failed"  # conflict, error or timeout: try again later


class Candidate:
    """The Lease as one candidate last saw it, and the requests it makes on it.

    :param api: reads and writes the Lease.
    :param identity: the candidate's identity.
    :param namespace: the Lease's namespace (for logs and new leases).
    :param lease_name: the Lease's name.
    :param lease_duration: written to the Lease; also the expiry of a record without one.
    :param clock: measures when a record was first seen and when a request started.
    :param credential_refresher: awaited after a 401. None: not reloaded.
    :param on_new_leader: called with a new holder's identity.
    """

    def __init__(
        self,
        *,
        api: LeaseAPI,
        identity: str,
        namespace: str,
        lease_name: str,
        lease_duration: float,
        clock: Clock,
        credential_refresher: Callable[[], Awaitable[None]] | None,
        on_new_leader: Callable[[str], None],
    ) -> None:
        self._api = api
        self.identity = identity
        self.namespace = namespace
        self.lease_name = lease_name
        self.lease_duration = lease_duration
        self._clock = clock
        self._credential_refresher = credential_refresher
        self._on_new_leader = on_new_leader
        #: The Lease as last read or written (None before the first request).
        self.lease: KubeObject | None = None
        #: Its leader-election record.
        self.record: LeaseRecord | None = None
        #: When another holder's lease runs out, after a HELD outcome (else None).
        self.expires_at: float | None = None
        #: The clock's time at the start of the last successful acquire or renew.
        self.renewed_at: float | None = None
        self._observed_at = 0.0  # when the current record was first seen
        self._reported_leader: str | None = None

    async def attempt(self, *, leading: bool) -> Outcome:
        """One acquire-or-renew request (``leading``: this candidate holds the lease).

        API and transport errors, and cancellations that the request merely awaited, make
        a failed attempt (logged); a 401 reloads the credentials first.
        """
        try:
            return await self._acquire_or_renew(leading)
        except anyio.get_cancelled_exc_class() as exc:
            if in_cancelled_scope():
                raise  # the elector itself is being cancelled, or the attempt timed out
            # Something the request awaited was cancelled elsewhere: a failed attempt.
            logger.warning("leader election: %s: lease request cancelled: %s", self.identity, exc)
        except (ApiError, TransportError) as exc:
            logger.warning(
                "leader election: %s: lease %s/%s: %s: %s",
                self.identity,
                self.namespace,
                self.lease_name,
                type(exc).__name__,
                exc,
            )
            if isinstance(exc, UnauthorizedError) and self._credential_refresher is not None:
                await self._refresh_credentials()
        return Outcome.FAILED

    async def _refresh_credentials(self) -> None:
        assert self._credential_refresher is not None
        try:
            await self._credential_refresher()
        except Exception as exc:
            logger.warning(
                "leader election: %s: reloading credentials failed: %s",
                self.identity,
                type(exc).__name__,
            )

    async def _acquire_or_renew(self, leading: bool) -> Outcome:
        api = self._api
        self.expires_at = None
        if leading and self.lease is not None:
            # Fast path: the leader updates the lease it wrote last, without reading it first.
            started = self._clock.now()
            try:
                lease = await api.replace(self._renewed(self.lease))
            except (ApiError, TransportError) as exc:
                logger.debug(
                    "leader election: %s: optimistic renew failed (%s), reading the lease",
                    self.identity,
                    type(exc).__name__,
                )
            else:
                self.observe(lease)
                self.renewed_at = started
                return Outcome.ACQUIRED
        started = self._clock.now()
        try:
            lease = await api.get()
        except NotFoundError:
            body = new_lease(
                name=self.lease_name,
                namespace=self.namespace,
                identity=self.identity,
                lease_duration=self.lease_duration,
                now=datetime.now(UTC),
            )
            try:
                lease = await api.create(body)
            except ConflictError:
                logger.debug(
                    "leader election: %s: lost the race to create the lease", self.identity
                )
                return Outcome.FAILED
            self.observe(lease)
            self.renewed_at = started
            return Outcome.ACQUIRED
        record = self.observe(lease)
        decision = decide(
            record,
            me=self.identity,
            observed_at=self._observed_at,
            now=self._clock.now(),
            lease_duration=self.lease_duration,
        )
        if isinstance(decision, Held):
            self.expires_at = decision.until
            return Outcome.HELD
        if isinstance(decision, Renew):
            body = self._renewed(lease)
        else:
            body = taken_over(
                lease,
                identity=self.identity,
                lease_duration=self.lease_duration,
                now=datetime.now(UTC),
            )
        try:
            lease = await api.replace(body)
        except ConflictError:
            logger.debug("leader election: %s: lost a race to update the lease", self.identity)
            return Outcome.FAILED
        self.observe(lease)
        self.renewed_at = started
        return Outcome.ACQUIRED

    def _renewed(self, lease: KubeObject) -> KubeObject:
        return renewed(
            lease, identity=self.identity, lease_duration=self.lease_duration, now=datetime.now(UTC)
        )

    def observe(self, lease: KubeObject) -> LeaseRecord:
        """Remember ``lease`` as last read or written; report a new holder."""
        previous = self.lease
        if previous is None or previous.get("spec") != lease.get("spec"):
            self._observed_at = self._clock.now()
        self.lease = lease
        self.record = record = LeaseRecord.from_lease(lease)
        holder = record.holder_identity
        if holder and holder != self._reported_leader:
            self._reported_leader = holder
            logger.info(
                "leader election: lease %s/%s is held by %s",
                self.namespace,
                self.lease_name,
                holder,
            )
            self._on_new_leader(holder)
        return record

    async def release(self, *, within: float) -> None:
        """Give the lease up (no holder, one-second duration), within ``within`` seconds;
        failures are logged."""
        lease = self.lease
        if lease is None:
            return
        try:
            with self._clock.fail_after(within):
                lease = await self._api.replace(released(lease, now=datetime.now(UTC)))
        except (ApiError, TransportError, TimeoutError) as exc:
            logger.warning(
                "leader election: %s could not release lease %s/%s: %s: %s",
                self.identity,
                self.namespace,
                self.lease_name,
                type(exc).__name__,
                exc,
            )
            return
        self.lease = lease
        self.record = LeaseRecord.from_lease(lease)
        logger.info(
            "leader election: %s released lease %s/%s",
            self.identity,
            self.namespace,
            self.lease_name,
        )
