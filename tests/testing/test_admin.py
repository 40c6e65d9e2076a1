"""The ``/_fake/`` fault-injection HTTP API and manifest loading."""

from __future__ import annotations

import ast
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import anyio
import pytest

from aioinformer.errors import NotFoundError
from aioinformer.testing import FakeApiServer
from aioinformer.testing._apiserver import _admin as admin_module
from aioinformer.testing._apiserver._manifests import load_manifests
from aioinformer.testing.pytest_plugin import _serving as serving

from .watching import decode, raw_lines

MANIFESTS = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: team}
spec:
  containers: [{name: app, image: nginx}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: app, image: nginx}]
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: one, namespace: other}}
- {apiVersion: v1, kind: Node, metadata: {name: node-1}}
"""


@pytest.fixture
async def admin() -> AsyncIterator[tuple[FakeApiServer, aiohttp.ClientSession]]:
    """A server with the admin API on, and a session to it."""
    async with (
        serving(FakeApiServer(admin_api=True)) as server,
        aiohttp.ClientSession(base_url=server.url) as http,
    ):
        yield server, http


async def _post(http: aiohttp.ClientSession, action: str, body: object = None) -> dict[str, object]:
    async with http.post(f"/_fake/{action}", json=body) as resp:
        assert resp.status == 200, await resp.text()
        answer: dict[str, object] = await resp.json()
        return answer


async def test_admin_api_is_off_by_default(http: aiohttp.ClientSession) -> None:
    """Without ``admin_api`` the /_fake/ endpoints do not exist."""
    async with http.post("/_fake/drop-watches") as resp:
        assert resp.status == 404


async def test_admin_fail_next_and_state(
    admin: tuple[FakeApiServer, aiohttp.ClientSession],
) -> None:
    """fail-next arms a failure; state reports the RV and open watches."""
    server, http = admin
    await _post(http, "fail-next", {"n": 1, "status": 429, "retryAfter": 3, "verb": "list"})
    async with http.get("/api/v1/pods") as resp:
        assert resp.status == 429 and resp.headers["Retry-After"] == "3"
    async with http.get("/_fake/state") as resp:
        assert await resp.json() == {
            "resourceVersion": server.objects.resource_version,
            "activeWatches": 0,
        }


async def test_admin_watch_faults(admin: tuple[FakeApiServer, aiohttp.ClientSession]) -> None:
    """Raw lines, malformed lines, watch errors and drops act on open watches."""
    server, http = admin
    async with http.get("/api/v1/pods", params={"watch": "1"}) as watch:
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(1)
        await _post(http, "inject-raw-line", {"line": '{"type":"X","object":{}}'})
        await _post(http, "inject-malformed-line")
        assert await _post(
            http, "inject-watch-error", {"code": 500, "reason": "InternalError"}
        ) == {"ended": 1}
        lines = await raw_lines(watch)
    assert lines[0] == b'{"type":"X","object":{}}\n'
    assert decode(lines[2:]) == [{"type": "ERROR", "object": decode(lines[2:])[0]["object"]}]
    async with http.get("/api/v1/pods", params={"watch": "1"}) as watch:
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(1)
        assert await _post(http, "stall-watches", {"resource": "pods"}) == {"stalled": 1}
        assert await _post(http, "drop-watches") == {"dropped": 1}
        with pytest.raises(aiohttp.ClientPayloadError):
            await raw_lines(watch)


async def test_admin_restart_compact_latency_and_request_log(
    admin: tuple[FakeApiServer, aiohttp.ClientSession],
) -> None:
    """restart answers before dropping the rest; compact, latency and the log work over HTTP."""
    server, http = admin
    old = server.objects.resource_version
    server.objects.create("configmaps", {"metadata": {"name": "c"}})
    assert await _post(http, "restart") == {"ok": True}
    await _post(http, "compact", {"resourceVersion": server.objects.resource_version})
    params = {"watch": "1", "resourceVersion": old}
    async with http.get("/api/v1/configmaps", params=params) as resp:
        assert decode(await raw_lines(resp))[0]["object"]["code"] == 410
    await _post(http, "latency", {"seconds": 0})
    async with http.get("/_fake/requests") as resp:
        log = await resp.json()
    assert [r["verb"] for r in log] == ["admin", "admin", "watch", "admin"]
    assert log[2]["query"] == params


async def test_admin_rejects_bad_arguments(
    admin: tuple[FakeApiServer, aiohttp.ClientSession],
) -> None:
    """Missing arguments are 400; unknown endpoints are 404."""
    _, http = admin
    async with http.post("/_fake/fail-next", json={"n": 1}) as resp:
        assert resp.status == 400
    async with http.post("/_fake/nothing") as resp:
        assert resp.status == 404


async def test_manifests_load_with_namespaces_and_lists(
    fake_apiserver: FakeApiServer, tmp_path: Path
) -> None:
    """Multi-document YAML loads every object, creating namespaces, flattening lists; the
    objects are stored as a real server stores them (a Namespace gets its ``kubernetes``
    finalizer and ``Active`` phase, a Deployment its defaults)."""
    path = tmp_path / "objects.yaml"
    path.write_text(MANIFESTS)
    created = await load_manifests(fake_apiserver, path)
    assert [o["kind"] for o in created] == ["Pod", "Deployment", "ConfigMap", "Node"]
    assert (fake_apiserver.objects.get("pods", "web", namespace="team"))["metadata"]["uid"]
    assert (fake_apiserver.objects.get("namespaces", "other"))["status"] == {"phase": "Active"}
    spec = fake_apiserver.objects.get("deployments.apps", "api")["spec"]
    assert spec["replicas"] == 2 and spec["strategy"]["type"] == "RollingUpdate"


async def test_manifests_with_unknown_kinds_are_refused(
    fake_apiserver: FakeApiServer, tmp_path: Path
) -> None:
    """An object of a kind the server does not serve raises NotFoundError."""
    path = tmp_path / "objects.yaml"
    path.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
    with pytest.raises(NotFoundError):
        await load_manifests(fake_apiserver, path)


def test_the_admin_api_uses_only_the_servers_public_entry_points() -> None:
    """``admin.py`` reaches the server through ``objects``, ``faults`` and ``requests`` only
    (no private member of anything but itself), and dispatches through tables, not a
    ladder of ``if``s."""
    tree = ast.parse(Path(admin_module.__file__).read_text(encoding="utf-8"))
    private = [
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]
    assert private == []
    handle = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.AsyncFunctionDef) and node.name == "handle"
    )
    assert sum(isinstance(node, ast.If) for node in ast.walk(handle)) <= 4


async def test_an_admin_fault_on_an_unknown_resource_is_404(
    admin: tuple[FakeApiServer, aiohttp.ClientSession],
) -> None:
    """The public API's NotFoundError comes back over HTTP as the server's 404 Status."""
    _, http = admin
    async with http.post("/_fake/drop-watches", json={"resource": "widgets"}) as resp:
        assert resp.status == 404
        body = await resp.json()
    assert (body["reason"], body["message"]) == (
        "NotFound",
        "the server doesn't have a resource type 'widgets'",
    )


async def test_admin_api_refuses_what_a_browser_can_send(
    admin: tuple[FakeApiServer, aiohttp.ClientSession],
) -> None:
    """A web page must not drive the admin API of a server on the developer's machine (issue
    15: a cross-origin ``text/plain`` POST created objects). Browsers attach ``Origin`` to every
    cross-origin request and every POST (Fetch standard, "append a request `Origin` header"),
    and a DNS-rebound page arrives with its own name as ``Host``; a ``text/plain`` body is a
    CORS "simple request" sent without a preflight. Each is refused, and nothing happens."""
    _, http = admin
    attempts: list[tuple[dict[str, str], bytes, int]] = [
        ({"Origin": "http://evil.example"}, b"", 403),
        ({"Host": "evil.example:8001"}, b"", 403),
        ({"Content-Type": "text/plain"}, b'{"n": 1, "status": 500}', 415),
    ]
    for headers, body, expected in attempts:
        async with http.post("/_fake/fail-next", data=body, headers=headers) as resp:
            assert resp.status == expected, headers
            assert (await resp.json())["kind"] == "Status"
    async with http.get("/api/v1/namespaces") as resp:
        assert resp.status == 200  # no failure was armed
    for host in ("localhost:1", "127.0.0.1:1", "[::1]:1"):
        async with http.get("/_fake/state", headers={"Host": host}) as resp:
            assert resp.status == 200, host
