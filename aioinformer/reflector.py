"""The Reflector: client-go's list/watch state machine, feeding a store (usually a DeltaFIFO).

One ``ListAndWatch`` lists, replaces the store's content, then watches from the list's resource
version until something goes wrong; between two ``ListAndWatch`` attempts there is always one
backoff delay. Resource versions follow client-go exactly:

* the first list asks for RV ``"0"`` (served from the API server's watch cache, paginated at
  ``page_size``); a relist asks for the last RV seen, without pagination (so the watch cache
  serves it and etcd is spared);
* a list that fails with 410 Expired or "too large resource version" is retried at once with
  RV ``""`` (a consistent read, paginated); a *watch* that ends with 410 does not do that — the
  relist at the last RV already returns data at least that fresh;
* watches ask for bookmarks and a ``timeoutSeconds`` drawn from
  ``[min_watch_timeout, 2·min_watch_timeout)``; a clean end re-watches from the last RV with no
  relist; bookmarks only advance the RV; a watch started at ``""``/``"0"`` does not advance the
  RV during its synthetic ADDED replay.

Errors while watching: 429 waits (``Retry-After`` within [0.5, 60] s, else backoff) and
re-watches; a refused connection backs off and re-watches; 401 reloads credentials and
retries; a watch silent for ``idle_timeout`` (no bytes, not even bookmarks) is abandoned and
resumed from the last RV; a watch that ends within a second without any event counts as an
error; every other error, and every ``ERROR`` event, backs off and relists. Malformed lines and
unknown event types are logged, counted and skipped — the watch goes on; since a malformed line
may have been a change the store then missed, the next re-watch after one is a relist (at the
last RV, cheap) instead.

Optionally (``streaming_list=True``) the list is a streaming list — a watch with
``sendInitialEvents=true`` whose initial ADDED events end with a bookmark annotated
``k8s.io/initial-events-end`` — collected into a temporary dict and handed to the store in one
``replace`` at the bookmark's RV, after which the same stream goes on as the watch. Unlike
client-go, a bookmark that does not arrive within ``streaming_list_deadline`` makes that attempt
fall back to a LIST instead of waiting forever.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import anyio
from anyio import CancelScope

from .backoff import Backoff
from .errors import (
    ConnectionRefused,
    ExpiredError,
    InformerError,
    KeyFuncError,
    LifecycleError,
    MalformedWatchEventError,
    TooLargeResourceVersionError,
    TooManyRequestsError,
    TransportError,
    UnauthorizedError,
    VeryShortWatchError,
    WatchIdleTimeoutError,
)
from .listwatch import ListerWatcher, ListOptions, WatchEventType, WatchStream
from .objects import KubeObject, meta_namespace_key

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "INITIAL_EVENTS_END",
    "Reflector",
    "ReflectorStatistics",
    "ReflectorStore",
    "WatchErrorHandler",
]

logger = logging.getLogger(__name__)

#: Page size of paginated lists (client-go's pager default).
DEFAULT_PAGE_SIZE = 500
#: The annotation of the bookmark that ends a streaming list's initial events.
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_VERY_SHORT_WATCH = 1.0
# Bounds on a 429's Retry-After (seconds).
_MIN_RETRY_AFTER = 0.5
_MAX_RETRY_AFTER = 60.0


class _OpenWatch(NamedTuple):
    """A watch already open (a streaming list's), to go on with."""

    stream: WatchStream
    start: float
    seen: int


class ReflectorStore(Protocol):
    """What a reflector writes to; :class:`~aioinformer.delta_fifo.DeltaFIFO` implements it."""

    async def add(self, obj: KubeObject) -> None: ...

    async def update(self, obj: KubeObject) -> None: ...

    async def delete(self, obj: Any) -> None: ...

    async def replace(self, objs: Iterable[KubeObject], resource_version: str) -> None: ...

    async def resync(self) -> None: ...


class _CredentialRefreshing(Protocol):
    async def refresh_credentials(self) -> None: ...


#: Called with the reflector and the error for every list or watch error (before the backoff).
WatchErrorHandler = Callable[["Reflector", BaseException], object]


@dataclass(slots=True)
class ReflectorStatistics:
    """Counters of one reflector (read them any time; they only grow)."""

    #: Successful lists (the first one included).
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
    #: Watches that ended, by cause: ``timeout`` (clean end), ``disconnect``, ``idle``,
    #: ``too_many_requests``, ``refused``, ``unauthorized``, ``expired``, ``error``,
    #: ``very_short``.
    watch_restarts: dict[str, int] = field(default_factory=dict)
    #: Watch events applied to the store, by type (bookmarks included).
    events: dict[str, int] = field(default_factory=dict)
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


class Reflector:
    """Keeps a store in step with one resource on the API server.

    :param lister_watcher: where objects come from.
    :param store: where they go (a :class:`~aioinformer.delta_fifo.DeltaFIFO`, usually).
    :param name: used in logs. Default ``"reflector"``.
    :param resync_period: seconds between resync checks while watching; 0 (the default)
        disables resync.
    :param should_resync: asked at every resync tick; ``store.resync()`` runs only when it
        returns True. None (the default) means always.
    :param min_watch_timeout: each watch asks the server to end it after a random time in
        ``[min_watch_timeout, 2·min_watch_timeout)`` seconds. Default 300. (client-go ignores
        values under 300; here any positive value is honoured, which tests use.)
    :param idle_timeout: abandon and resume a watch that delivered no bytes at all for this many
        seconds. Default 120 (API servers send a bookmark about every minute). None disables it.
    :param backoff: delays between attempts. Default :class:`~aioinformer.backoff.Backoff()`
        (0.8 s doubling to 30 s, jittered, reset after 2 min).
    :param watch_error_handler: called with ``(reflector, error)`` for every error. Its own
        exceptions are logged and ignored. Default None (errors are logged).
    :param page_size: page size of paginated lists. Default 500.
    :param streaming_list: sync with a streaming list (a watch with ``sendInitialEvents=true``:
        the current state as ADDED events, then a bookmark annotated
        ``k8s.io/initial-events-end``; the same stream then goes on as the watch) instead of a
        LIST; it spares the API server the memory of large lists (Kubernetes 1.32+). On any
        error — or when the bookmark has not arrived within ``streaming_list_deadline``, where
        client-go would wait forever — that attempt falls back to a LIST. Default False.
    :param streaming_list_deadline: seconds to wait for the initial-events-end bookmark.
        Default 60.
    :param clock: monotonic seconds. Default :func:`time.monotonic`.
    :param rand: uniform ``[0, 1)`` for watch timeouts. Default :func:`random.random`.
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        store: ReflectorStore,
        *,
        name: str = "reflector",
        resync_period: float = 0.0,
        should_resync: Callable[[], bool] | None = None,
        min_watch_timeout: float = 300.0,
        idle_timeout: float | None = 120.0,
        backoff: Backoff | None = None,
        watch_error_handler: WatchErrorHandler | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        streaming_list: bool = False,
        streaming_list_deadline: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
    ) -> None:
        if min_watch_timeout <= 0:
            raise ValueError("min_watch_timeout must be positive")
        self.name = name
        self._lw = lister_watcher
        self._store = store
        self._resync_period = max(0.0, resync_period)
        self._should_resync = should_resync
        self._min_watch_timeout = min_watch_timeout
        self._idle_timeout = idle_timeout
        self._backoff = backoff if backoff is not None else Backoff()
        self._watch_error_handler = watch_error_handler
        self._page_size = page_size
        self._streaming_list = streaming_list
        self._streaming_list_deadline = streaming_list_deadline
        self._clock = clock
        self._rand = rand
        self._last_sync_rv = ""
        self._rv_unavailable = False
        self._paginated_result = False
        # Undecodable events skipped during the current ListAndWatch (their objects may be
        # stale in the store): the watch goes on, and the next re-watch becomes a relist.
        self._skipped_events = 0
        self._running = False
        self.stats = ReflectorStatistics()

    def __repr__(self) -> str:
        return f"<Reflector {self.name} rv={self._last_sync_rv!r}>"

    @property
    def last_sync_resource_version(self) -> str:
        """The resource version of the last list, event or bookmark seen (``""`` before)."""
        return self._last_sync_rv

    @property
    def resync_period(self) -> float:
        """Seconds between resync checks (0: none)."""
        return self._resync_period

    @resync_period.setter
    def resync_period(self, value: float) -> None:
        self._resync_period = max(0.0, value)

    def set_watch_error_handler(self, handler: WatchErrorHandler | None) -> None:
        """Replace the watch-error handler."""
        self._watch_error_handler = handler

    async def run(self) -> None:
        """List and watch until cancelled; never returns otherwise.

        :raises LifecycleError: if this reflector is already running.
        """
        if self._running:
            raise LifecycleError(f"reflector {self.name} is already running")
        self._running = True
        try:
            while True:
                try:
                    await self._list_and_watch()
                except Exception as exc:
                    self._report(exc)
                    if isinstance(exc, UnauthorizedError):
                        await self._refresh_credentials()
                await anyio.sleep(self._backoff.next_delay())
        finally:
            self._running = False

    # -- list ------------------------------------------------------------------------------

    def _relist_resource_version(self) -> str:
        if self._rv_unavailable:
            return ""
        if self._last_sync_rv == "":
            return "0"
        return self._last_sync_rv

    def _page_size_for(self, resource_version: str) -> int:
        if self._paginated_result:
            return self._page_size
        if resource_version not in ("", "0"):
            # Unpaginated, so the watch cache serves it (no thundering herd on etcd).
            return 0
        return self._page_size

    async def _list(self) -> None:
        resource_version = self._relist_resource_version()
        try:
            items, list_rv, paginated = await self._list_pages(resource_version)
        except (ExpiredError, TooLargeResourceVersionError) as exc:
            logger.info(
                "%s: list at RV %r failed (%s); relisting at RV ''",
                self.name,
                resource_version,
                type(exc).__name__,
            )
            self._rv_unavailable = True
            resource_version = self._relist_resource_version()
            items, list_rv, paginated = await self._list_pages(resource_version)
        if resource_version == "0" and paginated:
            self._paginated_result = True
        self._rv_unavailable = False
        await self._store.replace(items, list_rv)
        self._skipped_events = 0
        self._last_sync_rv = list_rv
        self._count_list(len(items))
        logger.debug("%s: listed %d objects at RV %s", self.name, len(items), list_rv)

    def _count_list(self, items: int) -> None:
        self.stats.lists += 1
        if self.stats.lists > 1:
            self.stats.relists += 1
        self.stats.items_listed += items

    async def _list_pages(self, resource_version: str) -> tuple[list[KubeObject], str, bool]:
        """A whole list, page by page (client-go's pager); returns items, RV, paginated."""
        page_size = self._page_size_for(resource_version)
        first = ListOptions(resource_version=resource_version, limit=page_size or None)
        result = await self._lw.list(first)
        if not result.continue_token:
            return result.items, result.resource_version, False
        items = list(result.items)
        list_rv = result.resource_version
        token: str | None = result.continue_token
        while token:
            try:
                page = await self._lw.list(ListOptions(limit=page_size, continue_token=token))
            except ExpiredError:
                # The list's snapshot fell out of history: one unpaginated list instead.
                full = await self._lw.list(ListOptions(resource_version=resource_version))
                return full.items, full.resource_version, True
            items.extend(page.items)
            token = page.continue_token
        return items, list_rv, True

    # -- watch -----------------------------------------------------------------------------

    async def _list_and_watch(self) -> None:
        initial = await self._streaming_sync() if self._streaming_list else None
        if initial is None:
            await self._list()
        failure: list[Exception] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch_task, tg.cancel_scope, failure, initial)
            if self._resync_period > 0:
                tg.start_soon(self._resync_task, tg.cancel_scope, failure)
        if failure:
            raise failure[0]

    async def _resync_task(self, scope: CancelScope, failure: list[Exception]) -> None:
        while True:
            await anyio.sleep(self._resync_period)
            if self._should_resync is not None and not self._should_resync():
                continue
            try:
                await self._store.resync()
            except Exception as exc:
                failure.append(exc)
                scope.cancel()
                return

    async def _watch_task(
        self, scope: CancelScope, failure: list[Exception], initial: _OpenWatch | None
    ) -> None:
        try:
            await self._watch_loop(initial)
        except Exception as exc:
            failure.append(exc)
        scope.cancel()

    # -- streaming list --------------------------------------------------------------------

    async def _streaming_sync(self) -> _OpenWatch | None:
        """Sync the store from a streaming list; returns the open stream to go on watching
        with, or None when the caller must fall back to a LIST."""
        options = ListOptions(
            resource_version="" if self._rv_unavailable else self._last_sync_rv,
            resource_version_match="NotOlderThan",
            send_initial_events=True,
            allow_watch_bookmarks=True,
            timeout_seconds=self._watch_options().timeout_seconds,
        )
        start = self._clock()
        self._skipped_events = 0
        try:
            stream = await self._lw.watch(options, idle_timeout=self._idle_timeout)
        except Exception as exc:
            self._streaming_failed(exc)
            return None
        try:
            objects, resource_version = await self._initial_events(stream)
            await self._store.replace(objects, resource_version)
        except Exception as exc:
            with anyio.CancelScope(shield=True):
                await stream.aclose()
            self._streaming_failed(exc)
            return None
        except BaseException:
            with anyio.CancelScope(shield=True):
                await stream.aclose()
            raise
        self._last_sync_rv = resource_version
        self._rv_unavailable = False
        self._count_list(len(objects))
        self.stats.watches += 1
        logger.debug("%s: streamed %d objects at RV %s", self.name, len(objects), resource_version)
        return _OpenWatch(stream, start, len(objects) + 1)

    async def _initial_events(self, stream: WatchStream) -> tuple[list[KubeObject], str]:
        """Collect a streaming list's objects until the initial-events-end bookmark."""
        objects: dict[str, KubeObject] = {}
        with anyio.fail_after(self._streaming_list_deadline):
            while True:
                try:
                    event_type, obj = await stream.__anext__()
                except StopAsyncIteration:
                    raise TransportError(
                        "the streaming list ended before its initial-events-end bookmark"
                    ) from None
                except MalformedWatchEventError as exc:
                    self.stats.malformed_events += 1
                    self._skipped_events += 1
                    logger.warning("%s: skipping malformed watch event: %s", self.name, exc.reason)
                    continue
                if event_type == WatchEventType.BOOKMARK:
                    metadata = obj.get("metadata") or {}
                    annotations = metadata.get("annotations") or {}
                    if annotations.get(INITIAL_EVENTS_END) == "true":
                        return list(objects.values()), str(metadata.get("resourceVersion") or "")
                    continue
                try:
                    key = meta_namespace_key(obj)
                except KeyFuncError:
                    self.stats.store_errors += 1
                    continue
                if event_type == WatchEventType.DELETED:
                    objects.pop(key, None)
                elif event_type in (WatchEventType.ADDED, WatchEventType.MODIFIED):
                    objects[key] = obj
                else:
                    self.stats.unknown_events += 1

    def _streaming_failed(self, exc: Exception) -> None:
        if isinstance(exc, TimeoutError) and not isinstance(exc, InformerError):
            exc = TimeoutError(
                f"no {INITIAL_EVENTS_END} bookmark within {self._streaming_list_deadline} s"
            )
        if isinstance(exc, ExpiredError | TooLargeResourceVersionError):
            self._rv_unavailable = True
        self.stats.streaming_list_fallbacks += 1
        self._report(exc)
        logger.info("%s: streaming list failed; falling back to a LIST", self.name)

    def _watch_options(self) -> ListOptions:
        timeout = int(self._min_watch_timeout * (self._rand() + 1.0))
        return ListOptions(
            resource_version=self._last_sync_rv,
            timeout_seconds=max(1, timeout),
            allow_watch_bookmarks=True,
        )

    async def _watch_loop(self, initial: _OpenWatch | None = None) -> None:
        """Watch and re-watch; returns never, raises when a relist is needed."""
        while True:
            if initial is not None:
                # Go on with the streaming list's stream.
                stream, start, seen = initial
                started_at, initial = self._last_sync_rv, None
            else:
                start, seen = self._clock(), 0
                options = self._watch_options()
                started_at = options.resource_version or ""
                try:
                    stream = await self._lw.watch(options, idle_timeout=self._idle_timeout)
                except (ConnectionRefused, TooManyRequestsError, UnauthorizedError) as exc:
                    await self._retry_watch(exc)
                    continue
                self.stats.watches += 1
            try:
                await self._consume(stream, start, started_at, seen)
                ended: Exception | None = None
            except Exception as exc:
                ended = exc
            finally:
                # Closed before any wait below: a stalled or throttled stream is not kept open.
                with anyio.CancelScope(shield=True):
                    await stream.aclose()
            await self._watch_ended(ended)

    async def _watch_ended(self, ended: Exception | None) -> None:
        """After a watch: wait and return to re-watch, or raise to relist."""
        if isinstance(ended, WatchIdleTimeoutError):
            self._restart("idle")
            self._report(ended)
            await anyio.sleep(self._backoff.next_delay())
        elif isinstance(ended, TooManyRequestsError | UnauthorizedError):
            await self._retry_watch(ended)
        elif isinstance(ended, TransportError):
            # The connection broke: like client-go, resume from the last RV at once.
            self._restart("disconnect")
            self._report(ended, level=logging.DEBUG)
        elif ended is not None:
            cause = (
                "expired"
                if isinstance(ended, ExpiredError)
                else "very_short"
                if isinstance(ended, VeryShortWatchError)
                else "error"
            )
            self._restart(cause)
            raise ended
        else:
            self._restart("timeout")
        if self._skipped_events:
            # Events were lost to malformed lines: a relist at the last RV repairs the cache.
            skipped, self._skipped_events = self._skipped_events, 0
            raise MalformedWatchEventError(f"{skipped} undecodable watch events; relisting")

    async def _retry_watch(self, exc: Exception) -> None:
        """Wait before re-watching (no relist) after a refused, throttled or unauthorized watch."""
        self._report(exc)
        delay = self._backoff.next_delay()
        if isinstance(exc, TooManyRequestsError):
            self._restart("too_many_requests")
            if exc.retry_after is not None:
                # Honour the server, within sane bounds (0 would be a hot loop).
                delay = min(max(exc.retry_after, _MIN_RETRY_AFTER), _MAX_RETRY_AFTER)
        elif isinstance(exc, UnauthorizedError):
            self._restart("unauthorized")
            await self._refresh_credentials()
        else:
            self._restart("refused")
        await anyio.sleep(delay)

    async def _refresh_credentials(self) -> None:
        refresh = getattr(self._lw, "refresh_credentials", None)
        if refresh is None:
            return
        try:
            await refresh()
        except Exception as exc:
            logger.warning("%s: reloading credentials failed: %s", self.name, type(exc).__name__)

    async def _consume(
        self, stream: WatchStream, start: float, started_at: str, seen: int = 0
    ) -> None:
        """Apply a watch's events to the store until it ends; raises VeryShortWatchError.

        ``seen`` counts the events the stream already delivered (a streaming list's).
        """
        store = self._store
        stats = self.stats
        # A watch from "" or "0" starts with synthetic ADDED events in no RV order.
        propagate = started_at not in ("", "0")
        count = seen
        try:
            while True:
                try:
                    event = await stream.__anext__()
                except StopAsyncIteration:
                    break
                except MalformedWatchEventError as exc:
                    stats.malformed_events += 1
                    self._skipped_events += 1
                    logger.warning("%s: skipping malformed watch event: %s", self.name, exc.reason)
                    continue
                event_type, obj = event
                try:
                    if event_type == WatchEventType.ADDED:
                        await store.add(obj)
                    elif event_type == WatchEventType.MODIFIED:
                        await store.update(obj)
                    elif event_type == WatchEventType.DELETED:
                        await store.delete(obj)
                    elif event_type != WatchEventType.BOOKMARK:
                        stats.unknown_events += 1
                        logger.warning(
                            "%s: skipping watch event of unknown type %r", self.name, event_type
                        )
                        continue
                except Exception as exc:
                    stats.store_errors += 1
                    logger.warning(
                        "%s: store refused a %s event: %s: %s",
                        self.name,
                        event_type,
                        type(exc).__name__,
                        exc,
                    )
                count += 1
                key = str(event_type)
                stats.events[key] = stats.events.get(key, 0) + 1
                if not propagate and event_type != WatchEventType.ADDED:
                    propagate = True
                if propagate:
                    metadata = obj.get("metadata")
                    if isinstance(metadata, dict):
                        rv = metadata.get("resourceVersion")
                        if rv and isinstance(rv, str):
                            self._last_sync_rv = rv
        except TransportError:
            if count == 0 and self._clock() - start < _VERY_SHORT_WATCH:
                raise VeryShortWatchError(
                    f"watch of {self.name} broke in under 1 s without events"
                ) from None
            raise
        if count == 0 and self._clock() - start < _VERY_SHORT_WATCH:
            raise VeryShortWatchError(f"watch of {self.name} ended in under 1 s without events")

    # -- reporting -------------------------------------------------------------------------

    def _restart(self, cause: str) -> None:
        restarts = self.stats.watch_restarts
        restarts[cause] = restarts.get(cause, 0) + 1

    def _report(self, exc: BaseException, *, level: int | None = None) -> None:
        self.stats.errors += 1
        self.stats.last_error = f"{type(exc).__name__}: {exc}"
        if level is None:
            quiet = isinstance(exc, ExpiredError | WatchIdleTimeoutError)
            level = logging.INFO if quiet else logging.WARNING
        logger.log(level, "%s: list/watch error: %s: %s", self.name, type(exc).__name__, exc)
        handler = self._watch_error_handler
        if handler is not None:
            try:
                handler(self, exc)
            except Exception:
                logger.exception("%s: watch error handler failed", self.name)
