"""Streaming-list collection: a watch with ``sendInitialEvents=true`` delivers the current
state as ADDED events, ending with a bookmark annotated ``k8s.io/initial-events-end``.

:class:`InitialEvents` collects those events (into a temporary dict, as client-go collects
them into a temporary store) until that bookmark; :func:`collect` reads them from a stream
within a deadline on the reflector's clock. Unlike client-go, which waits for the bookmark
forever, a late bookmark makes the attempt fail (and the reflector fall back to a LIST).
"""

from __future__ import annotations

from typing import Any, Final

from .._clock import Clock
from .._listwatch import WatchEvent, WatchEventType, WatchStream
from .._wire._slices import WireEvent, WireObject
from ..errors import InvalidObjectError, TransportError
from ._checks import key_hint, object_problem, version_problem

__all__ = ["INITIAL_EVENTS_END", "InitialEvents", "collect"]

#: The annotation of the bookmark that ends a streaming list's initial events.
INITIAL_EVENTS_END: Final = "k8s.io/initial-events-end"

_CHANGES: Final = frozenset((WatchEventType.ADDED, WatchEventType.MODIFIED, WatchEventType.DELETED))


class InitialEvents:
    """The objects of a streaming list so far, by key, and what was dropped on the way."""

    __slots__ = ("_objects", "invalid", "resource_version", "unknown")

    def __init__(self) -> None:
        # Decoded objects, or carriers in wire form (the informer's).
        self._objects: dict[str, Any] = {}
        #: The RV of the initial-events-end bookmark; None until it arrived.
        self.resource_version: str | None = None
        #: Events of an unknown type skipped.
        self.unknown = 0
        #: Objects that cannot be cached (no usable key, a non-string RV), skipped.
        self.invalid: list[InvalidObjectError] = []

    @property
    def objects(self) -> list[Any]:
        """The collected objects."""
        return list(self._objects.values())

    def add(self, event: WatchEvent | WireEvent) -> bool:
        """Take one event; True once the initial-events-end bookmark arrived.

        :raises ResourceVersionError: when that bookmark's resource version is not a string.
        """
        event_type = event.type
        obj: Any = event.object
        key: str | None
        if obj.__class__ is WireObject:
            key = obj.key
        else:
            uncarried = obj is None  # a wire event's object left decoded, judged here
            if uncarried:
                obj = event.document  # type: ignore[union-attr]
            if event_type == WatchEventType.BOOKMARK:
                return self._bookmark(obj)
            problem = object_problem(obj)
            if problem is None and uncarried and event_type in _CHANGES:
                problem = "the object is nested too deeply to be stored"
            if problem is not None:
                self.invalid.append(InvalidObjectError(problem, key=key_hint(obj)))
                return False
            key = key_hint(obj)
        assert key is not None  # a valid object has one
        if event_type == WatchEventType.DELETED:
            self._objects.pop(key, None)
        elif event_type in (WatchEventType.ADDED, WatchEventType.MODIFIED):
            self._objects[key] = obj
        else:
            self.unknown += 1
        return False

    def _bookmark(self, obj: Any) -> bool:
        metadata = obj.get("metadata") if isinstance(obj, dict) else None
        metadata = metadata if isinstance(metadata, dict) else {}
        annotations = metadata.get("annotations")
        if isinstance(annotations, dict) and annotations.get(INITIAL_EVENTS_END) == "true":
            rv = metadata.get("resourceVersion", "")
            error = version_problem(rv, "")
            if error is not None:
                raise error
            self.resource_version = rv
            return True
        return False


async def collect(
    stream: WatchStream,
    initial: InitialEvents,
    *,
    clock: Clock,
    deadline: float,
) -> str:
    """Read ``stream`` into ``initial`` until the initial-events-end bookmark; returns its RV.

    :raises TimeoutError: when the bookmark has not arrived within ``deadline`` seconds.
    :raises TransportError: when the stream ends before the bookmark.
    :raises MalformedWatchEventError: for an undecodable line (the stream cannot be trusted to
        be complete: the reflector falls back to a LIST).
    :raises ApiError: for an ``ERROR`` event (and whatever else the stream raises).
    """
    with clock.move_on_after(deadline):
        while True:
            try:
                event = await stream.__anext__()
            except StopAsyncIteration:
                raise TransportError(
                    "the streaming list ended before its initial-events-end bookmark"
                ) from None
            if initial.add(event):
                assert initial.resource_version is not None
                return initial.resource_version
    raise TimeoutError(f"no {INITIAL_EVENTS_END} bookmark within {deadline} s")
