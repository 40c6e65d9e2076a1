"""The reflector machine's states: a :class:`Cursor` and where the list/watch cycle stands.

Each state is documented with what it means and which inputs leave it (see
:func:`~aioinformer._reflector._machine.step`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .._listwatch import ListResult
from .._wire._slices import WirePage

__all__ = [
    "Cursor",
    "Listing",
    "NeedList",
    "NeedWatch",
    "OpeningWatch",
    "Replacing",
    "RestartCause",
    "State",
    "StreamingList",
    "Watching",
]


class RestartCause(StrEnum):
    """Why a watch ended (the ``cause`` label of the restart counter)."""

    #: The server ended the watch cleanly (its ``timeoutSeconds``, or EOF).
    TIMEOUT = "timeout"
    #: The connection broke after events arrived.
    DISCONNECT = "disconnect"
    #: No bytes arrived for the idle timeout.
    IDLE = "idle"
    #: 429, on watch start or as an ``ERROR`` event.
    TOO_MANY_REQUESTS = "too_many_requests"
    #: The API server refused the connection.
    REFUSED = "refused"
    #: 401: credentials are reloaded.
    UNAUTHORIZED = "unauthorized"
    #: 410: the watch's resource version is gone.
    EXPIRED = "expired"
    #: Any other ``ERROR`` event or failure.
    ERROR = "error"
    #: Ended within a second without any event.
    VERY_SHORT = "very_short"
    #: Ended by the client after an undecodable (or oversized) line: the store may have
    #: missed a change, so a relist from the last good RV repairs it.
    MALFORMED = "malformed"
    #: Ended by the client after an event whose resource version was older than one already
    #: seen: the stream cannot be trusted, so a relist from the last good RV follows.
    BACKWARDS = "backwards"


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where the store stands against the server; every state carries it."""

    #: The RV of the last list, event or bookmark (client-go's ``lastSyncResourceVersion``);
    #: ``""`` before the first list.
    resource_version: str = ""
    #: That RV is gone (a list failed with 410 or "too large"): list and stream at RV ``""``
    #: until a list succeeds.
    unavailable: bool = False
    #: An RV ``"0"`` list came back paginated: the watch cache is off, so relists paginate.
    paginated: bool = False


@dataclass(frozen=True, slots=True)
class NeedList:
    """The store must be (re)filled: the start, and after every error that relists.

    :class:`~._steps.Proceed` leaves it: to :class:`Listing` (:class:`~._steps.RequestList`), or to
    :class:`StreamingList` (:class:`~._steps.StreamList`) when streaming lists are on.
    """

    cursor: Cursor = Cursor()


@dataclass(frozen=True, slots=True)
class Listing:
    """A LIST is in progress, one page per request (client-go's pager).

    ``resource_version`` and ``page_size`` are the list's (0: unpaginated); ``pages`` holds
    the pages so far and ``list_rv`` the RV of the first page; ``unpaginated_retry`` marks
    the one full list after a continue token expired; ``retried`` the retry at RV ``""``.

    The last page leads to :class:`Replacing` (:class:`~._steps.ReplaceStore`); 410 on a later page
    to the unpaginated retry; 410 or "too large RV" otherwise (once) to a list at RV ``""``;
    any other :class:`~._steps.ListFailed` to :class:`NeedList` (:class:`~._steps.Pause`);
    """

    cursor: Cursor
    resource_version: str
    page_size: int
    pages: tuple[ListResult | WirePage, ...] = ()
    list_rv: str = ""
    continue_token: str | None = None
    unpaginated_retry: bool = False
    retried: bool = False


@dataclass(frozen=True, slots=True)
class Replacing:
    """The store is being replaced with a list's items, at ``resource_version``.

    :class:`~._steps.Proceed` (done) moves the cursor there and leads to :class:`OpeningWatch`;
    :class:`~._steps.StoreFailed` to :class:`NeedList`.
    """

    cursor: Cursor
    resource_version: str


@dataclass(frozen=True, slots=True)
class StreamingList:
    """A streaming list (a watch with ``sendInitialEvents``) is filling the store.

    :class:`~._steps.StreamingListSynced` leads to :class:`Watching` on the same stream;
    :class:`~._steps.StreamingListFailed` falls back to a LIST (:class:`Listing`), at RV ``""`` when
    the failure was 410 or "too large RV".
    """

    cursor: Cursor


@dataclass(frozen=True, slots=True)
class OpeningWatch:
    """A watch request from ``cursor.resource_version`` is in flight.

    :class:`~._steps.WatchOpened` leads to :class:`Watching`; a refused connection, 429 or 401 to
    :class:`NeedWatch` (:class:`~._steps.Pause`); any other :class:`~._steps.WatchOpenFailed` to
    :class:`NeedList`; :class:`~._steps.StoreFailed` (a resync) too.
    """

    cursor: Cursor


@dataclass(frozen=True, slots=True)
class Watching:
    """A watch stream is open.

    ``replaying``: it started at RV ``""``/``"0"`` and has delivered only synthetic ADDED
    events, so the RV does not move yet. ``delivered``: it delivered at least one event.

    Events stay here (:class:`~._steps.Apply`; :class:`~._steps.Skip` for an unknown type,
    :class:`~._steps.Reject` for an object that cannot be cached). A malformed line, or an event
    whose RV is older than the cursor's, ends the watch: to :class:`NeedList` (a relist from the
    last good RV) through a :class:`~._steps.Pause`. :class:`~._steps.WatchEnded` leads to
    :class:`NeedWatch` (re-watch) or :class:`NeedList` (relist), always through a
    :class:`~._steps.Pause`; so does :class:`~._steps.StoreFailed` (a resync) to :class:`NeedList`.
    """

    cursor: Cursor
    replaying: bool = False
    delivered: bool = False


@dataclass(frozen=True, slots=True)
class NeedWatch:
    """Between two watches: a :class:`~._steps.Pause` (possibly of no time) is under way.

    :class:`~._steps.Proceed` leads to :class:`OpeningWatch`; :class:`~._steps.StoreFailed` to
    :class:`NeedList`.
    """

    cursor: Cursor


State = NeedList | Listing | Replacing | StreamingList | OpeningWatch | Watching | NeedWatch
