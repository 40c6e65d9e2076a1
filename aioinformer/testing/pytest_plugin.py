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

pytest-asyncio runs a fixture's set-up and its tear-down in two different tasks, and a task
group (which ``async with FakeApiServer()`` holds open) must be left in the task that entered
it. So the fixture runs the server in a task of its own, created at set-up and awaited at
tear-down: ``async with server`` is entered and left in that one task, and the fixture owns the
task from start to end. A fixture of your own can do the same (the testing guide shows it);
under anyio's pytest plugin, which runs a fixture's set-up and tear-down in one task, a plain
``async with FakeApiServer() as server: yield server`` works.

Loading the plugin imports neither the fake API server nor aiohttp (every pytest run in an
environment with aioinformer installed loads it): the fixture imports them when it runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ._apiserver._server import FakeApiServer

__all__ = ["fake_apiserver"]

_NEEDS_PYTEST_ASYNCIO = (
    "the fake_apiserver fixture is async and needs pytest-asyncio: pip install pytest-asyncio"
    " (then mark async tests with @pytest.mark.asyncio, or set asyncio_mode = 'auto')"
)


@asynccontextmanager
async def _serving(server: FakeApiServer) -> AsyncIterator[FakeApiServer]:
    """Run ``server`` in an asyncio task of its own until the block ends: entered once it
    listens, left once it stopped and its task ended (a failure of the server comes out here).

    It holds no task group or cancel scope across the block, so set-up and tear-down may run
    in different tasks. The task is not owned by a task group: this context manager owns it,
    and always ends and awaits it.
    """
    loop = asyncio.get_running_loop()
    listening: asyncio.Future[None] = loop.create_future()

    async def serve() -> None:
        async with server:  # its task group is entered and left in this one task
            listening.set_result(None)
            await server.wait_stopped()

    task = loop.create_task(serve(), name="fake_apiserver")
    failure: BaseException | None = None
    try:
        await asyncio.wait({task, listening}, return_when=asyncio.FIRST_COMPLETED)
        if not listening.done():
            await task  # it could not listen: why comes out here
        yield server
    finally:
        listening.cancel()
        try:
            await server.aclose()  # bounded; returns once the server stopped
        finally:
            if not task.done():
                task.cancel()  # only when aclose itself was cancelled
            await asyncio.wait({task})
            failure = None if task.cancelled() else task.exception()
    if failure is not None:
        raise failure


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
        """A started :class:`~aioinformer.testing.FakeApiServer` (bookmarks every second),
        closed after the test; it runs in a task of its own (see the module)."""
        from ._apiserver._server import FakeApiServer

        async with _serving(FakeApiServer(bookmark_interval=1.0)) as server:
            yield server
