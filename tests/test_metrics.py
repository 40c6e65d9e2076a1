"""Prometheus metrics: the work queue provider, the informer collector, the no-op fallbacks."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator

import anyio
import pytest
from prometheus_client import CollectorRegistry

from aioinformer import KubeClient, _prometheus
from aioinformer._informer._event_stream import EventType, ResourceEventHandlerFuncs
from aioinformer._informer._factory import SharedInformerFactory
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._listwatch import Resource
from aioinformer._objects import KubeObject
from aioinformer._prometheus import INFORMER_METRIC_NAMES, TEXT_CONTENT_TYPE
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.metrics import (
    InformerCollector,
    PrometheusWorkqueueMetricsProvider,
    register_informer_metrics,
    render_metrics,
    workqueue_metrics_provider,
)
from aioinformer.testing import FakeApiServer, FakeClock
from aioinformer.workqueue import DelayingQueue, WorkQueue
from aioinformer.workqueue._metrics import HISTOGRAM_BUCKETS, METRIC_NAMES, NoopMetricsProvider

from .support import FAST_WATCH, configmap, kube_client

GUARD = 10.0


def value(registry: CollectorRegistry, sample: str, /, **labels: str) -> float | None:
    """One sample's value (None when absent)."""
    return registry.get_sample_value(sample, labels)


# -- work queues ---------------------------------------------------------------------------


def test_workqueue_families_have_client_go_names_types_and_buckets() -> None:
    """Seven families named as in client-go, labelled ``name``, histograms 1 µs … 1000 s."""
    registry = CollectorRegistry()
    PrometheusWorkqueueMetricsProvider(registry=registry)
    families = {family.name: family.type for family in registry.collect()}
    expected_types = {
        "depth": "gauge",
        "adds": "counter",
        "latency": "histogram",
        "work_duration": "histogram",
        "unfinished_work_seconds": "gauge",
        "longest_running_processor_seconds": "gauge",
        "retries": "counter",
    }
    assert {
        METRIC_NAMES[key].removesuffix("_total"): kind for key, kind in expected_types.items()
    } == families
    provider = PrometheusWorkqueueMetricsProvider(registry=registry)  # shares the families
    provider.new_latency_metric("q").observe(0.5)
    bounds = [
        sample.labels["le"]
        for family in registry.collect()
        if family.name == "workqueue_queue_duration_seconds"
        for sample in family.samples
        if sample.name.endswith("_bucket")
    ]
    assert bounds == [*(str(b) for b in HISTOGRAM_BUCKETS), "+Inf"]
    assert HISTOGRAM_BUCKETS[0] == 1e-6 and HISTOGRAM_BUCKETS[-1] == 1000


async def test_a_queue_records_through_the_provider() -> None:
    """depth, adds, latency, work duration, unfinished, longest and retries of a named queue."""
    registry = CollectorRegistry()
    provider = workqueue_metrics_provider(registry=registry)
    assert isinstance(provider, PrometheusWorkqueueMetricsProvider)
    clock = FakeClock(1000.0)
    queue: DelayingQueue[str] = DelayingQueue(name="q", metrics_provider=provider, clock=clock)
    queue.add("a")
    queue.add("b")
    assert value(registry, "workqueue_depth", name="q") == 2
    assert value(registry, "workqueue_adds_total", name="q") == 2
    clock.jump(0.25)
    with anyio.fail_after(GUARD):
        item = await queue.get()
    assert value(registry, "workqueue_depth", name="q") == 1
    assert value(registry, "workqueue_queue_duration_seconds_sum", name="q") == 0.25
    assert value(registry, "workqueue_queue_duration_seconds_bucket", name="q", le="0.1") == 0
    assert value(registry, "workqueue_queue_duration_seconds_bucket", name="q", le="1.0") == 1
    clock.jump(3.0)
    queue.update_unfinished_work_metrics()
    assert value(registry, "workqueue_unfinished_work_seconds", name="q") == 3.0
    assert value(registry, "workqueue_longest_running_processor_seconds", name="q") == 3.0
    queue.done(item)
    assert value(registry, "workqueue_work_duration_seconds_sum", name="q") == 3.0
    assert value(registry, "workqueue_work_duration_seconds_count", name="q") == 1
    queue.add_after("c", 0)
    assert value(registry, "workqueue_retries_total", name="q") == 1
    queue.shutdown()


