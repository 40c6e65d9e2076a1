"""The Reflector: keeps a store (usually a DeltaFIFO) in step with one resource.

It is a thin async loop around the synchronous machine of :mod:`._machine`, which holds every
resource-version rule: the loop performs each action the machine asks for (a list page, a
store replace, a watch, a streaming list, a pause) against the
:class:`~aioinformer.lowlevel.ListerWatcher`, the store and the clock, and feeds the outcome
back. It also owns what the machine leaves out: how long a backoff lasts (a
:class:`~aioinformer.lowlevel.Backoff` from the configured policy), the random watch timeouts,
the idle and streaming-list deadlines, the resync ticker (which runs while watching), the
counters and the watch-error handler.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

import anyio
import anyio.lowlevel
from anyio import CancelScope

from .._backoff import Backoff
from .._clock import SYSTEM_CLOCK, Clock
from .._config import WatchConfig
from .._listwatch import ListerWatcher, ListOptions, ListResult, WatchEvent, WatchStream
from .._objects import KubeObject
from .._wire._slices import WireDecoder, WireEvent, WirePage, takes_decoder
from ..errors import (
    InformerError,
    LifecycleError,
    MalformedWatchEventError,
    ResourceVersionError,
    ShardSelectorRejectedError,
    TransportError,
)
from ._batches import BatchWriter, WireStream, batch_reader, batch_writer, hand_off
from ._machine import ListWatch
from ._reports import Reporter
from ._states import RestartCause
from ._statistics import Counters, ReflectorStatistics
from ._steps import (
    Action,
    Delay,
    ListFailed,
    ListPage,
    ListReason,
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
from ._streaming import InitialEvents, collect

__all__ = ["Reflector", "ReflectorStore", "WatchErrorHandler"]


class ReflectorStore(Protocol):
    """What a reflector writes to; :class:`~aioinformer.lowlevel.DeltaFIFO` implements it.

    A store may also have ``async def apply(changes)`` (as the DeltaFIFO has): the reflector
    then hands it each batch of watch events in one call (see
    :meth:`~aioinformer.lowlevel.DeltaFIFO.apply`) instead of one ``add``/``update``/``delete``
    per event.
    """

    async def add(self, obj: KubeObject) -> None: ...

    async def update(self, obj: KubeObject) -> None: ...

    async def delete(self, obj: Any) -> None: ...

    async def replace(self, objs: Iterable[KubeObject], resource_version: str) -> None: ...

    async def resync(self) -> None: ...


class WatchErrorHandler(Protocol):
    """Called with the reflector and the error for every list or watch error (before the
    wait that follows it)."""

    def __call__(self, reflector: Reflector, error: BaseException, /) -> object: ...


logger = logging.getLogger(__name__)


class Reflector:
    """Lists and watches one resource into a store, following client-go's rules.

    :param lister_watcher: where objects come from.
    :param store: where they go (a :class:`~aioinformer.lowlevel.DeltaFIFO`, usually).
    :param config: page size, watch timeouts, streaming lists and backoff. Default
        :class:`~aioinformer.WatchConfig` ``()``.
    :param name: used in logs. Default ``"reflector"``.
    :param resync_period: seconds between resync checks while watching; 0 (the default)
        disables resync.
    :param should_resync: asked at every resync tick; ``store.resync()`` runs only when it
        returns True. None (the default) means always.
    :param watch_error_handler: called with ``(reflector, error)`` for every error. Its own
        exceptions are logged and ignored. Default None (errors are logged).
    :param clock: time for backoff waits, deadlines and the resync ticker. Default the system
        clock.
    :param rand: uniform ``[0, 1)`` for watch timeouts and backoff jitter. Default
        :func:`random.random`.
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        store: ReflectorStore,
        *,
        config: WatchConfig = WatchConfig(),
        name: str = "reflector",
        resync_period: float = 0.0,
        should_resync: Callable[[], bool] | None = None,
        watch_error_handler: WatchErrorHandler | None = None,
        clock: Clock = SYSTEM_CLOCK,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.name = name
        self._lw = lister_watcher
        self._store = store
        self._config = config
        self._resync_period = max(0.0, resync_period)
        self._should_resync = should_resync
        self._watch_error_handler = watch_error_handler
        self._clock = clock
        self._rand = rand
        self._backoff = Backoff(config.backoff, clock=clock, rand=rand)
        self._machine = ListWatch(page_size=config.page_size, streaming_list=config.streaming_list)
        self._counters = Counters()
        self._reporter = Reporter(name, self._counters, self._call_handler)
        self._running = False
        self._decoder: WireDecoder | None = None
        self._lw_decodes = False

    def __repr__(self) -> str:
        return f"<Reflector {self.name} rv={self.last_sync_resource_version!r}>"

    @property
    def config(self) -> WatchConfig:
        """The watch configuration."""
        return self._config

    @property
    def last_sync_resource_version(self) -> str:
        """The resource version of the last list, event or bookmark seen (``""`` before)."""
        return self._machine.cursor.resource_version

    @property
    def resync_period(self) -> float:
        """Seconds between resync checks (0: none); a change applies from the next watch."""
        return self._resync_period

    @resync_period.setter
    def resync_period(self, value: float) -> None:
        self._resync_period = max(0.0, value)

    def set_watch_error_handler(self, handler: WatchErrorHandler | None) -> None:
        """Replace the watch-error handler."""
        self._watch_error_handler = handler

    def statistics(self) -> ReflectorStatistics:
        """A snapshot of the counters."""
        return self._counters.snapshot()

    async def run(self) -> None:
        """List and watch until cancelled; never returns otherwise.

        :raises LifecycleError: if this reflector is already running.
        :raises ShardSelectorRejectedError: when the API server refuses the shard selector
            (retrying cannot help).
        """
        if self._running:
            raise LifecycleError(f"reflector {self.name} is already running")
        self._running = True
        try:
            self._machine.restart()
            action = self._machine.feed(Proceed())
            stream: WatchStream | None = None
            while True:
                if self._machine.watching:
                    action = await self._watch_phase(action, stream)
                    stream = None
                else:
                    action, stream = await self._sync(action)
        finally:
            self._running = False

    # -- filling the store -----------------------------------------------------------------

    async def _sync(self, action: Action) -> tuple[Action, WatchStream | None]:
        """One step towards a full store: a list page, a replace, a streaming list or the
        pause before a relist. Returns the next action (and a streaming list's stream)."""
        machine = self._machine
        if isinstance(action, RequestList):
            self._before_list(action)
            try:
                result = await self._list(action.options)
            except Exception as exc:
                self._stop_if_fatal(exc)
                return machine.feed(ListFailed(exc)), None
            return machine.feed(ListPage(result)), None
        if isinstance(action, ReplaceStore):
            try:
                refused = await self._replace(action.items, action.resource_version)
            except Exception as exc:
                return machine.feed(StoreFailed(exc)), None
            self._counters.listed(len(action.items))
            self._listed(action.problems, action.items, refused)
            logger.debug(
                "%s: listed %d objects at RV %s",
                self.name,
                len(action.items),
                action.resource_version,
            )
            return machine.feed(Proceed()), None
        if isinstance(action, StreamList):
            return await self._stream_list(action.options)
        if isinstance(action, Pause):
            await self._pause(action)
            return machine.feed(Proceed()), None
        raise RuntimeError(f"{self.name}: unexpected action {action!r} while listing")

    async def _replace(self, items: list[Any], rv: str) -> list[tuple[Any, Exception]]:
        """Replace the store's contents; the objects it refused (with a store that can skip
        them, like :class:`~aioinformer.lowlevel.DeltaFIFO`: one bad object does not fail
        the list)."""
        skipping = getattr(self._store, "replace_skipping", None)
        if skipping is None:
            await self._store.replace(items, rv)
            return []
        refused: list[tuple[Any, Exception]] = await skipping(items, rv)
        return refused

    def _listed(
        self,
        problems: tuple[InformerError, ...],
        items: list[KubeObject],
        refused: list[tuple[Any, Exception]],
    ) -> None:
        """Report what a stored list had wrong (see :class:`Reporter`)."""
        if problems or refused or self._counters.stale:
            self._reporter.listed(problems, items)
        for obj, exc in refused:
            self._reporter.refused(obj, exc, has_transform=self._has_transform)

    def _cache_refused(self, obj: Any, exc: Exception) -> None:
        """The cache refused ``obj`` after the store accepted it (an index function raised):
        report it like an object the store refused (hook, once-per-key log, stale keys)."""
        self._reporter.refused(obj, exc, has_transform=False)

    def _before_list(self, action: RequestList) -> None:
        after = action.after
        if action.reason is ListReason.RETRY_AT_EMPTY_RV:
            assert after is not None
            logger.info("%s: list failed (%s); relisting at RV ''", self.name, type(after).__name__)
        elif action.reason is ListReason.CONTINUE_EXPIRED:
            assert after is not None
            self._report(after)  # the next page's snapshot expired
            logger.debug("%s: listing again without pages", self.name)
        elif action.reason is ListReason.STREAMING_FALLBACK:
            assert after is not None
            self._counters.streaming_list_fallbacks += 1
            if isinstance(after, ResourceVersionError):
                self._reporter.version(after)
            else:
                self._report(after)
            logger.info("%s: streaming list failed; falling back to a LIST", self.name)

    async def _stream_list(self, options: ListOptions) -> tuple[Action, WatchStream | None]:
        machine = self._machine
        initial = InitialEvents()
        config = self._config
        try:
            stream = await self._open_watch(options)
            try:
                rv = await collect(
                    stream,
                    initial,
                    clock=self._clock,
                    deadline=config.streaming_list_deadline,
                )
                objects = initial.objects
                refused = await self._replace(objects, rv)
            except BaseException:
                await _close(stream)
                raise
        except Exception as exc:
            self._stop_if_fatal(exc)
            if isinstance(exc, MalformedWatchEventError):
                self._counters.malformed_events += 1
            return machine.feed(StreamingListFailed(exc)), None
        finally:
            self._counters.unknown_events += initial.unknown
        self._counters.listed(len(objects))
        self._counters.watches += 1
        self._listed(tuple(initial.invalid), objects, refused)
        logger.debug("%s: streamed %d objects at RV %s", self.name, len(objects), rv)
        return machine.feed(StreamingListSynced(rv)), stream

    # -- watching --------------------------------------------------------------------------

    async def _watch_phase(self, action: Action, stream: WatchStream | None) -> Action:
        """Watch and re-watch, with the resync ticker alongside, until a relist is needed;
        returns the pause before that relist."""
        if self._resync_period <= 0:
            return await self._watch(action, stream)
        failure: Exception | None = None
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._resync_ticker, self._resync_period)
                action = await self._watch(action, stream)
                tg.cancel_scope.cancel()
        except* _ResyncFailed as group:
            resync_failed = group.exceptions[0]
            assert isinstance(resync_failed, _ResyncFailed)
            failure = resync_failed.error
        if failure is None:
            return action
        if not self._machine.watching:  # the watch had just ended: that relist stands
            self._report(failure)
            return action
        return self._machine.feed(StoreFailed(failure))

    async def _resync_ticker(self, period: float) -> None:
        while True:
            await self._clock.sleep(period)
            if self._should_resync is None or self._should_resync():
                try:
                    await self._store.resync()
                except Exception as exc:
                    raise _ResyncFailed(exc) from exc

    async def _watch(self, action: Action, stream: WatchStream | None) -> Action:
        machine = self._machine
        started = self._clock.now()
        while machine.watching:
            if isinstance(action, NextEvent):
                assert stream is not None
                action = await self._consume(stream, started)
                stream = None
            elif isinstance(action, OpenWatch):
                started = self._clock.now()
                try:
                    stream = await self._open_watch(action.options)
                except Exception as exc:
                    self._stop_if_fatal(exc)
                    action = machine.feed(WatchOpenFailed(exc))
                    continue
                self._counters.watches += 1
                action = machine.feed(WatchOpened())
            elif isinstance(action, Pause):
                await self._pause(action)
                action = machine.feed(Proceed())
            else:
                raise RuntimeError(f"{self.name}: unexpected action {action!r} while watching")
        return action

    async def _consume(self, stream: WatchStream, started: float) -> Action:
        """Apply a watch's events to the store until it ends, or until the machine ends it
        (a malformed line, a resource version going back); then close it. Each batch the
        stream delivers goes to the store in one hand-off."""
        read, write = batch_reader(stream), batch_writer(self._store)
        ended: Exception | None = None
        try:
            while True:
                try:
                    batch = await read()
                except Exception as exc:
                    ended = exc
                    break
                if not batch:
                    break
                stop = await self._hand_off(batch, write)
                del batch
                if stop is not None:
                    return stop  # a relist from the last good RV follows
                # Let the informer and its consumers take this batch before the next is
                # decoded: objects in flight are what the garbage collector ends up scanning.
                await anyio.lowlevel.checkpoint()
        finally:
            # Closed before any wait: a stalled or throttled stream is not kept open.
            await _close(stream)
        return self._machine.feed(WatchEnded(ended, self._clock.now() - started))

    async def _hand_off(
        self, batch: list[WatchEvent | WireEvent | MalformedWatchEventError], write: BatchWriter
    ) -> Action | None:
        return await hand_off(
            batch,
            write,
            self._machine,
            self._counters,
            self._reporter,
            has_transform=self._has_transform,
        )

    @property
    def _has_transform(self) -> bool:
        return getattr(self._store, "transformer", None) is not None

    async def _list(self, options: ListOptions) -> ListResult | WirePage:
        """One page: carriers in wire form when the reflector carries bytes (split by the
        lister-watcher when it takes a decoder, else each decoded item encoded once)."""
        decoder = self._decoder
        if decoder is None:
            return await self._lw.list(options)
        if self._lw_decodes:
            lw: Any = self._lw
            page: WirePage = await lw.list(options, decoder=decoder)
            return page
        return decoder.page_from_result(await self._lw.list(options))

    async def _open_watch(self, options: ListOptions) -> WatchStream:
        """A watch with the configured timeouts; its events carry bytes when the reflector
        does (see :meth:`_list`)."""
        timed, idle = self._timed(options), self._config.idle_timeout
        decoder = self._decoder
        if decoder is None:
            return await self._lw.watch(timed, idle_timeout=idle)
        if self._lw_decodes:
            lw: Any = self._lw
            stream: WatchStream = await lw.watch(timed, idle_timeout=idle, decoder=decoder)
            return stream
        return cast(
            WatchStream, WireStream(await self._lw.watch(timed, idle_timeout=idle), decoder)
        )

    def _carry_bytes(self, decoder: WireDecoder) -> None:
        """Hand the store objects in wire form, decoded by ``decoder`` (the informer's path:
        its FIFO and cache take carriers). Without it, the store gets dicts."""
        self._decoder = decoder
        self._lw_decodes = takes_decoder(self._lw)

    def _timed(self, options: ListOptions) -> ListOptions:
        """The options with a ``timeoutSeconds`` in ``[min, 2·min)`` of the configuration."""
        timeout = int(self._config.min_watch_timeout * (self._rand() + 1.0))
        return dataclasses.replace(options, timeout_seconds=max(1, timeout))

    # -- waiting and reporting ---------------------------------------------------------------

    async def _pause(self, pause: Pause) -> None:
        if pause.cause is not None:
            self._counters.restarted(pause.cause)
        for error in pause.errors:
            if isinstance(error, ResourceVersionError):
                self._reporter.version(error)
                continue
            disconnected = pause.cause is RestartCause.DISCONNECT
            quiet = disconnected and isinstance(error, TransportError)
            self._report(error, level=logging.DEBUG if quiet else None)
        if pause.refresh_credentials:
            await self._refresh_credentials()
        if pause.delay is Delay.BACKOFF:
            await self._clock.sleep(self._backoff.next_delay())
        elif pause.delay is Delay.RETRY_AFTER:
            await self._clock.sleep(pause.seconds)

    async def _refresh_credentials(self) -> None:
        refresh = getattr(self._lw, "refresh_credentials", None)
        if refresh is None:
            return
        try:
            await refresh()
        except Exception as exc:
            logger.warning("%s: reloading credentials failed: %s", self.name, type(exc).__name__)

    def _stop_if_fatal(self, exc: Exception) -> None:
        """Re-raise an error no retry can cure (the server refused the shard selector): the
        reflector, and its informer, stop with it."""
        if isinstance(exc, ShardSelectorRejectedError):
            self._report(exc, level=logging.ERROR)
            raise exc

    def _report(self, exc: BaseException, *, level: int | None = None) -> None:
        self._reporter.report(exc, level=level)

    def _call_handler(self, exc: BaseException) -> None:
        handler = self._watch_error_handler
        if handler is not None:
            handler(self, exc)


class _ResyncFailed(Exception):
    """The store refused a resync: it ends the watch phase (and leads to a relist)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


async def _close(stream: WatchStream) -> None:
    with CancelScope(shield=True):
        await stream.aclose()
