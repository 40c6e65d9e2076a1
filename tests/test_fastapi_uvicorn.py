"""``uvicorn examples.fastapi_app:app`` works (issue 10, item 7).

A module-level ``ApiClient`` fails under uvicorn ("no running event loop"), and a factory built
without informers reported ready: the example builds its client, factory and informers in the
app's lifespan, and a factory without informers is never ready.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import pathlib
import re
import signal
import sys
from typing import Any

import aiohttp
import anyio
import pytest
from fastapi import FastAPI

from aioinformer._informer._factory import SharedInformerFactory
from aioinformer.integrations.fastapi import health_router, informer_lifespan
from aioinformer.testing import FakeApiServer

from ._kubeconfig import kubeconfig_for
from ._web import serve_asgi
from .support import kube_client

ROOT = pathlib.Path(__file__).resolve().parents[1]
GUARD = 30.0
MODULE = "examples.fastapi_app"


async def seed(server: FakeApiServer) -> None:
    """The example's demo pods, in the kubeconfig context's namespace's cluster."""
    example: Any = importlib.import_module(MODULE)
    for pod in example.DEMO_PODS:
        server.objects.create("pods", pod)


async def get_json(http: aiohttp.ClientSession, url: str, **params: str) -> tuple[int, Any]:
    async with http.get(url, params=params) as response:
        return response.status, await response.json(content_type=None)


async def get_status(http: aiohttp.ClientSession, url: str) -> int:
    async with http.get(url) as response:
        return response.status


async def test_uvicorn_serves_the_module_level_app_of_the_example(
    fake_apiserver: FakeApiServer, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uvicorn imports ``examples.fastapi_app:app`` by name and serves it on 127.0.0.1; the
    app connects through $KUBECONFIG at startup, turns ready once its cache (and its
    controller) synced, and answers from the cache over HTTP."""
    await seed(fake_apiserver)
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig_for(fake_apiserver, tmp_path / "config")))
    app: Any = importlib.import_module(MODULE).app
    with anyio.fail_after(GUARD):
        async with serve_asgi(f"{MODULE}:app") as url, aiohttp.ClientSession() as http:
            assert await get_status(http, url + "/healthz") == 200  # answers once started up
            assert await app.state.informers.wait_for_cache_sync()
            status, body = await get_json(http, url + "/readyz")
            assert (status, body["ready"]) == (200, True)
            assert body["informers"]["v1/pods"]["objects"] == 3
            status, body = await get_json(http, url + "/pods", labelSelector="app=web")
            assert [p["metadata"]["name"] for p in body["items"]] == ["web-1", "web-2"]
    lists = [
        r for r in fake_apiserver.requests.records if r.verb == "list" and r.resource == "pods"
    ]
    assert lists, "the app listed pods through the kubeconfig's server"


@pytest.mark.slow
async def test_the_uvicorn_command_serves_the_example(
    fake_apiserver: FakeApiServer, tmp_path: pathlib.Path
) -> None:
    """``python -m uvicorn examples.fastapi_app:app`` from the repository's root starts, lists
    pods through $KUBECONFIG, answers its probes, and stops on Ctrl-C with status 0."""
    await seed(fake_apiserver)
    env = {**os.environ, "KUBECONFIG": str(kubeconfig_for(fake_apiserver, tmp_path / "config"))}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "uvicorn", f"{MODULE}:app", "--host", "127.0.0.1", "--port", "0",
        cwd=ROOT, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    log: list[str] = []
    try:
        with anyio.fail_after(GUARD):
            match = None
            while match is None:
                line = (await process.stderr.readline()).decode()
                assert line, f"uvicorn ended: {log}"
                log.append(line)
                match = re.search(r"Uvicorn running on (http://\S+)", line)
            url = match.group(1)
            await fake_apiserver.requests.wait_for(
                lambda r: r.verb == "watch" and r.resource == "pods", start=0
            )
            async with aiohttp.ClientSession() as http:
                assert await get_status(http, url + "/healthz") == 200
                status, body = await get_json(http, url + "/readyz")
            assert status in (200, 503)  # 503 for the moment the cache has not synced yet
            assert body["informers"]["v1/pods"]["running"] is True
    finally:
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(GUARD):
            rest = (await process.stderr.read()).decode()
            code = await process.wait()
    assert code == 0, "".join(log) + rest
    assert "Traceback" not in "".join(log) + rest


async def test_a_factory_without_informers_is_never_ready(
    fake_apiserver: FakeApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The trap of ``informer_lifespan(lambda app: SharedInformerFactory(client))``: nothing
    to sync, so /readyz stays 503 (it said 200) and a warning says what to do."""
    async with kube_client(fake_apiserver) as client:
        app = FastAPI(lifespan=informer_lifespan(lambda app: SharedInformerFactory(client)))
        app.include_router(health_router())
        with caplog.at_level(logging.WARNING, logger="aioinformer.integrations._runtime"):
            async with serve_asgi(app) as url, aiohttp.ClientSession() as http:
                status, body = await get_json(http, url + "/readyz")
    assert (status, body) == (503, {"ready": False, "informers": {}})
    assert [r.getMessage() for r in caplog.records] == [
        "the factory has no informers, so the app never turns ready: create them"
        " (factory.for_resource(...)) before the app starts, in the builder"
    ]
