"""Everything aioinformer takes from kubernetes_asyncio, in one place.

kubernetes_asyncio loads the configuration (kubeconfig or in-cluster), builds the TLS context
and owns the aiohttp session. This module reads what requests need from it — the session
(``rest_client.pool_manager``), host, proxy and TLS server name of an ``ApiClient``, the
headers of its ``Configuration.auth_settings()`` — and keeps the credentials fresh,
which for an exec plugin means reaching into the kubeconfig loader's cached
``exec_plugin_expiry``. No other module touches kubernetes_asyncio's internals.

kubernetes_asyncio is imported by the functions that need it, never by this module: importing
it (its generated models) costs more than the rest of aioinformer, and a program that never
connects to a cluster (one that tests against the fake API server's in-memory doubles, a
pytest run that merely has aioinformer installed) should not pay for it.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import time
import types
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import anyio

from ..errors import ConfigurationError
from ._http import Endpoint

if TYPE_CHECKING:
    from kubernetes_asyncio.client import ApiClient, Configuration

__all__ = [
    "EXPIRY_MARGIN",
    "RELOAD_PERIOD",
    "Credentials",
    "Kubeconfig",
    "Reload",
    "endpoint_of",
    "in_cluster_credentials",
    "kubeconfig_credentials",
    "load_in_cluster_configuration",
    "new_api_client",
    "new_configuration",
    "refresher_credentials",
]

logger = logging.getLogger(__name__)

#: Seconds between reloads of credentials that may change on disk (token files, OIDC and gcp
#: tokens): client-go re-reads token files every minute.
RELOAD_PERIOD = 60.0
#: An expiring credential is renewed this many seconds before it expires (at most half its
#: lifetime early), as kubernetes_asyncio's own 5-minute skew.
EXPIRY_MARGIN = 300.0
#: After a scheduled reload failed, the next attempt waits this long (the old credentials are
#: used meanwhile).
RETRY_AFTER_FAILURE = 10.0

#: Reloads credentials into the configuration: ``force`` (after a 401, or at expiry) makes an
#: exec plugin run again. Returns when the new credential expires (wall-clock seconds), or
#: None.
Reload = Callable[[bool], Awaitable[float | None]]


def new_configuration(host: str | None = None) -> Configuration:
    """A fresh kubernetes_asyncio ``Configuration`` (``host``: the server's URL)."""
    from kubernetes_asyncio.client import Configuration

    return Configuration() if host is None else Configuration(host=host)


def new_api_client(configuration: Configuration) -> ApiClient:
    """kubernetes_asyncio's ``ApiClient`` for ``configuration``.

    For a plain-HTTP server (``http://``, the fake API server's), without the TLS context
    that ``ApiClient`` always builds: ``ssl.create_default_context()`` loads the system's CA
    certificates, tens of milliseconds that such a server never uses.
    """
    from kubernetes_asyncio.client import ApiClient

    if not str(configuration.host).lower().startswith("http:"):
        return ApiClient(configuration)
    client: ApiClient = ApiClient.__new__(ApiClient)
    _plain_http_init()(client, configuration)
    return client


@functools.cache
def _plain_http_init() -> Callable[[ApiClient, Configuration], None]:
    """``ApiClient.__init__`` whose REST client builds no TLS context.

    The same code as kubernetes_asyncio's own ``__init__`` (so the client has exactly the
    fields it would have, in any version), run with globals in which ``rest.RESTClientObject``
    is ``_PlainHttpRESTClient``: nothing outside this function object changes. Should a
    version build its REST client another way, the result is an ordinary ``ApiClient``.
    """
    from kubernetes_asyncio.client import ApiClient, rest

    class _PlainHttpRESTClient(rest.RESTClientObject):
        """``RESTClientObject`` as it is for a plain-HTTP server: the same session (pool size,
        proxy from the environment, read buffer), a connector without a TLS context of its
        own (aiohttp's default one, verifying, serves a proxy reached over HTTPS)."""

        def __init__(self, configuration: Any) -> None:
            self.server_hostname = configuration.tls_server_name
            self.proxy = configuration.proxy
            self.proxy_headers = configuration.proxy_headers
            self.pool_manager = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=configuration.connection_pool_maxsize),
                trust_env=True,
                read_bufsize=2**21,
            )

    init = ApiClient.__init__
    namespace = types.SimpleNamespace(RESTClientObject=_PlainHttpRESTClient)
    code: Callable[[ApiClient, Configuration], None] = types.FunctionType(
        init.__code__,
        {**init.__globals__, "rest": namespace},
        init.__name__,
        init.__defaults__,
        init.__closure__,
    )
    return code


