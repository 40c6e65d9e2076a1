"""The controller runner: N workers reconciling keys from a rate-limiting work queue.

``reconcile(key)`` is an async callable. What happens to the key afterwards follows
controller-runtime:

* it raised → the exception is logged (key, type and message only) and counted, and the key is
  :meth:`~aioinformer.workqueue.RateLimitingQueue.add_rate_limited`;
* it returned ``Result(requeue_after=s)`` with ``s > 0`` → ``forget`` then ``add_after(key, s)``;
* it returned ``Result(requeue=True)`` → ``add_rate_limited`` (the key's backoff grows);
* otherwise (``None`` or ``Result()``) → ``forget`` (the key's backoff resets).

``done`` is always called. The queue guarantees one key is never reconciled by two workers at
once, and a key added while it is reconciled is reconciled again afterwards.

Lifecycle (:mod:`aioinformer._lifecycle`): ``async with controller:`` runs it in the background
of the block; ``await tg.start(controller.run)`` returns once its caches synced and its workers
run (with a leader elector: once its caches synced and the elector campaigns). Stopping
(:meth:`~aioinformer._lifecycle.Service.aclose`, or leaving the block) is graceful: no new key
is handed out, reconciles in flight may finish within ``stop_timeout``, then the remaining
ones are cancelled. Cancelling the task running the controller (or the block) is the hard
stop: in-flight reconciles are cancelled at once. The queue is shut down either way, and a
controller runs only once. The workers live in :mod:`aioinformer._control._workers`.

Feeding from informers: :meth:`Controller.watch` (or :func:`~aioinformer.enqueue_keys`
for any queue)
registers a handler that turns an informer's notifications into keys — the object's own key
by default (tombstones included), the key of its controller owner with ``owner=`` (see
:func:`~aioinformer.owner_keys`), or any keys through ``map_func`` (for example a Pod event
enqueues its namespace); ``filter=`` takes a function of the object or a
:class:`~aioinformer.predicates.Predicate`. Before its workers start, the controller waits
until every watched registration has processed its informer's initial list
(controller-runtime's ``WaitForCacheSync``).

Leader election: with ``leader_elector=`` the workers run only while that
:class:`~aioinformer.LeaderElector` leads. Each term starts by queueing every
watched object's keys (a new leader reconciles everything, like a freshly started controller);
when the term ends the workers are stopped at once — in-flight reconciles are cancelled and
their keys queued again — and nothing is reconciled until the next term. The informers and the
queue keep running while following, so a new term starts from a warm cache. Stopping the
controller stops the workers first (gracefully, as above) and only then lets the elector
release the lease.

Fenced writes: with a leader elector, :attr:`Controller.client` is a fenced client
(:mod:`aioinformer._control._fence`): a write of a reconcile is sent only if the term the
reconcile began in is still the elector's, and the clock says the lease's renew deadline has not
passed (checked at the write, so a process that was paused or cut off learns it from its first
write, before the elector's loop runs). A refused write raises
:class:`~aioinformer.errors.FencedWriteError`; the reconcile is then done (counted in
``fenced_writes``, not retried: the next term reconciles everything).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import anyio

from .._clock import SYSTEM_CLOCK, Clock
from .._deprecation import warn_renamed
from .._election._leadership import LeadershipTerm
from .._lifecycle import DEFAULT_STOP_TIMEOUT, Service, State, stop_timeout_argument
from .._listwatch import Resource
from .._objects import KubeObject
from ..errors import LifecycleError
from ..workqueue._limiters import RateLimiter
from ..workqueue._metrics import MetricsProvider
from ..workqueue._rate_limiting import RateLimitingQueue
from ._enqueue import EnqueueHandler, Filter
from ._fence import Ticket, WriteFence, run_fenced
from ._owners import owner_keys
from ._workers import Reconciler, Result, WorkerPool

if TYPE_CHECKING:
    from .._election._elector import LeaderElector
    from .._informer._event_stream import Registration
    from .._informer._informer import SharedIndexInformer
    from .._wire._client import KubeClient

__all__ = [
    "Controller",
    "ControllerStatistics",
    "Reconciler",
    "Result",
]

logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)

#: Added to the graceful bounds before the lifecycle's backstop cancels a controller.
_STOP_MARGIN = 1.0


@dataclass(frozen=True, kw_only=True, slots=True)
class ControllerStatistics:
    """Counters of a controller, read with :meth:`Controller.statistics`.

    :ivar state: where the controller is in its life.
    :ivar leading: whether the workers run under leadership now (always False without an
        elector).
    :ivar reconciles: reconcile calls that returned or raised (cancelled ones not counted).
    :ivar errors: reconcile calls that raised (or returned something that is not a Result).
    :ivar requeues: keys put back because the Result asked for it (``requeue``/``requeue_after``).
    :ivar in_flight: reconcile calls running now.
    :ivar queue_depth: keys waiting in the queue now.
    :ivar fenced_writes: writes :attr:`Controller.client` refused (leadership lapsed during
        the reconcile); those reconciles were not retried.
    """

    state: State
    leading: bool
    reconciles: int
    errors: int
    requeues: int
    in_flight: int
    queue_depth: int
    fenced_writes: int = 0


@dataclass(frozen=True, slots=True)
class _Watch(Generic[K]):
    informer: SharedIndexInformer
    handler: EnqueueHandler[K]
    registration: Registration


class Controller(Service, Generic[K]):
    """Runs ``workers`` tasks that reconcile keys from :attr:`queue`.

    :param name: the controller's name, used in logs and as the default queue's metrics name.
    :param reconcile: ``async def reconcile(key) -> Result | None``.
    :param workers: how many reconciles may run at once. Default 1.
    :param queue: the queue to take keys from. Default None: a new
        :class:`~aioinformer.workqueue.RateLimitingQueue` named ``name`` with ``rate_limiter``.
    :param rate_limiter: the default queue's limiter (not allowed together with ``queue``).
        Default None: :func:`~aioinformer.workqueue.default_controller_rate_limiter`.
    :param stop_timeout: seconds a graceful stop lets in-flight reconciles finish before
        they are cancelled, on ``clock``; an elector the controller runs then gets its own
        bound to release the lease. Default 30
        (:data:`~aioinformer._lifecycle.DEFAULT_STOP_TIMEOUT`).
    :param metrics_provider: metrics for the default queue. Default None: no metrics.
    :param clock: time for the default queue and ``stop_timeout``. Default the system
        clock.
    :param leader_elector: reconcile only while this elector leads. If it has not been started
        when the controller starts, the controller runs it for its own lifetime (and closes it,
        releasing the lease, after its workers have stopped); if it is already running (one
        elector shared by several controllers), the controller only follows it, and stops
        when it stops. Default None: always reconcile.
    :param client: the connection reconciles read and write through, as :attr:`client`.
        Default None: the leader elector's (when it was given a ``client``).
    :param shutdown_timeout: deprecated former name of ``stop_timeout`` (warns).
    """

    def __init__(
        self,
        *,
        name: str,
        reconcile: Reconciler[K],
        workers: int = 1,
        queue: RateLimitingQueue[K] | None = None,
        rate_limiter: RateLimiter[K] | None = None,
        stop_timeout: float = DEFAULT_STOP_TIMEOUT,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock = SYSTEM_CLOCK,
        leader_elector: LeaderElector | None = None,
        shutdown_timeout: float | None = None,
        client: KubeClient | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        stop_timeout = stop_timeout_argument("Controller", stop_timeout, shutdown_timeout)
        if queue is not None and (rate_limiter is not None or metrics_provider is not None):
            raise ValueError("pass either a queue or the options of the default queue, not both")
        self.name = name
        self.workers = workers
        #: Seconds a graceful stop lets in-flight reconciles finish.
        self.stop_timeout = stop_timeout
        self._clock = clock
        if queue is None:
            queue = RateLimitingQueue(
                rate_limiter, name=name, metrics_provider=metrics_provider, clock=clock
            )
        #: The queue the workers take keys from.
        self.queue: RateLimitingQueue[K] = queue
        #: The elector the controller follows, or None.
        self.leader_elector = leader_elector
        self._watches: list[_Watch[K]] = []
        self._reconcile = reconcile
        if client is None and leader_elector is not None:
            client = leader_elector._client
        self._fence = WriteFence(owner=self, name=f"controller {name}", refusal=self._refusal)
        if client is not None and leader_elector is not None:
            client = client.fenced(self._fence)
        self._reconcile_client = client
        self._pool = WorkerPool(
            owner=self,
            name=name,
            queue=queue,
            reconcile=self._elected if leader_elector is not None else reconcile,
            workers=workers,
            stop_timeout=stop_timeout,
            clock=clock,
        )
        # The lifecycle's backstop: the graceful stop, and then an owned elector's release.
        self._stop_timeout = stop_timeout + _STOP_MARGIN
        if leader_elector is not None:
            self._stop_timeout += leader_elector._stop_timeout

    def __repr__(self) -> str:
        return f"<Controller {self.name!r} [{self.state.value}, {self.workers} workers]>"

    @property
    def shutdown_timeout(self) -> float:
        """Deprecated former name of :attr:`stop_timeout` (warns)."""
        warn_renamed("Controller.shutdown_timeout", "stop_timeout")
        return self.stop_timeout

    # -- feeding ---------------------------------------------------------------------------

    def enqueue(self, key: K) -> None:
        """Queue ``key`` for reconciling (deduplicated; ignored once stopping)."""
        self.queue.add(key)

    def enqueue_after(self, key: K, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds."""
        self.queue.add_after(key, delay)

    def watch(
        self,
        informer: SharedIndexInformer,
        *,
        key_func: Callable[[Any], K] | None = None,
        map_func: Callable[[KubeObject], Iterable[K]] | None = None,
        owner: Resource | str | None = None,
        filter: Filter | None = None,
        skip_resync: bool = False,
        resync_period: float | None = None,
    ) -> Registration:
        """Enqueue keys for ``informer``'s adds, updates and deletes (see
        :func:`~aioinformer.enqueue_keys` for the options).

        Watches registered before the controller starts hold its workers back until they
        have processed their informer's initial list. The handler is removed from the
        informer when the controller stops.

        :param owner: enqueue the key of each object's controller owner of this resource
            instead of the object's own: ``map_func=owner_keys(owner)`` (controller-runtime's
            ``Owns``). Not together with ``key_func`` or ``map_func``. Default None.
        :raises LifecycleError: if the controller has stopped.
        :raises ValueError: for ``owner`` together with ``key_func`` or ``map_func``, or an
            owner resource without a kind.
        """
        if self.state is State.STOPPED:
            self._require_not_stopped()
        if owner is not None:
            if key_func is not None or map_func is not None:
                raise ValueError("pass owner, key_func or map_func, not several")
            map_func = cast(Callable[[KubeObject], Iterable[K]], owner_keys(owner))
        handler = EnqueueHandler(
            self.queue,
            key_func=key_func,
            map_func=map_func,
            filter=filter,
            skip_resync=skip_resync,
        )
        registration = informer.add_event_handler(handler, resync_period=resync_period)
        self._watches.append(_Watch(informer, handler, registration))
        return registration

    # -- fenced writes -----------------------------------------------------------------------

    @property
    def client(self) -> KubeClient:
        """The client for the reconciles' reads and writes.

        With a leader elector, a fenced view of the ``client`` given (or the elector's): every
        write (create, replace, patch, apply, delete, status writes) is sent only while the
        reconcile's leadership term is current and the lease's renew deadline has not passed,
        on the clock at the write; otherwise it raises
        :class:`~aioinformer.errors.FencedWriteError` and sends nothing. Reads always pass.
        Without an elector, the ``client`` given.

        :raises LifecycleError: when the controller has no client (none given, and no elector
            with one).
        """
        if self._reconcile_client is None:
            raise LifecycleError(f"controller {self.name} has no client: pass client=")
        return self._reconcile_client

    def _refusal(self, ticket: Ticket | None) -> str | None:
        elector = self.leader_elector
        if elector is None:
            return None
        term = ticket.epoch if ticket is not None else None
        return elector.write_refusal(term if isinstance(term, LeadershipTerm) else None)

    async def _elected(self, key: K) -> Result | None:
        ticket = Ticket(owner=self, key=key, epoch=self._pool.term)
        return await run_fenced(ticket, lambda: self._reconcile(key))

    # -- introspection ---------------------------------------------------------------------

    @property
    def leading(self) -> bool:
        """True while the workers run under leadership (always False without an elector)."""
        return self._pool.term is not None

    def statistics(self) -> ControllerStatistics:
        """A snapshot of the controller's state and counters."""
        pool = self._pool
        return ControllerStatistics(
            state=self.state,
            leading=self.leading,
            reconciles=pool.reconciles,
            errors=pool.errors,
            requeues=pool.requeues,
            in_flight=pool.in_flight,
            queue_depth=len(self.queue),
            fenced_writes=self._fence.refused,
        )

    # -- lifecycle -------------------------------------------------------------------------

    async def _serve(self, ready: Callable[[], None]) -> None:
        try:
            elector = self.leader_elector
            if elector is not None:
                await self._serve_elected(elector, ready)
            elif await self._wait_for_caches():
                await self._pool.run(ready=ready)
        finally:
            logger.info("controller %s stopped", self.name)

    def _on_stop_requested(self) -> None:
        self.queue.shutdown()  # no new keys; the workers stop taking them

    def _on_stopped(self) -> None:
        self.queue.shutdown()
        for watch in self._watches:
            watch.informer.remove_event_handler(watch.registration)

    async def _wait_for_caches(self) -> bool:
        """Wait until every watch processed its initial list; False if stopped first, or if
        an informer stopped unsynced."""
        pending = [w.registration for w in self._watches if not w.registration.has_synced()]
        if pending:
            logger.info("controller %s: waiting for %d watches to sync", self.name, len(pending))
            with self._until_stop_requested():
                for registration in pending:
                    if not await registration.wait_for_cache_sync():
                        break  # it closed unsynced: found out below
        if self._stop_requested:
            return False
        unsynced = [w.informer.name for w in self._watches if not w.registration.has_synced()]
        if unsynced:
            # An informer stopped before it synced: reconciling against that cache would act
            # on a partial view (client-go's WaitForCacheSync returns false here too).
            logger.error(
                "controller %s: caches never synced (%s); not reconciling",
                self.name,
                ", ".join(unsynced),
            )
            return False
        return True

    # The elected driver: workers run only during leadership terms.

    async def _serve_elected(self, elector: LeaderElector, ready: Callable[[], None]) -> None:
        """Run this controller under ``elector`` until it is asked to stop (or the
        elector stops). ``ready()`` once the caches synced and the elector campaigns."""
        owned = elector.state is State.NEW
        async with anyio.create_task_group() as tg:
            if owned:
                await tg.start(elector.run)
            try:
                if await self._wait_for_caches():
                    ready()
                    await self._follow(elector)
            finally:
                if owned:
                    # After the workers have stopped: now the lease may be released.
                    await elector.aclose()

    async def _follow(self, elector: LeaderElector) -> None:
        logger.info("controller %s: waiting to lead lease %s", self.name, elector.lease_name)
        while True:
            term = None
            with self._until_stop_requested():
                term = await elector.wait_leading()
            if self._stop_requested:
                return
            if term is None:
                logger.info("controller %s: its leader elector stopped", self.name)
                return
            await self._lead(term)

    async def _lead(self, term: LeadershipTerm) -> None:
        logger.info("controller %s: leading (term %d)", self.name, term.number)
        # A new leader reconciles everything it watches, like a freshly started self.
        for watch in self._watches:
            for obj in watch.informer.cache.list():
                try:
                    watch.handler.enqueue(obj)
                except Exception as exc:
                    logger.error(
                        "controller %s: enqueueing a cached object failed: %s: %s",
                        self.name,
                        type(exc).__name__,
                        exc,
                    )
        await self._pool.run(term)
        if term.ended and not self._stop_requested:
            logger.info("controller %s: not leading any more; workers stopped", self.name)
