"""Prometheus metrics for work queues and informers: the implementation behind
:mod:`aioinformer.metrics` (the ``metrics`` extra).

Two pieces, both optional and both free when unused:

* :class:`PrometheusWorkqueueMetricsProvider` implements the work queue
  :class:`~aioinformer.workqueue.MetricsProvider` protocol with client-go's family names
  (``workqueue_depth``, ``workqueue_adds_total``, ``workqueue_queue_duration_seconds``,
  ``workqueue_work_duration_seconds``, ``workqueue_unfinished_work_seconds``,
  ``workqueue_longest_running_processor_seconds``, ``workqueue_retries_total``), the label
  ``name`` and the buckets 1 µs … 1000 s. Pass it as a queue's or controller's
  ``metrics_provider``.
* :class:`InformerCollector` is a Prometheus *collector*: it reads the counters the informers
  keep anyway (:meth:`~aioinformer.SharedIndexInformer.statistics`: the reflector's
  counters, listener backlogs, store size, ...) at scrape time, so the informer's hot path
  does no metrics work at all. Its families are listed in :data:`INFORMER_METRIC_NAMES`;
  every one has the label ``informer`` (the informer's name, e.g. ``v1/pods``).

:func:`render_metrics` renders a registry in the text exposition format for a ``/metrics``
endpoint.

Without ``prometheus_client`` installed the module still imports, and the names in
:data:`NO_OPS_WITHOUT_PROMETHEUS` do nothing: :func:`workqueue_metrics_provider` returns a
no-op provider, :func:`register_informer_metrics` returns None and :func:`render_metrics` an
empty body. The names in :data:`NEED_PROMETHEUS` (the Prometheus classes themselves) raise an
:class:`ImportError` saying what to install.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeAlias

from ._informer._factory import SharedInformerFactory
from ._informer._informer import SharedIndexInformer
from ._lifecycle import State
from ._listwatch import WatchEventType
from ._reflector import RestartCause
from ._replicas._metrics import ShardedControllerCollector as ShardedControllerCollector
from .workqueue._metrics import (
    HISTOGRAM_BUCKETS,
    METRIC_HELP,
    METRIC_NAMES,
    MetricsProvider,
    NoopMetricsProvider,
)

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
    from prometheus_client.metrics_core import Metric

__all__ = [
    "INFORMER_METRIC_NAMES",
    "NEED_PROMETHEUS",
    "NO_OPS_WITHOUT_PROMETHEUS",
    "TEXT_CONTENT_TYPE",
    "InformerCollector",
    "InformerSource",
    "PrometheusWorkqueueMetricsProvider",
    "ShardedControllerCollector",
    "prometheus_available",
    "register_informer_metrics",
    "render_metrics",
    "workqueue_metrics_provider",
]

logger = logging.getLogger(__name__)

#: The content type of an empty ``/metrics`` answer when prometheus_client is absent.
TEXT_CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"

_INSTALL_HINT = "prometheus_client is not installed; install aioinformer[metrics]"

#: What works without prometheus_client, doing nothing.
NO_OPS_WITHOUT_PROMETHEUS: Final = (
    "workqueue_metrics_provider",
    "register_informer_metrics",
    "render_metrics",
)
#: What raises :class:`ImportError` without prometheus_client.
NEED_PROMETHEUS: Final = ("PrometheusWorkqueueMetricsProvider", "InformerCollector")

#: What :class:`InformerCollector` can watch: a factory (its informers at scrape time), one
#: informer, a collection of informers, or a callable returning informers.
InformerSource: TypeAlias = (
    SharedInformerFactory
    | SharedIndexInformer
    | Iterable[SharedIndexInformer]
    | Callable[[], Iterable[SharedIndexInformer]]
)


def prometheus_available() -> bool:
    """Whether prometheus_client can be imported."""
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        return False
    return True


def _default_registry(registry: CollectorRegistry | None) -> CollectorRegistry:
    if registry is not None:
        return registry
    try:
        from prometheus_client import REGISTRY
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return REGISTRY


# -- work queues ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _WorkqueueFamilies:
    depth: Gauge
    adds: Counter
    latency: Histogram
    work_duration: Histogram
    unfinished_work_seconds: Gauge
    longest_running_processor_seconds: Gauge
    retries: Counter


# One set of families per registry, so that several providers can share a registry (a family
# name can be registered only once). Weak keys: a dropped registry frees its entry.
_families_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, _WorkqueueFamilies] = (
    weakref.WeakKeyDictionary()
)


def _workqueue_families(registry: CollectorRegistry) -> _WorkqueueFamilies:
    families = _families_by_registry.get(registry)
    if families is not None:
        return families
    try:
        from prometheus_client import Counter, Gauge, Histogram
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    labels = ("name",)

    def gauge(key: str) -> Gauge:
        return Gauge(METRIC_NAMES[key], METRIC_HELP[key], labels, registry=registry)

    def counter(key: str) -> Counter:
        return Counter(METRIC_NAMES[key], METRIC_HELP[key], labels, registry=registry)

    def histogram(key: str) -> Histogram:
        return Histogram(
            METRIC_NAMES[key],
            METRIC_HELP[key],
            labels,
            registry=registry,
            buckets=HISTOGRAM_BUCKETS,
        )

    families = _WorkqueueFamilies(
        depth=gauge("depth"),
        adds=counter("adds"),
        latency=histogram("latency"),
        work_duration=histogram("work_duration"),
        unfinished_work_seconds=gauge("unfinished_work_seconds"),
        longest_running_processor_seconds=gauge("longest_running_processor_seconds"),
        retries=counter("retries"),
    )
    _families_by_registry[registry] = families
    return families


class PrometheusWorkqueueMetricsProvider:
    """Work queue metrics as Prometheus families with client-go's names and label ``name``.

    The families are registered on ``registry`` the first time a provider uses it; further
    providers on the same registry share them. A queue records metrics only when it has a
    name (see :mod:`aioinformer.workqueue._metrics`).

    :param registry: where to register the families. Default None: prometheus_client's global
        ``REGISTRY``.
    :raises ImportError: when prometheus_client is not installed.
    """

    __slots__ = ("_families", "registry")

    def __init__(self, *, registry: CollectorRegistry | None = None) -> None:
        #: The registry holding the families.
        self.registry = _default_registry(registry)
        self._families = _workqueue_families(self.registry)

    def __repr__(self) -> str:
        return f"<PrometheusWorkqueueMetricsProvider registry={self.registry!r}>"

    def new_depth_metric(self, name: str) -> Gauge:
        return self._families.depth.labels(name=name)

    def new_adds_metric(self, name: str) -> Counter:
        return self._families.adds.labels(name=name)

    def new_latency_metric(self, name: str) -> Histogram:
        return self._families.latency.labels(name=name)

    def new_work_duration_metric(self, name: str) -> Histogram:
        return self._families.work_duration.labels(name=name)

    def new_unfinished_work_seconds_metric(self, name: str) -> Gauge:
        return self._families.unfinished_work_seconds.labels(name=name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> Gauge:
        return self._families.longest_running_processor_seconds.labels(name=name)

    def new_retries_metric(self, name: str) -> Counter:
        return self._families.retries.labels(name=name)


def workqueue_metrics_provider(*, registry: CollectorRegistry | None = None) -> MetricsProvider:
    """A :class:`PrometheusWorkqueueMetricsProvider`, or a no-op provider without prometheus.

    :param registry: see :class:`PrometheusWorkqueueMetricsProvider`. Default None (global).
    """
    if not prometheus_available():
        logger.debug("work queue metrics disabled: %s", _INSTALL_HINT)
        return NoopMetricsProvider()
    return PrometheusWorkqueueMetricsProvider(registry=registry)


# -- informers -----------------------------------------------------------------------------

#: Event types reported even before the first event (as zeros), so rates work from the start.
_EVENT_TYPES: Final = tuple(t for t in WatchEventType if t is not WatchEventType.ERROR)
#: Watch restart causes reported even before the first restart (as zeros).
_RESTART_CAUSES: Final = tuple(RestartCause)
# Resource versions above 15 digits lose precision as floats; client-go keeps the last 15.
_RV_DIGITS: Final = 15

_PREFIX: Final = "aioinformer_informer_"

#: Every family :class:`InformerCollector` exposes: ``(name, type, extra labels, help)``.
#: All of them also have the label ``informer``.
_INFORMER_FAMILIES: Final[tuple[tuple[str, str, tuple[str, ...], str], ...]] = (
    ("events_total", "counter", ("type",), "Watch events received, by type."),
    ("lists_total", "counter", (), "Successful lists, the first one included."),
    ("relists_total", "counter", (), "Successful lists after the first one."),
    ("items_listed_total", "counter", (), "Objects received in lists."),
    ("watches_total", "counter", (), "Watch requests the API server accepted."),
    (
        "watch_restarts_total",
        "counter",
        ("cause",),
        "Watches that ended, by cause (timeout is a clean end).",
    ),
    ("errors_total", "counter", (), "List and watch errors."),
    ("malformed_events_total", "counter", (), "Undecodable watch lines skipped."),
    ("unknown_events_total", "counter", (), "Watch events of an unknown type skipped."),
    (
        "store_errors_total",
        "counter",
        ("stage",),
        "Events or deltas refused by the queue (stage=fifo) or the cache (stage=indexer).",
    ),
    ("store_objects", "gauge", (), "Objects in the informer's cache."),
    (
        "last_sync_resource_version",
        "gauge",
        (),
        "The last resource version seen (its last 15 digits); absent when not numeric.",
    ),
    ("synced", "gauge", (), "1 once the initial list is in the cache, else 0."),
    ("running", "gauge", (), "1 while the informer runs, else 0."),
    ("listeners", "gauge", (), "Consumers (event streams and handlers) registered."),
    (
        "handler_errors_total",
        "counter",
        ("listener",),
        "Exceptions raised by a handler (resets when the handler is removed).",
    ),
    ("listener_backlog", "gauge", ("listener",), "Notifications waiting for a consumer."),
    ("shard_filtering", "gauge", ("mode",), "Sharded informers: 1 for who filters the shard."),
    ("shard_dropped_total", "counter", (), "Sharded informers: objects dropped by the client."),
    (
        "listener_peak_backlog",
        "gauge",
        ("listener",),
        "The largest backlog a consumer has had.",
    ),
)

#: The family names :class:`InformerCollector` exposes (counters with their ``_total``).
INFORMER_METRIC_NAMES: Final[tuple[str, ...]] = tuple(
    _PREFIX + name for name, _, _, _ in _INFORMER_FAMILIES
)


def _resource_version_value(rv: str) -> float | None:
    """client-go's numeric view of a resource version: its last 15 digits, if all digits."""
    if not rv or not rv.isascii() or not rv.isdigit():
        return None
    return float(int(rv[-_RV_DIGITS:]))