class Kubeconfig:
    """Kubeconfig files merged as kubernetes_asyncio merges them (the first file that names a
    cluster, user or context wins; ``current-context`` from the last file that sets one).

    :param paths: the files, all existing.
    :raises Exception: what reading or merging raised (``OSError``, a YAML error,
        kubernetes_asyncio's ``ConfigException``, ...).
    """

    def __init__(self, paths: Sequence[Path]) -> None:
        from kubernetes_asyncio.config.kube_config import KubeConfigMerger

        self.paths = list(paths)
        self._merged: Any = KubeConfigMerger(os.pathsep.join(str(p) for p in paths)).config
        if self._merged is None:
            raise ValueError("no kubeconfig file was read")
        config = self._merged.value
        #: The contexts' names, in the files' order.
        self.contexts: list[str] = [
            str(context["name"]) for context in config.get("contexts") or []
        ]
        current = config.get("current-context")
        #: The ``current-context`` (None when unset or empty).
        self.current_context: str | None = str(current) if current else None

    async def load(self, context: str, configuration: Configuration) -> Any:
        """Load ``context`` (which must be one of :attr:`contexts`) into ``configuration``, as
        ``load_kube_config(persist_config=False)`` does; returns the loader (for
        :func:`kubeconfig_credentials`)."""
        from kubernetes_asyncio.config.kube_config import KubeConfigLoader

        loader = KubeConfigLoader(
            config_dict=self._merged, config_base_path=None, active_context=context
        )
        await loader.load_and_set(configuration)
        return loader


def load_in_cluster_configuration(configuration: Configuration) -> None:
    """The service account's configuration (host, CA) into ``configuration``; the token is
    read by :func:`in_cluster_credentials`.

    :raises Exception: what kubernetes_asyncio's in-cluster loader raised.
    """
    from kubernetes_asyncio.config import load_incluster_config

    load_incluster_config(  # type: ignore[no-untyped-call]
        client_configuration=configuration, try_refresh_token=False
    )


def endpoint_of(api_client: ApiClient) -> Endpoint:
    """Where the client's requests go, and its aiohttp session (TLS, connection pool).

    Logs a WARNING when the server's certificate is not verified (``insecure-skip-tls-verify``
    in the kubeconfig, or ``connect(insecure_skip_tls_verify=True)``): anyone on the path can
    then read and change the traffic, credentials included.
    """
    configuration = api_client.configuration
    rest = api_client.rest_client
    host = str(configuration.host)
    if host.lower().startswith("https:") and not configuration.verify_ssl:
        logger.warning(
            "TLS certificate verification is OFF for %s (insecure-skip-tls-verify): the"
            " connection and its credentials are open to interception; configure the"
            " cluster's CA (certificate-authority) instead",
            re.sub(r"//[^/@]*@", "//", host.rstrip("/")),  # never a user:password@
        )
    return Endpoint(
        session=rest.pool_manager,
        host=str(configuration.host).rstrip("/"),
        proxy=configuration.proxy or None,
        proxy_headers=configuration.proxy_headers or None,
        server_hostname=getattr(rest, "server_hostname", None) or None,
    )


async def _auth_headers(configuration: Configuration) -> dict[str, str]:
    headers: dict[str, str] = {}
    # auth_settings() also runs the configuration's refresh_api_key_hook, if it has one.
    for setting in (await configuration.auth_settings()).values():
        if setting.get("in") == "header" and setting.get("value"):
            headers[setting["key"]] = setting["value"]
    return headers


