"""Listeners: one unbounded buffer per consumer of an informer.

The informer's distribution step only appends to each listener's :class:`collections.deque`
and sets its wake-up event, so a slow consumer never blocks the watch stream or any other
consumer; its backlog simply grows (and is observable as :attr:`Listener.backlog`).

A consumer is either an :class:`EventStream` (``async for ev in informer.events()``) or a
handler object run by its own task (``informer.add_event_handler(handler)``).
"""

from __future__ import annotations

import difflib
import inspect
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from enum import StrEnum
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.lowlevel

from ._lifecycle import in_cancelled_scope
from .objects import DeletedFinalStateUnknown, KubeObject

if TYPE_CHECKING:
    from typing import Self

__all__ = [
    "Event",
    "EventStream",
    "EventType",
    "Listener",
    "ListenerStatistics",
    "Registration",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "HANDLER_METHODS",
    "SLICE_SECONDS",
    "validate_handler",
]

logger = logging.getLogger(__name__)

#: The longest a consumer runs through buffered notifications before the next read yields to
#: the event loop, in seconds. Reading a buffered notification does not suspend, so without
#: this a consumer that never really awaits (a sync handler, an ``async for`` body without
#: ``await``) would drain a whole backlog — a late join to a large cache — in one go, and the
#: watch, the other consumers and a web server's probes would all wait for it.
SLICE_SECONDS = 0.002


class EventType(StrEnum):
    """What happened to an object, as a consumer sees it."""

    ADDED = "ADDED"
    UPDATED = "UPDATED"
    DELETED = "DELETED"


@dataclass(frozen=True, slots=True)
class Event:
    """One notification.

    :ivar type: added, updated or deleted.
    :ivar object: the new object; for ``DELETED`` the final state from the watch, or a
        :class:`~aioinformer.objects.DeletedFinalStateUnknown` when the delete itself was missed.
    :ivar old_object: for ``UPDATED`` the previous cached state; for ``DELETED`` the last cached
        state (or None); None for ``ADDED``.
    :ivar is_sync: True for a resync (or relist) update that did not change the resource
        version; only listeners due for resync receive those.
    :ivar is_in_initial_list: True for an ``ADDED`` that is part of the initial list (or of the
        cache replayed to a consumer that joined late).
    """

    type: EventType
    object: Any
    old_object: KubeObject | None = None
    is_sync: bool = False
    is_in_initial_list: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class ListenerStatistics:
    """A snapshot of one consumer of an informer (an event stream or a handler)."""

    #: ``"<informer>/events-N"`` or ``"<informer>/handler-N"``, as logs and metrics show it.
    name: str
    #: Notifications waiting for the consumer.
    backlog: int
    #: The largest backlog seen.
    peak_backlog: int
    #: Exceptions the handler raised (0 for an event stream).
    handler_errors: int
    #: Whether the informer synced and the consumer processed every initial-list add.
    synced: bool


