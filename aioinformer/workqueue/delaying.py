"""The delaying queue: a work queue that can also add an item after a delay.

Semantics are client-go's ``delayingType``:

* ``add_after(item, delay)`` with ``delay <= 0`` adds at once; otherwise the item waits until its
  deadline and is then :meth:`~aioinformer.workqueue.WorkQueue.add`-ed (so the usual dedup
  applies: an item can be waiting and queued at the same time).
* An item already waiting keeps the **earliest** deadline.
* Every call counts as a retry in the metrics, a zero delay included; calls during shutdown are
  ignored, and waiting items are discarded at shutdown.

Waiting items sit in a min-heap keyed by deadline. One event-loop timer (``loop.call_later``)
is armed for the earliest deadline and re-armed when an earlier item arrives; when it fires, every
due item is added. There is no background task and no polling; shutdown cancels the timer.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from collections.abc import Callable, Hashable
from typing import TypeVar

from .metrics import MetricsProvider
from .queue import DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD, WorkQueue

__all__ = ["DelayingQueue"]

T = TypeVar("T", bound=Hashable)


class DelayingQueue(WorkQueue[T]):
    """A :class:`~aioinformer.workqueue.WorkQueue` with :meth:`add_after`.

    Deadlines are measured on ``clock``; the timer that wakes the queue runs on the event loop
    of the first :meth:`add_after` with a positive delay, so that call needs a running loop.

    :param name: the queue's name; metrics are recorded only for a named queue. Default None.
    :param metrics_provider: creates the queue's metric objects. Default None: no metrics.
    :param clock: monotonic seconds for deadlines and metrics. Default :func:`time.monotonic`.
    :param unfinished_work_update_period: see :class:`~aioinformer.workqueue.WorkQueue`.
        Default 0.5 s.
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        metrics_provider: MetricsProvider | None = None,
        clock: Callable[[], float] = time.monotonic,
        unfinished_work_update_period: float = DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD,
    ) -> None:
        super().__init__(
            name=name,
            metrics_provider=metrics_provider,
            clock=clock,
            unfinished_work_update_period=unfinished_work_update_period,
        )
        # item -> (deadline, sequence number of its live heap entry)
        self._waiting: dict[T, tuple[float, int]] = {}
        # (deadline, sequence, item); entries whose sequence is not the item's live one are stale.
        self._heap: list[tuple[float, int, T]] = []
        self._sequence = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_deadline: float | None = None

    # -- introspection ---------------------------------------------------------------------

    @property
    def waiting_count(self) -> int:
        """The number of items waiting for their deadline."""
        return len(self._waiting)

    @property
    def next_ready_at(self) -> float | None:
        """The earliest deadline (on ``clock``) of a waiting item, or None."""
        head = self._live_head()
        return None if head is None else head[0]

    # -- producers -------------------------------------------------------------------------

    def add_after(self, item: T, delay: float) -> None:
        """Add ``item`` once ``delay`` seconds have passed; at once if ``delay <= 0``.

        If the item is already waiting, the earlier of the two deadlines is kept. Ignored once
        the queue is shutting down.

        :raises ValueError: if ``delay`` is NaN.
        :raises RuntimeError: for a positive delay when no event loop is running.
        """
        if math.isnan(delay):
            raise ValueError("delay must be a number of seconds, not NaN")
        if self._shutting_down:
            return
        if delay <= 0:
            self._metrics.retry()
            self.add(item)
            return
        loop = asyncio.get_running_loop()
        self._metrics.retry()
        deadline = self._clock() + delay
        current = self._waiting.get(item)
        if current is not None and current[0] <= deadline:
            return
        sequence = next(self._sequence)
        self._waiting[item] = (deadline, sequence)
        heapq.heappush(self._heap, (deadline, sequence, item))
        self._arm_timer(loop)

    # -- the synchronous core ----------------------------------------------------------------

    def _add_ready(self) -> None:
        """Add every waiting item whose deadline has passed, earliest deadline first."""
        now = self._clock()
        while (head := self._live_head()) is not None and head[0] <= now:
            heapq.heappop(self._heap)
            del self._waiting[head[2]]
            self.add(head[2])

    def _live_head(self) -> tuple[float, int, T] | None:
        heap = self._heap
        while heap:
            deadline, sequence, item = heap[0]
            if self._waiting.get(item) == (deadline, sequence):
                return heap[0]
            heapq.heappop(heap)
        return None

    # -- the timer -------------------------------------------------------------------------

    def _arm_timer(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Make the timer fire at the earliest deadline (or cancel it when nothing waits)."""
        deadline = self.next_ready_at
        if deadline == self._timer_deadline and self._timer is not None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._timer_deadline = None
        if deadline is None:
            return
        if loop is None:
            loop = asyncio.get_running_loop()
        self._timer = loop.call_later(max(0.0, deadline - self._clock()), self._on_timer)
        self._timer_deadline = deadline

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_deadline = None
        if self._shutting_down:
            return
        self._add_ready()
        self._arm_timer()

    def _on_shutdown(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._timer_deadline = None
        self._waiting.clear()
        self._heap.clear()
