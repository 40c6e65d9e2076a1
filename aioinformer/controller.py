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

Stopping: :meth:`Controller.stop` is graceful: no new key is handed out, reconciles in flight
may finish within ``shutdown_timeout``, then the remaining ones are cancelled. Cancelling the
task running :meth:`Controller.run` is the hard stop: in-flight reconciles are cancelled at
once. The queue is shut down either way, and a controller runs only once.

Feeding from informers: :meth:`Controller.watch` (or :func:`~aioinformer.enqueue.enqueue_keys`
for any queue)
registers a handler that turns an informer's notifications into keys — the object's own key
by default (tombstones included), or any keys through ``map_func`` (for example a Pod event
enqueues its namespace). Before its workers start, the controller waits until every watched
registration has processed its informer's initial list (controller-runtime's
``WaitForCacheSync``).

Leader election: with ``leader_elector=`` the workers run only while that
:class:`~aioinformer.leaderelection.LeaderElector` leads. Each term starts by queueing every
watched object's keys (a new leader reconciles everything, like a freshly started controller);
when the term ends the workers are stopped at once — in-flight reconciles are cancelled and
their keys queued again — and nothing is reconciled until the next term. The informers and the
queue keep running while following, so a new term starts from a warm cache. Stopping the
controller stops the workers first (gracefully, as above) and only then lets the elector
release the lease.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from ._background import BackgroundRunner
from ._clock import SYSTEM_CLOCK, Clock
from .enqueue import EnqueueHandler
from .errors import LifecycleError, QueueShutDown
from .objects import KubeObject
from .workqueue.limiters import RateLimiter
from .workqueue.metrics import MetricsProvider
from .workqueue.rate_limiting import RateLimitingQueue

if TYPE_CHECKING:
    from .informer import SharedIndexInformer
    from .leaderelection import LeaderElector, LeadershipTerm
    from .listener import Registration

__all__ = [
    "Controller",
    "ControllerStatistics",
    "Reconciler",
    "Result",
]

logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Result:
    """What a reconcile asks for.

    :param requeue: reconcile the key again after the rate limiter's delay. Default False.
    :param requeue_after: reconcile the key again after this many seconds (wins over
        ``requeue`` when positive; the backoff is reset). Zero or negative values are ignored,
        as in controller-runtime. Default None.
    """

    requeue: bool = False
    requeue_after: float | None = None


#: ``async def reconcile(key) -> Result | None``.
Reconciler = Callable[[K], Awaitable[Result | None]]


@dataclass(frozen=True, slots=True)
class ControllerStatistics:
    """Counters of a controller, read with :meth:`Controller.statistics`.

    :ivar reconciles: reconcile calls that returned or raised (cancelled ones not counted).
    :ivar errors: reconcile calls that raised (or returned something that is not a Result).
    :ivar requeues: keys put back because the Result asked for it (``requeue``/``requeue_after``).
    :ivar in_flight: reconcile calls running now.
    :ivar queue_depth: keys waiting in the queue now.
    """

    reconciles: int
    errors: int
    requeues: int
    in_flight: int
    queue_depth: int


@dataclass(frozen=True, slots=True)
class _Watch(Generic[K]):
    informer: SharedIndexInformer
    handler: EnqueueHandler[K]
    registration: Registration


async def _first(*awaitables: Coroutine[Any, Any, object]) -> tuple[int, object]:
    """Wait until one of the coroutines finishes and cancel the others.

    For coroutines that do not raise (event waits). Returns the winner's index and result.
    """
    winner = -1
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(aw) for aw in awaitables]

        def finished(task: asyncio.Task[object]) -> None:
            nonlocal winner
            if winner < 0 and not task.cancelled():
                winner = tasks.index(task)
            for other in tasks:
                other.cancel()

        for task in tasks:
            task.add_done_callback(finished)
    return winner, tasks[winner].result()


