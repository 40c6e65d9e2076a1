"""A reflector's counters: mutable inside, a frozen snapshot outside."""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field

from ._states import RestartCause

__all__ = ["STALE_KEYS_SHOWN", "Counters", "ReflectorStatistics"]

#: How many stale keys :attr:`ReflectorStatistics.stale_keys` shows at most.
STALE_KEYS_SHOWN = 20


@dataclass(frozen=True, kw_only=True, slots=True)
class ReflectorStatistics:
    """A snapshot of one reflector's counters (they only grow); see
    :meth:`~aioinformer.lowlevel.Reflector.statistics`."""

    #: Successful lists (the first one included; a streaming list counts as a list).
    lists: int = 0
    #: Successful lists after the first.
    relists: int = 0
    #: Streaming lists that failed (error, or no initial-events-end bookmark in time) and fell
    #: back to a LIST.
    streaming_list_fallbacks: int = 0
    #: Objects received in lists.
    items_listed: int = 0
    #: Watch requests the server accepted.
    watches: int = 0
    #: Watches that ended, by cause: the keys are ``RestartCause`` members, a string enum
    #: (``"timeout"`` for a clean end, ``"disconnect"``, ``"idle"``, ...).
    watch_restarts: Mapping[str, int] = field(default_factory=dict)
    #: Watch events applied to the store, by type (``WatchEventType`` members, bookmarks
    #: included).
    events: Mapping[str, int] = field(default_factory=dict)
    #: Undecodable (or oversized) watch lines; each ended its watch and led to a relist.
    malformed_events: int = 0
    #: Events of an unknown type skipped.
    unknown_events: int = 0
    #: Objects that cannot be cached (no usable name, a non-string resource version, a key
    #: listed twice, a bookmark without a resource version), in lists and watches; skipped.
    invalid_objects: int = 0
    #: Objects the store refused (a transform or key function raised); skipped.
    store_errors: int = 0
    #: Resource versions that were not strings or went backwards (a watch event's ends the
    #: watch and leads to a relist).
    resource_version_errors: int = 0
    #: Keys whose latest version from the server is not in the store (it was invalid or
    #: refused; the store keeps the last version it accepted, or nothing), now.
    stale_objects: int = 0
    #: The first :data:`STALE_KEYS_SHOWN` of those keys, sorted.
    stale_keys: tuple[str, ...] = ()
    #: List and watch errors (each went to the watch-error handler).
    errors: int = 0
    #: The last error, as ``"ExceptionType: message"``.
    last_error: str | None = None


class Counters:
    """The live counters behind :class:`ReflectorStatistics`."""

    __slots__ = (
        "errors",
        "events",
        "invalid_objects",
        "items_listed",
        "last_error",
        "lists",
        "malformed_events",
        "resource_version_errors",
        "stale",
        "store_errors",
        "streaming_list_fallbacks",
        "unknown_events",
        "watch_restarts",
        "watches",
    )

    def __init__(self) -> None:
        self.lists = 0
        self.streaming_list_fallbacks = 0
        self.items_listed = 0
        self.watches = 0
        self.watch_restarts: dict[str, int] = {}  # by RestartCause
        self.events: dict[str, int] = {}  # by WatchEventType
        self.malformed_events = 0
        self.unknown_events = 0
        self.invalid_objects = 0
        self.store_errors = 0
        self.resource_version_errors = 0
        #: Stale keys (see ``ReflectorStatistics.stale_objects``) and why.
        self.stale: dict[str, str] = {}
        self.errors = 0
        self.last_error: str | None = None

    def listed(self, items: int) -> None:
        """A list (or streaming list) filled the store."""
        self.lists += 1
        self.items_listed += items

    def restarted(self, cause: RestartCause) -> None:
        """A watch ended."""
        self.watch_restarts[cause] = self.watch_restarts.get(cause, 0) + 1

    def snapshot(self) -> ReflectorStatistics:
        """A frozen copy."""
        return ReflectorStatistics(
            lists=self.lists,
            relists=max(0, self.lists - 1),
            streaming_list_fallbacks=self.streaming_list_fallbacks,
            items_listed=self.items_listed,
            watches=self.watches,
            watch_restarts=dict(self.watch_restarts),
            events=dict(self.events),
            malformed_events=self.malformed_events,
            unknown_events=self.unknown_events,
            invalid_objects=self.invalid_objects,
            store_errors=self.store_errors,
            resource_version_errors=self.resource_version_errors,
            stale_objects=len(self.stale),
            stale_keys=tuple(heapq.nsmallest(STALE_KEYS_SHOWN, self.stale)),
            errors=self.errors,
            last_error=self.last_error,
        )
