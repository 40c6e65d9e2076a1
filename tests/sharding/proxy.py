"""A client of the fake API server behind a TCP proxy a test can sever (the proxy:
:class:`aioinformer.testing._doubles._proxy.Proxy`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from kubernetes_asyncio.client import ApiClient, Configuration

from aioinformer import KubeClient
from aioinformer.testing._doubles._proxy import Proxy

__all__ = ["Proxy", "proxied_client"]


@asynccontextmanager
async def proxied_client(
    target_port: int, *, connect_timeout: float = 30.0, request_timeout: float = 60.0
) -> AsyncIterator[tuple[Proxy, KubeClient]]:
    """A proxy to the server on ``target_port`` and a client that goes through it."""
    proxy = Proxy(target_port)
    await proxy.start()
    try:
        client = KubeClient(
            ApiClient(Configuration(host=proxy.url)),
            connect_timeout=connect_timeout,
            request_timeout=request_timeout,
        )
        async with client:
            yield proxy, client
    finally:
        await proxy.close()
