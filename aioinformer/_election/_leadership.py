"""Leadership terms and the callbacks around them (the part of leader election that is not the
campaign loop; see :mod:`aioinformer._election._elector`).

A :class:`LeadershipTerm` is one uninterrupted period of leadership. :class:`Leadership` keeps
an elector's terms and calls its callbacks: ``on_started_leading`` (an awaitable result runs as
a task that the end of the term cancels), ``on_stopped_leading`` (awaited after a term) and
``on_new_leader`` (an awaitable result runs as a task). Callback tasks live in the elector's
task group; an exception a callback raises is logged and otherwise ignored.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any

import anyio
import anyio.abc
from anyio import CancelScope

from .._clock import Clock
from .._lifecycle import CancelGroup

__all__ = ["Callback", "Leadership", "LeadershipTerm", "NewLeaderCallback"]

logger = logging.getLogger(__name__)

#: A callback: sync, or returning an awaitable.
Callback = Callable[[], Awaitable[None] | None]
NewLeaderCallback = Callable[[str], Awaitable[None] | None]


class LeadershipTerm:
    """One uninterrupted period of leadership of a :class:`~aioinformer.LeaderElector`.

    :ivar number: 1 for the elector's first term, 2 for the next, ...
    """

    __slots__ = ("_ended", "_scopes", "number")

    def __init__(self, number: int) -> None:
        self.number = number
        self._scopes = CancelGroup()
        self._ended: anyio.Event | None = None  # created by the first waiter

    def __repr__(self) -> str:
        return f"<LeadershipTerm {self.number} [{'ended' if self.ended else 'active'}]>"

    @property
    def ended(self) -> bool:
        """True once leadership was lost or given up."""
        return self._scopes.cancelled

    async def wait_ended(self) -> None:
        """Wait until this term ends."""
        if not self.ended:
            if self._ended is None:
                self._ended = anyio.Event()
            await self._ended.wait()

    def cancel_scope(self) -> AbstractContextManager[CancelScope]:
        """A cancel scope that the end of this term cancels (cancelled from the start once it
        ended): ``with term.cancel_scope(): ...`` runs work only while leading."""
        return self._scopes.scope()

    def _end(self) -> None:
        self._scopes.cancel()
        if self._ended is not None:
            self._ended.set()


async def _guarded(what: str, awaitable: Awaitable[object]) -> None:
    try:
        await awaitable
    except Exception as exc:
        logger.error("leader election: %s raised %s: %s", what, type(exc).__name__, exc)


class _CallbackTask:
    """An awaitable callback result, run as a task that can be cancelled and waited for."""

    __slots__ = ("done", "scope", "what")

    def __init__(self, what: str) -> None:
        self.what = what
        self.scope = CancelScope()
        self.done = anyio.Event()

    async def run(self, awaitable: Awaitable[object]) -> None:
        try:
            with self.scope:
                await _guarded(self.what, awaitable)
        finally:
            self.done.set()


class Leadership:
    """The terms of one elector and its callbacks.

    :param identity: the candidate's identity (for logs and task names).
    :param on_started_leading: see :class:`~aioinformer.LeaderElector`.
    :param on_stopped_leading: see :class:`~aioinformer.LeaderElector`.
    :param on_new_leader: see :class:`~aioinformer.LeaderElector`.
    :param clock: measures how long the end of a term waits for ``on_started_leading``.
    :param grace: seconds the end of a term waits for ``on_started_leading`` to honour its
        cancellation.
    """

    def __init__(
        self,
        *,
        identity: str,
        on_started_leading: Callback | None,
        on_stopped_leading: Callback | None,
        on_new_leader: NewLeaderCallback | None,
        clock: Clock,
        grace: float,
    ) -> None:
        self._identity = identity
        self._on_started_leading = on_started_leading
        self._on_stopped_leading = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._clock = clock
        self._grace = grace
        self._group: anyio.abc.TaskGroup | None = None
        self._term: LeadershipTerm | None = None
        self._started_task: _CallbackTask | None = None
        self._changed: anyio.Event | None = None  # set (and dropped) at every change
        #: Terms begun so far.
        self.count = 0

    @property
    def term(self) -> LeadershipTerm | None:
        """The current term while leading, else None."""
        term = self._term
        return term if term is not None and not term.ended else None

    def attach(self, group: anyio.abc.TaskGroup | None) -> None:
        """Where callback tasks run (the elector's task group while it runs; None after)."""
        self._group = group

    def notify(self) -> None:
        """Wake :meth:`wait_for_change` waiters."""
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    async def wait_for_change(self) -> None:
        """Until the next :meth:`notify`."""
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    def begin(self) -> LeadershipTerm:
        """A new term begins: ``on_started_leading`` is called."""
        self.count += 1
        self._term = term = LeadershipTerm(self.count)
        if self._on_started_leading is not None:
            self._started_task = self._spawn("on_started_leading", self._on_started_leading)
        self.notify()
        return term

    async def end(self) -> None:
        """The current term (if any) ends: its scopes and ``on_started_leading`` are cancelled,
        and the latter is given ``grace`` seconds to finish."""
        term, self._term = self._term, None
        if term is None:
            return
        term._end()
        self.notify()
        task, self._started_task = self._started_task, None
        if task is not None and not task.done.is_set():
            task.scope.cancel()
            with self._clock.move_on_after(self._grace):
                await task.done.wait()
            if not task.done.is_set():
                logger.warning(
                    "leader election: %s: on_started_leading ignores cancellation", self._identity
                )

    def new_leader(self, identity: str) -> None:
        """A new holder of the lease was seen: ``on_new_leader`` is called."""
        if self._on_new_leader is not None:
            self._spawn("on_new_leader", self._on_new_leader, identity)

    async def call_stopped_leading(self) -> None:
        """Call ``on_stopped_leading`` (awaiting an awaitable result)."""
        callback = self._on_stopped_leading
        if callback is None:
            return
        try:
            result = callback()
        except Exception as exc:
            logger.error(
                "leader election: on_stopped_leading raised %s: %s", type(exc).__name__, exc
            )
            return
        if result is not None and inspect.isawaitable(result):
            await _guarded("on_stopped_leading", result)

    def _spawn(
        self, what: str, callback: Callable[..., Awaitable[None] | None], *args: Any
    ) -> _CallbackTask | None:
        """Call ``callback``; run an awaitable result as a task of the elector's group."""
        try:
            result = callback(*args)
        except Exception as exc:
            logger.error("leader election: %s raised %s: %s", what, type(exc).__name__, exc)
            return None
        if result is None or not inspect.isawaitable(result):
            return None
        assert self._group is not None, "callbacks run while the elector runs"
        task = _CallbackTask(what)
        self._group.start_soon(task.run, result, name=f"{self._identity} {what}")
        return task
