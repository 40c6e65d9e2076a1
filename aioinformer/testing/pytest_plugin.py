"""The pytest plugin of aioinformer: the ``fake_apiserver`` fixture.

Registered through the ``pytest11`` entry point, so installing aioinformer is enough::

    import pytest

    @pytest.mark.asyncio            # not needed with asyncio_mode = "auto"
    async def test_lists_pods(fake_apiserver):
        fake_apiserver.objects.create("configmaps", {"metadata": {"name": "c"}})
        ...

The fixture is function-scoped and async: it needs pytest-asyncio, in either mode ("strict",
its default, where async tests carry ``@pytest.mark.asyncio``, or "auto"). It follows the
project's loop-scope settings like any other async fixture. The server is closed after the
test whatever its outcome. Without pytest-asyncio, a test asking for it fails with a message
saying so.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ._apiserver._server import FakeApiServer

__all__ = ["fake_apiserver"]

_NEEDS_PYTEST_ASYNCIO = (
    "the fake_apiserver fixture is async and needs pytest-asyncio: pip install pytest-asyncio"
    " (then mark async tests with @pytest.mark.asyncio, or set asyncio_mode = 'auto')"
)

try:
    import pytest_asyncio
except ImportError:  # pragma: no cover - the plugin must never break a test session

    @pytest.fixture
    def fake_apiserver() -> FakeApiServer:
        """Fails the test: pytest-asyncio is not installed."""
        pytest.fail(_NEEDS_PYTEST_ASYNCIO, pytrace=False)

else:

    @pytest_asyncio.fixture
    async def fake_apiserver() -> AsyncIterator[FakeApiServer]:  # type: ignore[misc]  # one of two
        """A started :class:`FakeApiServer` (bookmarks every second), closed after the test.

        It uses ``start()``/``aclose()``, not ``async with``: pytest-asyncio may run a
        fixture's set-up and tear-down in different tasks, and a task group (which
        ``async with`` holds open) must be left in the task that entered it.
        """
        server = FakeApiServer(bookmark_interval=1.0)
        await server.start()
        try:
            yield server
        finally:
            await server.aclose()
