"""A reflector's counters: mutable inside, a frozen snapshot outside."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ._states import RestartCause

__all__ = ["Counters", "ReflectorStatistics"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ReflectorStatistics:
    """A snapshot of one reflector's counters (they only grow); see
    :meth:`~aioinformer.Reflector.statistics`."""

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
    #: Undecodable watch lines skipped.
    malformed_events: int = 0
    #: Events of an unknown type skipped.
    unknown_events: int = 0
    #: Events the store refused (transform or key errors); skipped.
    store_errors: int = 0
    #: List and watch errors (each went to the watch-error handler).
    errors: int = 0
    #: The last error, as ``"ExceptionType: message"``.
    last_error: str | None = None


class Counters:
    """The live counters behind :class:`ReflectorStatistics`."""

    __slots__ = (
        "errors",
        "events",
        "items_listed",
        "last_error",
        "lists",
        "malformed_events",
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
        self.store_errors = 0
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
            store_errors=self.store_errors,
            errors=self.errors,
            last_error=self.last_error,
        )
