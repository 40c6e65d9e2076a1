"""What the reflector loop feeds the machine (inputs) and what the machine asks of it
(actions)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .._listwatch import ListOptions, ListResult, WatchEvent, WatchEventType
from .._wire._slices import WireEvent, WirePage
from ..errors import InformerError, InvalidObjectError, MalformedWatchEventError
from ._states import RestartCause

__all__ = [
    "Action",
    "Apply",
    "Delay",
    "Input",
    "ListFailed",
    "ListPage",
    "ListReason",
    "Malformed",
    "NextEvent",
    "OpenWatch",
    "Pause",
    "Proceed",
    "Reject",
    "ReplaceStore",
    "RequestList",
    "Skip",
    "StoreFailed",
    "StreamList",
    "StreamingListFailed",
    "StreamingListSynced",
    "WatchEnded",
    "WatchOpenFailed",
    "WatchOpened",
]


# -- inputs --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Proceed:
    """The last action is done (a pause, or a store replace): go on."""


@dataclass(frozen=True, slots=True)
class ListPage:
    """A list request returned a page (decoded items, or carriers in wire form)."""

    result: ListResult | WirePage


@dataclass(frozen=True, slots=True)
class ListFailed:
    """A list request failed."""

    error: Exception


@dataclass(frozen=True, slots=True)
class StoreFailed:
    """The store refused a replace or a resync."""

    error: Exception


@dataclass(frozen=True, slots=True)
class StreamingListSynced:
    """The streaming list's initial events are in the store, at ``resource_version``."""

    resource_version: str


@dataclass(frozen=True, slots=True)
class StreamingListFailed:
    """The streaming list failed (request error, stream error, late bookmark, store)."""

    error: Exception


@dataclass(frozen=True, slots=True)
class WatchOpened:
    """The server accepted the watch."""


@dataclass(frozen=True, slots=True)
class WatchOpenFailed:
    """The watch request failed."""

    error: Exception


@dataclass(frozen=True, slots=True)
class Malformed:
    """The stream delivered an undecodable (or oversized) line."""

    error: MalformedWatchEventError


@dataclass(frozen=True, slots=True)
class WatchEnded:
    """The stream ended: cleanly (``error`` None) or with an error, ``elapsed`` seconds after
    it was opened."""

    error: Exception | None
    elapsed: float


Input = (
    Proceed
    | ListPage
    | ListFailed
    | StoreFailed
    | StreamingListSynced
    | StreamingListFailed
    | WatchOpened
    | WatchOpenFailed
    | WatchEvent
    | WireEvent
    | Malformed
    | WatchEnded
)


# -- actions -------------------------------------------------------------------------------
class ListReason(StrEnum):
    """Why a list request is made."""

    #: The first list, or a relist after an error.
    SYNC = "sync"
    #: The previous list at a specific RV failed with 410 / "too large RV": retry at RV "".
    RETRY_AT_EMPTY_RV = "retry_at_empty_rv"
    #: A continue token expired mid-list: one unpaginated list at the same RV.
    CONTINUE_EXPIRED = "continue_expired"
    #: A next page.
    NEXT_PAGE = "next_page"
    #: The streaming list failed: a LIST instead.
    STREAMING_FALLBACK = "streaming_fallback"


@dataclass(frozen=True, slots=True)
class RequestList:
    """Request a list page; feed :class:`ListPage` or :class:`ListFailed`. ``after`` is the
    error that led to it (a retry or a fallback)."""

    options: ListOptions
    reason: ListReason = ListReason.SYNC
    after: Exception | None = None


@dataclass(frozen=True, slots=True)
class ReplaceStore:
    """Replace the store's content; feed :class:`Proceed` or :class:`StoreFailed`.

    ``problems`` are what the list had wrong, to report (they do not stop the replace): list
    items left out (:class:`~aioinformer.errors.InvalidObjectError`: no usable key, a
    resource version that is not a string, a key listed twice, the last one kept) and a list
    RV older than the one asked for (:class:`~aioinformer.errors.ResourceVersionError`).
    """

    items: list[Any]
    resource_version: str
    problems: tuple[InformerError, ...] = ()


@dataclass(frozen=True, slots=True)
class StreamList:
    """Open a streaming list and fill the store from it (the loop adds ``timeoutSeconds``);
    feed :class:`StreamingListSynced` (keeping the stream) or :class:`StreamingListFailed`."""

    options: ListOptions


@dataclass(frozen=True, slots=True)
class OpenWatch:
    """Open a watch (the loop adds ``timeoutSeconds``); feed :class:`WatchOpened` or
    :class:`WatchOpenFailed`."""

    options: ListOptions


@dataclass(frozen=True, slots=True)
class NextEvent:
    """Read the next event of the open stream; feed a
    :class:`~aioinformer.lowlevel.WatchEvent`, :class:`Malformed` or :class:`WatchEnded`."""


@dataclass(frozen=True, slots=True)
class Apply:
    """Apply the event just received to the store (``add``/``update``/``delete`` with the
    event's object; nothing for a bookmark), then read the next one."""

    type: WatchEventType


@dataclass(frozen=True, slots=True)
class Skip:
    """Drop an event of an unknown type (count and log it), then read the next one."""

    event_type: str


@dataclass(frozen=True, slots=True)
class Reject:
    """Drop an event whose object cannot be cached (count it, report ``error``, log it once
    per key), then read the next one."""

    error: InvalidObjectError


class Delay(StrEnum):
    """How long a :class:`Pause` lasts."""

    #: No wait.
    NONE = "none"
    #: The next delay of the backoff.
    BACKOFF = "backoff"
    #: The server's ``Retry-After`` (``Pause.seconds``).
    RETRY_AFTER = "retry_after"


@dataclass(frozen=True, slots=True)
class Pause:
    """Count the restart ``cause`` (if any), report ``errors`` to the watch-error handler,
    reload credentials if asked, wait, then feed :class:`Proceed` (the new state says whether
    a relist or a re-watch follows)."""

    delay: Delay
    cause: RestartCause | None = None
    errors: tuple[Exception, ...] = ()
    refresh_credentials: bool = False
    seconds: float = 0.0


Action = (
    RequestList | ReplaceStore | StreamList | OpenWatch | NextEvent | Apply | Skip | Reject | Pause
)