class Listener:
    """One consumer's buffer, wake-up event, resync schedule and sync tracking.

    Created by the informer; users see it through an :class:`EventStream` or a
    :class:`Registration`.
    """

    __slots__ = (
        "_buffer",
        "_closed",
        "_initial_pending",
        "_replay",
        "_slice_start",
        "_synced",
        "_upstream_synced",
        "_wake",
        "handler_errors",
        "name",
        "next_resync",
        "peak_backlog",
        "requested_resync_period",
        "resync_period",
        "syncing",
    )

    def __init__(
        self,
        *,
        name: str,
        requested_resync_period: float,
        resync_period: float,
        now: float,
        upstream_synced: bool,
    ) -> None:
        self.name = name
        self._buffer: deque[Event] = deque()
        # Cached objects still to be replayed as ADDED before the buffer (a late join).
        self._replay: deque[KubeObject] = deque()
        # Set by the next notification while the consumer waits (None: it does not wait).
        self._wake: anyio.Event | None = None
        self._closed = False
        # When the consumer last resumed from the event loop (see SLICE_SECONDS).
        self._slice_start = time.perf_counter()
        #: The resync period the consumer asked for, and the one in effect (0: none).
        self.requested_resync_period = requested_resync_period
        self.resync_period = resync_period
        self.next_resync = now + resync_period
        #: Due for resync at the last check (True until the first check, like client-go).
        self.syncing = True
        #: The largest backlog seen.
        self.peak_backlog = 0
        #: Exceptions raised by the handler (handler listeners only).
        self.handler_errors = 0
        # Initial-list adds delivered but not yet processed by the consumer.
        self._initial_pending = 0
        self._upstream_synced = upstream_synced
        self._synced: anyio.Event | None = None  # created by the first waiter

    def __repr__(self) -> str:
        return f"<Listener {self.name} backlog={len(self._buffer)} closed={self._closed}>"

    @property
    def backlog(self) -> int:
        """Notifications waiting for the consumer."""
        return len(self._replay) + len(self._buffer)

    @property
    def closed(self) -> bool:
        """True once the listener was removed or the informer stopped."""
        return self._closed

    def statistics(self) -> ListenerStatistics:
        """A snapshot of the listener's figures."""
        return ListenerStatistics(
            name=self.name,
            backlog=self.backlog,
            peak_backlog=self.peak_backlog,
            handler_errors=self.handler_errors,
            synced=self.has_synced(),
        )

    def _wake_up(self) -> None:
        wake, self._wake = self._wake, None
        if wake is not None:
            wake.set()

    # -- informer side ---------------------------------------------------------------------

    def add(self, event: Event) -> None:
        """Append a notification (never blocks)."""
        if self._closed:
            return
        buffer = self._buffer
        buffer.append(event)
        if event.is_in_initial_list:
            self._initial_pending += 1
        if len(buffer) > self.peak_backlog:
            self.peak_backlog = len(buffer)
        if self._wake is not None:
            self._wake_up()

    def should_resync(self, now: float) -> bool:
        """Whether this listener is due for resync at ``now``."""
        return self.resync_period > 0 and now >= self.next_resync

    def set_upstream_synced(self) -> None:
        """The informer's cache holds the initial list."""
        self._upstream_synced = True
        self._check_synced()

    def replay(self, objects: list[KubeObject]) -> None:
        """Deliver ``objects`` first, as initial-list ``ADDED`` notifications (a late join).

        The events are made as the consumer reads them, so joining costs one list copy
        whatever the size of the cache.
        """
        if self._closed or not objects:
            return
        self._replay.extend(objects)
        self._initial_pending += len(objects)
        self.peak_backlog = max(self.peak_backlog, self.backlog)
        self._wake_up()

    def close(self) -> None:
        """Stop delivery: drop pending notifications and wake the consumer.

        The initial list stays unprocessed, so :meth:`has_synced` does not turn true by it.
        """
        self._closed = True
        self._buffer.clear()
        self._replay.clear()
        self._wake_up()
        self._check_synced()

    # -- consumer side ---------------------------------------------------------------------

    async def next(self) -> Event | None:
        """The next notification, waiting for one; None once the listener is closed.

        Yields to the event loop first when the consumer has been running for
        :data:`SLICE_SECONDS` since it last did, so that draining a backlog shares the loop.
        """
        if time.perf_counter() - self._slice_start >= SLICE_SECONDS:
            await anyio.lowlevel.checkpoint()
            self._slice_start = time.perf_counter()
        buffer = self._buffer
        while True:
            if self._replay:
                return Event(EventType.ADDED, self._replay.popleft(), is_in_initial_list=True)
            if buffer:
                return buffer.popleft()
            if self._closed:
                return None
            self._wake = wake = anyio.Event()
            await wake.wait()
            self._slice_start = time.perf_counter()

    def processed(self, event: Event) -> None:
        """The consumer is done with ``event`` (tracks the initial list for :meth:`has_synced`)."""
        if event.is_in_initial_list and self._initial_pending > 0:
            self._initial_pending -= 1
            self._check_synced()

    def has_synced(self) -> bool:
        """True once the informer synced and this consumer processed every initial-list add."""
        return self._upstream_synced and self._initial_pending == 0

    async def wait_synced(self) -> bool:
        """Wait until :meth:`has_synced` is true, or the listener closed (the informer stopped
        or the consumer left) first; returns :meth:`has_synced`."""
        if not (self._closed or self.has_synced()):
            if self._synced is None:
                self._synced = anyio.Event()
            await self._synced.wait()
        return self.has_synced()

    def _check_synced(self) -> None:
        if self._synced is not None and (self._closed or self.has_synced()):
            self._synced.set()


class _Subscription:
    """The state of an :class:`EventStream`, kept apart from the stream itself.

    The coroutine awaiting the next event references this object, never the stream: a
    traceback that keeps that coroutine's frame alive (cancellation while waiting) therefore
    does not keep the stream alive, so leaving ``async for`` still releases the stream at once.
    """

    __slots__ = ("current", "listener", "unregister")

    def __init__(self, listener: Listener, unregister: Callable[[Listener], None]) -> None:
        self.listener = listener
        self.unregister: Callable[[Listener], None] | None = unregister
        self.current: Event | None = None

    def close(self) -> None:
        unregister, self.unregister = self.unregister, None
        if unregister is not None:
            unregister(self.listener)

    async def next(self) -> Event:
        listener = self.listener
        if self.current is not None:
            # Asking for the next event means the consumer is done with the previous one.
            listener.processed(self.current)
            self.current = None
        if self.unregister is None:
            raise StopAsyncIteration
        event = await listener.next()
        if event is None:
            self.close()
            raise StopAsyncIteration
        self.current = event
        return event


