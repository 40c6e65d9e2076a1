"""``aioinformer.connect()``: the connection as an async context manager (issue 10, item 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import aioinformer
from aioinformer import KubeClient
from aioinformer._listwatch import ListOptions
from aioinformer._wire._kubeconfig import PendingConnection
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.errors import ConfigurationError, LifecycleError
from aioinformer.testing import FakeApiServer

from ._kubeconfig import kubeconfig_for, two_contexts
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


# -- errors name what the caller can change (issue 19, deliverable 6) ----------------------


async def connect_error(**options: Any) -> str:
    with pytest.raises(ConfigurationError) as caught:
        async with aioinformer.connect(**options):
            pass
    return str(caught.value)


async def test_an_unknown_context_lists_the_contexts(tmp_path: Path) -> None:
    """``context=`` (or the file's current-context) naming no context: which file, which
    contexts it has (kubectl: ``context "X" does not exist``)."""
    config = two_contexts(tmp_path / "config")
    assert await connect_error(kubeconfig=str(config), context="staging") == (
        f"no context named staging in {config} (contexts: ctx, other)"
    )
    config = two_contexts(tmp_path / "config", current="gone")
    assert await connect_error(kubeconfig=str(config)) == (
        f"no context named gone in {config} (contexts: ctx, other)"
    )


async def test_errors_name_the_parameters_of_connect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """connect()'s errors name its parameters (``kubeconfig=``, ``context=``, ``server=``),
    not the command line's flags."""
    missing = tmp_path / "absent"
    assert (
        await connect_error(kubeconfig=str(missing)) == f"kubeconfig={str(missing)!r}: no such file"
    )
    config = two_contexts(tmp_path / "config", current=None)
    assert await connect_error(kubeconfig=str(config)) == (
        f"kubeconfig {config} has no current-context: pass context= (contexts: ctx, other)"
    )
    assert await connect_error(server="127.0.0.1:8001") == (
        "server='127.0.0.1:8001' has no scheme: write https://127.0.0.1:8001 (or http:// for a"
        " plain-HTTP server such as the fake API server)"
    )
    monkeypatch.setenv("KUBECONFIG", str(missing))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert await connect_error() == (
        f"no cluster configuration found: no kubeconfig at {missing} and not running in a"
        " cluster; pass kubeconfig= or server="
    )


async def test_a_kubeconfig_that_does_not_load_names_the_file(tmp_path: Path) -> None:
    """Not YAML, or a context naming a cluster the file lacks: ``cannot load kubeconfig``."""
    config = tmp_path / "config"
    config.write_text("clusters: [\n")
    assert (await connect_error(kubeconfig=str(config))).startswith(
        f"cannot load kubeconfig {config}: "
    )
    config.write_text(
        "contexts: [{name: ctx, context: {cluster: nowhere}}]\ncurrent-context: ctx\n"
    )
    message = await connect_error(kubeconfig=str(config))
    assert message.startswith(f"cannot load kubeconfig {config}: ConfigException: "), message


# -- a plain-HTTP server gets no TLS context (issue 20, item 5) -----------------------------


async def test_a_plain_http_client_builds_no_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """For an ``http://`` server the ApiClient is the one ``ApiClient(configuration)`` makes,
    field for field, except that its REST client builds no TLS context (loading the CA
    certificates is most of the cost of connecting); an ``https://`` one still does."""
    import ssl

    from kubernetes_asyncio.client import ApiClient, Configuration

    from aioinformer._wire._kube_asyncio import new_api_client

    configuration = Configuration(host="http://127.0.0.1:1")
    usual = ApiClient(configuration)
    built: list[object] = []
    create_default_context = ssl.create_default_context

    def spy(*args: object, **kwargs: object) -> ssl.SSLContext:
        built.append(args)
        return create_default_context(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl, "create_default_context", spy)
    plain = new_api_client(configuration)
    try:
        assert built == []
        assert isinstance(plain, ApiClient)
        assert vars(plain).keys() == vars(usual).keys()
        assert {k: v for k, v in vars(plain).items() if k != "rest_client"} == {
            k: v for k, v in vars(usual).items() if k != "rest_client"
        }
        rest, usual_rest = plain.rest_client, usual.rest_client
        assert isinstance(rest, type(usual_rest))
        assert vars(rest).keys() == vars(usual_rest).keys()
        for name in ("proxy", "proxy_headers", "server_hostname"):
            assert getattr(rest, name) == getattr(usual_rest, name)
        session, usual_session = rest.pool_manager, usual_rest.pool_manager
        assert session.trust_env and session.connector is not None
        assert usual_session.connector is not None
        assert session.connector.limit == usual_session.connector.limit
        assert session._read_bufsize == usual_session._read_bufsize
        secure = new_api_client(Configuration(host="https://127.0.0.1:1"))
        assert len(built) == 1
        await secure.close()
    finally:
        await plain.close()
        await usual.close()


@pytest.mark.fake_apiserver(system_objects=False)  # lists its own ConfigMaps
async def test_connect_over_plain_http_works(fake_apiserver: FakeApiServer) -> None:
    """The client without a TLS context talks to the fake API server like any other."""
    fake_apiserver.objects.create("configmaps", configmap("a"))
    async with aioinformer.connect(server=fake_apiserver.url) as client:
        page = await client.list("configmaps", namespace="default")
    assert [o["metadata"]["name"] for o in page["items"]] == ["a"]