def _informers_of(source: InformerSource) -> Callable[[], list[SharedIndexInformer]]:
    if isinstance(source, SharedIndexInformer):
        one = source
        return lambda: [one]
    if isinstance(source, SharedInformerFactory):  # look again at every scrape
        factory = source
        return lambda: list(factory.informers.values())
    if callable(source):
        call = source
        return lambda: list(call())
    fixed = list(source)
    if not all(isinstance(i, SharedIndexInformer) for i in fixed):
        raise TypeError("InformerCollector needs a factory, informers, or a callable")
    return lambda: fixed


class InformerCollector:
    """A Prometheus collector reading informer counters at scrape time.

    Register it with ``registry.register(InformerCollector(factory))`` (or use
    :func:`register_informer_metrics`). A factory is looked at again on every scrape, so
    informers created later appear by themselves. Nothing is recorded between scrapes: each
    value is read from the informer when Prometheus asks. Scraping only reads (and copies
    the counter dicts), so it may also run in prometheus_client's HTTP server thread.

    The families are listed in :data:`INFORMER_METRIC_NAMES` (prefix
    ``aioinformer_informer_``); every one is labelled ``informer``, and per-consumer ones also
    ``listener`` (the listener's name, e.g. ``v1/pods/handler-1``).

    :param source: a :class:`~aioinformer.SharedInformerFactory`, a
        :class:`~aioinformer.SharedIndexInformer`, an iterable of informers, or a
        callable returning them.
    :param include_listeners: expose the per-listener families (``handler_errors_total``,
        ``listener_backlog``, ``listener_peak_backlog``). Default True; turn it off when many
        short-lived event streams would make too many series.
    :raises ImportError: when prometheus_client is not installed.
    """

    def __init__(self, source: InformerSource, *, include_listeners: bool = True) -> None:
        if not prometheus_available():
            raise ImportError(_INSTALL_HINT)
        self._informers = _informers_of(source)
        self.include_listeners = include_listeners

    def __repr__(self) -> str:
        return f"<InformerCollector informers={len(self._informers())}>"

    def _families(self) -> dict[str, CounterMetricFamily | GaugeMetricFamily]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        families: dict[str, CounterMetricFamily | GaugeMetricFamily] = {}
        for name, kind, labels, help_text in _INFORMER_FAMILIES:
            if not self.include_listeners and "listener" in labels:
                continue
            cls = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            families[name] = cls(_PREFIX + name, help_text, labels=("informer", *labels))
        return families

    def describe(self) -> list[Metric]:
        """The families (without samples), so a registry can detect clashing names."""
        return list(self._families().values())

    def collect(self) -> Iterator[Metric]:
        """Read every informer's counters now."""
        families = self._families()

        def add(family: str, labels: list[str], value: float) -> None:
            families[family].add_metric(labels, value)

        for informer in self._informers():
            snapshot = informer.statistics()
            name = snapshot.name
            stats = snapshot.reflector
            events: dict[str, int] = dict.fromkeys(_EVENT_TYPES, 0)
            restarts: dict[str, int] = dict.fromkeys(_RESTART_CAUSES, 0)
            events.update(stats.events)
            restarts.update(stats.watch_restarts)
            for event_type, count in events.items():
                add("events_total", [name, event_type], count)
            for cause, count in restarts.items():
                add("watch_restarts_total", [name, cause], count)
            add("lists_total", [name], stats.lists)
            add("relists_total", [name], stats.relists)
            add("items_listed_total", [name], stats.items_listed)
            add("watches_total", [name], stats.watches)
            add("errors_total", [name], stats.errors)
            add("malformed_events_total", [name], stats.malformed_events)
            add("unknown_events_total", [name], stats.unknown_events)
            add("store_errors_total", [name, "fifo"], stats.store_errors)
            add("store_errors_total", [name, "indexer"], snapshot.store_errors)
            add("store_objects", [name], snapshot.objects)
            rv = _resource_version_value(informer.last_sync_resource_version)
            if rv is not None:
                add("last_sync_resource_version", [name], rv)
            add("synced", [name], 1.0 if snapshot.synced else 0.0)
            running = snapshot.state not in (State.NEW, State.STOPPED)
            add("running", [name], 1.0 if running else 0.0)
            if (shard := snapshot.shard) is not None:
                for mode in ("server-side", "client-side", "unknown"):
                    add("shard_filtering", [name, mode], 1.0 if shard.filtering == mode else 0.0)
                add("shard_dropped_total", [name], shard.dropped)
            listeners = snapshot.listeners
            add("listeners", [name], len(listeners))
            if self.include_listeners:
                for listener in listeners:
                    labels = [name, listener.name]
                    add("handler_errors_total", labels, listener.handler_errors)
                    add("listener_backlog", labels, listener.backlog)
                    add("listener_peak_backlog", labels, listener.peak_backlog)
        yield from families.values()