class EventStream:
    """``informer.events()``: an async iterator over one listener's notifications.

    Leaving the loop unregisters the listener at once: :meth:`aclose`, the end of an
    ``async with``, an exhausted iteration, and the release of the iterator (which CPython does
    the moment a ``break``, an exception or a cancellation leaves ``async for``) all close it.
    Hold no other reference to the stream if you rely on the last one; otherwise call
    :meth:`aclose` or use ``async with informer.events() as stream:``.
    """

    __slots__ = ("__weakref__", "_subscription")

    def __init__(self, listener: Listener, unregister: Callable[[Listener], None]) -> None:
        self._subscription = _Subscription(listener, unregister)

    def __repr__(self) -> str:
        listener = self._subscription.listener
        return f"<EventStream {listener.name} backlog={listener.backlog}>"

    @property
    def name(self) -> str:
        """The listener's name (``"<informer>/events-N"``), as logs and metrics show it."""
        return self._subscription.listener.name

    @property
    def backlog(self) -> int:
        """Notifications waiting to be read."""
        return self._subscription.listener.backlog

    @property
    def peak_backlog(self) -> int:
        """The largest backlog seen."""
        return self._subscription.listener.peak_backlog

    @property
    def closed(self) -> bool:
        """True once the stream was closed (or the informer stopped)."""
        subscription = self._subscription
        return subscription.unregister is None or subscription.listener.closed

    def has_synced(self) -> bool:
        """True once the informer synced and this consumer read past every initial-list add."""
        return self._subscription.listener.has_synced()

    async def wait_synced(self) -> bool:
        """Wait until :meth:`has_synced` is true (or the stream closed); returns it."""
        return await self._subscription.listener.wait_synced()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    def __anext__(self) -> Coroutine[Any, Any, Event]:
        # Not a coroutine function: the returned coroutine must not reference the stream.
        return self._subscription.next()

    def close(self) -> None:
        """Unregister the listener now (idempotent)."""
        self._subscription.close()

    async def aclose(self) -> None:
        """Unregister the listener (idempotent)."""
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        # Runs as soon as the last reference goes (e.g. `break` out of `async for`).
        subscription = getattr(self, "_subscription", None)
        if subscription is not None:
            subscription.close()


class ResourceEventHandler(Protocol):
    """A handler object; any subset of the three methods may exist (sync or async)."""

    def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> Any: ...

    def on_update(self, old: KubeObject, new: KubeObject) -> Any: ...

    def on_delete(self, obj: KubeObject | DeletedFinalStateUnknown) -> Any: ...


Callback = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ResourceEventHandlerFuncs:
    """A handler made of functions (each optional, sync or async).

    ``on_add`` may take ``(obj)`` or ``(obj, is_in_initial_list)``.
    """

    on_add: Callback | None = None
    on_update: Callback | None = None
    on_delete: Callback | None = None


#: The methods a handler may have.
HANDLER_METHODS = ("on_add", "on_update", "on_delete")


def validate_handler(
    handler: object, *, warn: bool = True
) -> tuple[Callback | None, Callback | None, Callback | None]:
    """The ``(on_add, on_update, on_delete)`` callables of a handler (None where absent).

    A misspelt method next to a valid one (``on_updated`` beside ``on_add``) is logged as a
    warning (unless ``warn`` is False), since it would never be called.

    :raises TypeError: when the handler has none of the three (a plain function, a misspelt
        method, an empty :class:`ResourceEventHandlerFuncs`) or one of them is not callable.
    """
    found = tuple(getattr(handler, name, None) for name in HANDLER_METHODS)
    for name, callback in zip(HANDLER_METHODS, found, strict=True):
        if callback is not None and not callable(callback):
            raise TypeError(f"handler {handler!r}: {name} is {callback!r}, not a callable")
    missing = [name for name, callback in zip(HANDLER_METHODS, found, strict=True) if not callback]
    misspelt = [
        f"{name} (did you mean {close[0]}?)"
        for name in dir(handler)
        if name.startswith("on") and name not in HANDLER_METHODS
        for close in [difflib.get_close_matches(name, missing, n=1, cutoff=0.7)]
        if close
    ]
    if len(missing) == len(HANDLER_METHODS):
        if not misspelt and callable(handler) and not isinstance(handler, type):
            raise TypeError(
                f"a handler is an object with on_add, on_update or on_delete, not a function"
                f" ({handler!r}): wrap it, e.g. ResourceEventHandlerFuncs(on_add=...)"
            )
        hint = f": {', '.join(misspelt)}" if misspelt else ""
        raise TypeError(
            f"handler {handler!r} has none of on_add, on_update, on_delete, so it would never"
            f" be called{hint}"
        )
    if misspelt and warn:
        logger.warning(
            "handler %r: %s is never called; handler methods are on_add, on_update, on_delete",
            handler,
            ", ".join(misspelt),
        )
    return found[0], found[1], found[2]


