"""The framework-neutral part of the integrations: run a factory, report health and readiness."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any, TypeAlias

from .._deprecation import warn_renamed
from .._informer._factory import SharedInformerFactory
from .._informer._informer import SharedIndexInformer
from .._lifecycle import State

__all__ = ["FactoryBuilder", "FactorySource", "InformerRuntime", "run_factory"]

logger = logging.getLogger(__name__)

#: Called with the web application at startup; returns the factory to run, or an async context
#: manager yielding it (to own an ``ApiClient``, a controller, ... for the app's lifetime). The
#: factory must not be running yet: the integration enters it and starts its informers.
FactoryBuilder: TypeAlias = Callable[
    [Any], "SharedInformerFactory | AbstractAsyncContextManager[SharedInformerFactory]"
]
#: A factory to run with the app, or a :data:`FactoryBuilder`.
FactorySource: TypeAlias = "SharedInformerFactory | FactoryBuilder"


class InformerRuntime:
    """A running factory as a web app sees it: the factory, health and readiness.

    Created by the integrations (``app.state.informers`` with FastAPI, ``app[INFORMERS]`` with
    aiohttp) once the factory runs; it stops answering ready when the app shuts down.

    Readiness covers *every* informer of the factory: create informers before startup, or
    call ``factory.start()`` yourself for informers created later. A factory without any
    informer is never ready (it would serve empty caches).

    :param factory: the running factory.
    :param require_consumers_synced: ready only once every consumer (handler or event stream)
        has also processed the initial list (client-go's per-registration ``HasSynced``), not
        just once the caches hold it. Default False.
    """

    def __init__(
        self, factory: SharedInformerFactory, *, require_consumers_synced: bool = False
    ) -> None:
        self.factory = factory
        self.require_consumers_synced = require_consumers_synced
        self._running = True
        # Informers whose consumers all synced once: a consumer joining later (which replays
        # the cache) must not turn a ready app unready again.
        self._consumers_were_synced: set[str] = set()

    def __repr__(self) -> str:
        state = "running" if self._running else "stopped"
        return f"<InformerRuntime {state} ready={self.ready()} {self.factory!r}>"

    @property
    def running(self) -> bool:
        """True from startup until the app begins to shut down."""
        return self._running

    def _informers(self) -> dict[str, SharedIndexInformer]:
        return {str(resource): inf for resource, inf in self.factory.informers.items()}

    def _informer_ready(self, informer: SharedIndexInformer) -> bool:
        if not informer.has_synced() or informer.state is State.STOPPED:
            return False
        if self.require_consumers_synced and informer.name not in self._consumers_were_synced:
            if not all(listener.synced for listener in informer.statistics().listeners):
                return False
            self._consumers_were_synced.add(informer.name)
        return True

    def ready(self) -> bool:
        """Whether the app may take traffic: running, and every informer (at least one)
        synced."""
        informers = self._informers().values()
        return self._running and bool(informers) and all(map(self._informer_ready, informers))

    def healthy(self) -> bool:
        """Whether the app is alive: running, and no informer has stopped on its own."""
        return self._running and not any(
            i.state is State.STOPPED for i in self._informers().values()
        )

    async def wait_for_cache_sync(self) -> bool:
        """Wait until every informer synced (and its consumers, if required), or one of them
        stopped first. Bound it with :func:`anyio.fail_after` or :func:`anyio.move_on_after`.

        :returns: :meth:`ready` at the end.
        """
        for informer in self._informers().values():
            await informer.wait_for_cache_sync()
            if self.require_consumers_synced:
                await informer._wait_consumers_synced()
        return self.ready()

    async def wait_ready(self) -> bool:
        """Deprecated alias of :meth:`wait_for_cache_sync` (warns)."""
        warn_renamed("InformerRuntime.wait_ready()", "wait_for_cache_sync()")
        return await self.wait_for_cache_sync()

    def status(self) -> dict[str, Any]:
        """A JSON-ready summary for ``/readyz``: overall readiness, then per informer."""
        return {
            "ready": self.ready(),
            "informers": {
                name: {
                    "ready": self._informer_ready(informer),
                    "synced": informer.has_synced(),
                    "running": informer.state not in (State.NEW, State.STOPPED),
                    "objects": len(informer.cache),
                }
                for name, informer in self._informers().items()
            },
        }

    def _stop(self) -> None:
        self._running = False


@asynccontextmanager
async def run_factory(
    source: FactorySource, app: Any, *, require_consumers_synced: bool = False
) -> AsyncIterator[InformerRuntime]:
    """Build (if needed) and run a factory for the block: enter it (which starts its informers,
    without waiting for them to sync) and yield its :class:`InformerRuntime`; on exit close it.

    Enter and exit it in the same task: the factory's informers live in a task group owned by
    the block.
    """
    async with AsyncExitStack() as stack:
        if isinstance(source, SharedInformerFactory):
            factory = source
        else:
            built = source(app)
            if isinstance(built, SharedInformerFactory):
                factory = built
            else:
                factory = await stack.enter_async_context(built)
        await stack.enter_async_context(factory)
        if not factory.informers:
            logger.warning(
                "the factory has no informers, so the app never turns ready: create them"
                " (factory.for_resource(...)) before the app starts, in the builder"
            )
        runtime = InformerRuntime(factory, require_consumers_synced=require_consumers_synced)
        logger.debug("started %d informers", len(factory.informers))
        try:
            yield runtime
        finally:
            runtime._stop()
            logger.debug("stopping %d informers", len(factory.informers))
