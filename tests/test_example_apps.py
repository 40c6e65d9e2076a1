"""The example apps, served for real on 127.0.0.1 and queried over HTTP."""

from __future__ import annotations

import asyncio
import importlib.util
import pathlib
from collections.abc import AsyncIterator, Callable, Set
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import aiohttp
import anyio
import pytest
import uvicorn

import aioinformer
from aioinformer import KubeClient
from aioinformer._prometheus import INFORMER_METRIC_NAMES
from aioinformer.integrations import InformerRuntime
from aioinformer.integrations.aiohttp import INFORMERS
from aioinformer.testing import FakeApiServer
from aioinformer.testing.pytest_plugin import _serving as serving
from aioinformer.workqueue._metrics import METRIC_NAMES

from ._web import serve_aiohttp, serve_asgi
from .support import FAST_WATCH, kube_client
from .testing.valid import pod

GUARD = 10.0
ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` (the examples are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", ROOT / "examples" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fastapi_app = load_example("fastapi_app")
aiohttp_app = load_example("aiohttp_app")
pod_service = load_example("pod_service")


@dataclass
class RunningApp:
    """An example app being served: its URL, an HTTP client, and its informer runtime."""

    url: str
    http: aiohttp.ClientSession
    get_runtime: Callable[[], InformerRuntime]

    async def get(self, path: str, **params: str) -> tuple[int, bytes]:
        async with self.http.get(self.url + path, params=params) as response:
            return response.status, await response.read()

    async def get_json(self, path: str, **params: str) -> tuple[int, Any]:
        async with self.http.get(self.url + path, params=params) as response:
            return response.status, await response.json()


@asynccontextmanager
async def run_example(kind: str, client: KubeClient) -> AsyncIterator[RunningApp]:
    """Serve one example app against ``client`` until the block ends."""
    async with aiohttp.ClientSession() as http:
        if kind == "fastapi":
            app = fastapi_app.create_app(client, watch=FAST_WATCH)
            async with serve_asgi(app) as url:
                yield RunningApp(url, http, lambda: app.state.informers)
        else:
            app = aiohttp_app.create_app(client, watch=FAST_WATCH)
            async with serve_aiohttp(app) as url:
                yield RunningApp(url, http, lambda: app[INFORMERS])


#: Where the code of the app's tasks lives: the library (its fake API server aside), uvicorn
#: and the examples. Directories of the imported packages, never a pattern matched against a
#: path, so that the checkout's own path (a clone named ``aioinformer``, say) cannot match.
LIBRARY = pathlib.Path(aioinformer.__file__).resolve().parent
APP_CODE = (LIBRARY, pathlib.Path(uvicorn.__file__).resolve().parent, ROOT / "examples")
NOT_APP_CODE = (LIBRARY / "testing",)


def runs_app_code(filename: str) -> bool:
    """Whether a code object's file is library, uvicorn or example code (not the fake server)."""
    path = pathlib.Path(filename).resolve()
    return any(path.is_relative_to(d) for d in APP_CODE) and not any(
        path.is_relative_to(d) for d in NOT_APP_CODE
    )


ANYIO = pathlib.Path(anyio.__file__).resolve().parent


def task_code(task: asyncio.Task[Any]) -> Any:
    """The code object a task runs: its coroutine's, or, when anyio wrapped the coroutine a
    task group was given (anyio 4.14 on), the wrapped one's."""
    coro: Any = task.get_coro()
    code = getattr(coro, "cr_code", None)
    while code is not None and pathlib.Path(code.co_filename).resolve().is_relative_to(ANYIO):
        coro = getattr(coro, "cr_await", None)
        inner = getattr(coro, "cr_code", None)
        if inner is None:
            break
        code = inner
    return code


def app_tasks(before: Set[asyncio.Task[Any]] = frozenset()) -> list[asyncio.Task[Any]]:
    """Running tasks executing aioinformer, uvicorn or example code, the fake API server's
    aside: those in its package, and those in ``before`` (the server's own, started by the
    library's lifecycle before the app was)."""
    found = []
    for task in asyncio.all_tasks():
        code = task_code(task)
        if task not in before and code is not None and runs_app_code(code.co_filename):
            found.append(task)
    return found


def test_app_code_is_told_apart_whatever_the_checkout_is_called() -> None:
    """The test's own file is not app code even when the checkout's path contains
    ``/aioinformer/`` (issue 10: ``git clone`` names the directory so)."""
    assert not runs_app_code(__file__)
    assert not runs_app_code(str(LIBRARY / "testing" / "_server.py"))
    assert runs_app_code(str(LIBRARY / "informer.py"))
    assert runs_app_code(str(ROOT / "examples" / "fastapi_app.py"))


@pytest.fixture(params=["fastapi", "aiohttp"])
def kind(request: pytest.FixtureRequest) -> str:
    """Which example app."""
    return str(request.param)


async def seed(server: FakeApiServer) -> None:
    """The example's demo pods, plus one in another namespace (with the container a real
    server requires; its phase stays ``Pending``, as a real create sets it)."""
    pod_service.seed_demo_pods(server)
    server.objects.create("pods", pod("web-9", "other", labels={"app": "web"}))


@pytest.fixture
async def apiserver() -> AsyncIterator[FakeApiServer]:
    """A fake API server with the namespaces the tests use."""
    server = FakeApiServer(namespaces=("default", "other"), bookmark_interval=1.0)
    async with serving(server):
        await seed(server)
        yield server


async def test_readyz_is_503_until_synced_then_200(kind: str, apiserver: FakeApiServer) -> None:
    """While the API server is unreachable /readyz is 503 (and /healthz 200); once the cache and
    its consumers have synced, /readyz is 200; shutdown leaves no task running."""
    await apiserver.faults.stop_listening()
    before = asyncio.all_tasks()
    with anyio.fail_after(GUARD):
        async with kube_client(apiserver) as client:
            async with run_example(kind, client) as app:
                status, body = await app.get_json("/readyz")
                assert status == 503
                assert body["ready"] is False
                assert body["informers"]["v1/pods"]["synced"] is False
                assert (await app.get("/healthz"))[0] == 200
                assert (await app.get("/pods"))[0] == 503
                assert app_tasks(before), "the app's tasks should be visible while it runs"

                await apiserver.faults.start_listening()
                assert await asyncio.wait_for(app.get_runtime().wait_for_cache_sync(), GUARD)
                status, body = await app.get_json("/readyz")
                assert status == 200
                assert body == {
                    "ready": True,
                    "informers": {
                        "v1/pods": {"ready": True, "synced": True, "running": True, "objects": 4}
                    },
                }
            assert app_tasks(before) == []


async def test_pods_are_served_from_the_cache(kind: str, apiserver: FakeApiServer) -> None:
    """/pods filters by labelSelector and namespace; /pods/{ns}/{name} finds one; errors map."""
    with anyio.fail_after(GUARD):
        async with kube_client(apiserver) as client, run_example(kind, client) as app:
            await app.get("/healthz")  # startup has completed once anything answers
            assert await asyncio.wait_for(app.get_runtime().wait_for_cache_sync(), GUARD)

            def names(body: Any) -> list[str]:
                return [
                    f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in body["items"]
                ]

            status, body = await app.get_json("/pods", labelSelector="app=web")
            assert status == 200
            assert names(body) == ["default/web-1", "default/web-2", "other/web-9"]
            status, body = await app.get_json("/pods", labelSelector="app=web", namespace="other")
            assert names(body) == ["other/web-9"]
            status, body = await app.get_json("/pods", labelSelector="app notin (web)")
            assert names(body) == ["default/db-1"]
            status, body = await app.get_json("/pods")
            assert len(body["items"]) == 4
            assert (await app.get("/pods", labelSelector="app in (web"))[0] == 400

            status, pod = await app.get_json("/pods/default/web-1")
            assert status == 200
            assert pod["metadata"]["labels"] == {"app": "web"}
            assert (await app.get("/pods/default/nope"))[0] == 404

            status, phases = await app.get_json("/phases")
            assert phases == {
                "default/db-1": "Pending",
                "default/web-1": "Running",
                "default/web-2": "Running",
                "other/web-9": "Pending",
            }


async def test_new_pods_show_up(kind: str, apiserver: FakeApiServer) -> None:
    """A pod created after sync is served once the informer has seen it."""
    with anyio.fail_after(GUARD):
        async with kube_client(apiserver) as client, run_example(kind, client) as app:
            await app.get("/healthz")
            runtime = app.get_runtime()
            assert await asyncio.wait_for(runtime.wait_for_cache_sync(), GUARD)
            informer = runtime.factory.for_resource("v1/pods")
            async with informer.events() as events:
                apiserver.objects.create("pods", pod("web-3", labels={"app": "web"}))
                async for event in events:
                    if event.object["metadata"]["name"] == "web-3":
                        break
            _, body = await app.get_json("/pods", labelSelector="app=web", namespace="default")
            assert [p["metadata"]["name"] for p in body["items"]] == ["web-1", "web-2", "web-3"]


async def test_metrics_expose_informer_and_workqueue_metrics(
    kind: str, apiserver: FakeApiServer
) -> None:
    """/metrics has every informer family and client-go's workqueue families with values."""
    with anyio.fail_after(GUARD):
        async with kube_client(apiserver) as client, run_example(kind, client) as app:
            await app.get("/healthz")
            assert await asyncio.wait_for(app.get_runtime().wait_for_cache_sync(), GUARD)
            status, raw = await app.get("/metrics")
            assert status == 200
    text = raw.decode()
    declared = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")}
    # Counters are declared with or without "_total", depending on the prometheus_client version.
    declared |= {name + "_total" for name in declared}
    assert set(INFORMER_METRIC_NAMES) - declared == set()
    assert set(METRIC_NAMES.values()) - declared == set()
    samples = dict(
        line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#")
    )
    assert float(samples['aioinformer_informer_store_objects{informer="v1/pods"}']) == 4
    assert float(samples['aioinformer_informer_synced{informer="v1/pods"}']) == 1
    assert float(samples['aioinformer_informer_lists_total{informer="v1/pods"}']) == 1
    # Readiness includes the handler: it had enqueued all four keys.
    assert float(samples['workqueue_adds_total{name="pods"}']) == 4
    assert 'workqueue_queue_duration_seconds_bucket{le="1e-06",name="pods"}' in samples
