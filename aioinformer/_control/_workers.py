"""The controller's worker pool: N tasks reconciling keys from a work queue.

What happens to a key after ``reconcile(key)`` is described in
:mod:`aioinformer._control._controller`. The pool runs its workers in one task group and knows two
ways to stop:

* **graceful** (the controller's stop request): no worker takes a new key; reconciles in
  flight may finish within ``stop_timeout`` (on the controller's clock), then the workers
  are cancelled;
* **hard**: cancellation of the task running :meth:`WorkerPool.run`, or the end of the
  leadership term the workers run for. Reconciles in flight are cancelled at once; when a term
  ended, their keys go back to the queue for the next term.

A reconcile that raises the cancellation exception although no scope of ours was cancelled
(it awaited something cancelled elsewhere) is a failure of that key, not a stop.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Hashable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

import anyio
from anyio import CancelScope

from .._clock import Clock
from .._lifecycle import Service, in_cancelled_scope
from ..errors import QueueShutDown
from ..workqueue._rate_limiting import RateLimitingQueue

if TYPE_CHECKING:
    from .._election._leadership import LeadershipTerm

__all__ = ["Reconciler", "Result", "WorkerPool"]

logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Result:
    """What a reconcile asks for.

    :param requeue: reconcile the key again after the rate limiter's delay. Default False.
    :param requeue_after: reconcile the key again after this many seconds (wins over
        ``requeue`` when positive; the backoff is reset). Zero or negative values are ignored,
        as in controller-runtime. Default None.
    """

    requeue: bool = False
    requeue_after: float | None = None


#: ``async def reconcile(key) -> Result | None``.
Reconciler = Callable[[K], Awaitable[Result | None]]


def _nothing() -> None:
    """A ``ready`` callback that does nothing."""


class WorkerPool(Generic[K]):
    """Runs ``workers`` reconciling tasks for ``owner`` (a controller), and counts.

    :param owner: the component whose stop request is the graceful stop (and which a queue
        shut down elsewhere stops).
    :param name: the controller's name, for logs and task names.
    :param queue: where keys come from.
    :param reconcile: ``async def reconcile(key) -> Result | None``.
    :param workers: how many reconciles may run at once.
    :param stop_timeout: seconds a graceful stop lets reconciles in flight finish.
    :param clock: the clock ``stop_timeout`` is measured on.
    """

    def __init__(
        self,
        *,
        owner: Service,
        name: str,
        queue: RateLimitingQueue[K],
        reconcile: Reconciler[K],
        workers: int,
        stop_timeout: float,
        clock: Clock,
    ) -> None:
        self._owner = owner
        self.name = name
        self._queue = queue
        self._reconcile = reconcile
        self.workers = workers
        self.stop_timeout = stop_timeout
        self._clock = clock
        self._term: LeadershipTerm | None = None
        self._live = 0
        self._gone: anyio.Event | None = None  # set once every worker ended
        #: Reconcile calls that returned or raised (cancelled ones not counted).
        self.reconciles = 0
        #: Reconcile calls that raised (or returned something that is not a Result).
        self.errors = 0
        #: Keys put back because the Result asked for it.
        self.requeues = 0
        #: Reconcile calls running now.
        self.in_flight = 0

    @property
    def term(self) -> LeadershipTerm | None:
        """The leadership term the workers run for while it lasts, else None."""
        term = self._term
        return term if term is not None and not term.ended else None

    async def run(
        self, term: LeadershipTerm | None = None, *, ready: Callable[[], None] = _nothing
    ) -> None:
        """Run the workers until the owner's stop request (then stop gracefully), the end of
        ``term`` (then at once), or until the queue is shut down elsewhere (which stops the
        owner). ``ready()`` is called once the workers are started."""
        logger.info("controller %s starting %d workers", self.name, self.workers)
        self._term, self._live, self._gone = term, self.workers, anyio.Event()
        in_term: AbstractContextManager[CancelScope | None] = (
            term.cancel_scope() if term is not None else nullcontext()
        )
        try:
            with in_term:
                async with anyio.create_task_group() as tg:
                    for i in range(self.workers):
                        tg.start_soon(self._worker, name=f"controller {self.name} worker {i}")
                    ready()
                    with self._owner._until_stop_requested():
                        await anyio.sleep_forever()
                    await self._drain()
                    tg.cancel_scope.cancel()
        finally:
            self._term = None
        if term is not None and term.ended and self._live:
            logger.info(
                "controller %s: cancelled %d workers: leadership lost", self.name, self._live
            )

    def _stopping(self) -> bool:
        return self._owner._stop_requested

    async def _drain(self) -> None:
        """The graceful stop: wait up to ``stop_timeout`` for the workers to end."""
        if self.in_flight:
            logger.info(
                "controller %s stopping: waiting up to %.1f s for %d reconciles",
                self.name,
                self.stop_timeout,
                self.in_flight,
            )
        assert self._gone is not None
        with self._clock.move_on_after(self.stop_timeout):
            await self._gone.wait()
        if self._live and self.in_flight:
            logger.warning(
                "controller %s: cancelling %d reconciles still running after %.1f s",
                self.name,
                self.in_flight,
                self.stop_timeout,
            )

    async def _worker(self) -> None:
        queue = self._queue
        try:
            while not self._stopping():
                try:
                    key = await queue.get()
                except QueueShutDown:
                    if not self._stopping():
                        logger.info("controller %s: its queue was shut down", self.name)
                        self._owner._request_stop()
                    return
                try:
                    if self._stopping():
                        return  # stopping: hand out no new work
                    await self._process(key)
                except anyio.get_cancelled_exc_class():
                    term = self._term
                    if term is not None and term.ended:
                        queue.add(key)  # unfinished: reconcile it again in the next term
                    raise
                finally:
                    queue.done(key)
        finally:
            self._live -= 1
            if self._live == 0 and self._gone is not None:
                self._gone.set()

    def _failed(self, key: K, exc: BaseException) -> None:
        self.reconciles += 1
        self.errors += 1
        logger.error(
            "controller %s: reconcile of %r failed: %s: %s",
            self.name,
            key,
            type(exc).__name__,
            exc,
        )
        logger.debug("controller %s: reconcile of %r traceback", self.name, key, exc_info=exc)
        self._queue.add_rate_limited(key)

    async def _process(self, key: K) -> None:
        queue = self._queue
        self.in_flight += 1
        try:
            result: object = await self._reconcile(key)
        except anyio.get_cancelled_exc_class() as exc:
            if in_cancelled_scope():
                raise  # the workers are being cancelled (a stop, or the term ended)
            # reconcile awaited something cancelled elsewhere: a failure of that key, not ours.
            self._failed(key, exc)
            return
        except Exception as exc:
            self._failed(key, exc)
            return
        finally:
            self.in_flight -= 1
        self.reconciles += 1
        if result is None:
            queue.forget(key)
        elif not isinstance(result, Result):
            self.errors += 1
            logger.error(
                "controller %s: reconcile of %r returned %s, not a Result or None",
                self.name,
                key,
                type(result).__name__,
            )
            queue.add_rate_limited(key)
        elif result.requeue_after is not None and result.requeue_after > 0:
            self.requeues += 1
            queue.forget(key)
            queue.add_after(key, result.requeue_after)
        elif result.requeue:
            self.requeues += 1
            queue.add_rate_limited(key)
        else:
            queue.forget(key)
