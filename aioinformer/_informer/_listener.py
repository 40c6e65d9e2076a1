"""The consumers' buffers: one unbounded buffer per consumer of an informer.

The informer's distribution step only appends to each listener's :class:`collections.deque`
and sets its wake-up event, so a slow consumer never blocks the watch stream or any other
consumer; its backlog simply grows (and is observable as :attr:`Listener.backlog`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import FrozenInstanceError, dataclass
from enum import StrEnum
from typing import Any

import anyio
import anyio.lowlevel

from .._objects import (
    DeletedFinalStateUnknown,
    KubeObject,
    meta_namespace_key,
    try_resource_version,
)
from .._wire._slices import WireObject, encode, loads
from ..errors import KeyFuncError

__all__ = [
    "SLICE_SECONDS",
    "Event",
    "EventType",
    "Listener",
    "ListenerStatistics",
    "effective_resync",
]

logger = logging.getLogger(__name__)


#: The longest a consumer runs through buffered notifications before the next read yields to
#: the event loop, in seconds. Reading a buffered notification does not suspend, so without
#: this a consumer that never really awaits (a sync handler, an ``async for`` body without
#: ``await``) would drain a whole backlog — a late join to a large cache — in one go, and the
#: watch, the other consumers and a web server's probes would all wait for it.
SLICE_SECONDS = 0.002
# The clock is read every this many notifications read without yielding (not per event).
_CHECK_EVERY = 16
#: A backlog this long is searched for events holding decoded objects (see
#: :meth:`Listener.add_batch`) whenever it has doubled since the last search.
SPILL_AT = 1024


class EventType(StrEnum):
    """What happened to an object, as a consumer sees it."""

    ADDED = "ADDED"
    UPDATED = "UPDATED"
    DELETED = "DELETED"


class Event:
    """One notification (immutable). Its objects are shared by every consumer of the
    informer: never mutate them (see :mod:`aioinformer._objects`).

    :ivar type: added, updated or deleted.
    :ivar object: the new object; for ``DELETED`` the final state from the watch, or a
        :class:`~aioinformer.DeletedFinalStateUnknown` when the delete itself was missed.
    :ivar old_object: for ``UPDATED`` the previous cached state; for ``DELETED`` the last cached
        state (or None); None for ``ADDED``.
    :ivar is_sync: True for a resync (or relist) update that did not change the resource
        version; only listeners due for resync receive those.
    :ivar is_in_initial_list: True for an ``ADDED`` that is part of the initial list (or of the
        cache replayed to a consumer that joined late).

    With the compact cache (the default) an event carries its objects as the bytes they came
    in: ``object`` and ``old_object`` are decoded on first access, then the same dict for
    every consumer of the event (shared: never mutate it, copy first). :attr:`key`,
    :attr:`resource_version` and :attr:`data` read the bytes without decoding anything, so a
    consumer that only enqueues keys never pays for a decode.

    Events compare equal when all five fields do.
    """

    __slots__ = (
        "_decoded",
        "_obj",
        "_old",
        "_old_decoded",
        "is_in_initial_list",
        "is_sync",
        "type",
    )

    type: EventType
    _obj: Any
    _old: Any
    _decoded: Any
    _old_decoded: Any
    is_sync: bool
    is_in_initial_list: bool

    def __init__(
        self,
        type: EventType,
        object: Any,
        old_object: Any = None,
        is_sync: bool = False,
        is_in_initial_list: bool = False,
    ) -> None:
        # Slot descriptors directly: the instance refuses attribute assignment.
        _set_type(self, type)
        _set_obj(self, object)
        _set_old(self, old_object)
        _set_decoded(self, None)
        _set_old_decoded(self, None)
        _set_is_sync(self, is_sync)
        _set_is_in_initial_list(self, is_in_initial_list)

    @property
    def object(self) -> Any:
        """The new object (see the class); decoded on first access."""
        decoded = self._decoded
        if decoded is not None:
            return decoded
        obj = self._obj
        if obj.__class__ is WireObject:
            decoded = loads(obj.data)
        elif obj.__class__ is DeletedFinalStateUnknown:
            last: Any = obj.obj
            if last.__class__ is not WireObject:
                return obj
            decoded = DeletedFinalStateUnknown(obj.key, loads(last.data))
        else:
            return obj
        _set_decoded(self, decoded)
        return decoded

    @property
    def old_object(self) -> KubeObject | None:
        """The previous state (see the class); decoded on first access."""
        decoded = self._old_decoded
        if decoded is not None:
            return decoded  # type: ignore[no-any-return]
        old = self._old
        if old.__class__ is not WireObject:
            return old  # type: ignore[no-any-return]
        decoded = loads(old.data)
        _set_old_decoded(self, decoded)
        return decoded  # type: ignore[no-any-return]

    @property
    def key(self) -> str:
        """The object's cache key (``namespace/name``, or ``name``), without decoding it."""
        obj = self._obj
        if obj.__class__ is WireObject or obj.__class__ is DeletedFinalStateUnknown:
            key: str = obj.key
            return key
        return meta_namespace_key(obj)

    @property
    def resource_version(self) -> str:
        """The new object's ``metadata.resourceVersion`` (a tombstone's: its last known
        state's, or ``""``), without decoding it."""
        obj = self._obj
        if obj.__class__ is DeletedFinalStateUnknown:
            obj = obj.obj
        if obj.__class__ is WireObject:
            rv: str = obj.resource_version
            return rv
        return try_resource_version(obj)

    @property
    def data(self) -> bytes | None:
        """The new object's JSON as received (a tombstone's: its last known state's, None
        when unknown), without decoding it: hand it to a typed decoder of your own, e.g.
        ``msgspec.json.decode(event.data, type=MyPod)``. An object that was decoded already
        (``cache="dict"``) is encoded."""
        obj = self._obj
        if obj.__class__ is DeletedFinalStateUnknown:
            obj = obj.obj
            if obj is None:
                return None
        if obj.__class__ is WireObject:
            data: bytes = obj.data
            return data
        return encode(obj)

    @property
    def _has_decoded(self) -> bool:
        """Whether a decoded object is kept in this event (see :meth:`Listener.add_batch`)."""
        return self._decoded is not None or self._old_decoded is not None

    def _undecoded(self) -> Event:
        """The same event without the objects decoded from bytes (itself when there are none
        to drop)."""
        if (self._decoded is None or self._decoded is self._obj) and self._old_decoded is None:
            return self
        return Event(self.type, self._obj, self._old, self.is_sync, self.is_in_initial_list)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _fields(self) -> tuple[Any, ...]:
        return (self.type, self.object, self.old_object, self.is_sync, self.is_in_initial_list)

    def __eq__(self, other: Any) -> bool:
        if other.__class__ is not Event:
            return NotImplemented
        assert isinstance(other, Event)
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # objects are dicts: never hashable

    def __repr__(self) -> str:
        # The key and version only: a repr decodes nothing (and logs no object contents).
        try:
            key = self.key
        except KeyFuncError:
            key = "?"
        return (
            f"Event(type={self.type!r}, key={key!r},"
            f" resource_version={self.resource_version!r}, is_sync={self.is_sync!r},"
            f" is_in_initial_list={self.is_in_initial_list!r})"
        )