class Credentials:
    """The credentials of a ``Configuration``: reloaded before they are due and after a 401.

    A reload is due ``period`` seconds after the last one, or :data:`EXPIRY_MARGIN` before the
    credential expires (at most half its lifetime early), whichever comes first; the next
    request does it. After a 401, :meth:`refresh` reloads at once (forced: an exec plugin runs
    again). Reloads are one at a time, and concurrent 401s to the same credentials cause one
    reload. Credentials are never logged.

    :param configuration: kubernetes_asyncio's ``Configuration``; reloads write into it.
    :param reload: what reloads them (None: they never change).
    :param period: seconds between reloads (None: only at expiry and after a 401).
    :param expiry: when the current credential expires (wall-clock seconds), or None.
    :param wall_clock: seconds since the epoch; expiries are wall-clock times.
    """

    def __init__(
        self,
        configuration: Configuration,
        *,
        reload: Reload | None = None,
        period: float | None = None,
        expiry: float | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._configuration = configuration
        self._reload = reload
        self._period = period
        self._now = wall_clock
        self._lock = anyio.Lock()
        self._generation = 0
        self._due: float | None = None
        self._force_when_due = False
        self._schedule(expiry)

    @property
    def generation(self) -> int:
        """How many reloads succeeded."""
        return self._generation

    @property
    def due(self) -> float | None:
        """When the next reload is due (wall-clock seconds), or None."""
        return self._due

    async def headers(self) -> dict[str, str]:
        """The authentication headers, reloaded first when due."""
        due = self._due
        if due is not None and self._now() >= due:
            await self._reload_once(self._generation, force=self._force_when_due, scheduled=True)
        return await _auth_headers(self._configuration)

    async def refresh(self, generation: int | None = None) -> bool:
        """Reload now (forced), unless another reload happened since ``generation``.

        :returns: whether the credentials may have changed since ``generation`` (False when
            nothing can reload them).
        :raises Exception: what the reload raised (an exec plugin that fails, ...).
        """
        if self._reload is None:
            return False
        await self._reload_once(
            self._generation if generation is None else generation, force=True, scheduled=False
        )
        return True

    async def _reload_once(self, generation: int, *, force: bool, scheduled: bool) -> None:
        assert self._reload is not None
        async with self._lock:
            if self._generation != generation:
                return  # reloaded meanwhile (by a concurrent request)
            try:
                expiry = await self._reload(force)
            except Exception as exc:
                if not scheduled:
                    raise
                logger.warning(
                    "reloading credentials failed (%s); retrying in %.0f s",
                    type(exc).__name__,
                    RETRY_AFTER_FAILURE,
                )
                self._due = self._now() + RETRY_AFTER_FAILURE
                return
            self._generation += 1
            self._schedule(expiry)
            logger.debug("credentials reloaded (generation %d)", self._generation)

    def _schedule(self, expiry: float | None) -> None:
        if self._reload is None:
            return
        now = self._now()
        due = None if self._period is None else now + self._period
        self._force_when_due = False
        if expiry is not None:
            renew_at = expiry - min(EXPIRY_MARGIN, max(0.0, (expiry - now) / 2))
            if due is None or renew_at <= due:
                due, self._force_when_due = renew_at, True
        self._due = due


def refresher_credentials(
    configuration: Configuration, refresher: Callable[[], Awaitable[None]] | None
) -> Credentials:
    """Credentials reloaded by ``refresher`` after a 401 (and by the configuration's own
    ``refresh_api_key_hook`` at every request, if it has one)."""
    if refresher is None:
        return Credentials(configuration)

    async def reload(force: bool) -> None:
        await refresher()

    return Credentials(configuration, reload=reload)


def _exec_expiry(loader: Any) -> float | None:
    expiry = getattr(loader, "exec_plugin_expiry", None)
    return expiry.timestamp() if isinstance(expiry, datetime) else None


def kubeconfig_credentials(
    loader: Any, configuration: Configuration, *, wall_clock: Callable[[], float] = time.time
) -> Credentials:
    """Credentials of a kubeconfig, reloaded through its (already loaded) ``KubeConfigLoader``.

    An exec plugin's credential is renewed before its ``expirationTimestamp`` and after a 401
    (without an expiry: only after a 401, as client-go). Anything else — token files, OIDC and
    gcp tokens — is reloaded every :data:`RELOAD_PERIOD` (the loader refreshes an expired
    token itself). Client certificates are read once: the TLS context is built with the session.
    """
    user = getattr(loader, "_user", None)
    exec_plugin = (
        getattr(loader, "provider", None) not in ("gcp", "oidc")
        and user is not None
        and "exec" in user
    )

    async def reload(force: bool) -> float | None:
        if force and exec_plugin:
            # The loader keeps a credential until its expiry: forget it, the plugin runs again.
            loader.__dict__.pop("exec_plugin_expiry", None)
        await loader.load_and_set(configuration)
        return _exec_expiry(loader) if exec_plugin else None

    return Credentials(
        configuration,
        reload=reload,
        period=None if exec_plugin else RELOAD_PERIOD,
        expiry=_exec_expiry(loader) if exec_plugin else None,
        wall_clock=wall_clock,
    )


def in_cluster_credentials(
    configuration: Configuration,
    token_file: Path,
    *,
    wall_clock: Callable[[], float] = time.time,
) -> Credentials:
    """The service account's token, re-read from ``token_file`` every :data:`RELOAD_PERIOD`
    and after a 401 (the kubelet rotates projected tokens long before they expire)."""

    async def reload(force: bool) -> None:
        token = (await anyio.Path(token_file).read_text()).strip()
        if not token:
            raise ConfigurationError(f"the service account token file {token_file} is empty")
        configuration.api_key["BearerToken"] = f"Bearer {token}"

    return Credentials(configuration, reload=reload, period=RELOAD_PERIOD, wall_clock=wall_clock)
