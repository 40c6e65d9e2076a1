"""``aioinformer.connect()``: the connection as an async context manager (issue 10, item 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import aioinformer
from aioinformer import KubeClient
from aioinformer._listwatch import ListOptions
from aioinformer._wire._kubeconfig import PendingConnection
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.errors import ConfigurationError, LifecycleError
from aioinformer.testing import FakeApiServer

from ._kubeconfig import kubeconfig_for
from .support import CONFIGMAPS, configmap


def closed(client: KubeClient) -> bool:
    """Whether the client's HTTP session is closed."""
    return bool(client.api_client.rest_client.pool_manager.closed)


def test_the_names_the_readme_uses_import_as_shown() -> None:
    """After ``import aioinformer`` alone: ``aioinformer.connect``,
    ``aioinformer.LeaderElector`` and ``aioinformer.KubeClient`` exist."""
    code = (
        "import aioinformer;"
        "print(callable(aioinformer.connect),"
        " aioinformer.LeaderElector.__name__, aioinformer.KubeClient.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "LeaderElector", "KubeClient"]


def test_connect_loads_nothing_until_used() -> None:
    """connect() needs no running event loop (a module-level call is fine): the ApiClient is
    built when the result is entered or awaited."""
    pending = aioinformer.connect(server="http://127.0.0.1:1")
    assert isinstance(pending, PendingConnection)


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_async_with_connect_closes_the_client(
    fake_apiserver: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``async with aioinformer.connect() as client:`` finds the cluster through $KUBECONFIG,
    talks to it, and closes the client's session at the end of the block."""
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig_for(fake_apiserver, tmp_path / "config")))
    fake_apiserver.objects.create("configmaps", configmap("a"))
    async with aioinformer.connect() as client:
        assert (client.source, client.namespace) == ("kubeconfig", "team-a")
        page = await KubeListerWatcher(client, CONFIGMAPS).list(ListOptions())
        assert [o["metadata"]["name"] for o in page.items] == ["a"]
        assert not closed(client)
    assert closed(client)
    await client.aclose()  # idempotent


async def test_an_awaited_connection_is_an_async_context_manager(
    fake_apiserver: FakeApiServer,
) -> None:
    """``await connect(...)`` gives the client itself, closed by ``async with`` or by an
    idempotent ``aclose()``; a closed client refuses requests."""
    client = await aioinformer.connect(server=fake_apiserver.url + "/")
    assert isinstance(client, KubeClient)
    assert client.host == fake_apiserver.url
    assert repr(client) == f"<KubeClient {fake_apiserver.url} namespace='default' [open]>"
    async with client as same:
        assert same is client
    assert closed(client) and client.closed
    await client.aclose()
    with pytest.raises(LifecycleError, match="the client is closed"):
        await client.get("configmaps", "a")


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


async def test_follow_redirects_is_off_unless_asked() -> None:
    """``connect(follow_redirects=...)`` reaches the client's transport; off by default."""
    async with aioinformer.connect(server="http://127.0.0.1:1") as client:
        assert client._transport.follow_redirects is False
    async with aioinformer.connect(server="http://127.0.0.1:1", follow_redirects=True) as client:
        assert client._transport.follow_redirects is True
    async with KubeClient(FakeApiServer().api_client(), follow_redirects=True) as client:
        assert client._transport.follow_redirects is True
