"""Prometheus metrics of sharded controllers, read from their statistics at scrape time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ._controller import ShardedController

__all__ = ["SHARD_METRIC_NAMES", "ShardedControllerCollector"]

_PREFIX: Final = "aioinformer_shard_"
_PHASES: Final = ("joining", "member", "leaving", "released", "left")

#: ``(name, type, extra labels, help)``; every family also has ``controller`` and ``identity``.
_FAMILIES: Final[tuple[tuple[str, str, tuple[str, ...], str], ...]] = (
    ("share", "gauge", (), "The fraction of the hash space the replica serves."),
    ("ranges", "gauge", ("state",), "Hash ranges the replica takes work for or drains."),
    ("phase", "gauge", ("phase",), "1 for the replica's phase in its group."),
    ("hand_overs_total", "counter", ("direction",), "Ranges started (in) and released (out)."),
    ("stop_alls_total", "counter", (), "Times the replica stopped all work (lease in doubt)."),
    ("range_exits_total", "counter", (), "Objects that left the cache as their range moved."),
    ("cache_restarts_total", "counter", (), "Lists and watches restarted for new ranges."),
    ("skipped_total", "counter", (), "Keys dropped unreconciled: their range is not taken."),
    (
        "lease_write_failures_total",
        "counter",
        ("cause",),
        "Lease writes that did not succeed, by cause (HTTP code, timeout, transport).",
    ),
    ("joined", "gauge", (), "1 while the replica is a ready member of its group."),
    ("fenced_writes_total", "counter", (), "Reconcile writes refused: ownership not provable."),
)

#: The family names :class:`ShardedControllerCollector` exposes.
SHARD_METRIC_NAMES: Final[tuple[str, ...]] = tuple(_PREFIX + f[0] for f in _FAMILIES)


class ShardedControllerCollector:
    """A Prometheus collector of :class:`~aioinformer.ShardedController` statistics.

    Register it with ``registry.register(ShardedControllerCollector(controller, ...))``; each
    scrape reads :meth:`~aioinformer.ShardedController.statistics`. Families:
    :data:`SHARD_METRIC_NAMES`, labelled ``controller`` and ``identity``.

    :raises ImportError: when prometheus_client is not installed.
    """

    def __init__(self, *controllers: ShardedController) -> None:
        try:
            import prometheus_client  # noqa: F401
        except ImportError:
            raise ImportError(
                "prometheus_client is not installed; install aioinformer[metrics]"
            ) from None
        self.controllers = controllers

    def _families(self) -> dict[str, Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        families: dict[str, Any] = {}
        for name, kind, labels, text in _FAMILIES:
            cls = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            families[name] = cls(
                _PREFIX + name.removesuffix("_total"),
                text,
                labels=["controller", "identity", *labels],
            )
        return families

    def describe(self) -> list[Any]:
        return list(self._families().values())

    def collect(self) -> Iterator[Any]:
        families = self._families()
        for controller in self.controllers:
            s = controller.statistics()
            who = [controller.name, s.identity]

            def add(family: str, value: float, *labels: str, who: list[str] = who) -> None:
                families[family].add_metric([*who, *labels], value)

            add("share", s.share)
            add("ranges", len(s.active), "active")
            add("ranges", len(s.draining), "draining")
            for phase in _PHASES:
                add("phase", 1.0 if s.phase == phase else 0.0, phase)
            add("hand_overs_total", s.hand_overs_in, "in")
            add("hand_overs_total", s.hand_overs_out, "out")
            add("stop_alls_total", s.stop_alls)
            add("range_exits_total", s.range_exits)
            add("cache_restarts_total", s.cache_restarts)
            add("skipped_total", s.skipped)
            for cause, count in sorted(s.lease_write_failures.items()):
                add("lease_write_failures_total", count, cause)
            add("joined", 1.0 if s.joined else 0.0)
            add("fenced_writes_total", s.fenced_writes)
        yield from families.values()
