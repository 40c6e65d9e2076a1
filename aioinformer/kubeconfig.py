"""Connecting to a cluster: kubeconfig, in-cluster service account, or an explicit server URL.

A thin layer over kubernetes_asyncio's config loaders that also returns a credential refresher
(for exec plugins and OIDC tokens that expire), ready to hand to
:class:`~aioinformer.transport.KubeListerWatcher` or
:class:`~aioinformer.factory.SharedInformerFactory`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes_asyncio import config as kube_config
from kubernetes_asyncio.client import ApiClient, Configuration

from .errors import ConfigurationError

__all__ = ["ClusterConnection", "connect"]

logger = logging.getLogger(__name__)

_IN_CLUSTER_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
_IN_CLUSTER_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


@dataclass
class ClusterConnection:
    """An ``ApiClient`` plus what came with its configuration.

    :ivar api_client: the client; close it with ``await connection.close()``.
    :ivar namespace: the context's default namespace (``"default"`` when unset).
    :ivar source: where the configuration came from (``"server"``, ``"kubeconfig"``,
        ``"in-cluster"``), for messages.
    :ivar credential_refresher: reloads credentials after a 401, or None.
    """

    api_client: ApiClient
    namespace: str
    source: str
    credential_refresher: Callable[[], Awaitable[None]] | None = None

    async def close(self) -> None:
        """Close the client's HTTP session."""
        await self.api_client.close()


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


async def connect(
    *,
    server: str | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    insecure_skip_tls_verify: bool = False,
) -> ClusterConnection:
    """Build an ``ApiClient`` the way kubectl would find the cluster.

    Order: an explicit ``server`` URL (no credentials); else a kubeconfig (``kubeconfig``,
    ``$KUBECONFIG`` or ``~/.kube/config``) with ``context`` (default: the current one); else the
    in-cluster service account.

    :raises ConfigurationError: when nothing usable is found or the kubeconfig does not load;
        the message says what was tried. Credentials never appear in it.
    """
    if server:
        configuration = Configuration(host=server.rstrip("/"))
        configuration.verify_ssl = not insecure_skip_tls_verify
        return ClusterConnection(ApiClient(configuration), "default", "server")

    paths = _existing(_kubeconfig_paths(kubeconfig))
    if kubeconfig and not paths:
        raise ConfigurationError(f"kubeconfig {kubeconfig!r} does not exist")
    if paths:
        configuration = Configuration()
        try:
            loader: Any = await kube_config.load_kube_config(
                config_file=os.pathsep.join(str(p) for p in paths),
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
        except Exception as exc:  # the loader raises ConfigException, KeyError, OSError, ...
            names = ", ".join(str(p) for p in paths)
            raise ConfigurationError(
                f"cannot load kubeconfig {names}: {type(exc).__name__}: {exc}"
            ) from exc
        if insecure_skip_tls_verify:
            configuration.verify_ssl = False
        namespace = "default"
        current = loader.current_context
        if isinstance(current, dict):
            namespace = (current.get("context") or {}).get("namespace") or "default"

        async def refresh() -> None:
            await loader.load_and_set(configuration)

        return ClusterConnection(ApiClient(configuration), namespace, "kubeconfig", refresh)

    if _in_cluster():
        configuration = Configuration()
        try:
            kube_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except Exception as exc:
            raise ConfigurationError(f"cannot load in-cluster configuration: {exc}") from exc
        return ClusterConnection(ApiClient(configuration), _in_cluster_namespace(), "in-cluster")

    tried = ", ".join(str(p) for p in _kubeconfig_paths(kubeconfig))
    raise ConfigurationError(
        "no cluster configuration found: no kubeconfig at "
        f"{tried} and not running in a cluster; use --kubeconfig, --context or --server"
    )