def register_informer_metrics(
    source: InformerSource,
    *,
    registry: CollectorRegistry | None = None,
    include_listeners: bool = True,
) -> InformerCollector | None:
    """Register an :class:`InformerCollector`; None (and nothing done) without prometheus.

    :param source: see :class:`InformerCollector`.
    :param registry: where to register. Default None: prometheus_client's global ``REGISTRY``.
    :param include_listeners: see :class:`InformerCollector`. Default True.
    :raises ValueError: when the registry already has these family names (prometheus_client's
        duplicate-timeseries error): one collector per registry, give it a factory or a
        callable to cover several informers.
    """
    if not prometheus_available():
        logger.debug("informer metrics disabled: %s", _INSTALL_HINT)
        return None
    collector = InformerCollector(source, include_listeners=include_listeners)
    _default_registry(registry).register(collector)
    return collector


def render_metrics(registry: CollectorRegistry | None = None) -> tuple[bytes, str]:
    """The body and content type of a ``/metrics`` answer (text exposition format).

    :param registry: what to render. Default None: prometheus_client's global ``REGISTRY``.
    :returns: ``(body, content_type)``; an empty body without prometheus_client.
    """
    try:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
    except ImportError:
        return b"", TEXT_CONTENT_TYPE
    return generate_latest(_default_registry(registry)), CONTENT_TYPE_LATEST
