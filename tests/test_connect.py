"""``aioinformer.connect()``: the connection as an async context manager (issue 10, item 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import aioinformer
from aioinformer.errors import ConfigurationError
from aioinformer.kubeconfig import ClusterConnection, PendingConnection
from aioinformer.listwatch import ListOptions
from aioinformer.testing import FakeApiServer
from aioinformer.transport import KubeListerWatcher

from ._kubeconfig import kubeconfig_for
from .support import CONFIGMAPS, configmap


def closed(connection: ClusterConnection) -> bool:
    """Whether the connection's HTTP session is closed."""
    return bool(connection.api_client.rest_client.pool_manager.closed)


def test_the_names_the_readme_uses_import_as_shown() -> None:
    """After ``import aioinformer`` alone: ``aioinformer.connect``,
    ``aioinformer.kubeconfig.connect`` and ``aioinformer.LeaderElector`` exist."""
    code = (
        "import aioinformer;"
        "print(aioinformer.connect is aioinformer.kubeconfig.connect,"
        " aioinformer.LeaderElector.__name__, aioinformer.ClusterConnection.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "LeaderElector", "ClusterConnection"]


def test_connect_loads_nothing_until_used() -> None:
    """connect() needs no running event loop (a module-level call is fine): the ApiClient is
    built when the result is entered or awaited."""
    pending = aioinformer.connect(server="http://127.0.0.1:1")
    assert isinstance(pending, PendingConnection)


async def test_async_with_connect_closes_the_client(
    fake_apiserver: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``async with aioinformer.connect() as client:`` finds the cluster through $KUBECONFIG,
    talks to it, and closes the client's session at the end of the block."""
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig_for(fake_apiserver, tmp_path / "config")))
    fake_apiserver.objects.create("configmaps", configmap("a"))
    async with aioinformer.connect() as client:
        assert (client.source, client.namespace) == ("kubeconfig", "team-a")
        page = await KubeListerWatcher(client.api_client, CONFIGMAPS).list(ListOptions())
        assert [o["metadata"]["name"] for o in page.items] == ["a"]
        assert not closed(client)
    assert closed(client)
    await client.aclose()  # idempotent


async def test_an_awaited_connection_is_an_async_context_manager(
    fake_apiserver: FakeApiServer,
) -> None:
    """``await connect(...)`` gives the connection itself, closed by ``async with`` or by an
    idempotent ``aclose()``."""
    connection = await aioinformer.connect(server=fake_apiserver.url + "/")
    assert isinstance(connection, ClusterConnection)
    assert connection.api_client.configuration.host == fake_apiserver.url
    async with connection as same:
        assert same is connection
    assert closed(connection)
    await connection.aclose()
    await connection.close()


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ("127.0.0.1:8001", r"'127.0.0.1:8001' has no scheme: write https://127.0.0.1:8001 \(or"),
        ("localhost:8001", "has no scheme"),
        ("ftp://example.com", r"has the scheme 'ftp': use http:// or https://"),
        ("http://", "has no host"),
    ],
)
async def test_a_server_url_must_be_http_or_https(server: str, message: str) -> None:
    """A URL without a scheme, with another scheme or without a host is refused up front."""
    with pytest.raises(ConfigurationError, match=message):
        async with aioinformer.connect(server=server):
            pass
