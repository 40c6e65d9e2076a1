"""The controller's elected driver: its workers run only while a leader elector leads.

The controller follows the elector: it waits for a term, reconciles every watched object
(a new leader reconciles everything, like a freshly started controller), runs its
:class:`~aioinformer._workers.WorkerPool` for the term (the end of the term cancels the
workers at once and keeps their keys queued), and waits for the next term. An elector that
has not started is run by the controller for its own lifetime, and closed (releasing the
lease) only after the workers stopped; a running one is only followed, and the controller
stops when it stops.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, TypeVar

import anyio

from ._lifecycle import State

if TYPE_CHECKING:
    from ._controller import Controller
    from ._leaderelection import LeaderElector
    from ._leadership import LeadershipTerm

__all__ = ["serve_elected"]

logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)


async def serve_elected(
    controller: Controller[K], elector: LeaderElector, ready: Callable[[], None]
) -> None:
    """Run ``controller`` under ``elector`` until the controller is asked to stop (or the
    elector stops). ``ready()`` once the caches synced and the elector campaigns."""
    owned = elector.state is State.NEW
    async with anyio.create_task_group() as tg:
        if owned:
            await tg.start(elector.run)
        try:
            if await controller._wait_for_caches():
                ready()
                await _follow(controller, elector)
        finally:
            if owned:
                # After the workers have stopped: now the lease may be released.
                await elector.aclose()


async def _follow(controller: Controller[K], elector: LeaderElector) -> None:
    logger.info("controller %s: waiting to lead lease %s", controller.name, elector.lease_name)
    while True:
        term = None
        with controller._until_stop_requested():
            term = await elector.wait_leading()
        if controller._stop_requested:
            return
        if term is None:
            logger.info("controller %s: its leader elector stopped", controller.name)
            return
        await _lead(controller, term)


async def _lead(controller: Controller[K], term: LeadershipTerm) -> None:
    logger.info("controller %s: leading (term %d)", controller.name, term.number)
    # A new leader reconciles everything it watches, like a freshly started controller.
    for watch in controller._watches:
        for obj in watch.informer.cache.list():
            try:
                watch.handler.enqueue(obj)
            except Exception as exc:
                logger.error(
                    "controller %s: enqueueing a cached object failed: %s: %s",
                    controller.name,
                    type(exc).__name__,
                    exc,
                )
    await controller._pool.run(term)
    if term.ended and not controller._stop_requested:
        logger.info("controller %s: not leading any more; workers stopped", controller.name)
