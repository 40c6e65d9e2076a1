"""Credentials stay fresh: reloaded before they are due, after a 401, one reload at a time.

Rules from client-go: token files are re-read every minute (``transport/token_source.go``); an
exec plugin's credential is renewed before its ``expirationTimestamp`` and after a 401, and one
without an expiry only after a 401 (``plugin/pkg/client/auth/exec``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from kubernetes_asyncio import config as kube_config
from kubernetes_asyncio.client import Configuration

import aioinformer
from aioinformer._wire._kube_asyncio import (
    EXPIRY_MARGIN,
    RELOAD_PERIOD,
    Credentials,
    in_cluster_credentials,
    kubeconfig_credentials,
)
from aioinformer.testing import FakeApiServer
from aioinformer.testing.pytest_plugin import _serving as serving

from .support import configmap


class WallClock:
    """A wall clock the test sets."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def bearer(token: str) -> Configuration:
    configuration = Configuration(host="http://127.0.0.1:1")
    configuration.api_key["BearerToken"] = f"Bearer {token}"
    return configuration


class Tokens:
    """A reload that hands out tok-1, tok-2, ... and records whether each was forced."""

    def __init__(self, configuration: Configuration, *, expires_in: float | None = None) -> None:
        self.configuration = configuration
        self.forced: list[bool] = []
        self.expires_in = expires_in
        self.clock = WallClock()

    async def __call__(self, force: bool) -> float | None:
        self.forced.append(force)
        self.configuration.api_key["BearerToken"] = f"Bearer tok-{len(self.forced)}"
        return None if self.expires_in is None else self.clock.now + self.expires_in


async def test_a_periodic_credential_is_reloaded_when_due_not_before() -> None:
    """Reloaded (not forced) by the first request ``period`` seconds after the last load."""
    configuration = bearer("tok-0")
    tokens = Tokens(configuration)
    credentials = Credentials(
        configuration, reload=tokens, period=RELOAD_PERIOD, wall_clock=tokens.clock
    )
    assert await credentials.headers() == {"authorization": "Bearer tok-0"}
    tokens.clock.now += RELOAD_PERIOD - 0.001
    assert await credentials.headers() == {"authorization": "Bearer tok-0"}
    tokens.clock.now += 0.001
    assert await credentials.headers() == {"authorization": "Bearer tok-1"}
    assert tokens.forced == [False]
    assert credentials.generation == 1
    assert credentials.due == tokens.clock.now + RELOAD_PERIOD


@pytest.mark.parametrize(
    ("lifetime", "renewed_before"),
    [(3600.0, EXPIRY_MARGIN), (120.0, 60.0)],
    ids=["an hour: 5 minutes early", "two minutes: halfway"],
)
async def test_an_expiring_credential_is_renewed_before_it_expires(
    lifetime: float, renewed_before: float
) -> None:
    """Renewed, forced, :data:`EXPIRY_MARGIN` before its expiry, or halfway through a shorter
    life; the new expiry schedules the next renewal."""
    configuration = bearer("tok-0")
    tokens = Tokens(configuration, expires_in=lifetime)
    clock = tokens.clock
    credentials = Credentials(
        configuration, reload=tokens, expiry=clock.now + lifetime, wall_clock=clock
    )
    clock.now += lifetime - renewed_before - 0.001
    assert await credentials.headers() == {"authorization": "Bearer tok-0"}
    clock.now += 0.001
    assert await credentials.headers() == {"authorization": "Bearer tok-1"}
    assert tokens.forced == [True]
    assert credentials.due == clock.now + lifetime - renewed_before


async def test_concurrent_401s_reload_once() -> None:
    """Requests that got a 401 for the same credentials cause one reload between them."""
    configuration = bearer("tok-0")
    entered, release = anyio.Event(), anyio.Event()
    reloads: list[bool] = []

    async def reload(force: bool) -> None:
        reloads.append(force)
        entered.set()
        await release.wait()

    credentials = Credentials(configuration, reload=reload)
    seen = credentials.generation
    results: list[bool] = []

    async def refresh() -> None:
        results.append(await credentials.refresh(seen))

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(refresh)
        await entered.wait()
        release.set()
    assert reloads == [True]
    assert results == [True, True, True]
    assert credentials.generation == seen + 1


