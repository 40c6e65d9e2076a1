"""The delaying queue: a work queue that can also add an item after a delay.

Semantics are client-go's ``delayingType``:

* ``add_after(item, delay)`` with ``delay <= 0`` adds at once; otherwise the item waits until its
  deadline and is then :meth:`~aioinformer.workqueue.WorkQueue.add`-ed (so the usual dedup
  applies: an item can be waiting and queued at the same time).
* An item already waiting keeps the **earliest** deadline.
* Every call counts as a retry in the metrics, a zero delay included; calls during shutdown are
  ignored, and waiting items are discarded at shutdown.

Waiting items sit in a min-heap keyed by deadline, measured on the queue's clock. Deadlines fire
through that clock, without a timer task: a :meth:`~DelayingQueue.get` waiting on an empty
queue waits (with :meth:`~aioinformer.Clock.move_on_after`) until the earliest deadline at
most, and every operation first adds the items whose deadline has passed, in deadline order.
So the queue behaves as if each item were added at its deadline, and a test that advances a
:class:`~aioinformer.testing.FakeClock` sees due items handed out at once. (While no ``get``
waits, the depth metric catches up at the next operation.)
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections.abc import Hashable
from typing import TypeVar

from .._clock import SYSTEM_CLOCK, Clock
from ._metrics import MetricsProvider
from ._queue import DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD, WorkQueue

__all__ = ["DelayingQueue"]

T = TypeVar("T", bound=Hashable)


class DelayingQueue(WorkQueue[T]):
    """A :class:`~aioinformer.workqueue.WorkQueue` with :meth:`add_after`.

    :param name: the queue's name; metrics are recorded only for a named queue. Default None.
    :param metrics_provider: creates the queue's metric objects. Default None: no metrics.
    :param clock: time for deadlines and metrics. Default the system clock.
    :param unfinished_work_update_period: see :class:`~aioinformer.workqueue.WorkQueue`.
        Default 0.5 s.
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock = SYSTEM_CLOCK,
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

    # -- introspection ---------------------------------------------------------------------

    def __len__(self) -> int:
        self._catch_up()
        return super().__len__()

    @property
    def waiting_count(self) -> int:
        """The number of items waiting for their deadline."""
        self._catch_up()
        return len(self._waiting)

    @property
    def next_ready_at(self) -> float | None:
        """The earliest deadline (on the clock) of a waiting item, or None."""
        self._catch_up()
        head = self._live_head()
        return None if head is None else head[0]

    # -- producers -------------------------------------------------------------------------

    def add(self, item: T) -> None:
        """See :meth:`~aioinformer.workqueue.WorkQueue.add` (items already due go first)."""
        self._catch_up()
        super().add(item)

    def add_after(self, item: T, delay: float) -> None:
        """Add ``item`` once ``delay`` seconds have passed; at once if ``delay <= 0``.

        If the item is already waiting, the earlier of the two deadlines is kept. Ignored once
        the queue is shutting down.

        :raises ValueError: if ``delay`` is NaN.
        """
        if math.isnan(delay):
            raise ValueError("delay must be a number of seconds, not NaN")
        if self._shutting_down:
            return
        self._metrics.retry()
        if delay <= 0:
            self.add(item)
            return
        self._catch_up()
        deadline = self._clock.now() + delay
        current = self._waiting.get(item)
        if current is not None and current[0] <= deadline:
            return
        head = self._live_head()
        sequence = next(self._sequence)
        self._waiting[item] = (deadline, sequence)
        heapq.heappush(self._heap, (deadline, sequence, item))
        if head is None or deadline < head[0]:
            # A getter may be waiting for a later deadline: let it wait for this one.
            self._wakeup_next_getter()

    # -- consumers -------------------------------------------------------------------------

    def done(self, item: T) -> None:
        """See :meth:`~aioinformer.workqueue.WorkQueue.done` (items already due go first)."""
        self._catch_up()
        super().done(item)

    # -- the deadlines ---------------------------------------------------------------------

    def _catch_up(self) -> None:
        """Add every waiting item whose deadline has passed, earliest deadline first."""
        if not self._heap:
            return
        now = self._clock.now()
        while (head := self._live_head()) is not None and head[0] <= now:
            heapq.heappop(self._heap)
            del self._waiting[head[2]]
            WorkQueue.add(self, head[2])

    def _live_head(self) -> tuple[float, int, T] | None:
        heap = self._heap
        while heap:
            deadline, sequence, item = heap[0]
            if self._waiting.get(item) == (deadline, sequence):
                return heap[0]
            heapq.heappop(heap)
        return None

    async def _wait(self, waiter: asyncio.Future[None]) -> None:
        """Wait for a wake-up, or until the earliest deadline."""
        head = self._live_head()
        if head is None:
            await waiter
            return
        with self._clock.move_on_after(head[0] - self._clock.now()):
            await waiter

    def _begin_shutdown(self) -> None:
        self._catch_up()  # items already due were added before the shutdown
        super()._begin_shutdown()

    def _on_shutdown(self) -> None:
        self._waiting.clear()
        self._heap.clear()