def test_queues_are_told_apart_by_name() -> None:
    """Two queues on one provider have separate series."""
    registry = CollectorRegistry()
    provider = PrometheusWorkqueueMetricsProvider(registry=registry)
    first: WorkQueue[str] = WorkQueue(name="first", metrics_provider=provider)
    second: WorkQueue[str] = WorkQueue(name="second", metrics_provider=provider)
    first.add("x")
    second.add("x")
    second.add("y")
    assert value(registry, "workqueue_adds_total", name="first") == 1
    assert value(registry, "workqueue_adds_total", name="second") == 2


# -- informers -----------------------------------------------------------------------------


@pytest.fixture
async def client(fake_apiserver: FakeApiServer) -> AsyncIterator[KubeClient]:
    """A client of the fake API server."""
    async with kube_client(fake_apiserver) as client:
        yield client


def test_collector_reports_an_informer_before_start(client: KubeClient) -> None:
    """Before start every family is declared; counters are zero, synced/running 0, no RV."""
    factory = SharedInformerFactory(client)
    factory.for_resource("v1/configmaps")
    registry = CollectorRegistry()
    register_informer_metrics(factory, registry=registry)
    names = {family.name for family in registry.collect()}
    assert {n.removesuffix("_total") for n in INFORMER_METRIC_NAMES} == names
    labels = {"informer": "v1/configmaps"}
    assert value(registry, "aioinformer_informer_lists_total", **labels) == 0
    assert value(registry, "aioinformer_informer_events_total", type="ADDED", **labels) == 0
    assert (
        value(registry, "aioinformer_informer_watch_restarts_total", cause="expired", **labels) == 0
    )
    assert value(registry, "aioinformer_informer_synced", **labels) == 0
    assert value(registry, "aioinformer_informer_running", **labels) == 0
    assert value(registry, "aioinformer_informer_last_sync_resource_version", **labels) is None


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_collector_reads_live_counters(
    fake_apiserver: FakeApiServer, client: KubeClient
) -> None:
    """Lists, watches, events by type, restarts by cause, malformed events, store size, RV,
    handler errors and listener backlogs are read from the informer at scrape time."""
    fake_apiserver.objects.create("configmaps", configmap("a"))
    fake_apiserver.objects.create("configmaps", configmap("b"))
    handled_bad = asyncio.Event()

    def on_add(obj: KubeObject) -> None:
        if obj["metadata"]["name"] == "bad":
            handled_bad.set()
            raise RuntimeError("handler failure")

    registry = CollectorRegistry()
    informer = SharedIndexInformer(
        KubeListerWatcher(client, Resource.parse("v1/configmaps")),
        name="cms",
        watch=FAST_WATCH,
    )
    handler = informer.add_event_handler(ResourceEventHandlerFuncs(on_add=on_add))
    register_informer_metrics(informer, registry=registry)

    def sample(name: str, **labels: str) -> float | None:
        return value(registry, f"aioinformer_informer_{name}", informer="cms", **labels)

    with anyio.fail_after(GUARD):
        async with informer:
            idle = informer.events()  # never read: its backlog grows
            idle_listener = informer._listeners[-1]
            async with informer.events() as events:
                assert await informer.wait_for_cache_sync()
                await fake_apiserver.requests.wait_for_watches(1)
                start = len(fake_apiserver.requests.records)
                # A malformed line ends the watch: a relist (at the last RV) brings "bad".
                fake_apiserver.faults.inject_malformed_line()
                fake_apiserver.objects.create("configmaps", configmap("bad"))
                async for event in events:
                    if event.type is EventType.ADDED and event.object["metadata"]["name"] == "bad":
                        break
                await handled_bad.wait()  # the error is counted before the handler task yields
                await fake_apiserver.requests.wait_for(lambda r: r.verb == "watch", start=start)
                fake_apiserver.objects.create("configmaps", configmap("c"))
                async for event in events:  # delivered by the new watch
                    if event.object["metadata"]["name"] == "c":
                        break

                assert sample("lists_total") == 2
                assert sample("relists_total") == 1
                assert sample("items_listed_total") == 2 + 3
                assert sample("watches_total") == 2
                assert sample("events_total", type="ADDED") == 1
                assert sample("events_total", type="DELETED") == 0
                assert sample("watch_restarts_total", cause="malformed") == 1
                assert sample("malformed_events_total") == 1
                assert sample("store_objects") == 4
                assert sample("last_sync_resource_version") == float(
                    informer.last_sync_resource_version
                )
                assert sample("synced") == 1
                assert sample("running") == 1
                assert sample("listeners") == 3
                assert sample("handler_errors_total", listener=handler.listener.name) == 1
                assert sample("listener_backlog", listener=handler.listener.name) == 0
                # 4 adds, and the relist's 2 unchanged objects as sync updates.
                assert sample("listener_backlog", listener=idle_listener.name) == 6
                assert sample("listener_peak_backlog", listener=idle_listener.name) == 6
            await idle.aclose()
    assert sample("running") == 0
    assert sample("listeners") == 0
    assert sample("store_objects") == 4


