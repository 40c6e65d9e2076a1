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
import sys
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from prometheus_client import CollectorRegistry

from aioinformer import KubeClient, SharedIndexInformer, WatchConfig
from aioinformer.integrations.aiohttp import (
    INFORMERS,
    add_health_routes,
    informer_cleanup_ctx,
    metrics_handler,
)
from aioinformer.metrics import register_informer_metrics, workqueue_metrics_provider

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pod_service import DEMO_PODS, PODS, demo_client, get_pod, list_pods, pod_informers

__all__ = ["DEMO_PODS", "PODS", "create_app", "main"]

logger = logging.getLogger(__name__)


def _json(status: int, body: Any) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


def create_app(
    client: KubeClient | None = None,
    *,
    namespace: str | None = None,
    registry: CollectorRegistry | None = None,
    watch: WatchConfig = WatchConfig(),
) -> web.Application:
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
    app = web.Application()
    app.cleanup_ctx.append(informer_cleanup_ctx(builder, require_consumers_synced=True))

    def current_informers() -> list[SharedIndexInformer]:
        runtime = app.get(INFORMERS)
        return [] if runtime is None else list(runtime.factory.informers.values())

    def pods_informer() -> SharedIndexInformer | None:
        runtime = app.get(INFORMERS)
        return None if runtime is None else runtime.factory.for_resource(PODS)

    register_informer_metrics(current_informers, registry=registry)
    add_health_routes(app)
    app.router.add_get("/metrics", metrics_handler(registry))

    async def pods(request: web.Request) -> web.Response:
        """Cached pods matching the label selector (and namespace), sorted by key."""
        query = request.query
        return _json(
            *list_pods(pods_informer(), query.get("labelSelector", ""), query.get("namespace", ""))
        )

    async def pod(request: web.Request) -> web.Response:
        """One cached pod."""
        info = request.match_info
        return _json(*get_pod(pods_informer(), info["namespace"], info["name"]))

    async def get_phases(request: web.Request) -> web.Response:
        """Pod phases, as last reconciled by the controller."""
        return _json(200, dict(sorted(phases.items())))

    app.router.add_get("/pods", pods)
    app.router.add_get("/pods/{namespace}/{name}", pod)
    app.router.add_get("/phases", get_phases)
    return app


async def serve(*, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Start a fake API server with :data:`DEMO_PODS` and serve the app until Ctrl-C."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # not on Windows
            loop.add_signal_handler(signum, stop.set)
    async with demo_client() as client:
        runner = web.AppRunner(create_app(client), shutdown_timeout=5.0)
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