class Controller(BackgroundRunner, Generic[K]):
    """Runs ``workers`` tasks that reconcile keys from :attr:`queue`.

    :param name: the controller's name, used in logs and as the default queue's metrics name.
    :param reconcile: ``async def reconcile(key) -> Result | None``.
    :param workers: how many reconciles may run at once. Default 1.
    :param queue: the queue to take keys from. Default None: a new
        :class:`~aioinformer.workqueue.RateLimitingQueue` named ``name`` with ``rate_limiter``.
    :param rate_limiter: the default queue's limiter (not allowed together with ``queue``).
        Default None: :func:`~aioinformer.workqueue.default_controller_rate_limiter`.
    :param shutdown_timeout: seconds :meth:`stop` lets in-flight reconciles finish before they
        are cancelled. Default 30.0.
    :param metrics_provider: metrics for the default queue. Default None: no metrics.
    :param clock: time for the default queue. Default the system clock.
    :param leader_elector: reconcile only while this elector leads. If it has not been started
        when the controller starts, the controller runs it for its own lifetime (and stops it,
        releasing the lease, after its workers have stopped); if it is already running (one
        elector shared by several controllers), the controller only follows it, and stops
        when it stops. Default None: always reconcile.
    """

    def __init__(
        self,
        *,
        name: str,
        reconcile: Reconciler[K],
        workers: int = 1,
        queue: RateLimitingQueue[K] | None = None,
        rate_limiter: RateLimiter[K] | None = None,
        shutdown_timeout: float = 30.0,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock = SYSTEM_CLOCK,
        leader_elector: LeaderElector | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        if not shutdown_timeout >= 0:
            raise ValueError("shutdown_timeout must be non-negative")
        if queue is not None and (rate_limiter is not None or metrics_provider is not None):
            raise ValueError("pass either a queue or the options of the default queue, not both")
        self.name = name
        self.workers = workers
        self.shutdown_timeout = shutdown_timeout
        self._reconcile = reconcile
        if queue is None:
            queue = RateLimitingQueue(
                rate_limiter, name=name, metrics_provider=metrics_provider, clock=clock
            )
        #: The queue the workers take keys from.
        self.queue: RateLimitingQueue[K] = queue
        self._started = False
        self._stop_requested = asyncio.Event()
        self._stopped = asyncio.Event()
        self._live_workers = 0
        self._reconciles = 0
        self._errors = 0
        self._requeues = 0
        self._in_flight = 0
        #: The elector the controller follows, or None.
        self.leader_elector = leader_elector
        self._watches: list[_Watch[K]] = []
        self._workers_gone = asyncio.Event()
        self._requeue_cancelled = False
        self._leading = False

    def __repr__(self) -> str:
        if not self._started:
            state = "new"
        elif self._stopped.is_set():
            state = "stopped"
        else:
            state = "stopping" if self._stop_requested.is_set() else "running"
        return f"<Controller {self.name!r} [{state}, {self.workers} workers]>"

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
        filter: Callable[[KubeObject], bool] | None = None,
        skip_resync: bool = False,
        resync_period: float | None = None,
    ) -> Registration:
        """Enqueue keys for ``informer``'s adds, updates and deletes (see :func:`enqueue_keys`
        for the options).

        Watches registered before the controller starts hold its workers back until they
        have processed their informer's initial list. The handler is removed from the
        informer when the controller stops.

        :raises LifecycleError: if the controller has stopped.
        """
        if self._stopped.is_set():
            raise LifecycleError(f"controller {self.name!r} has stopped")
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

    # -- introspection ---------------------------------------------------------------------

    @property
    def leading(self) -> bool:
        """True while the workers run under leadership (always False without an elector)."""
        return self._leading

    def statistics(self) -> ControllerStatistics:
        """A snapshot of the controller's counters."""
        return ControllerStatistics(
            reconciles=self._reconciles,
            errors=self._errors,
            requeues=self._requeues,
            in_flight=self._in_flight,
            queue_depth=len(self.queue),
        )

    async def wait_stopped(self) -> None:
        """Wait until :meth:`run` has finished."""
        await self._stopped.wait()

    # -- lifecycle -------------------------------------------------------------------------

    async def run(self) -> None:
        """Run the workers until :meth:`stop` (or until the queue is shut down).

        The workers start once every watch has synced and, with a ``leader_elector``, only
        while it leads (see the module documentation). Returns after a graceful stop. If the
        task running it is cancelled, in-flight reconciles are cancelled and
        ``CancelledError`` propagates.

        :raises LifecycleError: if the controller was already started.
        """
        self._claim_start()
        await self._run()

    def stop(self) -> None:
        """Ask :meth:`run` to stop gracefully: no new keys; in-flight reconciles may finish
        within ``shutdown_timeout``. Shuts the queue down. Idempotent; returns at once."""
        self._stop_requested.set()
        self.queue.shutdown()

    def _background_main(self) -> Coroutine[Any, Any, None]:
        """``async with controller:`` runs it in the background of the block; leaving the
        block stops it gracefully (at once when the block is cancelled)."""
        self._claim_start()
        return self._run()

    def _request_stop(self) -> None:
        self.stop()

    # -- internals -------------------------------------------------------------------------

    def _claim_start(self) -> None:
        if self._started:
            raise LifecycleError(f"controller {self.name!r} was already started")
        self._started = True

    async def _run(self) -> None:
        try:
            elector = self.leader_elector
            if elector is None:
                if await self._wait_for_caches(None):
                    await self._run_workers(None)
            else:
                await self._run_elected(elector)
        finally:
            self._leading = False
            self._stop_requested.set()
            self.queue.shutdown()
            for watch in self._watches:
                watch.informer.remove_event_handler(watch.registration)
            self._stopped.set()
            logger.info("controller %s stopped", self.name)

    async def _wait_for_caches(self, term: LeadershipTerm | None) -> bool:
        """Wait until every watch processed its initial list; False if stopped (or the term
        ended) first."""
        pending = [w.registration for w in self._watches if not w.registration.has_synced()]
        if pending:
            logger.info("controller %s: waiting for %d watches to sync", self.name, len(pending))
            waits: list[Coroutine[Any, Any, object]] = [
                self._all_synced(pending),
                self._stop_requested.wait(),
            ]
            if term is not None:
                waits.append(term.wait_ended())
            await _first(*waits)
        if self._stop_requested.is_set() or (term is not None and term.ended):
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
            self.stop()
            return False
        return True

    @staticmethod
    async def _all_synced(registrations: list[Registration]) -> None:
        for registration in registrations:
            if not await registration.wait_synced():
                return  # it closed unsynced; the caller finds out

    async def _run_elected(self, elector: LeaderElector) -> None:
        async with asyncio.TaskGroup() as group:
            owned = not elector.has_started
            if owned:
                group.create_task(elector.run(), name=f"controller {self.name} leader elector")
            try:
                await self._follow(elector)
            finally:
                if owned:
                    # After the workers have stopped: now the lease may be released.
                    elector.stop()

    async def _follow(self, elector: LeaderElector) -> None:
        stop = self._stop_requested
        logger.info("controller %s: waiting to lead lease %s", self.name, elector.lease_name)
        while not stop.is_set():
            winner, result = await _first(elector.wait_for_leadership(), stop.wait())
            if winner != 0:
                return
            if result is None:
                logger.info("controller %s: its leader elector stopped", self.name)
                return
            await self._lead(cast("LeadershipTerm", result))

    async def _lead(self, term: LeadershipTerm) -> None:
        logger.info("controller %s: leading (term %d)", self.name, term.number)
        if not await self._wait_for_caches(term):
            return
        # A new leader reconciles everything it watches, like a freshly started controller.
        for watch in self._watches:
            for obj in watch.informer.indexer.list():
                try:
                    watch.handler.enqueue(obj)
                except Exception as exc:
                    logger.error(
                        "controller %s: enqueueing a cached object failed: %s: %s",
                        self.name,
                        type(exc).__name__,
                        exc,
                    )
        self._leading = True
        try:
            await self._run_workers(term)
        finally:
            self._leading = False
        if term.ended and not self._stop_requested.is_set():
            logger.info("controller %s: not leading any more; workers stopped", self.name)

    async def _run_workers(self, term: LeadershipTerm | None) -> None:
        logger.info("controller %s starting %d workers", self.name, self.workers)
        self._workers_gone = asyncio.Event()
        self._requeue_cancelled = False
        async with asyncio.TaskGroup() as group:
            self._live_workers = self.workers
            tasks = [
                group.create_task(self._worker(), name=f"controller {self.name} worker {i}")
                for i in range(self.workers)
            ]
            waits: list[Coroutine[Any, Any, object]] = [
                self._stop_requested.wait(),
                self._workers_gone.wait(),
            ]
            if term is not None:
                waits.append(term.wait_ended())
            await _first(*waits)
            if term is not None and term.ended:
                # Leadership lost: stop at once; unfinished keys go back to the queue.
                self._requeue_cancelled = True
                if self._in_flight:
                    logger.info(
                        "controller %s: cancelling %d reconciles: leadership lost",
                        self.name,
                        self._in_flight,
                    )
                for task in tasks:
                    task.cancel()
                return
            if not self._stop_requested.is_set():
                # Every worker is gone: the queue was shut down elsewhere.
                self._stop_requested.set()
                return
            self.queue.shutdown()
            if self._in_flight:
                logger.info(
                    "controller %s stopping: waiting up to %.1f s for %d reconciles",
                    self.name,
                    self.shutdown_timeout,
                    self._in_flight,
                )
            waits = [self._workers_gone.wait()]
            if term is not None:
                waits.append(term.wait_ended())
            try:
                async with asyncio.timeout(self.shutdown_timeout):
                    await _first(*waits)
            except TimeoutError:
                pass
            pending = [task for task in tasks if not task.done()]
            if pending:
                if term is not None and term.ended:
                    logger.warning(
                        "controller %s: cancelling %d reconciles: leadership lost while stopping",
                        self.name,
                        self._in_flight,
                    )
                else:
                    logger.warning(
                        "controller %s: cancelling %d reconciles still running after %.1f s",
                        self.name,
                        self._in_flight,
                        self.shutdown_timeout,
                    )
                for task in pending:
                    task.cancel()

    async def _worker(self) -> None:
        queue = self.queue
        try:
            while not self._stop_requested.is_set():
                try:
                    key = await queue.get()
                except QueueShutDown:
                    return
                try:
                    if self._stop_requested.is_set():
                        return  # stopping: hand out no new work
                    await self._process(key)
                except asyncio.CancelledError:
                    if self._requeue_cancelled:
                        queue.add(key)  # unfinished: reconcile it again in the next term
                    raise
                finally:
                    queue.done(key)
        finally:
            self._live_workers -= 1
            if self._live_workers == 0:
                self._workers_gone.set()

    def _reconcile_failed(self, key: K, exc: BaseException) -> None:
        self._reconciles += 1
        self._errors += 1
        logger.error(
            "controller %s: reconcile of %r failed: %s: %s",
            self.name,
            key,
            type(exc).__name__,
            exc,
        )
        logger.debug("controller %s: reconcile of %r traceback", self.name, key, exc_info=exc)
        self.queue.add_rate_limited(key)

    async def _process(self, key: K) -> None:
        queue = self.queue
        self._in_flight += 1
        try:
            result: object = await self._reconcile(key)
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this worker is being cancelled (stop, or the term ended)
            # reconcile awaited something cancelled elsewhere: a failure of that key, not ours.
            self._reconcile_failed(key, exc)
            return
        except Exception as exc:
            self._reconcile_failed(key, exc)
            return
        finally:
            self._in_flight -= 1
        self._reconciles += 1
        if result is None:
            queue.forget(key)
        elif not isinstance(result, Result):
            self._errors += 1
            logger.error(
                "controller %s: reconcile of %r returned %s, not a Result or None",
                self.name,
                key,
                type(result).__name__,
            )
            queue.add_rate_limited(key)
        elif result.requeue_after is not None and result.requeue_after > 0:
            self._requeues += 1
            queue.forget(key)
            queue.add_after(key, result.requeue_after)
        elif result.requeue:
            self._requeues += 1
            queue.add_rate_limited(key)
        else:
            queue.forget(key)
