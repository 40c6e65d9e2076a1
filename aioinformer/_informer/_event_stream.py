"""Consumers of an informer: one unbounded buffer (a listener) per consumer.

A consumer is either an :class:`EventStream` (``async for ev in informer.events()``) or a
handler object run by its own task (``informer.add_event_handler(handler)``, which returns
a :class:`Registration`). The buffers live in :mod:`aioinformer._informer._listener`, the handler
adapter in :mod:`aioinformer._informer._handlers`; this module is the stream and the public names.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator, Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .._deprecation import warn_renamed
from ._handlers import HANDLER_METHODS as HANDLER_METHODS
from ._handlers import Registration as Registration
from ._handlers import ResourceEventHandler as ResourceEventHandler
from ._handlers import ResourceEventHandlerFuncs as ResourceEventHandlerFuncs
from ._handlers import validate_handler as validate_handler
from ._listener import SLICE_SECONDS as SLICE_SECONDS
from ._listener import Event as Event
from ._listener import EventType as EventType
from ._listener import Listener as Listener
from ._listener import ListenerStatistics as ListenerStatistics

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


class _Subscription:
    """The state of an :class:`EventStream`, kept apart from the stream itself.

    The coroutine awaiting the next event references this object, never the stream: a
    traceback that keeps that coroutine's frame alive (cancellation while waiting) therefore
    does not keep the stream alive, so leaving ``async for`` still releases the stream at once.
    """

    __slots__ = ("current", "listener", "release", "unregister")

    def __init__(self, listener: Listener, unregister: Callable[[Listener], None]) -> None:
        self.listener = listener
        self.unregister: Callable[[Listener], None] | None = unregister
        self.current: Event | None = None
        #: A weak reference to the stream whose callback unregisters the listener; set by
        #: the stream, dropped (so the callback never runs) once closed.
        self.release: weakref.ref[EventStream] | None = None

    def close(self) -> None:
        self.release = None
        unregister, self.unregister = self.unregister, None
        if unregister is not None:
            unregister(self.listener)

    async def next(self) -> Event:
        listener = self.listener
        current = self.current
        if current is not None:
            # Asking for the next event means the consumer is done with the previous one.
            if current.is_in_initial_list:
                listener.processed(current)
            self.current = None
        if self.unregister is None:
            raise StopAsyncIteration
        # The common case first, inline (a buffered event, the slice not over): no call.
        budget = listener._budget
        buffer = listener._buffer
        if budget and buffer and not listener._replay:
            listener._budget = budget - 1
            event: Event | None = buffer.popleft()
        else:
            event = listener.next_nowait()  # no second coroutine either
        if event is None:
            event = await listener.next()
            if event is None:
                self.close()
                raise StopAsyncIteration
        self.current = event
        return event


class EventStream:
    """``informer.events()``: an async iterator over one listener's notifications.

    Leaving the loop unregisters the listener at once: a ``break``, a ``return``, an exception
    or a cancellation leaving ``async for`` drops the loop's only reference to the iterator,
    and CPython frees it there and then (reference counting, not the cyclic garbage
    collector: no traceback or waiting coroutine references the stream). A weak reference's
    callback then unregisters the listener; nothing runs in a ``__del__``. For code that
    keeps the stream in a variable, ``async with informer.events() as stream:`` and
    :meth:`aclose` close it explicitly; so does the informer stopping (the loop ends).
    """

    __slots__ = ("__weakref__", "_subscription")

    def __init__(self, listener: Listener, unregister: Callable[[Listener], None]) -> None:
        subscription = _Subscription(listener, unregister)
        subscription.release = weakref.ref(self, _released(listener, unregister))
        self._subscription = subscription

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

    async def wait_for_cache_sync(self) -> bool:
        """Wait until :meth:`has_synced` is true (or the stream closed); returns it."""
        return await self._subscription.listener.wait_for_cache_sync()

    async def wait_synced(self) -> bool:
        """Deprecated alias of :meth:`wait_for_cache_sync` (warns)."""
        warn_renamed("EventStream.wait_synced()", "wait_for_cache_sync()")
        return await self.wait_for_cache_sync()

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


def _released(
    listener: Listener, unregister: Callable[[Listener], None]
) -> Callable[[weakref.ref[EventStream]], None]:
    """The callback unregistering a stream's listener when the stream is freed unclosed.

    It holds the listener and the informer's unregister function, never the subscription or
    the stream, so it creates no reference cycle."""

    def release(_: weakref.ref[EventStream]) -> None:
        unregister(listener)

    return release
