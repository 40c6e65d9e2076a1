"""The FastAPI and aiohttp integrations: lifecycle, readiness, liveness, /metrics."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import anyio
import pytest
from aiohttp import web
from fastapi import FastAPI
from prometheus_client import CollectorRegistry

from aioinformer import KubeClient, State
from aioinformer._informer._event_stream import ResourceEventHandlerFuncs
from aioinformer._informer._factory import SharedInformerFactory
from aioinformer._objects import KubeObject
from aioinformer.integrations import InformerRuntime, run_factory
from aioinformer.integrations.aiohttp import (
    INFORMERS,
    add_health_routes,
    informer_cleanup_ctx,
    metrics_handler,
)
from aioinformer.integrations.fastapi import (
    health_router,
    informer_lifespan,
    metrics_router,
)
from aioinformer.metrics import register_informer_metrics
from aioinformer.testing import FakeApiServer

from ._web import serve_aiohttp, serve_asgi
from .support import FAST_WATCH, configmap, kube_client

GUARD = 10.0


def new_factory(client: KubeClient) -> SharedInformerFactory:
    """A factory with a configmaps informer and a fast backoff."""
    factory = SharedInformerFactory(client, watch=FAST_WATCH)
    factory.for_resource("v1/configmaps")
    return factory


async def get(http: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    """Status and text of a GET."""
    async with http.get(url) as response:
        return response.status, await response.text()


@pytest.fixture
async def client(fake_apiserver: FakeApiServer) -> AsyncIterator[KubeClient]:
    """A client of the fake API server, which holds one configmap."""
    fake_apiserver.objects.create("configmaps", configmap("a"))
    async with kube_client(fake_apiserver) as client:
        yield client


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    """An HTTP client."""
    async with aiohttp.ClientSession() as session:
        yield session


# -- the runtime ---------------------------------------------------------------------------


async def test_runtime_readiness_can_require_consumers(client: KubeClient) -> None:
    """With require_consumers_synced, a handler still busy with the initial list keeps the
    runtime unready although the cache synced; it becomes ready once the handler caught up."""
    release = asyncio.Event()

    async def on_add(obj: KubeObject) -> None:
        await release.wait()

    factory = new_factory(client)
    informer = factory.for_resource("v1/configmaps")
    informer.add_event_handler(ResourceEventHandlerFuncs(on_add=on_add))
    with anyio.fail_after(GUARD):
        async with run_factory(factory, None, require_consumers_synced=True) as runtime:
            assert await informer.wait_for_cache_sync()
            assert not runtime.ready()
            assert runtime.status()["informers"]["v1/configmaps"] == {
                "ready": False,
                "synced": True,
                "running": True,
                "objects": 1,
            }
            with anyio.move_on_after(0) as bound:
                await runtime.wait_for_cache_sync()  # the handler still holds the initial list
            assert bound.cancelled_caught
            release.set()
            assert await runtime.wait_for_cache_sync()
            assert runtime.healthy()
            # A consumer joining later (its replay still unread) does not make it unready.
            async with informer.events() as late:
                assert late.backlog == 1
                assert runtime.ready()
        assert not runtime.running
        assert not runtime.ready()
        assert informer.state is State.STOPPED


async def test_runtime_is_unhealthy_when_an_informer_stopped(client: KubeClient) -> None:
    """An informer that stops while the app runs makes the runtime unhealthy and unready."""
    factory = new_factory(client)
    with anyio.fail_after(GUARD):
        async with run_factory(factory, None) as runtime:
            assert await runtime.wait_for_cache_sync()
            assert runtime.healthy()
            await factory.for_resource("v1/configmaps").aclose()
            assert not runtime.healthy()
            assert not runtime.ready()


async def test_run_factory_accepts_builders(client: KubeClient) -> None:
    """A builder gets the app and may return a factory or an async context manager of one."""
    seen: list[Any] = []
    exited = asyncio.Event()

    def plain(app: Any) -> SharedInformerFactory:
        seen.append(app)
        return new_factory(client)

    @asynccontextmanager
    async def managed(app: Any) -> AsyncIterator[SharedInformerFactory]:
        seen.append(app)
        try:
            yield new_factory(client)
        finally:
            exited.set()

    with anyio.fail_after(GUARD):
        for builder in (plain, managed):
            async with run_factory(builder, "the app") as runtime:
                assert await runtime.wait_for_cache_sync()
    assert seen == ["the app", "the app"]
    assert exited.is_set()


# -- FastAPI -------------------------------------------------------------------------------


async def test_fastapi_lifespan_readiness_and_shutdown(
    fake_apiserver: FakeApiServer, client: KubeClient, http: aiohttp.ClientSession
) -> None:
    """Startup does not wait for sync (/readyz 503 while the API server is away), /readyz is
    200 once synced, the runtime is on app.state only while the app runs."""
    factory = new_factory(client)
    app = FastAPI(lifespan=informer_lifespan(factory))
    app.include_router(health_router())
    await fake_apiserver.faults.stop_listening()
    with anyio.fail_after(GUARD):
        async with serve_asgi(app) as url:
            status, body = await get(http, url + "/readyz")
            assert status == 503
            assert '"synced":false' in body
            assert await get(http, url + "/healthz") == (200, "ok")
            runtime = app.state.informers
            assert isinstance(runtime, InformerRuntime)
            assert runtime.factory is factory
            await fake_apiserver.faults.start_listening()
            assert await runtime.wait_for_cache_sync()
            assert (await get(http, url + "/readyz"))[0] == 200
        assert not hasattr(app.state, "informers")
        assert all(informer.state is State.STOPPED for informer in factory.informers.values())


async def test_fastapi_probes_without_the_lifespan(http: aiohttp.ClientSession) -> None:
    """Without a running factory both probes answer 503."""
    app = FastAPI()
    app.include_router(health_router(healthz_path="/live", readyz_path="/ready"))
    with anyio.fail_after(GUARD):
        async with serve_asgi(app) as url:
            assert (await get(http, url + "/live"))[0] == 503
            assert (await get(http, url + "/ready"))[0] == 503


async def test_fastapi_metrics_router(client: KubeClient, http: aiohttp.ClientSession) -> None:
    """metrics_router serves the registry in the text format."""
    factory = new_factory(client)
    registry = CollectorRegistry()
    register_informer_metrics(factory, registry=registry)
    app = FastAPI(lifespan=informer_lifespan(factory, state_attr="cache"))
    app.include_router(metrics_router(registry))
    with anyio.fail_after(GUARD):
        async with serve_asgi(app) as url:
            assert (await get(http, url + "/metrics"))[0] == 200  # startup has completed
            assert await app.state.cache.wait_for_cache_sync()
            async with http.get(url + "/metrics") as response:
                assert response.status == 200
                assert response.content_type == "text/plain"
                text = await response.text()
    assert 'aioinformer_informer_store_objects{informer="v1/configmaps"} 1.0' in text


# -- aiohttp -------------------------------------------------------------------------------


async def test_aiohttp_cleanup_ctx_readiness_and_shutdown(
    fake_apiserver: FakeApiServer, client: KubeClient, http: aiohttp.ClientSession
) -> None:
    """Startup does not wait for sync, /readyz flips to 200 once synced, cleanup stops the
    informers; /metrics serves the registry."""
    factory = new_factory(client)
    registry = CollectorRegistry()
    register_informer_metrics(factory, registry=registry)
    app = web.Application()
    app.cleanup_ctx.append(informer_cleanup_ctx(factory))
    add_health_routes(app)
    app.router.add_get("/metrics", metrics_handler(registry))
    await fake_apiserver.faults.stop_listening()
    with anyio.fail_after(GUARD):
        async with serve_aiohttp(app) as url:
            runtime = app[INFORMERS]
            assert (await get(http, url + "/readyz"))[0] == 503
            assert await get(http, url + "/healthz") == (200, "ok")
            await fake_apiserver.faults.start_listening()
            assert await runtime.wait_for_cache_sync()
            status, body = await get(http, url + "/readyz")
            assert status == 200
            assert '"objects": 1' in body
            status, text = await get(http, url + "/metrics")
            assert status == 200
            assert 'aioinformer_informer_synced{informer="v1/configmaps"} 1.0' in text
        assert not runtime.running
        assert all(informer.state is State.STOPPED for informer in factory.informers.values())


async def test_aiohttp_startup_and_cleanup_may_run_in_different_tasks(
    client: KubeClient,
) -> None:
    """The factory lives in a task of its own, so cleanup from another task works."""
    factory = new_factory(client)
    app = web.Application()
    app.cleanup_ctx.append(informer_cleanup_ctx(factory))
    runner = web.AppRunner(app)
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as startup:
            startup.start_soon(runner.setup)  # in a task of its own
        assert await app[INFORMERS].wait_for_cache_sync()
        async with anyio.create_task_group() as cleanup:
            cleanup.start_soon(runner.cleanup)  # in another one
    assert all(informer.state is State.STOPPED for informer in factory.informers.values())


async def test_aiohttp_startup_failure_propagates(client: KubeClient) -> None:
    """A builder that fails makes startup fail with its error, leaving no task behind."""

    def broken(app: web.Application) -> SharedInformerFactory:
        raise RuntimeError("no factory today")

    app = web.Application()
    app.cleanup_ctx.append(informer_cleanup_ctx(broken))
    runner = web.AppRunner(app)
    before = asyncio.all_tasks()
    with anyio.fail_after(GUARD), pytest.raises(RuntimeError, match="no factory today"):
        await runner.setup()
    assert asyncio.all_tasks() - before == set()
    assert INFORMERS not in app


async def test_aiohttp_cleanup_is_bounded(
    client: KubeClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A builder whose exit hangs is cancelled after stop_timeout."""
    hang = asyncio.Event()

    @asynccontextmanager
    async def stuck(app: web.Application) -> AsyncIterator[SharedInformerFactory]:
        yield new_factory(client)
        await hang.wait()  # never set: only cancellation ends it

    app = web.Application()
    app.cleanup_ctx.append(informer_cleanup_ctx(stuck, stop_timeout=0.05))
    runner = web.AppRunner(app)
    with anyio.fail_after(GUARD), caplog.at_level(logging.WARNING):
        await runner.setup()
        await runner.cleanup()
    assert "cancelling" in caplog.text
    assert not app[INFORMERS].running
