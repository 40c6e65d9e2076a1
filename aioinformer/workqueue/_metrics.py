"""Work queue metrics: the provider protocol, a no-op default, and the per-queue recorder.

A :class:`MetricsProvider` is a factory of metric objects, one set per named queue, mirroring
client-go's ``workqueue.MetricsProvider``. A provider only needs to hand out objects with the
methods below; a Prometheus provider maps them onto the ``workqueue_*`` families in
:data:`METRIC_NAMES` with a ``name`` label and the buckets in :data:`HISTOGRAM_BUCKETS`.

As in client-go, a queue records metrics only when it has a ``name`` **and** a provider; otherwise
every hook is a no-op. What is measured (client-go semantics):

* ``depth`` goes up on every add of an item that is not yet dirty (including an item currently
  being processed) and down on every ``get``.
* ``adds`` counts the same adds.
* ``latency`` (queue duration) is the time from the first add while dirty to the ``get``.
* ``work_duration`` is the time from ``get`` to ``done``.
* ``unfinished_work_seconds`` is the sum of the ages of the items being processed, and
  ``longest_running_processor_seconds`` the age of the oldest. A gauge that can compute its
  value when read (a :class:`FunctionGaugeMetric`, as prometheus_client's ``Gauge`` is) gets a
  function that computes it at every read, so it is exact even while every worker is stuck;
  a gauge that can only be set is refreshed by the queue's operations (at most once per
  refresh period, on the queue's clock) and on demand. There is no timer (client-go has one).
* ``retries`` counts every ``add_after`` call on a delaying queue, a zero delay included.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final, Generic, Protocol, TypeVar, runtime_checkable

__all__ = [
    "HISTOGRAM_BUCKETS",
    "METRIC_HELP",
    "METRIC_NAMES",
    "NOOP_METRIC",
    "CounterMetric",
    "FunctionGaugeMetric",
    "GaugeMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetric",
    "NoopMetricsProvider",
    "QueueMetrics",
    "SettableGaugeMetric",
    "new_queue_metrics",
]

T = TypeVar("T", bound=Hashable)

#: The Prometheus family names client-go (component-base) uses, by provider method.
METRIC_NAMES: Final[dict[str, str]] = {
    "depth": "workqueue_depth",
    "adds": "workqueue_adds_total",
    "latency": "workqueue_queue_duration_seconds",
    "work_duration": "workqueue_work_duration_seconds",
    "unfinished_work_seconds": "workqueue_unfinished_work_seconds",
    "longest_running_processor_seconds": "workqueue_longest_running_processor_seconds",
    "retries": "workqueue_retries_total",
}

#: A one-line description of each metric, by the same keys as :data:`METRIC_NAMES`.
METRIC_HELP: Final[dict[str, str]] = {
    "depth": "Current number of items waiting in the work queue.",
    "adds": "Total number of adds the work queue handled.",
    "latency": "Seconds an item waits in the work queue before a worker gets it.",
    "work_duration": "Seconds a worker takes to process an item of the work queue.",
    "unfinished_work_seconds": (
        "Sum of the ages in seconds of the items being processed and not yet done; "
        "a steady rise means stuck workers."
    ),
    "longest_running_processor_seconds": "Age in seconds of the oldest item being processed.",
    "retries": "Total number of retries (add_after calls) the work queue handled.",
}

#: Histogram buckets of ``latency`` and ``work_duration``: 1 µs to 1000 s, factor 10
#: (client-go's ``ExponentialBuckets(1e-6, 10, 10)``).
HISTOGRAM_BUCKETS: Final[tuple[float, ...]] = tuple(10.0**exp for exp in range(-6, 4))


class GaugeMetric(Protocol):
    """A gauge that moves by one (``depth``)."""

    def inc(self) -> None: ...

    def dec(self) -> None: ...


class SettableGaugeMetric(Protocol):
    """A gauge that is set to a value (``unfinished_work_seconds``, ``longest_running_...``)."""

    def set(self, value: float) -> None: ...


@runtime_checkable
class FunctionGaugeMetric(Protocol):
    """A gauge whose value a function computes when it is read (prometheus_client's
    ``Gauge.set_function``); optional for ``unfinished_work_seconds`` and
    ``longest_running_processor_seconds``."""

    def set_function(self, f: Callable[[], float]) -> None: ...


class CounterMetric(Protocol):
    """A monotonic counter (``adds``, ``retries``)."""

    def inc(self) -> None: ...


class HistogramMetric(Protocol):
    """A distribution of observed values in seconds (``latency``, ``work_duration``)."""

    def observe(self, value: float) -> None: ...


class MetricsProvider(Protocol):
    """Creates the metric objects of one named queue; called once per metric per queue.

    Every method gets the queue's ``name`` (a label value, never object contents).
    """

    def new_depth_metric(self, name: str) -> GaugeMetric: ...

    def new_adds_metric(self, name: str) -> CounterMetric: ...

    def new_latency_metric(self, name: str) -> HistogramMetric: ...

    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric: ...

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric: ...

    def new_retries_metric(self, name: str) -> CounterMetric: ...


class NoopMetric:
    """A metric object that ignores everything; it fits every metric protocol."""

    __slots__ = ()

    def inc(self) -> None:
        """Do nothing."""

    def dec(self) -> None:
        """Do nothing."""

    def set(self, value: float) -> None:
        """Do nothing."""

    def observe(self, value: float) -> None:
        """Do nothing."""


#: The shared no-op metric object.
NOOP_METRIC: Final = NoopMetric()


class NoopMetricsProvider:
    """The default provider: every metric is :data:`NOOP_METRIC` (queues skip recording)."""

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return NOOP_METRIC

    def new_adds_metric(self, name: str) -> CounterMetric:
        return NOOP_METRIC

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return NOOP_METRIC

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return NOOP_METRIC

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return NOOP_METRIC

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return NOOP_METRIC

    def new_retries_metric(self, name: str) -> CounterMetric:
        return NOOP_METRIC


class QueueMetrics(Generic[T]):
    """The recorder a queue calls on add/get/done/retry (internal to the work queue package).

    The base class records nothing; :func:`new_queue_metrics` returns the recording subclass when
    the queue has a name and a provider.
    """

    def add(self, item: T) -> None:
        """An item that was not dirty was added."""

    def get(self, item: T) -> None:
        """A worker got ``item``."""

    def done(self, item: T) -> None:
        """A worker finished ``item``."""

    def retry(self) -> None:
        """``add_after`` was called."""

    def update_unfinished_work(self) -> None:
        """Refresh ``unfinished_work_seconds`` and ``longest_running_processor_seconds``."""

    def shutdown(self) -> None:
        """The queue shut down: the unfinished-work figures stop moving (as in client-go,
        whose refresh loop ends)."""


class _RecordingQueueMetrics(QueueMetrics[T]):
    def __init__(
        self,
        name: str,
        provider: MetricsProvider,
        clock: Callable[[], float],
        refresh_period: float,
    ) -> None:
        self._clock = clock
        self._depth = provider.new_depth_metric(name)
        self._adds = provider.new_adds_metric(name)
        self._latency = provider.new_latency_metric(name)
        self._work_duration = provider.new_work_duration_metric(name)
        self._unfinished = provider.new_unfinished_work_seconds_metric(name)
        self._longest = provider.new_longest_running_processor_seconds_metric(name)
        self._retries = provider.new_retries_metric(name)
        self._add_times: dict[T, float] = {}
        self._processing_start_times: dict[T, float] = {}
        self._refresh_period = refresh_period
        self._refreshed_at = clock()
        self._frozen_at: float | None = None  # the shutdown time, once shut down
        # Gauges that compute their value when read need no refresh at all.
        self._settable: list[tuple[SettableGaugeMetric, Callable[[], float]]] = []
        for gauge, compute in (
            (self._unfinished, self._unfinished_seconds),
            (self._longest, self._longest_seconds),
        ):
            if isinstance(gauge, FunctionGaugeMetric):
                gauge.set_function(compute)
            else:
                self._settable.append((gauge, compute))

    def add(self, item: T) -> None:
        self._adds.inc()
        self._depth.inc()
        now = self._clock()
        if item not in self._add_times:
            self._add_times[item] = now
        self._refresh_due(now)

    def get(self, item: T) -> None:
        self._depth.dec()
        now = self._clock()
        self._processing_start_times[item] = now
        started = self._add_times.pop(item, None)
        if started is not None:
            self._latency.observe(now - started)
        self._refresh_due(now)

    def done(self, item: T) -> None:
        now = self._clock()
        started = self._processing_start_times.pop(item, None)
        if started is not None:
            self._work_duration.observe(now - started)
        self._refresh_due(now)

    def retry(self) -> None:
        self._retries.inc()

    def update_unfinished_work(self) -> None:
        self._refreshed_at = self._clock()
        for gauge, compute in self._settable:
            gauge.set(compute())

    def shutdown(self) -> None:
        if self._frozen_at is None:
            self.update_unfinished_work()
            self._frozen_at = self._clock()

    def _refresh_due(self, now: float) -> None:
        if self._settable and now - self._refreshed_at >= self._refresh_period:
            self.update_unfinished_work()

    def _now(self) -> float:
        return self._clock() if self._frozen_at is None else self._frozen_at

    def _unfinished_seconds(self) -> float:
        now = self._now()
        return sum(now - started for started in list(self._processing_start_times.values()))

    def _longest_seconds(self) -> float:
        starts = list(self._processing_start_times.values())
        return self._now() - min(starts) if starts else 0.0


def new_queue_metrics(
    name: str | None,
    provider: MetricsProvider | None,
    clock: Callable[[], float],
    *,
    refresh_period: float = 0.5,
) -> QueueMetrics[T]:
    """The recorder for a queue: recording only with a non-empty name and a real provider.

    :param refresh_period: the shortest interval between refreshes of the unfinished-work
        gauges that can only be set. Default 0.5 s.
    """
    if not name or provider is None or isinstance(provider, NoopMetricsProvider):
        return QueueMetrics()
    return _RecordingQueueMetrics(name, provider, clock, refresh_period)
