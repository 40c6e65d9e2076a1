"""Test helpers for the work queues: a fake clock and a metrics provider that records."""

from __future__ import annotations

from dataclasses import dataclass, field


class FakeClock:
    """A monotonic clock that moves only when told to."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class RecordedMetric:
    """One metric object: its value (gauge/counter) and its observations (histogram)."""

    value: float = 0.0
    observations: list[float] = field(default_factory=list)

    def inc(self) -> None:
        self.value += 1

    def dec(self) -> None:
        self.value -= 1

    def set(self, value: float) -> None:
        self.value = value

    def observe(self, value: float) -> None:
        self.observations.append(value)


class RecordingProvider:
    """A metrics provider keeping every metric in ``metrics[(queue name, kind)]``."""

    def __init__(self) -> None:
        self.metrics: dict[tuple[str, str], RecordedMetric] = {}

    def _new(self, name: str, kind: str) -> RecordedMetric:
        metric = RecordedMetric()
        self.metrics[(name, kind)] = metric
        return metric

    def new_depth_metric(self, name: str) -> RecordedMetric:
        return self._new(name, "depth")

    def new_adds_metric(self, name: str) -> RecordedMetric:
        return self._new(name, "adds")

    def new_latency_metric(self, name: str) -> RecordedMetric:
        return self._new(name, "latency")

    def new_work_duration_metric(self, name: str) -> RecordedMetric:
        return self._new(name, "work_duration")

    def new_unfinished_work_seconds_metric(self, name: str) -> RecordedMetric:
        return self._new(name, "unfinished_work_seconds")

    def new_longest_running_processor_seconds_metric(self, name: str) -> RecordedMetric:
        return self._new(name, "longest_running_processor_seconds")

    def new_retries_metric(self, name: str) -> RecordedMetric:
        return self._new(name, "retries")
