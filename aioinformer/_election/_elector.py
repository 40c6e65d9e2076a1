"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

Candidates share one Lease. The holder renews it every ``retry_period``; the others poll it
every ``retry_period`` (with a small downward jitter) and take it over once it has expired or
was released. Writes use optimistic concurrency: every update carries the ``resourceVersion``
that was read, so of two candidates racing for a lease exactly one wins (the other gets 409
Conflict and tries again later).

Timing, as in client-go:

* **Expiry is measured on the local monotonic clock**, from the moment this candidate first
  saw the current version of the lease record, plus the record's ``leaseDurationSeconds``.
  The ``renewTime`` written by another machine is never compared with the local clock, so
  clock skew between candidates cannot cause two leaders. A follower that sees a lease for the
  first time therefore waits a full lease duration before taking it over, even a stale one.
* A follower wakes up exactly when the lease it watches expires (or every ``retry_period``,
  whichever comes first), so after the holder's last renewal it takes over within
  ``lease_duration + retry_period``. A released lease (empty ``holderIdentity``) is taken
  at the next poll, within ``retry_period``.
* The leader gives up leadership when no renewal has succeeded for ``renew_deadline``
  seconds (counted from the start of the last successful request), and at once when it sees
  another holder. Since ``renew_deadline < lease_duration``, it has stopped leading before
  any follower can take over.
* Taking over increments ``leaseTransitions`` and sets ``acquireTime``; renewing keeps both
  and moves ``renewTime``. Times are RFC 3339 with microseconds (``MicroTime``).
* On stop (``aclose()``, leaving ``async with``, or cancellation) a leader with
  ``release_on_cancel`` releases the lease, within ``renew_deadline``: it clears
  ``holderIdentity`` and sets ``leaseDurationSeconds`` to 1, so a follower takes over at its
  next poll. On cancellation the release runs shielded, with the same bound.

Terms and callbacks live in :mod:`aioinformer._election._leadership`; the pure decision and
the Lease bodies in :mod:`aioinformer._election._lease`. This module is the campaign loop.

Differences from client-go: after losing leadership the elector campaigns again (client-go's
``Run`` returns; start ``elector.aclose()`` from ``on_stopped_leading`` to get that);
``on_stopped_leading`` is called only after a term (client-go also calls it when the elector
never led); the follower's retry jitter is downward (within ``retry_period``) instead of up to
2.2 retry periods, so that the takeover bound above holds.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
from anyio import CancelScope

from .._clock import SYSTEM_CLOCK, Clock
from .._lifecycle import Service, State
from .._names import check_namespace, check_subdomain
from ._candidate import Candidate, Outcome
from ._leadership import Callback, Leadership, LeadershipTerm, NewLeaderCallback
from ._lease import LeaseAPI, LeaseClient, LeaseRecord, deadline_refusal

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = ["ElectorStatistics", "LeaderElector", "LeadershipTerm", "LeaseRecord"]

logger = logging.getLogger(__name__)

#: Followers wait between (1 - _JITTER) and 1 retry periods between polls.
_JITTER = 0.2
#: Added to the wake-up at a lease's expiry, so the timer does not fire a hair early.
_EXPIRY_MARGIN = 0.001


@dataclass(frozen=True, kw_only=True, slots=True)
class ElectorStatistics:
    """A snapshot of a :class:`LeaderElector`, read with :meth:`LeaderElector.statistics`."""

    #: Where the elector is in its life.
    state: State
    #: This candidate's identity.
    identity: str
    #: The holder's identity as last seen (None: nobody, or not looked yet).
    leader: str | None
    #: Whether this candidate leads now.
    leading: bool
    #: The current term's number while leading, else None.
    term: int | None
    #: Terms this candidate began so far.
    terms: int
    #: The clock's time at the start of the last successful acquire or renew (None: never).
    last_renewal: float | None
    #: How many times the lease changed holders, as last seen.
    lease_transitions: int


