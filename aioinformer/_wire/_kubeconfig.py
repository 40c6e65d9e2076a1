"""Connecting to a cluster: kubeconfig, in-cluster service account, or an explicit server URL.

A thin layer over kubernetes_asyncio's config loaders that returns a
:class:`~aioinformer.KubeClient` whose credentials stay fresh (exec plugins and OIDC tokens
that expire, rotated service-account tokens)::

    async with aioinformer.connect() as client:     # closed at the end of the block
        factory = SharedInformerFactory(client)

``client = await aioinformer.connect()`` works too; then close it with
``await client.aclose()``.

Its errors name what the caller can change: ``connect()``'s name its parameters
(``kubeconfig=``, ``context=``, ``server=``), the command line's its flags (``--kubeconfig``,
...): see :class:`Spelling`. kubernetes_asyncio is imported when a connection is made, not
with this module.
"""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import ConfigurationError
from ._client import KubeClient
from ._kube_asyncio import (
    Credentials,
    Kubeconfig,
    in_cluster_credentials,
    kubeconfig_credentials,
    load_in_cluster_configuration,
    new_api_client,
    new_configuration,
)

if TYPE_CHECKING:
    from kubernetes_asyncio.client import Configuration

__all__ = ["COMMAND_LINE", "PYTHON", "PendingConnection", "Spelling", "connect"]

logger = logging.getLogger(__name__)

_IN_CLUSTER_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
_IN_CLUSTER_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


@dataclass(frozen=True)
class Spelling:
    """How error messages name the options of a connection: ``connect()``'s parameters or
    the command line's flags."""

    #: ``True``: ``--kubeconfig FILE``; ``False``: ``kubeconfig='FILE'``.
    flags: bool

    def option(self, name: str) -> str:
        """The option ``name`` (``"kubeconfig"``) alone: ``--kubeconfig`` or ``kubeconfig=``."""
        return f"--{name.replace('_', '-')}" if self.flags else f"{name}="

    def given(self, name: str, value: str) -> str:
        """The option with its value, as the caller wrote it."""
        if self.flags:
            return f"{self.option(name)} {shlex.quote(value)}"
        return f"{name}={value!r}"

    def options(self, *names: str) -> str:
        """``a, b or c`` of the options named."""
        spelled = [self.option(name) for name in names]
        return spelled[0] if len(spelled) == 1 else f"{', '.join(spelled[:-1])} or {spelled[-1]}"


#: ``connect()``'s errors: its parameters.
PYTHON = Spelling(flags=False)
#: The command line's errors: its flags.
COMMAND_LINE = Spelling(flags=True)


class PendingConnection:
    """What :func:`connect` returns: ``await`` it for a :class:`~aioinformer.KubeClient`
    (closed by you), or enter it with ``async with`` (closed at the end of the block).

    ``spelling`` says how errors name the options (the command line passes
    :data:`COMMAND_LINE`)."""

    __slots__ = ("_connection", "_options")

    def __init__(self, *, spelling: Spelling = PYTHON, **options: Any) -> None:
        self._options = {"spelling": spelling, **options}
        self._connection: KubeClient | None = None

    def __repr__(self) -> str:
        return f"<PendingConnection {self._connection!r}>"

    def __await__(self) -> Generator[Any, None, KubeClient]:
        return _connect(**self._options).__await__()

    async def __aenter__(self) -> KubeClient:
        self._connection = await _connect(**self._options)
        return self._connection

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()


def _client(
    configuration: Configuration,
    credentials: Credentials,
    namespace: str,
    source: str,
    *,
    follow_redirects: bool,
) -> KubeClient:
    client = KubeClient(
        new_api_client(configuration), namespace=namespace, follow_redirects=follow_redirects
    )
    return client._connected(credentials, source)


def _kubeconfig_paths(kubeconfig: str | None) -> list[Path]:
    raw = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    return [Path(p).expanduser() for p in raw.split(os.pathsep) if p]


# Start-up file checks: tiny and once, like kubernetes_asyncio's own (synchronous) loaders.
def _existing(paths: list[Path]) -> list[Path]:
    return [p for p in paths if p.is_file()]


def _in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and _IN_CLUSTER_TOKEN.is_file()


def _in_cluster_namespace() -> str:
    if _IN_CLUSTER_NAMESPACE.is_file():
        return _IN_CLUSTER_NAMESPACE.read_text().strip() or "default"
    return "default"


