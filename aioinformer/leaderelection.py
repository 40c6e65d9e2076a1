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
* On stop (``stop()``, leaving ``async with``, or cancellation) a leader with
  ``release_on_cancel`` releases the lease: it clears ``holderIdentity`` and sets
  ``leaseDurationSeconds`` to 1, so a follower takes over at its next poll.

Differences from client-go: after losing leadership the elector campaigns again (client-go's
``Run`` returns; call :meth:`LeaderElector.stop` from ``on_stopped_leading`` to get that);
``on_stopped_leading`` is called only after a term (client-go also calls it when the elector
never led); the follower's retry jitter is downward (within ``retry_period``) instead of up to
2.2 retry periods, so that the takeover bound above holds.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any

from ._background import BackgroundRunner
from ._clock import SYSTEM_CLOCK, Clock
from .errors import (
    ApiError,
    ConflictError,
    LifecycleError,
    NotFoundError,
    TransportError,
    UnauthorizedError,
)
from .lease import (
    Held,
    LeaseAPI,
    LeaseClient,
    LeaseRecord,
    Renew,
    decide,
    new_lease,
    released,
    renewed,
    taken_over,
)
from .objects import KubeObject

if TYPE_CHECKING:
    from ._client import KubeClient

__all__ = ["LeaderElector", "LeadershipTerm", "LeaseRecord"]

logger = logging.getLogger(__name__)

#: Followers wait between (1 - _JITTER) and 1 retry periods between polls.
_JITTER = 0.2
#: Added to the wake-up at a lease's expiry, so the timer does not fire a hair early.
_EXPIRY_MARGIN = 0.001

#: A callback: sync, or returning an awaitable.
Callback = Callable[[], Awaitable[None] | None]
NewLeaderCallback = Callable[[str], Awaitable[None] | None]


class LeadershipTerm:
    """One uninterrupted period of leadership of a :class:`LeaderElector`.

    :ivar number: 1 for the elector's first term, 2 for the next, ...
    """

    __slots__ = ("_ended", "number")

    def __init__(self, number: int) -> None:
        self.number = number
        self._ended = asyncio.Event()

    def __repr__(self) -> str:
        return f"<LeadershipTerm {self.number} [{'ended' if self.ended else 'active'}]>"

    @property
    def ended(self) -> bool:
        """True once leadership was lost or given up."""
        return self._ended.is_set()

    async def wait_ended(self) -> None:
        """Wait until this term ends."""
        await self._ended.wait()

    def _end(self) -> None:
        self._ended.set()


class _Outcome(Enum):
    ACQUIRED = "acquired"  # we hold the lease (created, taken over or renewed)
    HELD = "held"  # another candidate holds a lease that has not expired
    FAILED = "failed"  # conflict, error or timeout: try again later


async def _guarded(what: str, awaitable: Awaitable[object]) -> None:
    try:
        await awaitable
    except Exception as exc:
        logger.error("leader election: %s raised %s: %s", what, type(exc).__name__, exc)


