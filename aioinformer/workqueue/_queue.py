"""The work queue: fair, deduplicating, and never hands one item to two workers at once.

Semantics are client-go's ``util/workqueue`` ``Typed`` queue:

* **Fair**: items are handed out in the order they were added (FIFO).
* **Stingy**: an item added several times before a worker gets it is handed out once
  (the ``dirty`` set).
* **Never concurrent**: between :meth:`WorkQueue.get` and :meth:`WorkQueue.done` an item is
  *processing*; adding it again only marks it dirty, and ``done`` puts it back at the end of the
  queue. So an item added while in flight is processed again, after the current processing.

Workers **must** call :meth:`WorkQueue.done` for every item they got (``try``/``finally``);
forgetting it leaks the item: it is never handed out again and
:meth:`WorkQueue.shutdown_with_drain` never returns.

All bookkeeping is synchronous; only :meth:`WorkQueue.get` and
:meth:`WorkQueue.shutdown_with_drain` wait, on futures woken by the synchronous methods (no
polling). Everything must run on one event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from .._clock import SYSTEM_CLOCK, Clock
from ..errors import QueueShutDown
from ._metrics import MetricsProvider, QueueMetrics, new_queue_metrics

__all__ = ["DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD", "WorkQueue"]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=Hashable)

#: The shortest interval, in seconds, between refreshes of unfinished-work gauges that can
#: only be set (client-go's ``defaultUnfinishedWorkUpdatePeriod``).
DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD = 0.5


class WorkQueue(Generic[T]):
    """A FIFO work queue with ``dirty`` and ``processing`` sets (client-go ``workqueue.Typed``).

    Items are any hashable values (typically ``"namespace/name"`` keys).

    :param name: the queue's name; metrics are recorded only for a named queue. Default None.
    :param metrics_provider: creates the queue's metric objects
        (see :mod:`aioinformer.workqueue._metrics`). Default None: no metrics.
    :param clock: time for metrics (and deadlines in subclasses). Default the system clock.
    :param unfinished_work_update_period: the shortest interval, on ``clock``, between two
        refreshes of the unfinished-work and longest-running gauges by the queue's operations
        (gauges that compute their value when read need none; see
        :mod:`aioinformer.workqueue._metrics`). Default
        :data:`DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD` (0.5 s).
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock = SYSTEM_CLOCK,
        unfinished_work_update_period: float = DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD,
    ) -> None:
        if not unfinished_work_update_period > 0:
            raise ValueError("unfinished_work_update_period must be positive")
        self._name = name
        self._clock = clock
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._shutting_down = False
        self._getters: deque[asyncio.Future[None]] = deque()
        # Getters that left without being woken (cancelled, or a subclass deadline): their
        # futures stay in _getters, skipped by wake-ups, until pruned (see _forget_getter).
        self._dead_getters = 0
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._metrics: QueueMetrics[T] = new_queue_metrics(
            name, metrics_provider, clock.now, refresh_period=unfinished_work_update_period
        )
        # Whether anything records: the no-op recorder's calls are skipped altogether.
        self._metered = type(self._metrics) is not QueueMetrics

    # -- introspection ---------------------------------------------------------------------

    @property
    def name(self) -> str | None:
        """The queue's name (the metrics label), or None."""
        return self._name

    @property
    def shutting_down(self) -> bool:
        """True once :meth:`shutdown` or :meth:`shutdown_with_drain` was called."""
        return self._shutting_down

    def __len__(self) -> int:
        """The number of items waiting to be handed out (not counting those processing)."""
        return len(self._queue)

    def __repr__(self) -> str:
        state = "shutting down" if self._shutting_down else "running"
        return (
            f"<{type(self).__name__} {self._name or ''} [{state}, {len(self._queue)} queued, "
            f"{len(self._processing)} processing]>"
        )

    # -- producers -------------------------------------------------------------------------

    def add(self, item: T) -> None:
        """Queue ``item`` unless it is already queued; ignored once shutting down.

        If ``item`` is being processed it is only marked dirty: :meth:`done` re-queues it.
        """
        if self._shutting_down or item in self._dirty:
            return
        if self._metered:
            self._metrics.add(item)
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        self._wakeup_next_getter()

    # -- consumers -------------------------------------------------------------------------

    async def get(self) -> T:
        """Wait for the next item and mark it as processing; call :meth:`done` when finished.

        After shutdown, the items still queued are handed out first.

        :raises QueueShutDown: once the queue is shutting down and nothing is left queued.
        """
        while True:
            self._catch_up()
            if self._queue:
                return self._take()
            if self._shutting_down:
                label = f" {self._name!r}" if self._name else ""
                raise QueueShutDown(f"work queue{label} is shut down")
            waiter = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await self._wait(waiter)
            except BaseException:
                waiter.cancel()
                self._forget_getter(waiter)
                # We may have been woken for an item we will not take: pass the wake-up on.
                if self._queue and not waiter.cancelled():
                    self._wakeup_next_getter()
                raise
            if not waiter.done():  # the wait ended without a wake-up (a subclass deadline)
                waiter.cancel()
            self._forget_getter(waiter)

    def done(self, item: T) -> None:
        """Mark ``item`` as finished; re-queue it if it was added while processing.

        Calling ``done`` for an item that is not processing does nothing (client-go would
        re-queue a dirty item here, duplicating it).
        """
        if item not in self._processing:
            return
        if self._metered:
            self._metrics.done(item)
        self._processing.remove(item)
        if item in self._dirty:
            self._queue.append(item)
            self._wakeup_next_getter()
        else:
            self._release_drain_waiters_if_drained()

    # -- shutdown --------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop accepting items; :meth:`get` hands out what is queued, then raises.

        Idempotent. A pending :meth:`shutdown_with_drain` returns at once (as in client-go).
        """
        self._begin_shutdown()
        self._release_drain_waiters()

    async def shutdown_with_drain(self) -> None:
        """Shut down like :meth:`shutdown`, then wait until nothing is queued **and** nothing is
        processing.

        Stronger than client-go (which waits only for the processing items). It waits for
        workers to get the queued items and call :meth:`done`; it never returns if a worker
        forgets ``done`` or no worker calls ``get``: bound it with :func:`asyncio.wait_for`, or
        call :meth:`shutdown` to stop waiting.
        """
        self._begin_shutdown()
        if self._is_drained():
            return
        waiter = asyncio.get_running_loop().create_future()
        self._drain_waiters.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self._drain_waiters:
                self._drain_waiters.remove(waiter)

    # -- metrics ---------------------------------------------------------------------------

    def update_unfinished_work_metrics(self) -> None:
        """Refresh the unfinished-work and longest-running metrics now.

        Gauges that compute their value when read are always current; the others are also
        refreshed by the queue's operations, at most every ``unfinished_work_update_period``.
        """
        self._metrics.update_unfinished_work()

    # -- internals -------------------------------------------------------------------------

    def _take(self) -> T:
        item = self._queue.popleft()
        if self._metered:
            self._metrics.get(item)
        self._processing.add(item)
        self._dirty.discard(item)
        return item

    def _catch_up(self) -> None:
        """Hook for subclasses: bring the queue up to date (add items that became due)."""

    async def _wait(self, waiter: asyncio.Future[None]) -> None:
        """Wait for a wake-up; subclasses may return earlier (with ``waiter`` pending)."""
        await waiter

    def _forget_getter(self, waiter: asyncio.Future[None]) -> None:
        """A getter is done waiting. One that was woken was taken off ``_getters`` by the
        wake-up; one that left otherwise (its future cancelled) is still there and is
        skipped by wake-ups. Such dead futures are dropped all at once when they outnumber
        the live ones (no ``deque.remove``: a search, and on CPython 3.11 a ``ValueError``
        formatting the future's repr when it is gone already)."""
        if not waiter.cancelled():
            return
        self._dead_getters += 1
        getters = self._getters
        if self._dead_getters > 8 and 2 * self._dead_getters > len(getters):
            live = [other for other in getters if not other.done()]
            getters.clear()
            getters.extend(live)
            self._dead_getters = 0

    def _wakeup_next_getter(self) -> None:
        getters = self._getters
        while getters:
            waiter = getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
            if self._dead_getters:
                self._dead_getters -= 1

    def _begin_shutdown(self) -> None:
        if not self._shutting_down:
            logger.debug("work queue %s shutting down", self._name or "(unnamed)")
        self._shutting_down = True
        self._metrics.shutdown()
        self._on_shutdown()
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
        self._dead_getters = 0

    def _on_shutdown(self) -> None:
        """Hook for subclasses: release whatever they hold (timers, waiting items)."""

    def _is_drained(self) -> bool:
        return not self._queue and not self._processing

    def _release_drain_waiters_if_drained(self) -> None:
        if self._drain_waiters and self._is_drained():
            self._release_drain_waiters()

    def _release_drain_waiters(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