async def test_a_failed_scheduled_reload_keeps_the_old_credentials(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A reload due before a request that fails is logged (its type only) and retried 10 s
    later; the request goes on with the credentials it has. A reload after a 401 raises."""
    configuration = bearer("tok-0")
    clock = WallClock()

    async def broken(force: bool) -> None:
        raise RuntimeError("plugin printed s3cr3t")

    credentials = Credentials(configuration, reload=broken, period=60.0, wall_clock=clock)
    clock.now += 60.0
    assert await credentials.headers() == {"authorization": "Bearer tok-0"}
    assert credentials.due == clock.now + 10.0
    assert "reloading credentials failed (RuntimeError)" in caplog.text
    assert "s3cr3t" not in caplog.text
    with pytest.raises(RuntimeError):
        await credentials.refresh()


async def test_credentials_without_a_reload_are_what_the_configuration_holds() -> None:
    """Nothing to reload: a refresh says so (no point repeating a request), nothing is due."""
    credentials = Credentials(bearer("static"))
    assert credentials.due is None
    assert await credentials.refresh(0) is False
    assert await credentials.headers() == {"authorization": "Bearer static"}


async def test_the_service_account_token_is_re_read(tmp_path: Path) -> None:
    """In a pod: the token file is re-read every minute and after a 401 (the kubelet
    rotates it); an empty file is an error of the reload."""
    token = tmp_path / "token"
    token.write_text("first\n")
    configuration = bearer("first")
    clock = WallClock()
    credentials = in_cluster_credentials(configuration, token, wall_clock=clock)
    token.write_text("second")
    assert await credentials.headers() == {"authorization": "Bearer first"}
    clock.now += RELOAD_PERIOD
    assert await credentials.headers() == {"authorization": "Bearer second"}
    token.write_text("third")
    await credentials.refresh()
    assert await credentials.headers() == {"authorization": "Bearer third"}
    token.write_text("")
    with pytest.raises(aioinformer.errors.ConfigurationError, match="is empty"):
        await credentials.refresh()


# -- exec plugins, end to end ------------------------------------------------------------------

PLUGIN = """
import json, pathlib, sys
runs = pathlib.Path(sys.argv[1])
n = len(runs.read_text().splitlines()) + 1 if runs.exists() else 1
runs.write_text(runs.read_text() + "run\\n" if runs.exists() else "run\\n")
status = {"token": f"tok-{n}"}
if sys.argv[2] != "none":
    status["expirationTimestamp"] = sys.argv[2]
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": status}))
"""


def exec_kubeconfig(server: FakeApiServer, tmp_path: Path, expiry: datetime | None) -> Path:
    """A kubeconfig whose user runs :data:`PLUGIN` (counting its runs in ``runs``)."""
    plugin = tmp_path / "plugin.py"
    plugin.write_text(PLUGIN)
    stamp = "none" if expiry is None else expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin), str(tmp_path / "runs"), stamp],
        }
    }
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "fake", "cluster": {"server": server.url}}],
        "users": [{"name": "me", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "fake", "user": "me"}}],
        "current-context": "ctx",
    }
    path = tmp_path / "config"
    path.write_text(json.dumps(config))
    return path


def runs(tmp_path: Path) -> int:
    return len((tmp_path / "runs").read_text().splitlines())


@pytest.fixture
async def server() -> AsyncIterator[FakeApiServer]:
    async with serving(FakeApiServer()) as fake:
        fake.objects.create("configmaps", configmap("a"))
        yield fake


async def test_an_exec_plugin_runs_again_after_a_401(server: FakeApiServer, tmp_path: Path) -> None:
    """A plugin's credential without an expiry is kept until a 401; then the plugin runs
    again and the request is repeated with the new token."""
    config = exec_kubeconfig(server, tmp_path, expiry=None)
    async with aioinformer.connect(kubeconfig=str(config)) as client:
        assert runs(tmp_path) == 1
        await client.get("configmaps", "a")
        await client.get("configmaps", "a")
        assert runs(tmp_path) == 1
        server.faults.fail_next(1, 401, verb="get")
        await client.get("configmaps", "a")
        assert runs(tmp_path) == 2
        assert await client._credentials.headers() == {"authorization": "Bearer tok-2"}
        await client.refresh_credentials()
        assert runs(tmp_path) == 3


async def test_an_exec_credential_is_renewed_before_it_expires(
    server: FakeApiServer, tmp_path: Path
) -> None:
    """A credential valid for an hour is used as is, then renewed by the first request within
    five minutes of its expiry: the plugin runs again although the loader (which only looks
    at the real clock) would still keep it."""
    expiry = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
    config = exec_kubeconfig(server, tmp_path, expiry=expiry)
    configuration = Configuration()
    loader = await kube_config.load_kube_config(
        config_file=str(config), client_configuration=configuration, persist_config=False
    )
    clock = WallClock()
    clock.now = expiry.timestamp() - 3600
    credentials = kubeconfig_credentials(loader, configuration, wall_clock=clock)
    clock.now = expiry.timestamp() - EXPIRY_MARGIN - 1
    assert await credentials.headers() == {"authorization": "Bearer tok-1"}
    clock.now += 1
    assert await credentials.headers() == {"authorization": "Bearer tok-2"}
    assert runs(tmp_path) == 2
