"""Streaming-list collection: a watch with ``sendInitialEvents=true`` delivers the current
state as ADDED events, ending with a bookmark annotated ``k8s.io/initial-events-end``.

:class:`InitialEvents` collects those events (into a temporary dict, as client-go collects
them into a temporary store) until that bookmark; :func:`collect` reads them from a stream
within a deadline on the reflector's clock. Unlike client-go, which waits for the bookmark
forever, a late bookmark makes the attempt fail (and the reflector fall back to a LIST).
"""

from __future__ import annotations

import logging
from typing import Final

from .._clock import Clock
from .._listwatch import WatchEvent, WatchEventType, WatchStream
from .._objects import KubeObject, meta_namespace_key
from ..errors import KeyFuncError, MalformedWatchEventError, TransportError

__all__ = ["INITIAL_EVENTS_END", "InitialEvents", "collect"]

logger = logging.getLogger(__name__)

#: The annotation of the bookmark that ends a streaming list's initial events.
INITIAL_EVENTS_END: Final = "k8s.io/initial-events-end"


class InitialEvents:
    """The objects of a streaming list so far, by key, and what was dropped on the way."""

    __slots__ = ("_objects", "key_errors", "malformed", "resource_version", "unknown")

    def __init__(self) -> None:
        self._objects: dict[str, KubeObject] = {}
        #: The RV of the initial-events-end bookmark; None until it arrived.
        self.resource_version: str | None = None
        #: Undecodable lines skipped.
        self.malformed = 0
        #: Events of an unknown type skipped.
        self.unknown = 0
        #: Objects without a usable key skipped.
        self.key_errors = 0

    @property
    def objects(self) -> list[KubeObject]:
        """The collected objects."""
        return list(self._objects.values())

    def add(self, event: WatchEvent) -> bool:
        """Take one event; True once the initial-events-end bookmark arrived."""
        event_type, obj = event
        if event_type == WatchEventType.BOOKMARK:
            metadata = obj.get("metadata") or {}
            annotations = metadata.get("annotations") or {}
            if annotations.get(INITIAL_EVENTS_END) == "true":
                self.resource_version = str(metadata.get("resourceVersion") or "")
                return True
            return False
        try:
            key = meta_namespace_key(obj)
        except KeyFuncError:
            self.key_errors += 1
            return False
        if event_type == WatchEventType.DELETED:
            self._objects.pop(key, None)
        elif event_type in (WatchEventType.ADDED, WatchEventType.MODIFIED):
            self._objects[key] = obj
        else:
            self.unknown += 1
        return False


async def collect(
    stream: WatchStream,
    initial: InitialEvents,
    *,
    clock: Clock,
    deadline: float,
    name: str,
) -> str:
    """Read ``stream`` into ``initial`` until the initial-events-end bookmark; returns its RV.

    :raises TimeoutError: when the bookmark has not arrived within ``deadline`` seconds.
    :raises TransportError: when the stream ends before the bookmark.
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
            except MalformedWatchEventError as exc:
                initial.malformed += 1
                logger.warning("%s: skipping malformed watch event: %s", name, exc.reason)
                continue
            if initial.add(event):
                assert initial.resource_version is not None
                return initial.resource_version
    raise TimeoutError(f"no {INITIAL_EVENTS_END} bookmark within {deadline} s")
