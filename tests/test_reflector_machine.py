"""The reflector's list/watch rules as a table: (state, input) → (action, new state).

No server, no clock, no I/O: each row is one transition of
:func:`aioinformer._reflector._machine.step`. The rules are client-go's
``tools/cache/reflector.go`` (``relistResourceVersion``, ``list``, ``watch``,
``handleAnyWatch``, ``isWatchErrorRetriable``), plus the documented differences (idle
watches, the streaming-list deadline, and the checks of what the server sends: a malformed
line or a resource version going back ends the watch and relists from the last good RV; an
object that cannot be cached is rejected, in lists and watches alike).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from aioinformer._listwatch import ListOptions, ListResult, WatchEvent, WatchEventType
from aioinformer._reflector._machine import ListWatch, step
from aioinformer._reflector._states import (
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
from aioinformer._reflector._steps import (
    Action,
    Apply,
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
    Reject,
    ReplaceStore,
    RequestList,
    Skip,
    StoreFailed,
    StreamingListFailed,
    StreamingListSynced,
    StreamList,
    WatchEnded,
    WatchOpened,
    WatchOpenFailed,
)
from aioinformer.errors import (
    BadRequestError,
    ConnectionRefused,
    ExpiredError,
    ForbiddenError,
    InternalServerError,
    InvalidObjectError,
    MalformedWatchEventError,
    ResourceVersionError,
    TooLargeResourceVersionError,
    TooManyRequestsError,
    TransportError,
    UnauthorizedError,
    VeryShortWatchError,
    WatchIdleTimeoutError,
)

from .support import obj


class Like(Exception):
    """Equal to any exception of ``kind`` (for the errors the machine creates itself)."""

    def __init__(self, kind: type[Exception]) -> None:
        super().__init__(kind.__name__)
        self.kind = kind

    def __eq__(self, other: object) -> bool:
        return isinstance(other, self.kind)

    __hash__ = Exception.__hash__


def like(kind: type[Exception]) -> Any:
    """A :class:`Like` where a more specific error type is expected."""
    return Like(kind)


def ev(event_type: str, rv: str | None = "8") -> WatchEvent:
    """A watch event for ConfigMap ``a`` (without an RV when ``rv`` is None)."""
    body = obj("a", rv or "")
    if rv is None:
        del body["metadata"]["resourceVersion"]
    return WatchEvent(event_type, body)


def watch_options(rv: str) -> ListOptions:
    return ListOptions(resource_version=rv, allow_watch_bookmarks=True)


def streaming_options(rv: str) -> ListOptions:
    return ListOptions(
        resource_version=rv,
        resource_version_match="NotOlderThan",
        send_initial_events=True,
        allow_watch_bookmarks=True,
    )


A, B = obj("a", "5"), obj("b", "6")
GONE = ExpiredError(code=410, reason="Expired", message="too old resource version")
TOO_LARGE = TooLargeResourceVersionError(code=504, reason="Timeout", message="Too large")
BOOM = InternalServerError(code=500, reason="InternalError", message="boom")
DENIED = UnauthorizedError(code=401, reason="Unauthorized")
REFUSED = ConnectionRefused("connection refused")
BROKEN = TransportError("connection reset")
IDLE = WatchIdleTimeoutError("no bytes for 120 s")
BAD = BadRequestError(code=400, reason="BadRequest", message="sendInitialEvents unsupported")
MALFORMED = MalformedWatchEventError("not JSON")
STORE = RuntimeError("the store refused")


def throttled(retry_after: float | None) -> TooManyRequestsError:
    return TooManyRequestsError(code=429, reason="TooManyRequests", retry_after=retry_after)


THROTTLED = throttled(3.0)
C0, C42 = Cursor(), Cursor("42")
WATCHING_42 = Watching(C42, delivered=True)


@dataclass(frozen=True)
class Row:
    """One transition; ``streaming`` turns streaming lists on."""

    id: str
    state: State
    received: Input
    action: Action
    new_state: State
    streaming: bool = False


LIST_ROWS = [
    Row(
        "first list at RV 0, paginated",
        NeedList(),
        Proceed(),
        RequestList(ListOptions(resource_version="0", limit=500)),
        Listing(C0, "0", 500),
    ),
    Row(
        "relist at the last RV, unpaginated",
        NeedList(C42),
        Proceed(),
        RequestList(ListOptions(resource_version="42")),
        Listing(C42, "42", 0),
    ),
    Row(
        "relist paginated once an RV 0 list was (watch cache off)",
        NeedList(Cursor("42", paginated=True)),
        Proceed(),
        RequestList(ListOptions(resource_version="42", limit=500)),
        Listing(Cursor("42", paginated=True), "42", 500),
    ),
    Row(
        "relist at RV '' while the last RV is unavailable",
        NeedList(Cursor("42", unavailable=True)),
        Proceed(),
        RequestList(ListOptions(resource_version="", limit=500)),
        Listing(Cursor("42", unavailable=True), "", 500),
    ),
    Row(
        "a one-page list replaces the store at its RV",
        Listing(C0, "0", 500),
        ListPage(ListResult([A], "7")),
        ReplaceStore([A], "7"),
        Replacing(C0, "7"),
    ),
    Row(
        "a continue token asks for the next page",
        Listing(C0, "0", 500),
        ListPage(ListResult([A], "7", "t1")),
        RequestList(ListOptions(limit=500, continue_token="t1"), ListReason.NEXT_PAGE),
        Listing(C0, "0", 500, (ListResult([A], "7", "t1"),), "7", "t1"),
    ),
    Row(
        "the last page: all pages at the first page's RV; an RV 0 list came back paginated",
        Listing(C0, "0", 500, (ListResult([A], "7", "t1"),), "7", "t1"),
        ListPage(ListResult([B], "8")),
        ReplaceStore([A, B], "7"),
        Replacing(Cursor(paginated=True), "7"),
    ),
    Row(
        "a paginated RV '' list does not mark the watch cache off",
        Listing(C0, "", 500, (ListResult([A], "7", "t1"),), "7", "t1"),
        ListPage(ListResult([B], "8")),
        ReplaceStore([A, B], "7"),
        Replacing(C0, "7"),
    ),
    Row(
        "410 on the list: retry at once at RV '' with the same pager",
        Listing(C0, "0", 500),
        ListFailed(GONE),
        RequestList(
            ListOptions(resource_version="", limit=500), ListReason.RETRY_AT_EMPTY_RV, GONE
        ),
        Listing(Cursor(unavailable=True), "", 500, retried=True),
    ),
    Row(
        "too large RV on the list: the same",
        Listing(C0, "0", 500),
        ListFailed(TOO_LARGE),
        RequestList(
            ListOptions(resource_version="", limit=500), ListReason.RETRY_AT_EMPTY_RV, TOO_LARGE
        ),
        Listing(Cursor(unavailable=True), "", 500, retried=True),
    ),
    Row(
        "410 on a relist at RV N: RV '' with that unpaginated pager",
        Listing(C42, "42", 0),
        ListFailed(GONE),
        RequestList(ListOptions(resource_version=""), ListReason.RETRY_AT_EMPTY_RV, GONE),
        Listing(Cursor("42", unavailable=True), "", 0, retried=True),
    ),
    Row(
        "410 again after the retry: back off and relist (still at RV '')",
        Listing(Cursor("42", unavailable=True), "", 0, retried=True),
        ListFailed(GONE),
        Pause(Delay.BACKOFF, errors=(GONE,)),
        NeedList(Cursor("42", unavailable=True)),
    ),
    Row(
        "an expired continue token: one unpaginated list at the same RV",
        Listing(C0, "0", 500, (ListResult([A], "7", "t1"),), "7", "t1"),
        ListFailed(GONE),
        RequestList(ListOptions(resource_version="0"), ListReason.CONTINUE_EXPIRED, GONE),
        Listing(C0, "0", 500, unpaginated_retry=True),
    ),
    Row(
        "that full list counts as paginated",
        Listing(C0, "0", 500, unpaginated_retry=True),
        ListPage(ListResult([A, B], "9")),
        ReplaceStore([A, B], "9"),
        Replacing(Cursor(paginated=True), "9"),
    ),
    Row(
        "any other list error: back off and relist",
        Listing(C42, "42", 0),
        ListFailed(BOOM),
        Pause(Delay.BACKOFF, errors=(BOOM,)),
        NeedList(C42),
    ),
    Row(
        "401 on the list: reload credentials, back off, relist",
        Listing(C0, "0", 500),
        ListFailed(DENIED),
        Pause(Delay.BACKOFF, errors=(DENIED,), refresh_credentials=True),
        NeedList(C0),
    ),
    Row(
        "a list item without a name is left out and reported; the rest is stored",
        Listing(C0, "0", 500),
        ListPage(ListResult([A, {"metadata": {"namespace": "default"}}, B], "7")),
        ReplaceStore([A, B], "7", (like(InvalidObjectError),)),
        Replacing(C0, "7"),
    ),
    Row(
        "so is an item without metadata, or with a non-string name or RV",
        Listing(C0, "0", 500),
        ListPage(
            ListResult(
                [
                    {"kind": "ConfigMap"},
                    {"metadata": {"name": 7}},
                    {"metadata": {"name": "c", "resourceVersion": 9}},
                    A,
                ],
                "7",
            )
        ),
        ReplaceStore([A], "7", (like(InvalidObjectError),) * 3),
        Replacing(C0, "7"),
    ),
    Row(
        "a key listed twice: the later item is kept, the duplicate reported",
        Listing(C0, "0", 500),
        ListPage(ListResult([obj("a", "3"), B, obj("a", "5")], "7")),
        ReplaceStore([B, obj("a", "5")], "7", (like(InvalidObjectError),)),
        Replacing(C0, "7"),
    ),
    Row(
        "a relist answering an older RV than asked is stored and reported",
        Listing(C42, "42", 0),
        ListPage(ListResult([A], "40")),
        ReplaceStore([A], "40", (like(ResourceVersionError),)),
        Replacing(C42, "40"),
    ),
    Row(
        "... but a list at RV '' may answer any RV (an etcd restored from a backup)",
        Listing(Cursor("42", unavailable=True), "", 0),
        ListPage(ListResult([A], "40")),
        ReplaceStore([A], "40"),
        Replacing(Cursor("42"), "40"),
    ),
    Row(
        "the store replaced: watch from the list's RV",
        Replacing(Cursor("5"), "7"),
        Proceed(),
        OpenWatch(watch_options("7")),
        OpeningWatch(Cursor("7")),
    ),
    Row(
        "the store refused the replace: back off and relist, RV unchanged",
        Replacing(Cursor("5"), "7"),
        StoreFailed(STORE),
        Pause(Delay.BACKOFF, errors=(STORE,)),
        NeedList(Cursor("5")),
    ),
]

WATCH_ROWS = [
    Row(
        "a watch opened: read events",
        OpeningWatch(Cursor("7")),
        WatchOpened(),
        NextEvent(),
        Watching(Cursor("7")),
    ),
    Row(
        "a watch from RV 0 replays synthetic ADDED events",
        OpeningWatch(Cursor("0")),
        WatchOpened(),
        NextEvent(),
        Watching(Cursor("0"), replaying=True),
    ),
    Row(
        "a watch from RV '' too",
        OpeningWatch(C0),
        WatchOpened(),
        NextEvent(),
        Watching(C0, replaying=True),
    ),
    Row(
        "ADDED is applied and advances the RV",
        Watching(Cursor("7")),
        ev("ADDED", "8"),
        Apply(WatchEventType.ADDED),
        Watching(Cursor("8"), delivered=True),
    ),
    Row(
        "MODIFIED",
        Watching(Cursor("7")),
        ev("MODIFIED", "9"),
        Apply(WatchEventType.MODIFIED),
        Watching(Cursor("9"), delivered=True),
    ),
    Row(
        "DELETED (the loop deletes the event's object: the last state, with its RV)",
        Watching(Cursor("7")),
        ev("DELETED", "10"),
        Apply(WatchEventType.DELETED),
        Watching(Cursor("10"), delivered=True),
    ),
    Row(
        "a bookmark only advances the RV (the store does nothing)",
        Watching(Cursor("7")),
        ev("BOOKMARK", "11"),
        Apply(WatchEventType.BOOKMARK),
        Watching(Cursor("11"), delivered=True),
    ),
    Row(
        "an event without an RV keeps the RV",
        Watching(Cursor("7")),
        ev("MODIFIED", None),
        Apply(WatchEventType.MODIFIED),
        Watching(Cursor("7"), delivered=True),
    ),
    Row(
        "a synthetic ADDED from RV 0 does not advance the RV",
        Watching(Cursor("0"), replaying=True),
        ev("ADDED", "8"),
        Apply(WatchEventType.ADDED),
        Watching(Cursor("0"), replaying=True, delivered=True),
    ),
    Row(
        "the first other event ends the replay and advances the RV",
        Watching(Cursor("0"), replaying=True, delivered=True),
        ev("MODIFIED", "9"),
        Apply(WatchEventType.MODIFIED),
        Watching(Cursor("9"), delivered=True),
    ),
    Row(
        "an unknown event type is skipped (not counted as delivered)",
        Watching(Cursor("7")),
        ev("SURPRISE", "9"),
        Skip("SURPRISE"),
        Watching(Cursor("7")),
    ),
    Row(
        "a malformed line ends the watch: back off, relist from the last good RV",
        WATCHING_42,
        Malformed(MALFORMED),
        Pause(Delay.BACKOFF, RestartCause.MALFORMED, (MALFORMED,)),
        NeedList(C42),
    ),
    Row(
        "an event going back to an older RV ends the watch the same way (not applied)",
        WATCHING_42,
        ev("MODIFIED", "41"),
        Pause(Delay.BACKOFF, RestartCause.BACKWARDS, (like(ResourceVersionError),)),
        NeedList(C42),
    ),
    Row(
        "... compared as numbers (9 is older than 10)",
        Watching(Cursor("10")),
        ev("MODIFIED", "9"),
        Pause(Delay.BACKOFF, RestartCause.BACKWARDS, (like(ResourceVersionError),)),
        NeedList(Cursor("10")),
    ),
    Row(
        "... and 10 is newer than 9",
        Watching(Cursor("9")),
        ev("MODIFIED", "10"),
        Apply(WatchEventType.MODIFIED),
        Watching(Cursor("10"), delivered=True),
    ),
    Row(
        "opaque (non-decimal) RVs are never compared",
        Watching(Cursor("b")),
        ev("MODIFIED", "a"),
        Apply(WatchEventType.MODIFIED),
        Watching(Cursor("a"), delivered=True),
    ),
    Row(
        "a bookmark going back is caught too",
        WATCHING_42,
        ev("BOOKMARK", "40"),
        Pause(Delay.BACKOFF, RestartCause.BACKWARDS, (like(ResourceVersionError),)),
        NeedList(C42),
    ),
    Row(
        "synthetic ADDED events of a replay have any RV",
        Watching(Cursor("0"), replaying=True),
        ev("ADDED", "3"),
        Apply(WatchEventType.ADDED),
        Watching(Cursor("0"), replaying=True, delivered=True),
    ),
    Row(
        "an event whose RV is not a string is rejected; the RV stays, the watch goes on",
        Watching(Cursor("7")),
        WatchEvent("MODIFIED", {"metadata": {"name": "a", "resourceVersion": 8}}),
        Reject(like(InvalidObjectError)),
        Watching(Cursor("7"), delivered=True),
    ),
    Row(
        "so is an object without metadata",
        Watching(Cursor("7")),
        WatchEvent("ADDED", {"kind": "ConfigMap"}),
        Reject(like(InvalidObjectError)),
        Watching(Cursor("7"), delivered=True),
    ),
    Row(
        "... or without a name",
        Watching(Cursor("7")),
        WatchEvent("DELETED", {"metadata": {"resourceVersion": "8"}}),
        Reject(like(InvalidObjectError)),
        Watching(Cursor("7"), delivered=True),
    ),
    Row(
        "... and a bookmark without an RV",
        Watching(Cursor("7")),
        WatchEvent("BOOKMARK", {"metadata": {}}),
        Reject(like(InvalidObjectError)),
        Watching(Cursor("7"), delivered=True),
    ),
    Row(
        "a clean end re-watches at once, no relist",
        WATCHING_42,
        WatchEnded(None, 300.0),
        Pause(Delay.NONE, RestartCause.TIMEOUT),
        NeedWatch(C42),
    ),
    Row(
        "a clean end within 1 s without events is a very short watch: back off, relist",
        Watching(C42),
        WatchEnded(None, 0.999),
        Pause(Delay.BACKOFF, RestartCause.VERY_SHORT, (Like(VeryShortWatchError),)),
        NeedList(C42),
    ),
    Row(
        "a clean end after 1 s without events is fine",
        Watching(C42),
        WatchEnded(None, 1.0),
        Pause(Delay.NONE, RestartCause.TIMEOUT),
        NeedWatch(C42),
    ),
    Row(
        "a broken connection after events resumes at once from the last RV",
        WATCHING_42,
        WatchEnded(BROKEN, 0.2),
        Pause(Delay.NONE, RestartCause.DISCONNECT, (BROKEN,)),
        NeedWatch(C42),
    ),
    Row(
        "a connection broken within 1 s without events is a very short watch",
        Watching(C42),
        WatchEnded(BROKEN, 0.2),
        Pause(Delay.BACKOFF, RestartCause.VERY_SHORT, (Like(VeryShortWatchError),)),
        NeedList(C42),
    ),
    Row(
        "an idle watch backs off and resumes without a relist",
        WATCHING_42,
        WatchEnded(IDLE, 120.0),
        Pause(Delay.BACKOFF, RestartCause.IDLE, (IDLE,)),
        NeedWatch(C42),
    ),
    Row(
        "410 on the watch relists at the last RV (not at RV '')",
        WATCHING_42,
        WatchEnded(GONE, 5.0),
        Pause(Delay.BACKOFF, RestartCause.EXPIRED, (GONE,)),
        NeedList(C42),
    ),
    Row(
        "an ERROR event backs off and relists",
        WATCHING_42,
        WatchEnded(BOOM, 5.0),
        Pause(Delay.BACKOFF, RestartCause.ERROR, (BOOM,)),
        NeedList(C42),
    ),
    Row(
        "429 mid-stream waits Retry-After and re-watches",
        WATCHING_42,
        WatchEnded(THROTTLED, 5.0),
        Pause(Delay.RETRY_AFTER, RestartCause.TOO_MANY_REQUESTS, (THROTTLED,), seconds=3.0),
        NeedWatch(C42),
    ),
    Row(
        "401 mid-stream reloads credentials, backs off, re-watches",
        WATCHING_42,
        WatchEnded(DENIED, 5.0),
        Pause(Delay.BACKOFF, RestartCause.UNAUTHORIZED, (DENIED,), refresh_credentials=True),
        NeedWatch(C42),
    ),
    Row(
        "a refused watch backs off and re-watches, no relist",
        OpeningWatch(C42),
        WatchOpenFailed(REFUSED),
        Pause(Delay.BACKOFF, RestartCause.REFUSED, (REFUSED,)),
        NeedWatch(C42),
    ),
    Row(
        "429 on watch start waits Retry-After",
        OpeningWatch(C42),
        WatchOpenFailed(THROTTLED),
        Pause(Delay.RETRY_AFTER, RestartCause.TOO_MANY_REQUESTS, (THROTTLED,), seconds=3.0),
        NeedWatch(C42),
    ),
    Row(
        "Retry-After 0 is raised to 0.5 s (no hot loop)",
        OpeningWatch(C42),
        WatchOpenFailed(zero := throttled(0.0)),
        Pause(Delay.RETRY_AFTER, RestartCause.TOO_MANY_REQUESTS, (zero,), seconds=0.5),
        NeedWatch(C42),
    ),
    Row(
        "Retry-After over a minute is capped at 60 s",
        OpeningWatch(C42),
        WatchOpenFailed(long := throttled(600.0)),
        Pause(Delay.RETRY_AFTER, RestartCause.TOO_MANY_REQUESTS, (long,), seconds=60.0),
        NeedWatch(C42),
    ),
    Row(
        "429 without Retry-After backs off",
        OpeningWatch(C42),
        WatchOpenFailed(bare := throttled(None)),
        Pause(Delay.BACKOFF, RestartCause.TOO_MANY_REQUESTS, (bare,)),
        NeedWatch(C42),
    ),
    Row(
        "401 on watch start reloads credentials and retries, no relist",
        OpeningWatch(C42),
        WatchOpenFailed(DENIED),
        Pause(Delay.BACKOFF, RestartCause.UNAUTHORIZED, (DENIED,), refresh_credentials=True),
        NeedWatch(C42),
    ),
    Row(
        "any other watch-start error backs off and relists",
        OpeningWatch(C42),
        WatchOpenFailed(forbidden := ForbiddenError(code=403, reason="Forbidden")),
        Pause(Delay.BACKOFF, errors=(forbidden,)),
        NeedList(C42),
    ),
    Row(
        "after the pause, the next watch from the last RV",
        NeedWatch(C42),
        Proceed(),
        OpenWatch(watch_options("42")),
        OpeningWatch(C42),
    ),
    Row(
        "a failed resync while watching relists",
        WATCHING_42,
        StoreFailed(STORE),
        Pause(Delay.BACKOFF, errors=(STORE,)),
        NeedList(C42),
    ),
    Row(
        "... or while waiting to re-watch",
        NeedWatch(C42),
        StoreFailed(STORE),
        Pause(Delay.BACKOFF, errors=(STORE,)),
        NeedList(C42),
    ),
]

STREAMING_ROWS = [
    Row(
        "the first sync is a streaming list at RV '', NotOlderThan",
        NeedList(),
        Proceed(),
        StreamList(streaming_options("")),
        StreamingList(C0),
        streaming=True,
    ),
    Row(
        "a streaming relist resumes at the last RV",
        NeedList(C42),
        Proceed(),
        StreamList(streaming_options("42")),
        StreamingList(C42),
        streaming=True,
    ),
    Row(
        "... at RV '' while the last one is unavailable",
        NeedList(Cursor("42", unavailable=True)),
        Proceed(),
        StreamList(streaming_options("")),
        StreamingList(Cursor("42", unavailable=True)),
        streaming=True,
    ),
    Row(
        "synced at the bookmark's RV: the same stream goes on as the watch",
        StreamingList(C0),
        StreamingListSynced("9"),
        NextEvent(),
        Watching(Cursor("9"), delivered=True),
        streaming=True,
    ),
    Row(
        "a malformed line during the streaming list: a LIST instead",
        StreamingList(C42),
        StreamingListFailed(MALFORMED),
        RequestList(ListOptions(resource_version="42"), ListReason.STREAMING_FALLBACK, MALFORMED),
        Listing(C42, "42", 0),
        streaming=True,
    ),
    Row(
        "a failed streaming list falls back to a LIST at once",
        StreamingList(C0),
        StreamingListFailed(BAD),
        RequestList(
            ListOptions(resource_version="0", limit=500), ListReason.STREAMING_FALLBACK, BAD
        ),
        Listing(C0, "0", 500),
        streaming=True,
    ),
    Row(
        "a late bookmark too",
        StreamingList(C42),
        StreamingListFailed(late := TimeoutError("no bookmark")),
        RequestList(ListOptions(resource_version="42"), ListReason.STREAMING_FALLBACK, late),
        Listing(C42, "42", 0),
        streaming=True,
    ),
    Row(
        "410 on the streaming list: the fallback LIST is at RV ''",
        StreamingList(C42),
        StreamingListFailed(GONE),
        RequestList(
            ListOptions(resource_version="", limit=500), ListReason.STREAMING_FALLBACK, GONE
        ),
        Listing(Cursor("42", unavailable=True), "", 500),
        streaming=True,
    ),
]


@pytest.mark.parametrize("row", LIST_ROWS + WATCH_ROWS + STREAMING_ROWS, ids=lambda r: r.id)
def test_transition(row: Row) -> None:
    """Each row: the action and the new state for one input in one state."""
    action, new_state = step(row.state, row.received, page_size=500, streaming_list=row.streaming)
    assert row.action == action
    assert new_state == row.new_state


@pytest.mark.parametrize(
    ("state", "received"),
    [
        (NeedList(), WatchOpened()),
        (Watching(C42), Proceed()),
        (Listing(C0, "0", 500), ev("ADDED")),
        (StreamingList(C0), StoreFailed(STORE)),
    ],
)
def test_an_unexpected_input_is_a_bug(state: State, received: Input) -> None:
    """An input a state does not expect raises RuntimeError (the loop is wrong)."""
    with pytest.raises(RuntimeError):
        step(state, received)


def test_a_whole_cycle_through_list_watch() -> None:
    """ListWatch keeps the state: list, replace, watch, events, a clean end, a re-watch."""
    machine = ListWatch(page_size=2, streaming_list=False)
    steps: list[Any] = [
        machine.feed(Proceed()),
        machine.feed(ListPage(ListResult([A], "7"))),
        machine.feed(Proceed()),
        machine.feed(WatchOpened()),
        machine.feed(ev("MODIFIED", "8")),
        machine.feed(WatchEnded(None, 300)),
    ]
    assert machine.watching
    steps.append(machine.feed(Proceed()))
    assert steps == [
        RequestList(ListOptions(resource_version="0", limit=2)),
        ReplaceStore([A], "7"),
        OpenWatch(watch_options("7")),
        NextEvent(),
        Apply(WatchEventType.MODIFIED),
        Pause(Delay.NONE, RestartCause.TIMEOUT),
        OpenWatch(watch_options("8")),
    ]
    machine.restart()
    assert machine.state == NeedList(Cursor("8")) and not machine.watching
