"""Work queue metrics: client-go's depth/adds/latency/work/unfinished/longest/retries."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from aioinformer.testing import FakeClock
from aioinformer.workqueue import DelayingQueue, WorkQueue
from aioinformer.workqueue._metrics import (
    HISTOGRAM_BUCKETS,
    METRIC_NAMES,
    NOOP_METRIC,
    NoopMetricsProvider,
)

from ._support import RecordedMetric, RecordingProvider

GUARD = 5.0


def metric(provider: RecordingProvider, kind: str, name: str = "q") -> float:
    return provider.metrics[(name, kind)].value


def observations(provider: RecordingProvider, kind: str, name: str = "q") -> list[float]:
    return provider.metrics[(name, kind)].observations


async def test_depth_and_adds_follow_client_go() -> None:
    """depth/adds count adds of non-dirty items (in-flight ones included); get lowers depth."""
    provider = RecordingProvider()
    q: WorkQueue[str] = WorkQueue(name="q", metrics_provider=provider, clock=FakeClock(1000.0))
    q.add("a")
    q.add("a")  # dirty already: not counted
    q.add("b")
    assert (metric(provider, "depth"), metric(provider, "adds")) == (2, 2)
    await asyncio.wait_for(q.get(), GUARD)
    assert metric(provider, "depth") == 1
    q.add("a")  # in flight and not dirty: counted though not queued yet
    assert (metric(provider, "depth"), metric(provider, "adds")) == (2, 3)
    q.done("a")  # re-queued without a new count
    assert metric(provider, "depth") == 2
    assert metric(provider, "adds") == 3
    q.shutdown()


async def test_latency_runs_from_first_add_and_work_duration_from_get() -> None:
    """latency = first add while dirty -> get; work duration = get -> done."""
    clock = FakeClock(1000.0)
    provider = RecordingProvider()
    q: WorkQueue[str] = WorkQueue(name="q", metrics_provider=provider, clock=clock)
    q.add("a")
    clock.jump(2.0)
    q.add("a")  # does not restart the latency clock
    clock.jump(1.0)
    await asyncio.wait_for(q.get(), GUARD)
    clock.jump(0.5)
    q.done("a")
    assert observations(provider, "latency") == [3.0]
    assert observations(provider, "work_duration") == [0.5]
    q.shutdown()


async def test_unfinished_and_longest_running_on_demand() -> None:
    """unfinished = sum of in-flight ages; longest = the oldest age; both zero when idle."""
    clock = FakeClock(1000.0)
    provider = RecordingProvider()
    q: WorkQueue[str] = WorkQueue(name="q", metrics_provider=provider, clock=clock)
    q.add("a")
    q.add("b")
    await asyncio.wait_for(q.get(), GUARD)
    clock.jump(3.0)
    await asyncio.wait_for(q.get(), GUARD)
    clock.jump(1.0)
    q.update_unfinished_work_metrics()
    assert metric(provider, "unfinished_work_seconds") == 5.0  # 4 + 1
    assert metric(provider, "longest_running_processor_seconds") == 4.0
    q.done("a")
    q.done("b")
    q.update_unfinished_work_metrics()
    assert metric(provider, "unfinished_work_seconds") == 0.0
    assert metric(provider, "longest_running_processor_seconds") == 0.0
    q.shutdown()


class ComputedGauge(RecordedMetric):
    """A gauge that computes its value when read (like prometheus_client's set_function)."""

    def __init__(self) -> None:
        super().__init__()
        self.function: Callable[[], float] | None = None

    def set_function(self, f: Callable[[], float]) -> None:
        self.function = f

    def read(self) -> float:
        assert self.function is not None
        return self.function()


class ComputingProvider(RecordingProvider):
    """Unfinished-work gauges that compute their value when read."""

    def new_unfinished_work_seconds_metric(self, name: str) -> RecordedMetric:
        gauge = ComputedGauge()
        self.metrics[(name, "unfinished_work_seconds")] = gauge
        return gauge

    def new_longest_running_processor_seconds_metric(self, name: str) -> RecordedMetric:
        gauge = ComputedGauge()
        self.metrics[(name, "longest_running_processor_seconds")] = gauge
        return gauge


def computed(provider: RecordingProvider, kind: str) -> float:
    gauge = provider.metrics[("q", kind)]
    assert isinstance(gauge, ComputedGauge)
    return gauge.read()


async def test_gauges_that_compute_on_read_are_exact_while_workers_are_stuck() -> None:
    """A gauge with set_function gets the unfinished-work figures computed at every read,
    without any queue operation (a stuck worker shows as a growing age)."""
    clock = FakeClock(1000.0)
    provider = ComputingProvider()
    q: WorkQueue[str] = WorkQueue(name="q", metrics_provider=provider, clock=clock)
    assert computed(provider, "unfinished_work_seconds") == 0.0
    q.add("a")
    q.add("b")
    await asyncio.wait_for(q.get(), GUARD)
    clock.jump(7.0)
    assert computed(provider, "unfinished_work_seconds") == 7.0
    await asyncio.wait_for(q.get(), GUARD)
    clock.jump(1.0)
    assert computed(provider, "unfinished_work_seconds") == 9.0  # 8 + 1
    assert computed(provider, "longest_running_processor_seconds") == 8.0
    q.done("a")
    assert computed(provider, "longest_running_processor_seconds") == 1.0
    q.shutdown()
    clock.jump(5.0)
    assert computed(provider, "longest_running_processor_seconds") == 1.0  # frozen at shutdown
    q.done("b")
    assert computed(provider, "longest_running_processor_seconds") == 0.0


async def test_settable_gauges_are_refreshed_by_operations_at_most_once_a_period() -> None:
    """A gauge that can only be set is refreshed by the queue's operations, once at least
    unfinished_work_update_period passed on the queue's clock since the last refresh."""
    clock = FakeClock(1000.0)
    provider = RecordingProvider()
    q: WorkQueue[str] = WorkQueue(
        name="q", metrics_provider=provider, clock=clock, unfinished_work_update_period=0.5
    )
    q.add("a")
    await asyncio.wait_for(q.get(), GUARD)
    clock.jump(7.0)
    q.add("b")
    assert metric(provider, "unfinished_work_seconds") == 7.0
    assert metric(provider, "longest_running_processor_seconds") == 7.0
    clock.jump(0.4)
    q.add("c")  # within the period: not refreshed
    assert metric(provider, "unfinished_work_seconds") == 7.0
    clock.jump(0.1)
    q.add("d")
    assert metric(provider, "unfinished_work_seconds") == 7.5
    q.shutdown()


async def test_retries_count_every_add_after_including_zero_delay() -> None:
    """retries counts add_after calls, zero delays included, not plain adds."""
    provider = RecordingProvider()
    q: DelayingQueue[str] = DelayingQueue(name="q", metrics_provider=provider)
    q.add("x")
    q.add_after("a", 0)
    q.add_after("b", 10.0)
    q.add_after("b", 20.0)
    assert metric(provider, "retries") == 3
    q.shutdown()


@pytest.mark.parametrize("name", [None, ""])
async def test_unnamed_queue_records_nothing(name: str | None) -> None:
    """A queue without a name asks the provider for no metrics (client-go behaviour)."""
    provider = RecordingProvider()
    q: DelayingQueue[str] = DelayingQueue(name=name, metrics_provider=provider)
    q.add("a")
    q.add_after("b", 0)
    await asyncio.wait_for(q.get(), GUARD)
    q.done("a")
    assert provider.metrics == {}
    q.shutdown()


def test_noop_provider_hands_out_the_shared_noop_metric() -> None:
    """The default provider's metrics accept every call and do nothing."""
    provider = NoopMetricsProvider()
    gauge = provider.new_depth_metric("q")
    assert gauge is NOOP_METRIC
    gauge.inc()
    gauge.dec()
    provider.new_latency_metric("q").observe(1.0)
    provider.new_unfinished_work_seconds_metric("q").set(1.0)


def test_metric_names_and_buckets_match_client_go() -> None:
    """Prometheus names are client-go's workqueue_* families; buckets 1 us .. 1000 s."""
    assert set(METRIC_NAMES.values()) == {
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries_total",
    }
    assert len(HISTOGRAM_BUCKETS) == 10
    assert HISTOGRAM_BUCKETS[0] == pytest.approx(1e-6)
    assert HISTOGRAM_BUCKETS[-1] == pytest.approx(1000.0)