def connect(
    *,
    server: str | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    insecure_skip_tls_verify: bool = False,
    follow_redirects: bool = False,
) -> PendingConnection:
    """Connect to a cluster the way kubectl finds it::

        async with aioinformer.connect() as client:
            pod = await client.get("pods", "web-1")   # client.namespace: the context's

    Order: an explicit ``server`` URL (no credentials); else a kubeconfig (``kubeconfig``,
    ``$KUBECONFIG`` or ``~/.kube/config``) with ``context`` (default: the current one); else the
    in-cluster service account. Nothing is loaded until the result is awaited or entered,
    inside the running event loop (an ``ApiClient`` needs one).

    Credentials are kept fresh: an exec plugin runs again before its credential expires and
    after a 401, token files (the kubeconfig's ``tokenFile``, the service account's) are re-read
    every minute and after a 401, OIDC tokens are refreshed when expired.

    :param server: the API server's URL, ``http://`` or ``https://``. Default None.
    :param kubeconfig: the kubeconfig file(s), ``os.pathsep``-separated. Default None.
    :param context: the kubeconfig context. Default None: the current one.
    :param insecure_skip_tls_verify: do not verify the server's certificate. Default False.
    :param follow_redirects: follow 3xx answers to API requests (the token is dropped on a hop
        to another origin). Default False: a redirect raises
        :class:`~aioinformer.errors.RedirectError` naming its status and ``Location``.
    :returns: a :class:`PendingConnection`: ``async with`` it, or ``await`` it for a
        :class:`~aioinformer.KubeClient`.
    :raises ConfigurationError: (when awaited or entered) when nothing usable is found, the
        kubeconfig does not load or the server URL is not an http(s) URL; the message says
        what was tried. Credentials never appear in it.
    """
    return PendingConnection(
        server=server,
        kubeconfig=kubeconfig,
        context=context,
        insecure_skip_tls_verify=insecure_skip_tls_verify,
        follow_redirects=follow_redirects,
    )


def _checked_server_url(server: str, spelling: Spelling) -> str:
    """The server URL without trailing slashes, or a ConfigurationError saying what to fix."""
    given = spelling.given("server", server)
    if "://" not in server:
        raise ConfigurationError(
            f"{given} has no scheme: write https://{server} (or http:// for a plain-HTTP"
            " server such as the fake API server)"
        )
    parts = urlsplit(server)
    if parts.scheme.lower() not in ("http", "https"):
        raise ConfigurationError(
            f"{given} has the scheme {parts.scheme!r}: use http:// or https://"
        )
    if not parts.hostname:
        raise ConfigurationError(f"{given} has no host")
    return server.rstrip("/")


async def _connect(
    *,
    server: str | None,
    kubeconfig: str | None,
    context: str | None,
    insecure_skip_tls_verify: bool,
    follow_redirects: bool,
    spelling: Spelling,
) -> KubeClient:
    follow = {"follow_redirects": follow_redirects}
    if server:
        configuration = new_configuration(_checked_server_url(server, spelling))
        configuration.verify_ssl = not insecure_skip_tls_verify
        return _client(configuration, Credentials(configuration), "default", "server", **follow)

    paths = _existing(_kubeconfig_paths(kubeconfig))
    if kubeconfig and not paths:
        raise ConfigurationError(f"{spelling.given('kubeconfig', kubeconfig)}: no such file")
    if paths:
        return await _from_kubeconfig(
            paths, context, insecure_skip_tls_verify, spelling, follow_redirects=follow_redirects
        )

    if _in_cluster():
        configuration = new_configuration()
        try:
            # The token is re-read by the client's credentials (every minute and after a 401).
            load_in_cluster_configuration(configuration)
        except Exception as exc:
            raise ConfigurationError(f"cannot load in-cluster configuration: {exc}") from exc
        credentials = in_cluster_credentials(configuration, _IN_CLUSTER_TOKEN)
        return _client(configuration, credentials, _in_cluster_namespace(), "in-cluster", **follow)

    tried = ", ".join(str(p) for p in _kubeconfig_paths(kubeconfig))
    raise ConfigurationError(
        f"no cluster configuration found: no kubeconfig at {tried} and not running in a"
        f" cluster; {'use' if spelling.flags else 'pass'}"
        f" {spelling.options('kubeconfig', 'server')}"
    )


async def _from_kubeconfig(
    paths: list[Path],
    context: str | None,
    insecure_skip_tls_verify: bool,
    spelling: Spelling,
    *,
    follow_redirects: bool,
) -> KubeClient:
    names = os.pathsep.join(str(p) for p in paths)
    try:
        config = Kubeconfig(paths)
    except Exception as exc:  # OSError, a YAML error, kubernetes_asyncio's ConfigException...
        raise ConfigurationError(
            f"cannot load kubeconfig {names}: {type(exc).__name__}: {exc}"
        ) from exc
    contexts = f"(contexts: {', '.join(config.contexts) or 'none'})"
    chosen = context or config.current_context
    if chosen is None:
        raise ConfigurationError(
            f"kubeconfig {names} has no current-context:"
            f" {'use' if spelling.flags else 'pass'} {spelling.option('context')} {contexts}"
        )
    if chosen not in config.contexts:
        raise ConfigurationError(f"no context named {chosen} in {names} {contexts}")
    configuration = new_configuration()
    try:
        loader = await config.load(chosen, configuration)
    except Exception as exc:  # the loader raises ConfigException, KeyError, OSError, ...
        raise ConfigurationError(
            f"cannot load kubeconfig {names}: {type(exc).__name__}: {exc}"
        ) from exc
    if insecure_skip_tls_verify:
        configuration.verify_ssl = False
    namespace = "default"
    current = loader.current_context
    if isinstance(current, dict):
        namespace = (current.get("context") or {}).get("namespace") or "default"
    credentials = kubeconfig_credentials(loader, configuration)
    return _client(
        configuration, credentials, namespace, "kubeconfig", follow_redirects=follow_redirects
    )