class LeaderElector(Service):
    """Campaigns for a Lease and tells who leads (client-go's ``LeaderElector``).

    Run it with ``async with elector:`` (in the background of the block), ``await
    tg.start(elector.run)`` (returns once it campaigns), or hand it to a
    :class:`~aioinformer.Controller` (``leader_elector=``), which then reconciles
    only while it leads. It runs once (see :mod:`aioinformer._lifecycle`).
    :meth:`~aioinformer._lifecycle.Service.aclose` returns within ``3 * renew_deadline +
    retry_period``: a lease request in flight, the end of the term and the release each take
    at most ``renew_deadline``.

    :param client: the :class:`~aioinformer.KubeClient` the Lease is read and written
        through (it reloads credentials after a 401); the caller owns and closes it. Give this
        or ``lease_client``.
    :param lease_name: the Lease's name.
    :param namespace: the Lease's namespace.
    :param identity: this candidate's unique identity (e.g. pod name + a random suffix).
    :param lease_duration: seconds a follower waits, after it last saw the lease change,
        before taking it over. Written to the Lease rounded up to whole seconds. Default 15.
    :param renew_deadline: seconds the leader keeps trying to renew before it gives up
        leadership; must be less than ``lease_duration``. Default 10. The deadline runs from
        the start of the last successful renewal, which came ``retry_period`` before the next
        attempt: the time left for attempts is ``renew_deadline - retry_period`` (client-go
        allows the whole ``renew_deadline`` after its sleep), a stricter and safer budget.
    :param retry_period: seconds between renewals, and between a follower's polls; must be
        less than ``renew_deadline``. Default 2.
    :param release_on_cancel: release the lease when stopped while leading (so a follower
        takes over within ``retry_period`` instead of ``lease_duration``). Default True.
    :param on_started_leading: called when this candidate becomes leader. If it returns an
        awaitable, that runs as a task which is cancelled when the term ends (client-go's
        ``OnStartedLeading(ctx)``). Default None.
    :param on_stopped_leading: called (and awaited, if it returns an awaitable) after a term
        ends, once the ``on_started_leading`` task has finished and, on stop, after the lease
        was released. Default None.
    :param on_new_leader: called with the holder's identity whenever a new holder is seen
        (this candidate included); an awaitable result runs as a task. Default None.
    :param lease_client: reads and writes the Lease instead of ``client`` (for example an
        in-memory one in tests). Default None.
    :param clock: measures expiry, renew deadlines and waits. Default the system clock.
    :param rand: uniform ``[0, 1)`` for the followers' retry jitter. Default
        :func:`random.random`.

    Exceptions raised by callbacks are logged and otherwise ignored.
    """

    def __init__(
        self,
        *,
        client: KubeClient | None = None,
        lease_name: str,
        namespace: str,
        identity: str,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        on_started_leading: Callback | None = None,
        on_stopped_leading: Callback | None = None,
        on_new_leader: NewLeaderCallback | None = None,
        lease_client: LeaseAPI | None = None,
        clock: Clock = SYSTEM_CLOCK,
        rand: Callable[[], float] = random.random,
    ) -> None:
        if (client is None) == (lease_client is None):
            raise ValueError("give exactly one of client and lease_client")
        if not identity:
            raise ValueError("identity must not be empty")
        check_subdomain(lease_name, what="lease name")
        check_namespace(namespace, what="lease namespace")
        if not retry_period > 0:
            raise ValueError("retry_period must be positive")
        if not renew_deadline > retry_period:
            raise ValueError("renew_deadline must be greater than retry_period")
        if not lease_duration > renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        self.lease_name = lease_name
        self.namespace = namespace
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self._client = client  # for a Controller that follows this elector (its client)
        api: LeaseAPI
        credential_refresher: Callable[[], Awaitable[None]] | None = None
        if client is not None:
            # A 401 the client's own reload and retry did not cure: reload once more.
            credential_refresher = client.refresh_credentials
            api = LeaseClient(client, namespace, lease_name)
        else:
            assert lease_client is not None
            api = lease_client
        self._clock = clock
        self._rand = rand
        self._stop_timeout = 3 * renew_deadline + retry_period
        self._leadership = Leadership(
            identity=identity,
            on_started_leading=on_started_leading,
            on_stopped_leading=on_stopped_leading,
            on_new_leader=on_new_leader,
            clock=clock,
            grace=renew_deadline,
        )
        self._candidate = Candidate(
            api=api,
            identity=identity,
            namespace=namespace,
            lease_name=lease_name,
            lease_duration=lease_duration,
            clock=clock,
            credential_refresher=credential_refresher,
            on_new_leader=self._leadership.new_leader,
        )

    def __repr__(self) -> str:
        state = self.state.value
        if self.state is State.RUNNING:
            state = "leading" if self.is_leader else "following"
        return f"<LeaderElector {self.namespace}/{self.lease_name} as {self.identity!r} [{state}]>"

    # -- state -----------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        """True while this candidate leads."""
        return self._leadership.term is not None

    @property
    def term(self) -> LeadershipTerm | None:
        """The current term while leading, else None."""
        return self._leadership.term

    @property
    def leader(self) -> str | None:
        """The holder's identity as last seen (None: nobody, or not looked yet)."""
        record = self._candidate.record
        return record.holder_identity or None if record is not None else None

    @property
    def record(self) -> LeaseRecord | None:
        """The lease record as last read or written (None before the first request)."""
        return self._candidate.record

    @property
    def last_renewal(self) -> float | None:
        """The clock's time at the start of the last successful acquire or renew."""
        return self._candidate.renewed_at

    def write_refusal(self, term: LeadershipTerm | None = None) -> str | None:
        """Why a write made on behalf of this candidate's leadership (during ``term``, when
        given) would not be safe now, or None when it is.

        Read from the clock at each call, not from a flag a background task sets: the
        leadership counts only until ``renew_deadline`` after the start of the last successful
        renewal, so a process that was paused (SIGSTOP, a VM frozen) or cut off from the API
        server learns that its leadership lapsed from the first write it tries after, before
        the campaign loop had a chance to run. :attr:`Controller.client
        <aioinformer.Controller.client>` asks this before every write.
        """
        current = self._leadership.term
        if current is None:
            return "it does not lead"
        if term is not None and term is not current:
            return f"its leadership term {term.number} ended"
        return deadline_refusal(
            self._candidate.renewed_at, deadline=self.renew_deadline, now=self._clock.now()
        )

    def statistics(self) -> ElectorStatistics:
        """A snapshot: state, who leads, the current term and the last renewal."""
        term = self.term
        record = self._candidate.record
        return ElectorStatistics(
            state=self.state,
            identity=self.identity,
            leader=self.leader,
            leading=term is not None,
            term=term.number if term is not None else None,
            terms=self._leadership.count,
            last_renewal=self._candidate.renewed_at,
            lease_transitions=record.lease_transitions if record is not None else 0,
        )

    async def wait_leading(self) -> LeadershipTerm | None:
        """Wait until this candidate leads; return the term, or None once the elector stopped.

        Bound it with :func:`anyio.fail_after` or :func:`anyio.move_on_after`.
        """
        leadership = self._leadership
        while True:
            term = leadership.term
            if term is not None:
                return term
            if self.state is State.STOPPED:
                return None
            await leadership.wait_for_change()

    # -- the campaign ----------------------------------------------------------------------

    async def _serve(self, ready: Callable[[], None]) -> None:
        logger.info(
            "leader election: %s campaigning for lease %s/%s",
            self.identity,
            self.namespace,
            self.lease_name,
        )
        try:
            async with anyio.create_task_group() as group:
                self._leadership.attach(group)
                ready()
                try:
                    await self._campaign()
                finally:
                    # Shielded (a hard stop still releases the lease) and bounded.
                    with CancelScope(shield=True):
                        with self._clock.move_on_after(2 * self.renew_deadline):
                            await self._resign()
                    # Callbacks still running (say, an on_new_leader that never returns) must
                    # not hold the elector open: stopping is bounded.
                    group.cancel_scope.cancel()
        finally:
            self._leadership.attach(None)
            logger.info("leader election: %s stopped", self.identity)

    def _on_stopped(self) -> None:
        self._leadership.notify()  # wait_leading() returns None

    async def _campaign(self) -> None:
        leadership = self._leadership
        while not self._stop_requested:
            if not await self._acquire():
                return
            leadership.begin()
            logger.info(
                "leader election: %s became leader of lease %s/%s (term %d)",
                self.identity,
                self.namespace,
                self.lease_name,
                leadership.count,
            )
            if not await self._renew():
                return  # stop requested while leading: _resign() releases
            await leadership.end()
            await leadership.call_stopped_leading()

    async def _acquire(self) -> bool:
        """Poll until the lease is ours (True) or stop is requested (False)."""
        while True:
            outcome = await self._attempt(self.renew_deadline)
            if outcome is Outcome.ACQUIRED:
                return True
            delay = self.retry_period * (1.0 - _JITTER * self._rand())
            expires_at = self._candidate.expires_at
            if outcome is Outcome.HELD and expires_at is not None:
                until_expiry = expires_at - self._clock.now() + _EXPIRY_MARGIN
                delay = min(delay, max(0.0, until_expiry))
            if await self._sleep(delay):
                return False

    async def _renew(self) -> bool:
        """Renew until leadership is lost (True) or stop is requested (False)."""
        while True:
            if await self._sleep(self.retry_period):
                return False
            renewed_at = self._candidate.renewed_at
            assert renewed_at is not None
            deadline = renewed_at + self.renew_deadline
            while True:
                remaining = deadline - self._clock.now()
                if remaining <= 0:
                    logger.warning(
                        "leader election: %s lost lease %s/%s: not renewed for %.1f s",
                        self.identity,
                        self.namespace,
                        self.lease_name,
                        self.renew_deadline,
                    )
                    return True
                outcome = await self._attempt(remaining)
                if outcome is Outcome.ACQUIRED:
                    break
                if outcome is Outcome.HELD:
                    logger.warning(
                        "leader election: %s lost lease %s/%s to %s",
                        self.identity,
                        self.namespace,
                        self.lease_name,
                        self.leader,
                    )
                    return True
                pause = min(self.retry_period, deadline - self._clock.now())
                if pause > 0 and await self._sleep(pause):
                    return False

    async def _sleep(self, delay: float) -> bool:
        """Sleep ``delay`` seconds; True (at once) if stop was requested."""
        with self._until_stop_requested():
            await self._clock.sleep(delay)
        return self._stop_requested

    async def _attempt(self, budget: float) -> Outcome:
        with self._clock.move_on_after(budget):
            return await self._candidate.attempt(leading=self.is_leader)
        logger.warning(
            "leader election: %s: lease %s/%s request timed out after %.1f s",
            self.identity,
            self.namespace,
            self.lease_name,
            budget,
        )
        return Outcome.FAILED

    # -- stopping ----------------------------------------------------------------------------

    async def _resign(self) -> None:
        """At the end of :meth:`run`: end the term and release the lease if configured."""
        leadership = self._leadership
        if leadership.term is None:
            return
        await leadership.end()
        if self.release_on_cancel:
            await self._candidate.release(within=self.renew_deadline)
        await leadership.call_stopped_leading()
