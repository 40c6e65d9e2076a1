"""A FastAPI service answering from an informer's cache.

Routes:

* ``GET /pods?labelSelector=app=web&namespace=default``: cached pods as JSON (503 until synced).
* ``GET /pods/{namespace}/{name}``: one cached pod (404 if absent).
* ``GET /phases``: pod phases as last reconciled by the demo controller.
* ``GET /healthz``, ``GET /readyz`` (503 until the cache is synced), ``GET /metrics``.

A small controller reconciles every pod key from a work queue, so ``/metrics`` shows both the
informer metrics (``aioinformer_informer_*``) and client-go's ``workqueue_*`` metrics.

Serve it with uvicorn, from the repository's root, against the cluster of your kubeconfig
(``$KUBECONFIG``, ``~/.kube/config``) or, in a pod, the in-cluster service account::

    uvicorn examples.fastapi_app:app --port 8080

The client, the factory, its informers and the controller are all built at the app's
startup, inside uvicorn's event loop, and closed at shutdown (a client made at import time
fails: there is no running event loop yet).

Or run it against a built-in fake API server holding a few pods::

    python examples/fastapi_app.py --port 8080
    curl 'http://127.0.0.1:8080/pods?labelSelector=app=web'

Tests build the app with :func:`create_app` against their own server.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import orjson
import uvicorn
from fastapi import FastAPI, Query
from fastapi.responses import Response
from prometheus_client import CollectorRegistry

from aioinformer import KubeClient, SharedIndexInformer, WatchConfig
from aioinformer.integrations.fastapi import health_router, informer_lifespan, metrics_router
from aioinformer.metrics import register_informer_metrics, workqueue_metrics_provider

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pod_service import DEMO_PODS, PODS, demo_client, get_pod, list_pods, pod_informers

__all__ = ["DEMO_PODS", "PODS", "app", "create_app", "main"]

logger = logging.getLogger(__name__)


def _json(status_code: int, body: Any) -> Response:
    return Response(orjson.dumps(body), status_code=status_code, media_type="application/json")


def create_app(
    client: KubeClient | None = None,
    *,
    namespace: str | None = None,
    registry: CollectorRegistry | None = None,
    watch: WatchConfig = WatchConfig(),
) -> FastAPI:
    """The app: a pods informer and a demo controller, run for the app's lifetime.

    :param client: talks to the API server; the caller owns and closes it. Default None:
        the app connects at startup with ``aioinformer.connect()`` and closes it at shutdown.
    :param namespace: watch one namespace only. Default None: all.
    :param registry: where the metrics go. Default None: a new registry for this app.
    :param watch: the informers' watch configuration. Default ``WatchConfig()``.
    """
    registry = registry if registry is not None else CollectorRegistry()
    phases: dict[str, str] = {}
    builder = pod_informers(
        client,
        phases=phases,
        queue_metrics=workqueue_metrics_provider(registry=registry),
        namespace=namespace,
        watch=watch,
    )
    app = FastAPI(
        title="aioinformer pods", lifespan=informer_lifespan(builder, require_consumers_synced=True)
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
    async def pods(
        label_selector: Annotated[str, Query(alias="labelSelector")] = "",
        namespace: str = "",
    ) -> Response:
        """Cached pods matching the label selector (and namespace), sorted by key."""
        return _json(*list_pods(pods_informer(), label_selector, namespace))

    @app.get("/pods/{namespace}/{name}")
    async def pod(namespace: str, name: str) -> Response:
        """One cached pod."""
        return _json(*get_pod(pods_informer(), namespace, name))

    @app.get("/phases")
    async def get_phases() -> Response:
        """Pod phases, as last reconciled by the controller."""
        return _json(200, dict(sorted(phases.items())))

    return app


#: For ``uvicorn examples.fastapi_app:app``: connects at startup (see :func:`create_app`).
app = create_app()


async def serve(*, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Start a fake API server with :data:`DEMO_PODS` and serve the app until Ctrl-C."""
    async with demo_client() as client:
        config = uvicorn.Config(
            create_app(client), host=host, port=port, ws="none", log_level="info"
        )
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
