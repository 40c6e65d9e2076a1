"""A tiny recording HTTP server and kubectl runner for the wire-format tests.

The server answers every request with a handler the test gives; kubectl runs as a
subprocess of the test's event loop (``anyio.run_process``), so no threads and no sleeps.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import anyio
from aiohttp import web

KUBECTL = shutil.which("kubectl")
NO_KUBECTL = "kubectl is not on PATH (these tests drive the real kubectl 1.32 binary)"

Handler = Callable[[web.Request, bytes], Awaitable[web.StreamResponse]]


@dataclass
class Recorded:
    """One request the server saw."""

    method: str
    path: str
    query: dict[str, str]
    content_type: str
    accept: str
    body: bytes


@dataclass
class TinyServer:
    """aiohttp on 127.0.0.1, port 0; every request is recorded, then ``handler`` answers."""

    handler: Handler
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""
    _runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.requests.append(
            Recorded(
                request.method,
                request.path,
                dict(request.query),
                request.headers.get("Content-Type", ""),
                request.headers.get("Accept", ""),
                body,
            )
        )
        return await self.handler(request, body)

    async def __aenter__(self) -> TinyServer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        await web.SockSite(self._runner, sock).start()
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def status(code: int, reason: str, message: str) -> web.Response:
    """A failure ``Status`` answer."""
    return web.json_response(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        },
        status=code,
    )


class Kubectl:
    """kubectl pointed at a server, with an empty kubeconfig and its own cache."""

    def __init__(self, url: str, home: Path) -> None:
        assert KUBECTL is not None, NO_KUBECTL
        kubeconfig = home / "kubeconfig"
        kubeconfig.write_text("")
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        self.base = [KUBECTL, "--server", url, "--cache-dir", str(home / "cache")]

    async def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        """Run one command to completion (raises with stderr when ``check`` and it fails)."""
        with anyio.fail_after(60):
            done = await anyio.run_process([*self.base, *args], env=self.env, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {done.stderr.decode()}")
        return done

    async def out(self, *args: str) -> str:
        """stdout of a command that must succeed."""
        return (await self.run(*args)).stdout.decode()


def _resource(name: str, kind: str, namespaced: bool = True, **extra: str) -> dict[str, object]:
    verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
    return {
        "name": name,
        "singularName": "",
        "namespaced": namespaced,
        "kind": kind,
        "verbs": verbs,
        **extra,
    }


def _group(name: str, version: str) -> dict[str, object]:
    listed = {"groupVersion": f"{name}/{version}", "version": version}
    return {"name": name, "versions": [listed], "preferredVersion": listed}


#: Legacy discovery for a few resources, enough for kubectl to map names to resources.
DISCOVERY: dict[str, dict[str, object]] = {
    "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []},
    "/apis": {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group("apps", "v1"), _group("batch", "v1"), _group("autoscaling", "v1")],
    },
    "/api/v1": {
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": [
            _resource("pods", "Pod"),
            _resource("configmaps", "ConfigMap"),
            _resource("namespaces", "Namespace", namespaced=False),
        ],
    },
    "/apis/apps/v1": {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": "apps/v1",
        "resources": [
            _resource("deployments", "Deployment"),
            _resource("deployments/scale", "Scale", group="autoscaling", version="v1"),
        ],
    },
    "/apis/batch/v1": {
        "kind": "APIResourceList",
        "groupVersion": "batch/v1",
        "resources": [_resource("jobs", "Job"), _resource("cronjobs", "CronJob")],
    },
    "/apis/autoscaling/v1": {
        "kind": "APIResourceList",
        "groupVersion": "autoscaling/v1",
        "resources": [_resource("horizontalpodautoscalers", "HorizontalPodAutoscaler")],
    },
}


def discovery(request: web.Request) -> web.Response | None:
    """The discovery document at the request's path, or None."""
    found = DISCOVERY.get(request.path) if request.method == "GET" else None
    return None if found is None else web.json_response(found)
