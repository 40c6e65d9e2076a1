"""The pytest plugin of aioinformer: the ``fake_apiserver`` fixture.

Registered through the ``pytest11`` entry point, so installing aioinformer is enough::

    async def test_lists_pods(fake_apiserver):
        await fake_apiserver.create("pods", {"metadata": {"name": "p"}})
        ...

The fixture is function-scoped and async (pytest-asyncio); the server is closed after the
test whatever its outcome. Without pytest-asyncio the fixture is not defined.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from .server import FakeApiServer

__all__ = ["fake_apiserver"]

try:
    import pytest_asyncio
except ImportError:  # pragma: no cover - the plugin must never break a test session
    pass
else:

    @pytest_asyncio.fixture
    async def fake_apiserver() -> AsyncIterator[FakeApiServer]:
        """A started :class:`FakeApiServer` (bookmarks every second), closed after the test."""
        async with FakeApiServer(bookmark_interval=1.0) as server:
            yield server
