"""One lifecycle for every long-running component (informer, factory, controller, elector, fake
API server).

Every such component is a :class:`Service` and has the same members:

* ``async with component:`` runs it in the background of the block. Entering returns at once
  (it does not wait for readiness), except for a server, which is entered once it listens
  (its address is what the block needs); leaving the block normally, or with an exception,
  stops it gracefully with :meth:`Service.aclose`; a cancelled block cancels it at once.
* ``await component.run(task_status=...)`` runs it in the calling task until it is stopped.
  It reports readiness through ``task_status`` (the informer once its cache synced, the
  controller once its caches synced and its workers run), so
  ``await tg.start(component.run)`` means "start it and wait until it is ready".
* ``await component.aclose()`` stops it: graceful first (the component finishes what it is
  doing), then cancelled when the component's own bound expires (``stop_timeout=``, default
  :data:`DEFAULT_STOP_TIMEOUT`, wherever a component lets you choose it). Idempotent; returns
  once ``run`` has returned. Closing a component that never ran makes a later ``run`` return at
  once.
* ``wait_<condition>()`` waiters take no timeout: bound them with :func:`anyio.fail_after` or
  :func:`anyio.move_on_after`.
* ``statistics()`` returns a frozen dataclass snapshot.
* ``state`` is the component's :class:`State`.

Exception policy: a component's failure comes out of ``run`` and of ``async with`` as itself,
never wrapped in an :class:`ExceptionGroup` (the component's own task groups are unwrapped);
an exception raised by the block comes out unchanged too. Only several unrelated failures at
once (the block and the component, or two of the component's tasks) come out as an
``ExceptionGroup`` carrying them all.

Cancellation policy: cancelling the task that runs ``run`` (or the ``async with`` block) is
the hard stop: the component's tasks are cancelled at once; only clean-up that must reach the
API server (a leader releasing its lease) runs shielded, with a bound. Code that calls user
code (handlers, reconcilers) tells its own cancellation from a ``CancelledError`` that the
user code merely awaited with :func:`in_cancelled_scope`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from enum import Enum
from typing import Self

import anyio
from anyio import TASK_STATUS_IGNORED, AsyncContextManagerMixin, CancelScope
from anyio.abc import TaskStatus

from ._clock import SYSTEM_CLOCK, Clock
from ._deprecation import renamed_argument
from .errors import LifecycleError

__all__ = [
    "DEFAULT_STOP_TIMEOUT",
    "CancelGroup",
    "Service",
    "State",
    "check_stop_timeout",
    "in_cancelled_scope",
    "stop_timeout_argument",
]

logger = logging.getLogger(__name__)

#: The default ``stop_timeout`` of every component that takes one, in seconds: how long a
#: graceful stop may take before what still runs is cancelled. controller-runtime's default
#: graceful-shutdown timeout, and Kubernetes' default ``terminationGracePeriodSeconds``.
DEFAULT_STOP_TIMEOUT = 30.0


def check_stop_timeout(value: float) -> float:
    """``value`` if it is a valid ``stop_timeout`` (a number of seconds, 0 or more).

    :raises ValueError: otherwise (NaN included).
    """
    if not value >= 0:
        raise ValueError(f"stop_timeout must be 0 or more seconds, not {value!r}")
    return value


def stop_timeout_argument(owner: str, stop_timeout: float, shutdown_timeout: float | None) -> float:
    """The checked ``stop_timeout`` of a component that also takes its deprecated former name
    ``shutdown_timeout`` (which warns, pointing at the component's caller).

    :raises TypeError: when both were given.
    :raises ValueError: for a negative (or NaN) bound.
    """
    value = renamed_argument(
        owner,
        "shutdown_timeout",
        shutdown_timeout,
        "stop_timeout",
        stop_timeout,
        DEFAULT_STOP_TIMEOUT,
        stacklevel=5,
    )
    return check_stop_timeout(value)


class State(Enum):
    """Where a :class:`Service` is in its life. It only ever moves down this list."""

    #: Constructed; it may be configured. ``run`` has not been called.
    NEW = "new"
    #: ``run`` is active but the component is not ready yet (an informer is still listing).
    STARTING = "starting"
    #: Ready: ``run`` reported readiness and works until it is stopped.
    RUNNING = "running"
    #: :meth:`Service.aclose` was called (or ``run`` failed) and ``run`` is unwinding.
    STOPPING = "stopping"
    #: ``run`` returned, or the component was closed before it ran. Final: it cannot restart.
    STOPPED = "stopped"


class CancelGroup:
    """Cancel scopes that one happening cancels together (a stop request, the end of a
    leadership term): ``with group.scope(): await x`` waits for ``x`` until then.

    A scope opened after :meth:`cancel` is cancelled from the start. Not a task group: the
    code in a scope runs in the task that opened it.
    """

    __slots__ = ("_cancelled", "_scopes")

    def __init__(self) -> None:
        self._scopes: set[CancelScope] = set()
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancelled

    @contextmanager
    def scope(self) -> Iterator[CancelScope]:
        """A cancel scope that :meth:`cancel` cancels (it swallows its own cancellation)."""
        scope = CancelScope()
        if self._cancelled:
            scope.cancel()
        self._scopes.add(scope)
        try:
            with scope:
                yield scope
        finally:
            self._scopes.discard(scope)

    def cancel(self) -> None:
        """Cancel every open scope, and every scope opened from now on (idempotent)."""
        self._cancelled = True
        for scope in list(self._scopes):
            scope.cancel()


class Service(AsyncContextManagerMixin):
    """Base class of long-running components: the lifecycle described in the module docs.

    A subclass implements :meth:`_serve` and may override :meth:`_on_start` (synchronous, as
    it starts), :meth:`_on_stop_requested` (a synchronous reaction to :meth:`aclose`, e.g.
    shutting down a queue) and :meth:`_on_stopped` (a synchronous clean-up once stopped,
    whether it ran or not), and set
    :attr:`_stop_timeout` (how long a graceful stop may take before ``run`` is cancelled),
    :attr:`_clock` (the clock that bound is measured on) and :attr:`_ready_on_enter`.
    """

    #: Seconds :meth:`aclose` lets :meth:`_serve` return after a stop request before
    #: cancelling it. Subclasses set it (a class attribute, a property or in ``__init__``).
    _stop_timeout: float = DEFAULT_STOP_TIMEOUT
    #: The clock :attr:`_stop_timeout` is measured on (components set their injected clock).
    _clock: Clock = SYSTEM_CLOCK
    #: Whether ``async with`` returns only once the component is ready, as
    #: ``await tg.start(component.run)`` does (a server: once it listens).
    _ready_on_enter: bool = False

    __state: State = State.NEW
    __stop_requested: anyio.Event | None = None
    __stopped: anyio.Event | None = None
    __run_scope: CancelScope | None = None
    __cancel_requested: bool = False
    __stop_scopes: CancelGroup | None = None

    # -- for subclasses -------------------------------------------------------------------

    async def _serve(self, ready: Callable[[], None]) -> None:
        """The component's work: call ``ready()`` once ready; return soon after
        :meth:`_wait_stop_requested` returns (or raise on failure)."""
        raise NotImplementedError

    def _on_start(self) -> None:
        """Called once, synchronously, when the component starts (on entering ``async with``
        or calling ``run``), before :meth:`_serve` runs."""

    def _on_stop_requested(self) -> None:
        """Called once, synchronously, when a stop is first requested while running."""

    def _on_stopped(self) -> None:
        """Called once, synchronously, when the component becomes :attr:`State.STOPPED`:
        after ``run`` returned, or at once when it is closed before it ran."""

    async def _wait_stop_requested(self) -> None:
        """Return once :meth:`aclose` asked the component to stop."""
        await self._stop_event().wait()

    def _until_stop_requested(self) -> AbstractContextManager[CancelScope]:
        """A cancel scope that a stop request cancels (already cancelled after one): what
        runs in it ends when :meth:`aclose` is called, without a race between waits."""
        if self.__stop_scopes is None:
            self.__stop_scopes = CancelGroup()
            if self._stop_requested:
                self.__stop_scopes.cancel()
        return self.__stop_scopes.scope()

    @property
    def _stop_requested(self) -> bool:
        """Whether :meth:`aclose` asked the component to stop."""
        return self.__state in (State.STOPPING, State.STOPPED)

    # -- state ----------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """The component's :class:`State`."""
        return self.__state

    def _describe(self) -> str:
        """How the component names itself in errors (``<Informer pods>`` style)."""
        name = getattr(self, "name", None)
        return f"{type(self).__name__} {name!r}" if name else type(self).__name__

    def _stop_event(self) -> anyio.Event:
        if self.__stop_requested is None:
            self.__stop_requested = anyio.Event()
            if self._stop_requested:
                self.__stop_requested.set()
        return self.__stop_requested

    def _stopped_event(self) -> anyio.Event:
        if self.__stopped is None:
            self.__stopped = anyio.Event()
            if self.__state is State.STOPPED:
                self.__stopped.set()
        return self.__stopped

    def _require_new(self, what: str) -> None:
        """Raise :class:`LifecycleError` unless the component has not started yet."""
        if self.__state is not State.NEW:
            raise LifecycleError(f"{what} must be called before {self._describe()} starts")

    def _require_not_stopped(self) -> None:
        """Raise :class:`LifecycleError` once the component is stopping or stopped."""
        if self._stop_requested:
            raise LifecycleError(f"{self._describe()} has stopped")

    # -- lifecycle ------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = TASK_STATUS_IGNORED) -> None:
        """Run until :meth:`aclose` (or cancellation); see the module documentation.

        Returns at once when the component was closed before it ran.

        :param task_status: reports readiness (for :meth:`anyio.abc.TaskGroup.start`).
        :raises LifecycleError: if it ran before; or, when started with ``task_status``, if
            it stopped before it was ready.
        """
        if self.__state is State.STOPPED and self.__run_scope is None:
            if task_status is not TASK_STATUS_IGNORED:
                raise LifecycleError(f"{self._describe()} was closed before it ran")
            return
        self._claim()
        await self._run_claimed(task_status)

    def _claim(self) -> None:
        if self.__state is not State.NEW:
            raise LifecycleError(f"{self._describe()} runs only once")
        self.__state = State.STARTING
        self._on_start()

    async def _run_claimed(self, task_status: TaskStatus[None] = TASK_STATUS_IGNORED) -> None:
        is_ready = False
        settled: anyio.Event | None = None  # ready, or _serve ended (with a starter only)

        def ready() -> None:
            nonlocal is_ready
            if is_ready:
                return
            is_ready = True
            if self.__state is State.STARTING:
                self.__state = State.RUNNING
            if settled is not None:
                settled.set()

        failure: BaseException | None = None
        try:
            with CancelScope() as self.__run_scope:
                if self.__cancel_requested:
                    self.__run_scope.cancel()
                if task_status is TASK_STATUS_IGNORED:
                    await self._serve(ready)
                else:
                    # anyio wants started() from the task running run(), while ready() may
                    # come from any task of the component: _serve runs in a child task.
                    settled = anyio.Event()
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(self._serve_then_settle, ready, settled)
                        await settled.wait()
                        if is_ready:
                            task_status.started()
        except BaseExceptionGroup as group:
            # The component's task groups wrap its failure: report the failure itself.
            failure = _only_exception(group)
            if failure is None:
                raise
        finally:
            self._enter_stopped()
        if failure is not None:
            raise failure  # outside the except block: no "during handling of the group" chain
        if not is_ready and task_status is not TASK_STATUS_IGNORED:
            raise LifecycleError(f"{self._describe()} stopped before it was ready")

    async def _serve_then_settle(self, ready: Callable[[], None], settled: anyio.Event) -> None:
        try:
            await self._serve(ready)
        finally:
            settled.set()

    def _request_stop(self) -> None:
        """Ask the component to stop (synchronous, idempotent)."""
        if self.__state is State.NEW:
            self._enter_stopped()
            return
        if self._stop_requested:
            return
        self.__state = State.STOPPING
        if self.__stop_requested is not None:
            self.__stop_requested.set()
        self._cancel_stop_scopes()
        try:
            self._on_stop_requested()
        except Exception:
            logger.exception("%s: reacting to a stop request failed", self._describe())

    def _cancel_stop_scopes(self) -> None:
        if self.__stop_scopes is not None:
            self.__stop_scopes.cancel()

    def _enter_stopped(self) -> None:
        # Events not created yet are created set (see _stop_event and _stopped_event).
        self.__state = State.STOPPED
        if self.__stop_requested is not None:
            self.__stop_requested.set()
        self._cancel_stop_scopes()
        try:
            self._on_stopped()
        except Exception:
            logger.exception("%s: cleaning up after the stop failed", self._describe())
        if self.__stopped is not None:
            self.__stopped.set()

    async def aclose(self) -> None:
        """Stop gracefully, then by cancellation once the component's bound expires.

        Idempotent; returns once :meth:`run` has returned (at once if it never ran).
        """
        self._request_stop()
        stopped = self._stopped_event()
        if stopped.is_set():
            return
        with self._clock.move_on_after(self._stop_timeout):
            await stopped.wait()
        if not stopped.is_set():
            logger.warning(
                "%s: not stopped after %.1f s; cancelling it", self._describe(), self._stop_timeout
            )
            self._cancel()
            await stopped.wait()

    def _cancel(self) -> None:
        """Cancel :meth:`run` at once (the hard stop)."""
        self._request_stop()
        self.__cancel_requested = True
        if self.__run_scope is not None:
            self.__run_scope.cancel()

    async def wait_stopped(self) -> None:
        """Wait until :meth:`run` has returned (or the component was closed before it ran)."""
        await self._stopped_event().wait()

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncGenerator[Self]:
        self._claim()
        single: BaseException | None = None
        try:
            async with anyio.create_task_group() as tg:
                if self._ready_on_enter:
                    await tg.start(self._run_claimed, name=self._describe())
                else:
                    tg.start_soon(self._run_claimed, name=self._describe())
                try:
                    yield self
                except anyio.get_cancelled_exc_class():
                    self._cancel()
                    raise
                except BaseException:
                    with CancelScope(shield=True):
                        await self.aclose()
                    raise
                with CancelScope(shield=True):
                    await self.aclose()
        except BaseExceptionGroup as group:
            single = _only_exception(group)
            if single is None:
                raise
        if single is not None:
            # Raised outside the except block: no "during handling of the group" chain.
            raise single


def in_cancelled_scope() -> bool:
    """Whether an enclosing cancel scope of the current task has been cancelled.

    In an ``except`` clause for the cancellation exception this tells "we are being
    cancelled" (True: re-raise) from "the user code we called awaited something that was
    cancelled elsewhere" (False: a failure of that call, not of ours).
    """
    return anyio.current_effective_deadline() == -math.inf


def _only_exception(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The single leaf exception of a (nested) group, or None if it holds several."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        exc = pending.pop()
        if isinstance(exc, BaseExceptionGroup):
            pending.extend(exc.exceptions)
        else:
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 else None