def test_listener_families_can_be_left_out(client: KubeClient) -> None:
    """include_listeners=False drops the per-listener families."""
    informer = SharedInformerFactory(client).for_resource("v1/configmaps")
    informer.add_event_handler(ResourceEventHandlerFuncs(on_add=lambda obj: None))
    collector = InformerCollector([informer], include_listeners=False)
    names = {family.name for family in collector.collect()}
    assert "aioinformer_informer_listeners" in names
    assert not any("listener_" in name or "handler_" in name for name in names)
    with_listeners = InformerCollector(lambda: [informer])
    samples = [s for f in with_listeners.collect() for s in f.samples if "listener" in s.labels]
    assert len(samples) == 3  # handler errors, backlog, peak backlog of the one handler


def test_one_collector_per_registry(client: KubeClient) -> None:
    """A second collector on the same registry is refused (prometheus_client duplicate check)."""
    factory = SharedInformerFactory(client)
    registry = CollectorRegistry()
    register_informer_metrics(factory, registry=registry)
    with pytest.raises(ValueError, match="Duplicated"):
        register_informer_metrics(factory, registry=registry)
    with pytest.raises(TypeError):
        InformerCollector([object()])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("rv", "expected"),
    [
        ("12345", 12345.0),
        ("1234567890123456789", 567890123456789.0),  # the last 15 digits, like client-go
        ("", None),
        ("abc", None),
        ("-1", None),
        ("\uff11\uff12", None),  # non-ASCII digits
    ],
)
def test_resource_version_gauge_value(rv: str, expected: float | None) -> None:
    """Numeric resource versions become a gauge value; others are left out."""
    assert _prometheus._resource_version_value(rv) == expected


def test_render_metrics() -> None:
    """render_metrics gives the text format and its content type."""
    registry = CollectorRegistry()
    PrometheusWorkqueueMetricsProvider(registry=registry).new_depth_metric("q").inc()
    body, content_type = render_metrics(registry)
    assert content_type.startswith("text/plain")
    assert b'workqueue_depth{name="q"} 1.0' in body


# -- without prometheus_client -------------------------------------------------------------


def test_without_prometheus_client_everything_is_a_no_op(
    monkeypatch: pytest.MonkeyPatch, client: KubeClient
) -> None:
    """With the import failing, the helpers degrade to no-ops and the classes say why."""
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    monkeypatch.setitem(sys.modules, "prometheus_client.core", None)
    assert not _prometheus.prometheus_available()
    assert isinstance(workqueue_metrics_provider(), NoopMetricsProvider)
    factory = SharedInformerFactory(client)
    assert register_informer_metrics(factory) is None
    assert render_metrics() == (b"", TEXT_CONTENT_TYPE)
    with pytest.raises(ImportError, match=r"aioinformer\[metrics\]"):
        PrometheusWorkqueueMetricsProvider()
    with pytest.raises(ImportError, match=r"aioinformer\[metrics\]"):
        InformerCollector(factory)


def test_the_package_imports_without_the_extras() -> None:
    """In a fresh interpreter without prometheus_client and FastAPI, the metrics module and the
    aiohttp integration import and work as no-ops."""
    code = """
import sys, warnings
warnings.simplefilter("error")
sys.modules["prometheus_client"] = None
sys.modules["fastapi"] = None
import aioinformer._prometheus as p
import aioinformer.metrics as m
import aioinformer.integrations
import aioinformer.integrations.aiohttp
try:
    import aioinformer.integrations.fastapi
except ImportError:
    pass
else:
    raise SystemExit("the FastAPI integration imported without FastAPI")
assert not p.prometheus_available()
assert m.render_metrics() == (b"", p.TEXT_CONTENT_TYPE)
print("ok")
"""
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "ok"
