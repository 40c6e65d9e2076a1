"""Fixtures shared by the fake API server's tests (``fake_apiserver`` comes from the plugin)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import kubernetes.client
import pytest
from kubernetes_asyncio.client import ApiClient

from aioinformer.testing import FakeApiServer

from .standalone import Kubectl, Standalone


@pytest.fixture
async def api(fake_apiserver: FakeApiServer) -> AsyncIterator[ApiClient]:
    """A kubernetes_asyncio client of the fake server."""
    async with fake_apiserver.api_client() as client:
        yield client


@pytest.fixture
def official(fake_apiserver: FakeApiServer) -> Iterator[kubernetes.client.ApiClient]:
    """The official (synchronous) client of the fake server."""
    configuration = kubernetes.client.Configuration(host=fake_apiserver.url)
    with kubernetes.client.ApiClient(configuration) as client:
        yield client


@pytest.fixture
async def http(fake_apiserver: FakeApiServer) -> AsyncIterator[aiohttp.ClientSession]:
    """A raw aiohttp session whose base URL is the fake server."""
    async with aiohttp.ClientSession(base_url=fake_apiserver.url, read_bufsize=2**20) as session:
        yield session


@pytest.fixture(scope="module")
def standalone_server() -> Iterator[Standalone]:
    """One standalone fake (``aioinformer fake-apiserver``) per test module."""
    standalone = Standalone()
    yield standalone
    assert standalone.stop() == 0


@pytest.fixture
def kubectl(standalone_server: Standalone, tmp_path: Path) -> Kubectl:
    """kubectl pointed at the module's standalone fake, with its own kubeconfig and cache."""
    return Kubectl(standalone_server, tmp_path)
