"""A FastAPI service answering from an informer's cache.

Routes:

* ``GET /pods?labelSelector=app=web&namespace=default``: cached pods as JSON (503 until synced).
* ``GET /pods/{namespace}/{name}``: one cached pod (404 if absent).
* ``GET /phases``: pod phases as last reconciled by the demo controller.
* ``GET /healthz``, ``GET /readyz`` (503 until the cache is synced), ``GET /metrics``.

A small controller reconciles every pod key from a work queue, so ``/metrics`` shows both the
informer metrics (``aioinformer_informer_*``) and client-go's ``workqueue_*`` metrics.

Run it against a built-in fake API server holding a few pods::

    python examples/fastapi_app.py --port 8080
    curl 'http://127.0.0.1:8080/pods?labelSelector=app=web'

Tests build the app with :func:`create_app` against their own server.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Annotated, Any

import orjson
import uvicorn
from fastapi import FastAPI, Query
from fastapi.responses import Response
from kubernetes_asyncio.client import ApiClient
from prometheus_client import CollectorRegistry

from aioinformer.controller import Controller
from aioinformer.errors import SelectorSyntaxError
from aioinformer.factory import SharedInformerFactory
from aioinformer.informer import SharedIndexInformer
from aioinformer.integrations.fastapi import health_router, informer_lifespan, metrics_router
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

#: What ``python examples/fastapi_app.py`` puts in its fake API server.
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


def _json(body: Any, status_code: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status_code, media_type="application/json")


def create_app(
    api_client: ApiClient,
    *,
    namespace: str | None = None,
    registry: CollectorRegistry | None = None,
    informer_options: Mapping[str, Any] | None = None,
) -> FastAPI:
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
    async def informers(app: FastAPI) -> AsyncIterator[SharedInformerFactory]:
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

    app = FastAPI(
        title="aioinformer pods",
        lifespan=informer_lifespan(informers, require_consumers_synced=True),
    )

    def current_informers() -> list[SharedIndexInformer]:
        runtime = getattr(app.state, "informers", None)
        return [] if runtime is None else list(runtime.factory.informers.values())

    def pods_informer() -> SharedIndexInformer | None:
        runtime = getattr(app.state, "informers", None)
        return None if runtime is None else runtime.factory.for_resource(PODS)

    register_informer_metrics(current_informers, registry=registry)
    app.include_router(health_router())
    app.include_router(metrics_router(registry))

    @app.get("/pods")
    async def list_pods(
        label_selector: Annotated[str, Query(alias="labelSelector")] = "",
        namespace: str = "",
    ) -> Response:
        """Cached pods matching the label selector (and namespace), sorted by key."""
        informer = pods_informer()
        if informer is None or not informer.has_synced():
            return _json({"error": "the pod cache is not synced yet"}, 503)
        lister = informer.lister()
        try:
            if namespace:
                items = lister.namespace(namespace).list(label_selector)
            else:
                items = lister.list(label_selector)
        except SelectorSyntaxError as exc:
            return _json({"error": f"bad labelSelector: {exc}"}, 400)
        items = sorted(items, key=meta_namespace_key)
        return _json({"kind": "PodList", "apiVersion": "v1", "items": items})

    @app.get("/pods/{namespace}/{name}")
    async def get_pod(namespace: str, name: str) -> Response:
        """One cached pod."""
        informer = pods_informer()
        if informer is None or not informer.has_synced():
            return _json({"error": "the pod cache is not synced yet"}, 503)
        pod = informer.lister().get(name, namespace)
        if pod is None:
            return _json({"error": f"pod {namespace}/{name} not found"}, 404)
        return _json(pod)

    @app.get("/phases")
    async def get_phases() -> Response:
        """Pod phases, as last reconciled by the controller."""
        return _json(dict(sorted(phases.items())))

    return app


async def serve(*, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Start a fake API server with :data:`DEMO_PODS` and serve the app until Ctrl-C."""
    async with FakeApiServer(bookmark_interval=10.0) as server:
        for pod in DEMO_PODS:
            await server.create("pods", pod)
        async with server.api_client() as api_client:
            app = create_app(api_client)
            config = uvicorn.Config(app, host=host, port=port, ws="none", log_level="info")
            await uvicorn.Server(config).serve()


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
