"""The reflector's list/watch rules as a synchronous state machine: ``(state, input) →
(action, state)``, with no I/O, no clock and no randomness.

:func:`step` is the whole machine; :class:`ListWatch` keeps the current state for the loop in
:mod:`._loop`, which performs each action and feeds its outcome back as the next input. The
resource-version rules are client-go's (``tools/cache/reflector.go``):

* the first list asks for RV ``"0"`` (the watch cache, paginated); a relist asks for the last
  RV seen, unpaginated (so the watch cache serves it) unless an RV ``"0"`` list once came back
  paginated (the watch cache is off);
* a list failing with 410 Expired or "too large resource version" is retried at once at RV
  ``""`` with the same page size; a continue token that expired mid-list gives one
  unpaginated list at the same RV; a *watch* ending with 410 relists at the last RV;
* watches resume from the last RV with bookmarks; a clean end re-watches without a list;
  bookmarks only advance the RV; a watch from ``""``/``"0"`` does not advance the RV during
  its synthetic ADDED replay;
* 429 waits for ``Retry-After`` (clamped to [0.5, 60] s) and re-watches; a refused
  connection and 401 (after reloading credentials) back off and re-watch; an idle watch backs
  off and resumes; a broken connection resumes at once; a watch that ends within a second
  without any event, an ``ERROR`` event and every other error back off and relist;
* beyond client-go: what the server sends is checked (:mod:`._checks`). A malformed or
  oversized watch line, and an event whose RV is older than the cursor's, end the watch at
  once: back off and relist from the last good RV (the store may have missed a change; a
  streaming list falls back to a LIST). An event whose object cannot be cached (no usable
  name, a non-string RV, a bookmark without an RV) is rejected and the watch goes on; so are
  such list items (the rest of the list is stored), and a list whose RV is older than the one
  asked for is stored and reported.

How long "back off" lasts is the loop's business (a :class:`~aioinformer.lowlevel.Backoff`);
the machine only says which kind of wait comes next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .._listwatch import ListOptions, WatchEvent
from .._wire._slices import WireEvent
from ..errors import (
    ConnectionRefused,
    ExpiredError,
    InformerError,
    ResourceVersionError,
    TooLargeResourceVersionError,
    TooManyRequestsError,
    TransportError,
    UnauthorizedError,
    VeryShortWatchError,
    WatchIdleTimeoutError,
)
from ._checks import Page, older, screen_pages
from ._events import on_events
from ._states import (
    Cursor,
    Listing,
    NeedList,
    NeedWatch,
    OpeningWatch,
    Replacing,
    RestartCause,
    State,
    StreamingList,
    Watching,
)
from ._steps import (
    Action,
    Delay,
    Input,
    ListFailed,
    ListPage,
    ListReason,
    Malformed,
    NextEvent,
    OpenWatch,
    Pause,
    Proceed,
    ReplaceStore,
    RequestList,
    StoreFailed,
    StreamingListFailed,
    StreamingListSynced,
    StreamList,
    WatchEnded,
    WatchOpened,
    WatchOpenFailed,
)

__all__ = ["ListWatch", "page_size_for", "relist_resource_version", "step"]

#: A watch that ends sooner than this (seconds) without any event counts as an error.
VERY_SHORT_WATCH: Final = 1.0
#: Bounds on a 429's ``Retry-After`` (seconds): 0 would be a hot loop.
MIN_RETRY_AFTER: Final = 0.5
MAX_RETRY_AFTER: Final = 60.0

_NEXT_EVENT: Final = NextEvent()

# -- the rules -----------------------------------------------------------------------------


def relist_resource_version(cursor: Cursor) -> str:
    """The RV of the next list: ``""`` when unavailable, ``"0"`` at first, else the last."""
    if cursor.unavailable:
        return ""
    return cursor.resource_version or "0"


def page_size_for(cursor: Cursor, resource_version: str, page_size: int) -> int:
    """The page size of a list at ``resource_version`` (client-go's ``Reflector.list``)."""
    if cursor.paginated:
        return page_size
    if resource_version not in ("", "0"):
        return 0  # unpaginated: the watch cache serves it, etcd is spared
    return page_size


def _list(
    cursor: Cursor, page_size: int, reason: ListReason, after: Exception | None = None
) -> tuple[Action, State]:
    rv = relist_resource_version(cursor)
    size = page_size_for(cursor, rv, page_size)
    options = ListOptions(resource_version=rv, limit=size or None)
    return RequestList(options, reason, after), Listing(cursor, rv, size)


def _watch(cursor: Cursor) -> tuple[Action, State]:
    options = ListOptions(resource_version=cursor.resource_version, allow_watch_bookmarks=True)
    return OpenWatch(options), OpeningWatch(cursor)


def _rv_gone(error: Exception) -> bool:
    return isinstance(error, ExpiredError | TooLargeResourceVersionError)


def _relist(error: Exception, cause: RestartCause | None = None) -> Pause:
    refresh = isinstance(error, UnauthorizedError)
    return Pause(Delay.BACKOFF, cause, (error,), refresh_credentials=refresh)


def _retry_watch(error: Exception) -> Pause | None:
    """The wait before re-watching after a refused, throttled or unauthorized request."""
    if isinstance(error, TooManyRequestsError):
        if error.retry_after is None:
            return Pause(Delay.BACKOFF, RestartCause.TOO_MANY_REQUESTS, (error,))
        seconds = min(max(error.retry_after, MIN_RETRY_AFTER), MAX_RETRY_AFTER)
        return Pause(Delay.RETRY_AFTER, RestartCause.TOO_MANY_REQUESTS, (error,), seconds=seconds)
    if isinstance(error, UnauthorizedError):
        return Pause(Delay.BACKOFF, RestartCause.UNAUTHORIZED, (error,), refresh_credentials=True)
    if isinstance(error, ConnectionRefused):
        return Pause(Delay.BACKOFF, RestartCause.REFUSED, (error,))
    return None


def _on_event(state: Watching, event: WatchEvent | WireEvent) -> tuple[Action, State]:
    actions, after = on_events(state, (event,))
    return actions[0], after


def _watch_ended(state: Watching, ended: WatchEnded) -> tuple[Action, State]:
    cursor = state.cursor
    error = ended.error
    if (
        (error is None or isinstance(error, TransportError))
        and not state.delivered
        and ended.elapsed < VERY_SHORT_WATCH
    ):
        how = "ended" if error is None else "broke"
        error = VeryShortWatchError(f"the watch {how} in under 1 s without events")
    pause: Pause | None
    if error is None:
        pause = Pause(Delay.NONE, RestartCause.TIMEOUT)
    elif isinstance(error, WatchIdleTimeoutError):
        pause = Pause(Delay.BACKOFF, RestartCause.IDLE, (error,))
    elif isinstance(error, TransportError):
        # The connection broke: like client-go, resume from the last RV at once.
        pause = Pause(Delay.NONE, RestartCause.DISCONNECT, (error,))
    else:
        pause = _retry_watch(error)
    if pause is None:
        assert error is not None
        cause = (
            RestartCause.EXPIRED
            if isinstance(error, ExpiredError)
            else RestartCause.VERY_SHORT
            if isinstance(error, VeryShortWatchError)
            else RestartCause.ERROR
        )
        return _relist(error, cause), NeedList(cursor)
    return pause, NeedWatch(cursor)


def _on_page(state: Listing, result: Page) -> tuple[Action, State]:
    token = result.continue_token
    if state.unpaginated_retry:
        pages: tuple[Page, ...] = (result,)
        list_rv, paginated = result.resource_version, True
    else:
        first = state.continue_token is None
        pages = (result,) if first else (*state.pages, result)
        list_rv = result.resource_version if first else state.list_rv
        if token:
            options = ListOptions(limit=state.page_size, continue_token=token)
            listing = Listing(
                state.cursor,
                state.resource_version,
                state.page_size,
                pages,
                list_rv,
                token,
                retried=state.retried,
            )
            return RequestList(options, ListReason.NEXT_PAGE), listing
        paginated = not first
    cursor = state.cursor
    cursor = Cursor(
        cursor.resource_version,
        unavailable=False,
        paginated=cursor.paginated or (state.resource_version == "0" and paginated),
    )
    items, invalid = screen_pages(pages)
    problems: tuple[InformerError, ...] = tuple(invalid)
    asked = state.resource_version
    if asked not in ("", "0") and older(list_rv, asked):
        went_back = ResourceVersionError(
            f"a list at resourceVersion {asked!r} answered the older {list_rv!r}",
            resource_version=list_rv,
            previous=asked,
        )
        problems = (*problems, went_back)
    return ReplaceStore(items, list_rv, problems), Replacing(cursor, list_rv)


def _on_list_error(state: Listing, error: Exception) -> tuple[Action, State]:
    if (
        isinstance(error, ExpiredError)
        and state.continue_token is not None
        and not state.unpaginated_retry
    ):
        # The list's snapshot fell out of history: one unpaginated list at the same RV.
        options = ListOptions(resource_version=state.resource_version)
        listing = Listing(
            state.cursor,
            state.resource_version,
            state.page_size,
            unpaginated_retry=True,
            retried=state.retried,
        )
        return RequestList(options, ListReason.CONTINUE_EXPIRED, error), listing
    if _rv_gone(error) and not state.retried:
        old = state.cursor
        cursor = Cursor(old.resource_version, True, old.paginated)
        options = ListOptions(resource_version="", limit=state.page_size or None)
        listing = Listing(cursor, "", state.page_size, retried=True)
        return RequestList(options, ListReason.RETRY_AT_EMPTY_RV, error), listing
    return _relist(error), NeedList(state.cursor)


def step(
    state: State, received: Input, *, page_size: int = 500, streaming_list: bool = False
) -> tuple[Action, State]:
    """One transition: the action to perform and the new state.

    :param page_size: the configured page size (see :func:`page_size_for`).
    :param streaming_list: whether a sync starts with a streaming list.
    :raises RuntimeError: for an input the state does not expect (a bug in the caller).
    """
    if state.__class__ is Watching and (
        received.__class__ is WireEvent or received.__class__ is WatchEvent
    ):  # the hot path
        return _on_event(state, received)
    match state, received:
        case Watching(cursor), Malformed(error):
            # The line may have held a change: relist from the last good RV now, not when
            # the watch ends (minutes later).
            return Pause(Delay.BACKOFF, RestartCause.MALFORMED, (error,)), NeedList(cursor)
        case Watching(), WatchEnded() as ended:
            return _watch_ended(state, ended)
        case NeedList(cursor), Proceed():
            if streaming_list:
                rv = "" if cursor.unavailable else cursor.resource_version
                options = ListOptions(
                    resource_version=rv,
                    resource_version_match="NotOlderThan",
                    send_initial_events=True,
                    allow_watch_bookmarks=True,
                )
                return StreamList(options), StreamingList(cursor)
            return _list(cursor, page_size, ListReason.SYNC)
        case Listing(), ListPage(result):
            return _on_page(state, result)
        case Listing(), ListFailed(error):
            return _on_list_error(state, error)
        case Replacing(cursor, rv), Proceed():
            return _watch(Cursor(rv, cursor.unavailable, cursor.paginated))
        case StreamingList(cursor), StreamingListSynced(rv):
            synced = Cursor(rv, False, cursor.paginated)
            return _NEXT_EVENT, Watching(synced, replaying=rv in ("", "0"), delivered=True)
        case StreamingList(cursor), StreamingListFailed(error):
            if _rv_gone(error):
                cursor = Cursor(cursor.resource_version, True, cursor.paginated)
            return _list(cursor, page_size, ListReason.STREAMING_FALLBACK, error)
        case OpeningWatch(cursor), WatchOpened():
            return _NEXT_EVENT, Watching(cursor, replaying=cursor.resource_version in ("", "0"))
        case OpeningWatch(cursor), WatchOpenFailed(error):
            retry = _retry_watch(error)
            if retry is not None:
                return retry, NeedWatch(cursor)
            return _relist(error), NeedList(cursor)
        case NeedWatch(cursor), Proceed():
            return _watch(cursor)
        case (
            (Replacing(cursor) | OpeningWatch(cursor) | Watching(cursor) | NeedWatch(cursor)),
            StoreFailed(error),
        ):
            return _relist(error), NeedList(cursor)
    raise RuntimeError(f"reflector state machine: unexpected {received!r} in {state!r}")


class ListWatch:
    """The machine with its current state, as the loop drives it.

    :param page_size: see :func:`step`.
    :param streaming_list: see :func:`step`.
    """

    __slots__ = ("_page_size", "_streaming_list", "state")

    def __init__(self, *, page_size: int, streaming_list: bool) -> None:
        self._page_size = page_size
        self._streaming_list = streaming_list
        #: The current state.
        self.state: State = NeedList()

    def restart(self) -> None:
        """Back to :class:`NeedList`, keeping the cursor (a reflector run again)."""
        self.state = NeedList(self.cursor)

    @property
    def cursor(self) -> Cursor:
        """The current state's cursor."""
        return self.state.cursor

    @property
    def watching(self) -> bool:
        """True from the first watch request until a relist is needed (the resync ticker
        runs meanwhile)."""
        return isinstance(self.state, OpeningWatch | Watching | NeedWatch)

    def event(self, event: WatchEvent | WireEvent) -> Action:
        """Apply one watch event (the hot path of :meth:`feed`, same rules)."""
        state = self.state
        if state.__class__ is not Watching:
            return self.feed(event)
        action, self.state = _on_event(state, event)
        return action

    def events(self, events: Sequence[WatchEvent | WireEvent]) -> list[Action]:
        """Apply watch events in order, as many :meth:`event` calls would (the same actions
        and the same final state), with one new state for the whole run instead of one per
        event."""
        state = self.state
        if state.__class__ is not Watching:
            actions: list[Action] = []
            for event in events:
                actions.append(self.event(event))
                if isinstance(actions[-1], Pause):
                    break  # the machine left the watch: the rest is not applied
            return actions
        assert isinstance(state, Watching)
        actions, self.state = on_events(state, events)
        return actions

    def feed(self, received: Input) -> Action:
        """Apply one input; returns the next action."""
        action, self.state = step(
            self.state,
            received,
            page_size=self._page_size,
            streaming_list=self._streaming_list,
        )
        return action