def _takes_initial_list_flag(func: Callback) -> bool:
    """Whether ``on_add`` takes ``(obj, is_in_initial_list)`` rather than ``(obj)``: it has a
    parameter of that name, two required positional parameters, or ``*args``. (A second
    parameter with a default, as in ``lambda obj, k=k: ...``, is not the flag.)"""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return True
    if any(p.name == "is_in_initial_list" for p in params):
        return True
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return True
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in kinds and p.default is inspect.Parameter.empty]
    return len(required) >= 2


class Registration:
    """A handler added with ``informer.add_event_handler``; also its delivery task's body.

    :meth:`has_synced` / :meth:`wait_synced` turn true once the handler has processed every
    object of the initial list (client-go's per-handler ``HasSynced``).
    """

    __slots__ = ("_add_takes_flag", "_handler", "_on_add", "_on_delete", "_on_update", "listener")

    def __init__(self, handler: object, listener: Listener) -> None:
        self._handler = handler
        self.listener = listener
        # add_event_handler validated it (and warned) before creating the listener.
        self._on_add, self._on_update, self._on_delete = validate_handler(handler, warn=False)
        self._add_takes_flag = self._on_add is not None and _takes_initial_list_flag(self._on_add)

    def __repr__(self) -> str:
        return f"<Registration {self.listener.name} backlog={self.listener.backlog}>"

    @property
    def handler(self) -> object:
        """The handler object."""
        return self._handler

    @property
    def name(self) -> str:
        """The listener's name (``"<informer>/handler-N"``), as logs and metrics show it."""
        return self.listener.name

    @property
    def backlog(self) -> int:
        """Notifications waiting for the handler."""
        return self.listener.backlog

    @property
    def peak_backlog(self) -> int:
        """The largest backlog seen."""
        return self.listener.peak_backlog

    @property
    def handler_errors(self) -> int:
        """How many times the handler raised."""
        return self.listener.handler_errors

    def has_synced(self) -> bool:
        """True once the informer synced and this handler processed every initial-list add."""
        return self.listener.has_synced()

    async def wait_synced(self) -> bool:
        """Wait until :meth:`has_synced` is true, or the handler was removed or the informer
        stopped first; returns :meth:`has_synced`."""
        return await self.listener.wait_synced()

    async def run(self) -> None:
        """Deliver notifications to the handler until the listener closes."""
        listener = self.listener
        while True:
            event = await listener.next()
            if event is None:
                return
            try:
                result = self._call(event)
                if result is not None and inspect.isawaitable(result):
                    await result
            except anyio.get_cancelled_exc_class() as exc:
                if in_cancelled_scope():
                    raise  # we are being cancelled: the informer stops
                # The handler awaited something that was cancelled: its failure, not ours.
                self._failed(event, exc)
            except Exception as exc:
                self._failed(event, exc)
            listener.processed(event)

    def _failed(self, event: Event, exc: BaseException) -> None:
        listener = self.listener
        listener.handler_errors += 1
        logger.error(
            "%s: handler raised on %s: %s: %s",
            listener.name,
            event.type.value,
            type(exc).__name__,
            exc,
            exc_info=(type(exc), exc, exc.__traceback__)
            if logger.isEnabledFor(logging.DEBUG)
            else None,
        )

    def _call(self, event: Event) -> Awaitable[Any] | Any:
        if event.type is EventType.ADDED:
            if self._on_add is None:
                return None
            if self._add_takes_flag:
                return self._on_add(event.object, event.is_in_initial_list)
            return self._on_add(event.object)
        if event.type is EventType.UPDATED:
            if self._on_update is None:
                return None
            return self._on_update(event.old_object, event.object)
        if self._on_delete is None:
            return None
        return self._on_delete(event.object)
