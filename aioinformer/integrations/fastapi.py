"""FastAPI (and Starlette) integration: run a factory with the app, probes, ``/metrics``.

::

    factory = SharedInformerFactory(client)
    pods = factory.for_resource("v1/pods")
    app = FastAPI(lifespan=informer_lifespan(factory))
    app.include_router(health_router())

Startup enters the factory and starts its informers **without** waiting for them to sync, so
``/readyz`` answers 503 while the caches fill and 200 once they are synced; shutdown stops
every informer before the app finishes. The :class:`~aioinformer.integrations.InformerRuntime`
is on ``app.state.informers`` (see ``state_attr``) while the app runs.

To combine with a lifespan of your own, enter this one inside it::

    @asynccontextmanager
    async def lifespan(app):
        async with informer_lifespan(factory)(app), my_controller:
            yield
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from .._prometheus import render_metrics
from ._runtime import FactorySource, InformerRuntime, run_factory

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["get_runtime", "health_router", "informer_lifespan", "metrics_router"]

#: Where :func:`informer_lifespan` puts the runtime: ``app.state.informers``.
_DEFAULT_STATE_ATTR = "informers"


def informer_lifespan(
    source: FactorySource,
    *,
    require_consumers_synced: bool = False,
    state_attr: str = _DEFAULT_STATE_ATTR,
) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    """A FastAPI/Starlette ``lifespan=`` that runs a factory for the app's lifetime.

    :param source: a :class:`~aioinformer.SharedInformerFactory` (the app then runs
        once), or a builder called with the app at every startup, returning a factory or an
        async context manager yielding one (not yet running).
    :param require_consumers_synced: see :class:`~aioinformer.integrations.InformerRuntime`.
        Default False.
    :param state_attr: the ``app.state`` attribute holding the runtime. Default
        ``"informers"``.
    """

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with run_factory(
            source, app, require_consumers_synced=require_consumers_synced
        ) as runtime:
            setattr(app.state, state_attr, runtime)
            try:
                yield
            finally:
                delattr(app.state, state_attr)

    return lifespan


def get_runtime(request: Request, state_attr: str = _DEFAULT_STATE_ATTR) -> InformerRuntime | None:
    """The app's runtime, or None outside its lifespan."""
    runtime = getattr(request.app.state, state_attr, None)
    return runtime if isinstance(runtime, InformerRuntime) else None


def health_router(
    *,
    healthz_path: str = "/healthz",
    readyz_path: str = "/readyz",
    state_attr: str = _DEFAULT_STATE_ATTR,
) -> APIRouter:
    """A router with the liveness and readiness probes.

    * ``GET /healthz``: 200 ``ok`` while the app runs and no informer stopped on its own,
      else 503.
    * ``GET /readyz``: 200 once every informer synced, else 503; the JSON body is
      :meth:`~aioinformer.integrations.InformerRuntime.status`.

    :param healthz_path: the liveness path. Default ``"/healthz"``.
    :param readyz_path: the readiness path. Default ``"/readyz"``.
    :param state_attr: as given to :func:`informer_lifespan`. Default ``"informers"``.
    """
    router = APIRouter()

    @router.get(healthz_path, response_class=PlainTextResponse, include_in_schema=False)
    async def healthz(request: Request) -> PlainTextResponse:
        runtime = get_runtime(request, state_attr)
        if runtime is None or not runtime.healthy():
            return PlainTextResponse("unhealthy", status_code=503)
        return PlainTextResponse("ok")

    @router.get(readyz_path, include_in_schema=False)
    async def readyz(request: Request) -> JSONResponse:
        runtime = get_runtime(request, state_attr)
        if runtime is None:
            return JSONResponse({"ready": False, "informers": {}}, status_code=503)
        status = runtime.status()
        return JSONResponse(status, status_code=200 if status["ready"] else 503)

    return router


def metrics_router(
    registry: CollectorRegistry | None = None, *, path: str = "/metrics"
) -> APIRouter:
    """A router serving ``registry`` in the Prometheus text format (empty without prometheus).

    :param registry: what to serve. Default None: prometheus_client's global ``REGISTRY``.
    :param path: Default ``"/metrics"``.
    """
    router = APIRouter()

    @router.get(path, include_in_schema=False)
    async def metrics() -> Response:
        body, content_type = render_metrics(registry)
        return Response(content=body, media_type=content_type)

    return router
