"""An aiohttp.web service answering from an informer's cache.

Routes:

* ``GET /pods?labelSelector=app=web&namespace=default``: cached pods as JSON (503 until synced).
* ``GET /pods/{namespace}/{name}``: one cached pod (404 if absent).
* ``GET /phases``: pod phases as last reconciled by the demo controller.
* ``GET /healthz``, ``GET /readyz`` (503 until the cache is synced), ``GET /metrics``.

A small controller reconciles every pod key from a work queue, so ``/metrics`` shows both the
informer metrics (``aioinformer_informer_*``) and client-go's ``workqueue_*`` metrics.

Run it against a built-in fake API server holding a few pods::

    python examples/aiohttp_app.py --port 8080
    curl 'http://127.0.0.1:8080/pods?labelSelector=app=web'

Tests build the app with :func:`create_app` against their own server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import orjson
from aiohttp import web
from kubernetes_asyncio.client import ApiClient
from prometheus_client import CollectorRegistry

from aioinformer.controller import Controller
from aioinformer.errors import SelectorSyntaxError
from aioinformer.factory import SharedInformerFactory
from aioinformer.informer import SharedIndexInformer
from aioinformer.integrations.aiohttp import (
    INFORMERS,
    add_health_routes,
    informer_cleanup_ctx,
    metrics_handler,
)
from aioinformer.listener import ResourceEventHandlerFuncs
from aioinformer.metrics import register_informer_metrics, workqueue_metrics_provider
from aioinformer.objects import (
    KubeObject,
    deletion_handling_meta_namespace_key,
    meta_namespace_key,
    split_meta_namespace_key,
)
from aioinformer.testing import FakeApiServer

__all__ = ["DEMO_PODS", "PODS", "create_app", "main"]

logger = logging.getLogger(__name__)

#: The resource served.
PODS = "v1/pods"

#: What ``python examples/aiohttp_app.py`` puts in its fake API server.
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


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


def create_app(
    api_client: ApiClient,
    *,
    namespace: str | None = None,
    registry: CollectorRegistry | None = None,
    informer_options: Mapping[str, Any] | None = None,
) -> web.Application:
    """The app: a pods informer and a demo controller, run for the app's lifetime.

    :param api_client: talks to the API server; the caller owns and closes it.
    :param namespace: watch one namespace only. Default None: all.
    :param registry: where the metrics go. Default None: a new registry for this app.
    :param informer_options: extra informer options (e.g. ``backoff``). Default None.
    """
    registry = registry if registry is not None else CollectorRegistry()
    queue_metrics = workqueue_metrics_provider(registry=registry)
    phases: dict[str, str] = {}

    @asynccontextmanager
    async def informers(app: web.Application) -> AsyncIterator[SharedInformerFactory]:
        """Run at every startup: a fresh factory and controller for this run of the app."""
        factory = SharedInformerFactory(
            api_client, namespace=namespace, informer_options=informer_options
        )
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
            shutdown_timeout=5.0,
            metrics_provider=queue_metrics,
        )

        def enqueue(obj: Any) -> None:
            controller.enqueue(deletion_handling_meta_namespace_key(obj))

        pods.add_event_handler(
            ResourceEventHandlerFuncs(
                on_add=enqueue, on_update=lambda old, new: enqueue(new), on_delete=enqueue
            )
        )
        async with controller:
            yield factory

    app = web.Application()
    app.cleanup_ctx.append(informer_cleanup_ctx(informers, require_consumers_synced=True))

    def current_informers() -> list[SharedIndexInformer]:
        runtime = app.get(INFORMERS)
        return [] if runtime is None else list(runtime.factory.informers.values())

    def synced_pods_informer() -> SharedIndexInformer | None:
        runtime = app.get(INFORMERS)
        if runtime is None:
            return None
        informer = runtime.factory.for_resource(PODS)
        return informer if informer.has_synced() else None

    register_informer_metrics(current_informers, registry=registry)
    add_health_routes(app)
    app.router.add_get("/metrics", metrics_handler(registry))

    async def list_pods(request: web.Request) -> web.Response:
        """Cached pods matching the label selector (and namespace), sorted by key."""
        informer = synced_pods_informer()
        if informer is None:
            return _json({"error": "the pod cache is not synced yet"}, 503)
        label_selector = request.query.get("labelSelector", "")
        pod_namespace = request.query.get("namespace", "")
        lister = informer.lister()
        try:
            if pod_namespace:
                items = lister.namespace(pod_namespace).list(label_selector)
            else:
                items = lister.list(label_selector)
        except SelectorSyntaxError as exc:
            return _json({"error": f"bad labelSelector: {exc}"}, 400)
        items = sorted(items, key=meta_namespace_key)
        return _json({"kind": "PodList", "apiVersion": "v1", "items": items})

    async def get_pod(request: web.Request) -> web.Response:
        """One cached pod."""
        informer = synced_pods_informer()
        if informer is None:
            return _json({"error": "the pod cache is not synced yet"}, 503)
        pod_namespace, name = request.match_info["namespace"], request.match_info["name"]
        pod = informer.lister().get(name, pod_namespace)
        if pod is None:
            return _json({"error": f"pod {pod_namespace}/{name} not found"}, 404)
        return _json(pod)

    async def get_phases(request: web.Request) -> web.Response:
        """Pod phases, as last reconciled by the controller."""
        return _json(dict(sorted(phases.items())))

    app.router.add_get("/pods", list_pods)
    app.router.add_get("/pods/{namespace}/{name}", get_pod)
    app.router.add_get("/phases", get_phases)
    return app


async def serve(*, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Start a fake API server with :data:`DEMO_PODS` and serve the app until Ctrl-C."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # not on Windows
            loop.add_signal_handler(signum, stop.set)
    async with FakeApiServer(bookmark_interval=10.0) as server:
        for pod in DEMO_PODS:
            await server.create("pods", pod)
        async with server.api_client() as api_client:
            runner = web.AppRunner(create_app(api_client), shutdown_timeout=5.0)
            await runner.setup()
            try:
                await web.TCPSite(runner, host, port).start()
                logger.info("serving on http://%s:%d (Ctrl-C to stop)", host, port)
                await stop.wait()
            finally:
                await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on")
    parser.add_argument("--port", type=int, default=8080, help="port to serve on")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    asyncio.run(serve(host=args.host, port=args.port))


if __name__ == "__main__":
    main()
