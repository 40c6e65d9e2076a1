"""aiohttp.web integration: run a factory with the app, probes, ``/metrics``.

::

    factory = SharedInformerFactory(client)
    pods = factory.for_resource("v1/pods")
    app = web.Application()
    app.cleanup_ctx.append(informer_cleanup_ctx(factory))
    add_health_routes(app)

Startup starts the informers **without** waiting for them to sync, so ``/readyz`` answers 503
while the caches fill and 200 once they are synced; cleanup stops every informer. The
:class:`~aioinformer.integrations.InformerRuntime` is ``app[INFORMERS]`` while the app runs.

aiohttp may run startup and cleanup in different tasks (its test server does), while an anyio
task group or cancel scope must be left in the task that entered it. So the factory lives in a
task of its own, created at startup and stopped (bounded by ``stop_timeout``) at cleanup:
the one task of the package that no task group owns (see :func:`informer_cleanup_ctx`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

import anyio
from aiohttp import web

from .._lifecycle import DEFAULT_STOP_TIMEOUT, stop_timeout_argument
from .._prometheus import render_metrics
from ._runtime import FactorySource, InformerRuntime, run_factory

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["INFORMERS", "add_health_routes", "informer_cleanup_ctx", "metrics_handler"]

logger = logging.getLogger(__name__)

#: The default application key of the :class:`~aioinformer.integrations.InformerRuntime`.
INFORMERS: web.AppKey[InformerRuntime] = web.AppKey("aioinformer.informers", InformerRuntime)


class _Host:
    """Runs the factory for the app, in a task of its own; everything else is anyio."""

    def __init__(
        self, source: FactorySource, app: web.Application, require_consumers_synced: bool
    ) -> None:
        self._source = source
        self._app = app
        self._require_consumers_synced = require_consumers_synced
        self.runtime: InformerRuntime | None = None
        self.error: Exception | None = None
        self.scope = anyio.CancelScope()  # the hard stop
        self.settled = anyio.Event()  # running, or ended
        self.stop = anyio.Event()  # the graceful stop
        self.ended = anyio.Event()

    async def run(self) -> None:
        try:
            with self.scope:
                async with run_factory(
                    self._source, self._app, require_consumers_synced=self._require_consumers_synced
                ) as runtime:
                    self.runtime = runtime
                    self.settled.set()
                    await self.stop.wait()
        except Exception as exc:
            self.error = exc  # reported by the startup or the cleanup, never lost in the task
        finally:
            self.settled.set()
            self.ended.set()


def informer_cleanup_ctx(
    source: FactorySource,
    *,
    key: web.AppKey[InformerRuntime] = INFORMERS,
    require_consumers_synced: bool = False,
    stop_timeout: float = DEFAULT_STOP_TIMEOUT,
    shutdown_timeout: float | None = None,
) -> Callable[[web.Application], AsyncIterator[None]]:
    """A ``cleanup_ctx`` entry running a factory for the app's lifetime.

    :param source: a :class:`~aioinformer.SharedInformerFactory` (the app then runs
        once), or a builder called with the app at every startup, returning a factory or an
        async context manager yielding one (not yet running).
    :param key: the application key holding the runtime. Default :data:`INFORMERS`.
    :param require_consumers_synced: see :class:`~aioinformer.integrations.InformerRuntime`.
        Default False.
    :param stop_timeout: seconds cleanup waits for the factory to stop before it cancels it
        (the factory's own ``stop_timeout`` bounds its informers within that). Default 30
        (:data:`~aioinformer._lifecycle.DEFAULT_STOP_TIMEOUT`).
    :param shutdown_timeout: deprecated former name of ``stop_timeout`` (warns).

    The factory runs in a task created with ``loop.create_task``: the package's one task that
    no task group owns, because aiohttp may enter and leave ``cleanup_ctx`` in different tasks
    and a task group must be left in the task that entered it. The task is held for the app's
    lifetime and always ended (gracefully, then by cancellation) and awaited by cleanup.
    """

    stop_timeout = stop_timeout_argument("informer_cleanup_ctx", stop_timeout, shutdown_timeout)

    async def ctx(app: web.Application) -> AsyncIterator[None]:
        host = _Host(source, app, require_consumers_synced)
        # Not a task group: see above. Held in `task` until cleanup has awaited its end.
        task = asyncio.get_running_loop().create_task(host.run(), name="aioinformer informers")
        try:
            await host.settled.wait()
        except BaseException:
            host.scope.cancel()
            with anyio.CancelScope(shield=True):
                await host.ended.wait()
            raise
        if host.runtime is None or host.ended.is_set():
            if host.error is not None:
                raise host.error  # what failed the startup
            raise RuntimeError("the informer factory ended during startup")
        app[key] = host.runtime
        try:
            yield
        finally:
            host.stop.set()
            with anyio.move_on_after(stop_timeout):
                await host.ended.wait()
            if not host.ended.is_set():
                logger.warning(
                    "informers still running %.1f s after shutdown began; cancelling",
                    stop_timeout,
                )
                host.scope.cancel()
                await host.ended.wait()
            del task
            # Only the host's failure is reported; a cancellation of cleanup itself propagates.
            if host.error is not None:
                raise host.error

    return ctx


def _healthz_handler(
    *, key: web.AppKey[InformerRuntime] = INFORMERS
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A liveness handler: 200 ``ok`` while the app runs and no informer stopped on its own,
    else 503.

    :param key: as given to :func:`informer_cleanup_ctx`. Default :data:`INFORMERS`.
    """

    async def healthz(request: web.Request) -> web.Response:
        runtime = request.app.get(key)
        if runtime is None or not runtime.healthy():
            return web.Response(text="unhealthy", status=503)
        return web.Response(text="ok")

    return healthz


def _readyz_handler(
    *, key: web.AppKey[InformerRuntime] = INFORMERS
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A readiness handler: 200 once every informer synced, else 503; the JSON body is
    :meth:`~aioinformer.integrations.InformerRuntime.status`.

    :param key: as given to :func:`informer_cleanup_ctx`. Default :data:`INFORMERS`.
    """

    async def readyz(request: web.Request) -> web.Response:
        runtime = request.app.get(key)
        if runtime is None:
            return web.json_response({"ready": False, "informers": {}}, status=503)
        status = runtime.status()
        return web.json_response(status, status=200 if status["ready"] else 503)

    return readyz


def add_health_routes(
    app: web.Application,
    *,
    healthz_path: str = "/healthz",
    readyz_path: str = "/readyz",
    key: web.AppKey[InformerRuntime] = INFORMERS,
) -> None:
    """Add ``GET /healthz`` and ``GET /readyz`` (see :func:`_healthz_handler` and
    :func:`_readyz_handler`) to ``app``.

    :param healthz_path: Default ``"/healthz"``.
    :param readyz_path: Default ``"/readyz"``.
    :param key: as given to :func:`informer_cleanup_ctx`. Default :data:`INFORMERS`.
    """
    app.router.add_get(healthz_path, _healthz_handler(key=key))
    app.router.add_get(readyz_path, _readyz_handler(key=key))


def metrics_handler(
    registry: CollectorRegistry | None = None,
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A handler serving ``registry`` in the Prometheus text format (empty without prometheus).

    :param registry: what to serve. Default None: prometheus_client's global ``REGISTRY``.
    """

    async def metrics(request: web.Request) -> web.Response:
        body, content_type = render_metrics(registry)
        response = web.Response(body=body)
        response.headers["Content-Type"] = content_type
        return response

    return metrics
