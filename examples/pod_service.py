"""What the FastAPI and aiohttp example apps share: a pods cache, a small controller, queries.

The apps themselves (``fastapi_app.py``, ``aiohttp_app.py``) only wire this into their web
framework, so the two stay comparable line by line.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import aioinformer
from aioinformer import (
    Controller,
    KubeClient,
    KubeObject,
    SharedIndexInformer,
    SharedInformerFactory,
    WatchConfig,
    meta_namespace_key,
    split_meta_namespace_key,
)
from aioinformer.errors import SelectorSyntaxError
from aioinformer.testing import FakeApiServer
from aioinformer.workqueue import MetricsProvider

__all__ = [
    "DEMO_PODS",
    "PODS",
    "demo_client",
    "get_pod",
    "list_pods",
    "pod_informers",
    "seed_demo_pods",
]

#: The resource served.
PODS = "v1/pods"

#: What ``python examples/<app>.py`` puts in its fake API server (the status is written
#: after the create, through ``pods/status``, as a kubelet would: see :func:`seed_demo_pods`).
DEMO_PODS: tuple[KubeObject, ...] = tuple(
    {
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "spec": {"containers": [{"name": app, "image": f"example/{app}:1"}]},
        "status": {"phase": phase},
    }
    for name, app, phase in (
        ("web-1", "web", "Running"),
        ("web-2", "web", "Running"),
        ("db-1", "db", "Pending"),
    )
)

NOT_SYNCED = (503, {"error": "the pod cache is not synced yet"})


def pod_informers(
    client: KubeClient | None,
    *,
    phases: dict[str, str],
    queue_metrics: MetricsProvider | None = None,
    namespace: str | None = None,
    watch: WatchConfig = WatchConfig(),
) -> Any:
    """A builder for the integrations: a fresh factory with a pods informer, plus a controller
    that records each pod's phase in ``phases`` (so ``/metrics`` has workqueue metrics too).

    Everything is built at the app's startup, inside its event loop: with ``client`` None,
    the client too (``aioinformer.connect()``: kubeconfig or in-cluster), closed at shutdown.
    """

    @asynccontextmanager
    async def build(app: object) -> AsyncIterator[SharedInformerFactory]:
        async with AsyncExitStack() as stack:
            connection = client
            if connection is None:
                connection = await stack.enter_async_context(aioinformer.connect())
            factory = SharedInformerFactory(connection, namespace=namespace, watch=watch)
            async with _controller(factory, phases, queue_metrics):
                yield factory

    return build


@asynccontextmanager
async def _controller(
    factory: SharedInformerFactory, phases: dict[str, str], queue_metrics: MetricsProvider | None
) -> AsyncIterator[None]:
    """The pods informer of ``factory`` and a controller recording phases, for the block."""
    pods = factory.for_resource(PODS)
    lister = pods.lister()

    async def reconcile(key: str) -> None:
        pod_namespace, name = split_meta_namespace_key(key)
        pod = lister.get(name, pod_namespace or None)
        if pod is None:
            phases.pop(key, None)
        else:
            phases[key] = str((pod.get("status") or {}).get("phase", "Unknown"))

    controller: Controller[str] = Controller(
        name="pods",
        reconcile=reconcile,
        workers=2,
        stop_timeout=5.0,
        metrics_provider=queue_metrics,
    )
    controller.watch(pods)
    async with controller:
        yield


def list_pods(
    informer: SharedIndexInformer | None, label_selector: str, namespace: str
) -> tuple[int, Any]:
    """``GET /pods``: cached pods matching the selector (and namespace), sorted by key."""
    if informer is None or not informer.has_synced():
        return NOT_SYNCED
    lister = informer.lister()
    try:
        if namespace:
            items = lister.namespace(namespace).list(label_selector)
        else:
            items = lister.list(label_selector)
    except SelectorSyntaxError as exc:
        return 400, {"error": f"bad labelSelector: {exc}"}
    return 200, {
        "kind": "PodList",
        "apiVersion": "v1",
        "items": sorted(items, key=meta_namespace_key),
    }


def get_pod(informer: SharedIndexInformer | None, namespace: str, name: str) -> tuple[int, Any]:
    """``GET /pods/{namespace}/{name}``: one cached pod."""
    if informer is None or not informer.has_synced():
        return NOT_SYNCED
    pod = informer.lister().get(name, namespace)
    if pod is None:
        return 404, {"error": f"pod {namespace}/{name} not found"}
    return 200, pod


def seed_demo_pods(server: FakeApiServer) -> None:
    """Create :data:`DEMO_PODS`, then give each its phase: like a real API server, the fake
    resets a created pod's status to ``Pending``; the status is the kubelet's to write."""
    for pod in DEMO_PODS:
        meta = pod["metadata"]
        server.objects.create("pods", pod)
        server.objects.patch(
            "pods",
            meta["name"],
            {"status": pod["status"]},
            namespace=meta["namespace"],
            subresource="status",
        )


@asynccontextmanager
async def demo_client() -> AsyncIterator[KubeClient]:
    """A fake API server holding :data:`DEMO_PODS`, and a client talking to it."""
    async with FakeApiServer(bookmark_interval=10.0) as server:
        seed_demo_pods(server)
        async with aioinformer.connect(server=server.url) as client:
            yield client
