"""Watch events and the per-resource history window (the fake's watch cache).

Every write produces one :class:`StoredEvent` at a fresh global resource version. A
resource's :class:`ResourceHistory` keeps its recent events in RV order so that a watch can
resume from an RV and a list can reconstruct the state at an RV. ``floor`` is the oldest RV
that can still be resumed from: events after ``floor`` are all kept.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

import orjson

from .._api._objects import KubeObject

__all__ = [
    "ADDED",
    "BOOKMARK",
    "DELETED",
    "ERROR",
    "MODIFIED",
    "ResourceHistory",
    "StoredEvent",
    "encode_event",
]

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"


def encode_event(event_type: str, obj: Mapping[str, Any]) -> bytes:
    """One watch line: ``{"type":...,"object":...}`` and a newline."""
    return b'{"type":"%s","object":%s}\n' % (event_type.encode(), orjson.dumps(obj))


def with_resource_version(obj: KubeObject, rv: int) -> KubeObject:
    """A shallow copy of ``obj`` whose ``metadata.resourceVersion`` is ``rv``."""
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(rv)}}


class StoredEvent:
    """One write, as every watcher sees it (encoded at most once per variant).

    :ivar rv: the resource version of the write.
    :ivar type: ``ADDED``, ``MODIFIED`` or ``DELETED``.
    :ivar key: the object's storage key (``ns/name`` or ``name``).
    :ivar namespace: the object's namespace (``""`` when cluster-scoped).
    :ivar obj: the state after the write; for ``DELETED`` the final state at the deletion RV.
    :ivar old: the state before the write (None for ``ADDED``).
    """

    __slots__ = ("_added", "_leave", "_own", "key", "namespace", "obj", "old", "rv", "type")

    def __init__(
        self,
        rv: int,
        event_type: str,
        key: str,
        namespace: str,
        obj: KubeObject,
        old: KubeObject | None,
    ) -> None:
        self.rv = rv
        self.type = event_type
        self.key = key
        self.namespace = namespace
        self.obj = obj
        self.old = old
        self._own: bytes | None = None
        self._added: bytes | None = None
        self._leave: bytes | None = None

    def line(self) -> bytes:
        """The event as it happened."""
        if self._own is None:
            self._own = encode_event(self.type, self.obj)
        return self._own

    def entering_line(self) -> bytes:
        """``ADDED`` with the new state: the object entered a watcher's selector."""
        if self.type == ADDED:
            return self.line()
        if self._added is None:
            self._added = encode_event(ADDED, self.obj)
        return self._added

    def leaving_line(self) -> bytes:
        """``DELETED`` with the previous state at this event's RV: the object left the selector."""
        if self.type == DELETED:
            return self.line()
        if self._leave is None:
            assert self.old is not None
            self._leave = encode_event(DELETED, with_resource_version(self.old, self.rv))
        return self._leave


def _rv_of(event: StoredEvent) -> int:
    return event.rv


class ResourceHistory:
    """The recent events of one resource, oldest first.

    :param limit: events kept at least; the list is trimmed to ``limit`` when it doubles.
    """

    def __init__(self, *, limit: int) -> None:
        self.limit = max(1, limit)
        self.events: list[StoredEvent] = []
        self.floor = 0

    def append(self, event: StoredEvent) -> None:
        """Record a write; trims the oldest events when the window overflows."""
        self.events.append(event)
        if len(self.events) >= 2 * self.limit:
            cut = len(self.events) - self.limit
            self.floor = max(self.floor, self.events[cut - 1].rv)
            del self.events[:cut]

    def since(self, rv: int) -> list[StoredEvent] | None:
        """Every event with an RV above ``rv``, or None when some of them are gone."""
        if rv < self.floor:
            return None
        start = bisect.bisect_right(self.events, rv, key=_rv_of)
        return self.events[start:]

    def compact(self, rv: int) -> None:
        """Forget the events up to ``rv``; resuming from an RV below ``rv`` becomes impossible."""
        self.floor = max(self.floor, rv)
        start = bisect.bisect_right(self.events, rv, key=_rv_of)
        del self.events[:start]