_set_type = Event.__dict__["type"].__set__
_set_obj = Event.__dict__["_obj"].__set__
_set_old = Event.__dict__["_old"].__set__
_set_decoded = Event.__dict__["_decoded"].__set__
_set_old_decoded = Event.__dict__["_old_decoded"].__set__
_set_is_sync = Event.__dict__["is_sync"].__set__
_set_is_in_initial_list = Event.__dict__["is_in_initial_list"].__set__


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

    Created by the informer; users see it through an :class:`~aioinformer.EventStream` or a
    :class:`~aioinformer.Registration`.
    """

    __slots__ = (
        "_budget",
        "_buffer",
        "_closed",
        "_initial_pending",
        "_replay",
        "_slice_start",
        "_spilled_at",
        "_synced",
        "_unscanned",
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
        # Cached objects still to be replayed as ADDED before the buffer (a late join): the
        # cache's own entries (bytes, in the compact cache), made into events as read.
        self._replay: deque[Any] = deque()
        # Completed by the next notification while the consumer waits (None: it does not).
        self._wake: asyncio.Future[None] | None = None
        self._closed = False
        # When the consumer last resumed from the event loop (see SLICE_SECONDS), and how
        # many more reads before the clock is looked at again.
        self._slice_start = time.perf_counter()
        self._budget = _CHECK_EVERY
        # Events at the end of the buffer not yet searched for decoded objects, and the
        # backlog at the last search of the whole buffer (see add_batch).
        self._unscanned = 0
        self._spilled_at = SPILL_AT
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
        if wake is not None and not wake.done():
            wake.set_result(None)

    # -- informer side ---------------------------------------------------------------------

    def add(self, event: Event) -> None:
        """Append a notification (never blocks)."""
        if self._closed:
            return
        buffer = self._buffer
        buffer.append(event)
        if event.is_in_initial_list:
            self._initial_pending += 1
        backlog = len(buffer) + len(self._replay)  # a late joiner's replay counts too
        if backlog > self.peak_backlog:
            self.peak_backlog = backlog
        if self._wake is not None:
            self._wake_up()

    def add_batch(self, events: list[Event], initial: int = 0) -> None:
        """Append many notifications at once, ``initial`` of them initial-list adds; the
        consumer is woken once (never blocks).

        A backlog keeps no decoded object alive for long: an event is shared by every
        listener, and once a consumer reads ``event.object`` the decoded dict stays in the
        event; a consumer that lags behind would hold those dicts in its backlog, where the
        garbage collector rescans them. So the events of the previous batch still waiting
        here are replaced by copies without their decoded objects (only those some consumer
        decoded, and only in a lagging listener: a consumer that keeps up has an empty
        buffer), and the whole backlog is searched again each time it has doubled past
        :data:`SPILL_AT` (each event is searched a bounded number of times).
        """
        if self._closed or not events:
            return
        buffer = self._buffer
        if buffer:
            if len(buffer) >= self._spilled_at:
                self._spill(len(buffer))
                self._spilled_at = 2 * len(buffer)
            elif self._unscanned:
                self._spill(min(self._unscanned, len(buffer)))
        buffer.extend(events)
        self._unscanned = len(events)
        if initial:
            self._initial_pending += initial
        backlog = len(buffer) + len(self._replay)  # a late joiner's replay counts too
        if backlog > self.peak_backlog:
            self.peak_backlog = backlog
        if self._wake is not None:
            self._wake_up()

    def _spill(self, count: int) -> None:
        """Drop the decoded objects of the last ``count`` buffered events."""
        buffer = self._buffer
        if count >= len(buffer):
            if any(event._has_decoded for event in buffer):
                events = [event._undecoded() for event in buffer]
                buffer.clear()
                buffer.extend(events)
            return
        for position in range(len(buffer) - count, len(buffer)):
            event = buffer[position]
            if event._has_decoded:
                buffer[position] = event._undecoded()

    def should_resync(self, now: float) -> bool:
        """Whether this listener is due for resync at ``now``."""
        return self.resync_period > 0 and now >= self.next_resync

    def set_upstream_synced(self) -> None:
        """The informer's cache holds the initial list."""
        self._upstream_synced = True
        self._check_synced()

    def replay(self, objects: list[Any]) -> None:
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

    def _slice_over(self) -> bool:
        """Whether the consumer has run for :data:`SLICE_SECONDS` since it last yielded
        (the clock is read every few calls, not on each)."""
        budget = self._budget
        if budget:
            self._budget = budget - 1
            return False
        if time.perf_counter() - self._slice_start >= SLICE_SECONDS:
            return True
        self._budget = _CHECK_EVERY
        return False

    def _resumed(self) -> None:
        self._slice_start = time.perf_counter()
        self._budget = _CHECK_EVERY

    def next_nowait(self) -> Event | None:
        """The next buffered notification if one can be read without yielding to the event
        loop (one is buffered and the consumer's slice has time left), else None."""
        if self._slice_over():
            return None
        if self._replay:
            return Event(EventType.ADDED, self._replay.popleft(), is_in_initial_list=True)
        buffer = self._buffer
        return buffer.popleft() if buffer else None

    async def next(self) -> Event | None:
        """The next notification, waiting for one; None once the listener is closed.

        Yields to the event loop first when the consumer has been running for
        :data:`SLICE_SECONDS` since it last did, so that draining a backlog shares the loop.
        """
        if self._slice_over():
            await anyio.lowlevel.checkpoint()
            self._resumed()
        buffer = self._buffer
        while True:
            if self._replay:
                return Event(EventType.ADDED, self._replay.popleft(), is_in_initial_list=True)
            if buffer:
                return buffer.popleft()
            if self._closed:
                return None
            wake = self._wake
            if wake is None or wake.done():
                wake = self._wake = asyncio.get_running_loop().create_future()
            try:
                await wake
            finally:
                if self._wake is wake:
                    self._wake = None
            self._resumed()

    def processed(self, event: Event) -> None:
        """The consumer is done with ``event`` (tracks the initial list for :meth:`has_synced`)."""
        if event.is_in_initial_list and self._initial_pending > 0:
            self._initial_pending -= 1
            self._check_synced()

    def has_synced(self) -> bool:
        """True once the informer synced and this consumer processed every initial-list add."""
        return self._upstream_synced and self._initial_pending == 0

    async def wait_for_cache_sync(self) -> bool:
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


def effective_resync(desired: float, check: float) -> float:
    """A consumer's resync period in effect: none when it wants none or the informer does not
    resync, else at least the informer's check period."""
    if desired == 0:
        return 0.0
    if check == 0:
        logger.debug("resync period %s ignored: the informer does not resync", desired)
        return 0.0
    return max(desired, check)