class LeaderElector(BackgroundRunner):
    """Campaigns for a Lease and tells who leads (client-go's ``LeaderElector``).

    Run it with ``async with elector:`` (in the background of the block), ``await
    elector.run()``, or hand it to a :class:`~aioinformer.controller.Controller`
    (``leader_elector=``), which then reconciles only while it leads. It runs once.

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
        if not lease_name or not namespace or not identity:
            raise ValueError("lease_name, namespace and identity must not be empty")
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
        self._on_started_leading = on_started_leading
        self._on_stopped_leading = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._callback_tasks: set[asyncio.Task[None]] = set()
        self._api: LeaseAPI
        self._credential_refresher: Callable[[], Awaitable[None]] | None = None
        if client is not None:
            # A 401 the client's own reload and retry did not cure: reload once more.
            self._credential_refresher = client.refresh_credentials
            self._api = LeaseClient(client, namespace, lease_name)
        else:
            assert lease_client is not None
            self._api = lease_client
        self._clock = clock
        self._rand = rand
        self._started = False
        self._finished = False
        self._stop = asyncio.Event()
        self._stopped = asyncio.Event()
        self._changed = asyncio.Event()  # replaced by a fresh one at every state change
        self._group: asyncio.TaskGroup | None = None
        self._term: LeadershipTerm | None = None
        self._terms = 0
        self._started_task: asyncio.Task[None] | None = None
        self._lease: KubeObject | None = None  # the Lease as last read or written
        self._record: LeaseRecord | None = None
        self._observed_at = 0.0  # monotonic time the current record was first seen
        self._expires_at: float | None = None  # when the other holder's lease runs out
        self._renewed_at: float | None = None
        self._reported_leader: str | None = None

    def __repr__(self) -> str:
        if not self._started:
            state = "new"
        elif self._finished:
            state = "stopped"
        else:
            state = "leading" if self.is_leader else "following"
        return f"<LeaderElector {self.namespace}/{self.lease_name} as {self.identity!r} [{state}]>"

    # -- state -----------------------------------------------------------------------------

    @property
    def has_started(self) -> bool:
        """True once :meth:`run` was called."""
        return self._started

    @property
    def is_leader(self) -> bool:
        """True while this candidate leads."""
        return self._term is not None and not self._term.ended

    @property
    def term(self) -> LeadershipTerm | None:
        """The current term while leading, else None."""
        return self._term if self.is_leader else None

    @property
    def leader(self) -> str | None:
        """The holder's identity as last seen (None: nobody, or not looked yet)."""
        record = self._record
        return record.holder_identity or None if record is not None else None

    @property
    def record(self) -> LeaseRecord | None:
        """The lease record as last read or written (None before the first request)."""
        return self._record

    @property
    def last_renewal(self) -> float | None:
        """The clock's time at the start of the last successful acquire or renew."""
        return self._renewed_at

    async def wait_for_leadership(self) -> LeadershipTerm | None:
        """Wait until this candidate leads; return the term, or None once the elector stopped."""
        while True:
            changed = self._changed
            term = self._term
            if term is not None and not term.ended:
                return term
            if self._finished:
                return None
            await changed.wait()

    async def wait_stopped(self) -> None:
        """Wait until :meth:`run` has finished."""
        await self._stopped.wait()

    # -- lifecycle -------------------------------------------------------------------------

    def run(self) -> Coroutine[Any, Any, None]:
        """Campaign (and lead, and campaign again) until :meth:`stop` or cancellation.

        Claims the elector at the call, so ``elector.run()`` may be handed to a task group.

        :raises LifecycleError: if it was called before.
        """
        if self._started:
            raise LifecycleError(f"leader elector {self.identity!r} runs only once")
        self._started = True
        return self._run()

    def stop(self) -> None:
        """Stop campaigning; a leader ends its term and (``release_on_cancel``) releases the
        lease. Idempotent; returns at once (see :meth:`wait_stopped`)."""
        self._stop.set()

    def _background_main(self) -> Coroutine[Any, Any, None]:
        """``async with elector:`` runs it in the background of the block; leaving the block
        stops it (releasing the lease if configured)."""
        return self.run()

    def _request_stop(self) -> None:
        self.stop()

    # -- the campaign ----------------------------------------------------------------------

    async def _run(self) -> None:
        logger.info(
            "leader election: %s campaigning for lease %s/%s",
            self.identity,
            self.namespace,
            self.lease_name,
        )
        try:
            async with asyncio.TaskGroup() as group:
                self._group = group
                try:
                    await self._campaign()
                finally:
                    await self._resign()
                    # Callbacks still running (say, an on_new_leader that never returns) must
                    # not hold the elector open: stopping is bounded.
                    for task in self._callback_tasks:
                        task.cancel()
        finally:
            self._group = None
            self._finished = True
            self._notify()
            self._stopped.set()
            logger.info("leader election: %s stopped", self.identity)

    async def _campaign(self) -> None:
        while not self._stop.is_set():
            if not await self._acquire():
                return
            if not await self._renew():
                return  # stop requested while leading: _resign() releases
            await self._end_term()
            await self._call_stopped_leading()

    async def _acquire(self) -> bool:
        """Poll until the lease is ours (True) or stop is requested (False)."""
        while True:
            outcome = await self._attempt(self.renew_deadline)
            if outcome is _Outcome.ACQUIRED:
                self._begin_term()
                return True
            delay = self.retry_period * (1.0 - _JITTER * self._rand())
            if outcome is _Outcome.HELD and self._expires_at is not None:
                until_expiry = self._expires_at - self._clock.now() + _EXPIRY_MARGIN
                delay = min(delay, max(0.0, until_expiry))
            if await self._sleep(delay):
                return False

    async def _renew(self) -> bool:
        """Renew until leadership is lost (True) or stop is requested (False)."""
        while True:
            if await self._sleep(self.retry_period):
                return False
            assert self._renewed_at is not None
            deadline = self._renewed_at + self.renew_deadline
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
                if outcome is _Outcome.ACQUIRED:
                    break
                if outcome is _Outcome.HELD:
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
        if self._stop.is_set():
            return True
        with self._clock.move_on_after(delay):
            await self._stop.wait()
            return True
        return False

    async def _attempt(self, timeout: float) -> _Outcome:
        with self._clock.move_on_after(timeout):
            return await self._guarded_attempt()
        logger.warning(
            "leader election: %s: lease %s/%s request timed out after %.1f s",
            self.identity,
            self.namespace,
            self.lease_name,
            timeout,
        )
        return _Outcome.FAILED

    async def _guarded_attempt(self) -> _Outcome:
        try:
            return await self._try_acquire_or_renew()
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
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
        return _Outcome.FAILED

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

    async def _try_acquire_or_renew(self) -> _Outcome:
        api = self._api
        self._expires_at = None
        if self.is_leader and self._lease is not None:
            # Fast path: the leader updates the lease it wrote last, without reading it first.
            started = self._clock.now()
            try:
                lease = await api.replace(self._renewed(self._lease))
            except (ApiError, TransportError) as exc:
                logger.debug(
                    "leader election: %s: optimistic renew failed (%s), reading the lease",
                    self.identity,
                    type(exc).__name__,
                )
            else:
                self._observe(lease)
                self._renewed_at = started
                return _Outcome.ACQUIRED
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
                return _Outcome.FAILED
            self._observe(lease)
            self._renewed_at = started
            return _Outcome.ACQUIRED
        record = self._observe(lease)
        decision = decide(
            record,
            me=self.identity,
            observed_at=self._observed_at,
            now=self._clock.now(),
            lease_duration=self.lease_duration,
        )
        if isinstance(decision, Held):
            self._expires_at = decision.until
            return _Outcome.HELD
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
            return _Outcome.FAILED
        self._observe(lease)
        self._renewed_at = started
        return _Outcome.ACQUIRED

    def _renewed(self, lease: KubeObject) -> KubeObject:
        return renewed(
            lease, identity=self.identity, lease_duration=self.lease_duration, now=datetime.now(UTC)
        )

    def _observe(self, lease: KubeObject) -> LeaseRecord:
        previous = self._lease
        if previous is None or previous.get("spec") != lease.get("spec"):
            self._observed_at = self._clock.now()
        self._lease = lease
        self._record = record = LeaseRecord.from_lease(lease)
        holder = record.holder_identity
        if holder and holder != self._reported_leader:
            self._reported_leader = holder
            logger.info(
                "leader election: lease %s/%s is held by %s",
                self.namespace,
                self.lease_name,
                holder,
            )
            if self._on_new_leader is not None:
                self._spawn("on_new_leader", self._on_new_leader, holder)
        return record

    # -- terms and callbacks ---------------------------------------------------------------

    def _begin_term(self) -> None:
        self._terms += 1
        self._term = LeadershipTerm(self._terms)
        logger.info(
            "leader election: %s became leader of lease %s/%s (term %d)",
            self.identity,
            self.namespace,
            self.lease_name,
            self._terms,
        )
        if self._on_started_leading is not None:
            self._started_task = self._spawn("on_started_leading", self._on_started_leading)
        self._notify()

    async def _end_term(self) -> None:
        term, self._term = self._term, None
        if term is None:
            return
        term._end()
        self._notify()
        task, self._started_task = self._started_task, None
        if task is not None and not task.done():
            task.cancel()
            with self._clock.move_on_after(self.renew_deadline):
                await asyncio.wait([task])
            if not task.done():
                logger.warning(
                    "leader election: %s: on_started_leading ignores cancellation", self.identity
                )

    async def _resign(self) -> None:
        """At the end of :meth:`run`: end the term and release the lease if configured."""
        if self._term is None:
            return
        await self._end_term()
        if self.release_on_cancel:
            await self._release()
        await self._call_stopped_leading()

    async def _release(self) -> None:
        lease = self._lease
        if lease is None:
            return
        try:
            with self._clock.fail_after(self.renew_deadline):
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
        self._lease = lease
        self._record = LeaseRecord.from_lease(lease)
        logger.info(
            "leader election: %s released lease %s/%s",
            self.identity,
            self.namespace,
            self.lease_name,
        )

    async def _call_stopped_leading(self) -> None:
        callback = self._on_stopped_leading
        if callback is None:
            return
        try:
            result = callback()
        except Exception as exc:
            logger.error(
                "leader election: on_stopped_leading raised %s: %s", type(exc).__name__, exc
            )
            return
        if result is not None and inspect.isawaitable(result):
            await _guarded("on_stopped_leading", result)

    def _spawn(
        self, what: str, callback: Callable[..., Awaitable[None] | None], *args: Any
    ) -> asyncio.Task[None] | None:
        """Call ``callback``; run an awaitable result as a task of the elector's group."""
        try:
            result = callback(*args)
        except Exception as exc:
            logger.error("leader election: %s raised %s: %s", what, type(exc).__name__, exc)
            return None
        if result is None or not inspect.isawaitable(result):
            return None
        assert self._group is not None
        task = self._group.create_task(_guarded(what, result), name=f"{self.identity} {what}")
        self._callback_tasks.add(task)
        task.add_done_callback(self._callback_tasks.discard)
        return task

    def _notify(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
