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
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from types import TracebackType
from typing import Generic, Self, TypeVar

from .errors import LifecycleError, QueueShutDown
from .workqueue.limiters import RateLimiter
from .workqueue.metrics import MetricsProvider
from .workqueue.rate_limiting import RateLimitingQueue

__all__ = ["Controller", "ControllerStatistics", "Reconciler", "Result"]

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


class Controller(Generic[K]):
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
    :param clock: monotonic seconds for the default queue. Default :func:`time.monotonic`.
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
        clock: Callable[[], float] = time.monotonic,
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
        self._context_group: asyncio.TaskGroup | None = None
        self._reconciles = 0
        self._errors = 0
        self._requeues = 0
        self._in_flight = 0

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

    # -- introspection ---------------------------------------------------------------------

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

        Returns after a graceful stop. If the task running it is cancelled, in-flight
        reconciles are cancelled and ``CancelledError`` propagates.

        :raises LifecycleError: if the controller was already started.
        """
        self._claim_start()
        await self._run()

    def stop(self) -> None:
        """Ask :meth:`run` to stop gracefully: no new keys; in-flight reconciles may finish
        within ``shutdown_timeout``. Shuts the queue down. Idempotent; returns at once."""
        self._stop_requested.set()
        self.queue.shutdown()

    async def __aenter__(self) -> Self:
        """Run the controller in the background of the ``async with`` block."""
        self._claim_start()
        group = asyncio.TaskGroup()
        await group.__aenter__()
        self._context_group = group
        group.create_task(self._run(), name=f"controller {self.name}")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop gracefully (at once if the block is being cancelled) and wait for the end."""
        group = self._context_group
        assert group is not None
        self._context_group = None
        if exc_type is not None and issubclass(exc_type, asyncio.CancelledError):
            # The task group cancels the run task and re-raises the cancellation.
            await group.__aexit__(exc_type, exc, tb)
            return
        self.stop()
        # The block's own exception (if any) propagates unchanged after this returns.
        await group.__aexit__(None, None, None)

    # -- internals -------------------------------------------------------------------------

    def _claim_start(self) -> None:
        if self._started:
            raise LifecycleError(f"controller {self.name!r} was already started")
        self._started = True

    async def _run(self) -> None:
        logger.info("controller %s starting %d workers", self.name, self.workers)
        try:
            async with asyncio.TaskGroup() as group:
                self._live_workers = self.workers
                tasks = [
                    group.create_task(self._worker(), name=f"controller {self.name} worker {i}")
                    for i in range(self.workers)
                ]
                await self._stop_requested.wait()
                self.queue.shutdown()
                if self._in_flight:
                    logger.info(
                        "controller %s stopping: waiting up to %.1f s for %d reconciles",
                        self.name,
                        self.shutdown_timeout,
                        self._in_flight,
                    )
                _, pending = await asyncio.wait(tasks, timeout=self.shutdown_timeout)
                if pending:
                    logger.warning(
                        "controller %s: cancelling %d reconciles still running after %.1f s",
                        self.name,
                        self._in_flight,
                        self.shutdown_timeout,
                    )
                    for task in pending:
                        task.cancel()
        finally:
            self._stop_requested.set()
            self.queue.shutdown()
            self._stopped.set()
            logger.info("controller %s stopped", self.name)

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
                finally:
                    queue.done(key)
        finally:
            self._live_workers -= 1
            if self._live_workers == 0:
                # Every worker is gone (the queue was shut down): run() can finish.
                self._stop_requested.set()

    async def _process(self, key: K) -> None:
        queue = self.queue
        self._in_flight += 1
        try:
            result: object = await self._reconcile(key)
        except Exception as exc:
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
            queue.add_rate_limited(key)
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
