"""``aioinformer fake-apiserver`` as a process: manifests, the admin API, signals, kubectl."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from .standalone import LineReader, Standalone, run

#: Whole programs: left out of `make test-lowest` (-m "not slow").
pytestmark = pytest.mark.slow

MANIFESTS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team}
data: {mode: fast}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: app, image: nginx}]
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: web}}
spec:
  containers:
  - {{name: c, image: nginx}}
"""


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standalone]:
    """One standalone server for the module, loaded with MANIFESTS."""
    manifests = tmp_path_factory.mktemp("standalone") / "objects.yaml"
    manifests.write_text(MANIFESTS)
    server = Standalone("-f", str(manifests))
    yield server
    assert server.stop() == 0


async def test_standalone_serves_the_manifests(standalone: Standalone) -> None:
    """Objects from ``-f`` are served, their namespaces created."""
    async with aiohttp.ClientSession(base_url=standalone.url) as http:
        async with http.get("/api/v1/namespaces/team/configmaps/settings") as resp:
            assert (await resp.json())["data"] == {"mode": "fast"}
        async with http.get("/apis/apps/v1/namespaces/default/deployments/api") as resp:
            assert resp.status == 200
    assert any("loaded 2 objects" in line for line in standalone.log.lines)


async def test_standalone_exposes_faults_over_the_admin_api(standalone: Standalone) -> None:
    """The admin API is on: an armed failure answers the next request."""
    async with aiohttp.ClientSession(base_url=standalone.url) as http:
        async with http.post(
            "/_fake/fail-next", json={"n": 1, "status": 503, "verb": "get"}
        ) as resp:
            assert resp.status == 200
        async with http.get("/api/v1/namespaces/default") as resp:
            assert resp.status == 503
            assert (await resp.json())["reason"] == "ServiceUnavailable"
        async with http.get("/api/v1/namespaces/default") as resp:
            assert resp.status == 200


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_standalone_stops_cleanly_on_signals(signal_number: int) -> None:
    """SIGINT and SIGTERM shut the server down with exit status 0."""
    server = Standalone()
    assert server.stop(signal_number) == 0
    assert any("shutting down" in line for line in server.log.lines)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_works_against_the_standalone_server(
    standalone: Standalone, tmp_path: Path
) -> None:
    """kubectl creates, gets (json, list, -A), deletes, and a ``get -w`` sees a create; the
    list shows the server's Table columns for pods (``printers.go``: NAME, READY, STATUS,
    RESTARTS, AGE)."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    kubectl = ["kubectl", "--server", standalone.url]
    assert (
        run([*kubectl, "create", "-f", "-"], env=env, stdin=POD.format(name="web")).strip()
        == "pod/web created"
    )
    pod = json.loads(run([*kubectl, "get", "pod", "web", "-o", "json"], env=env))
    assert pod["metadata"]["name"] == "web" and pod["metadata"]["uid"]
    listed = run([*kubectl, "get", "pods"], env=env).split()
    assert listed[:6] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "web"]
    assert listed[6:8] == ["0/1", "Pending"]
    all_namespaces = run([*kubectl, "get", "configmaps", "-A"], env=env)
    assert "team" in all_namespaces and "settings" in all_namespaces
    watcher = subprocess.Popen(
        [*kubectl, "get", "pods", "-w"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert watcher.stdout is not None
        lines = LineReader(watcher.stdout)
        lines.wait_for(r"^web\s")
        run([*kubectl, "create", "-f", "-"], env=env, stdin=POD.format(name="web2"))
        lines.wait_for(r"^web2\s")
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)
        for pipe in (watcher.stdout, watcher.stderr):
            if pipe is not None:
                pipe.close()
    assert run([*kubectl, "delete", "pod", "web"], env=env).strip() == 'pod "web" deleted'
    assert run([*kubectl, "get", "pods", "-o", "name"], env=env).split() == ["pod/web2"]


def test_standalone_says_so_when_listening_beyond_this_machine() -> None:
    """``--host 0.0.0.0`` is honoured with a WARNING naming the exposure (issue 15); the
    default binds 127.0.0.1 and warns of nothing."""
    exposed = Standalone("--host", "0.0.0.0")
    assert exposed.stop() == 0
    warnings = [line for line in exposed.log.lines if "WARNING" in line]
    assert len(warnings) == 1
    assert "0.0.0.0" in warnings[0] and "/_fake/" in warnings[0]
    default = Standalone()
    assert default.stop() == 0
    assert "http://127.0.0.1:" in default.url
    assert not [line for line in default.log.lines if "WARNING" in line]


async def test_standalone_answers_only_loopback_and_allowed_hosts() -> None:
    """On its default 127.0.0.1 the standalone server refuses a DNS-rebound ``Host`` (403, on
    API paths too) and answers ``localhost``, ``127.0.0.1`` and each ``--allowed-host``."""
    server = Standalone("--allowed-host", "dev.internal", "--allowed-host", "Box.Lan")
    try:
        async with aiohttp.ClientSession(base_url=server.url) as http:
            for host, expected in [
                ("evil.example", 403), ("localhost", 200), ("127.0.0.1:1", 200),
                ("dev.internal:8001", 200), ("box.lan", 200), ("other.internal", 403),
            ]:  # fmt: skip
                async with http.get("/api/v1/secrets", headers={"Host": host}) as resp:
                    assert resp.status == expected, host
                    if expected == 403:
                        assert repr(host) in (await resp.json())["message"]
    finally:
        assert server.stop() == 0
    assert any("refused GET /api/v1/secrets for Host 'evil.example'" in line
               for line in server.log.lines)  # fmt: skip
