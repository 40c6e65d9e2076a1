"""The SharedIndexInformer: one LIST+WATCH shared by any number of consumers.

Data path: objects travel as their wire bytes. The transport splits each LIST page and watch
line into per-object byte slices and decodes only the metadata the informer needs (key,
resource version, uid, and the fields its declared indexers read: the cache's decoder); the
:class:`~aioinformer.lowlevel.Reflector` hands each batch of watch events to a
:class:`~aioinformer.lowlevel.DeltaFIFO` in one call; one processing task pops batches of
keys from it, applies each delta to the cache (a
:class:`~aioinformer._cache._compact.CompactIndexer` by default, which keeps the bytes, or the
dict-backed :class:`~aioinformer.lowlevel.Indexer`: see ``cache``) and appends the batch's
notifications to every listener's deque at once; an event's objects are decoded when a
consumer reads them. Nothing downstream of the FIFO can block the watch stream, and a slow
consumer only grows its own backlog.

Whole-object mode: a transform (:meth:`SharedIndexInformer.set_transform`) needs every object
decoded, so that informer decodes each object once on its way in, transforms it and encodes
the result; a plain callable index function makes the compact cache decode each written
object once to run it (:func:`~aioinformer.index_on` declares what an index reads instead).
Either cost is that informer's only.

``handle_deltas`` follows client-go: ``Sync``/``Replaced``/``Added``/``Updated`` update the
object when its key is cached (an ``UPDATED`` notification) and add it otherwise (``ADDED``);
``Deleted`` deletes it (``DELETED``). An update is a *sync* notification for a ``Sync`` delta,
and for a ``Replaced`` delta whose resource version did not change; sync notifications go only
to listeners currently due for resync, all others to every listener.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel

from .._cache._compact import (
    DEFAULT_CACHE_MODE,
    CacheIndexer,
    CacheMode,
    CompactIndexer,
    new_indexer,
)
from .._cache._delta_fifo import DEFAULT_BATCH_SIZE, Delta, DeltaFIFO, DeltaType, TransformFunc
from .._cache._lister import Lister
from .._cache._store import Indexers
from .._cache._view import Cache
from .._clock import SYSTEM_CLOCK, Clock
from .._config import WatchConfig
from .._lifecycle import DEFAULT_STOP_TIMEOUT, Service, State, check_stop_timeout
from .._listwatch import ListerWatcher, Resource
from .._objects import KubeObject, object_problem
from .._reflector import Reflector, ReflectorStatistics, WatchErrorHandler
from .._sharding._informer_filter import ShardSelector, ShardStatistics, sharded_lister_watcher
from .._wire._slices import WireDecoder, WireObject, loads
from ..errors import FIFOClosedError, InvalidObjectError, LifecycleError
from ._dispatch import apply_deltas, distribute
from ._event_stream import (
    Event,
    EventStream,
    Listener,
    Registration,
    validate_handler,
)
from ._listener import ListenerStatistics, effective_resync

__all__ = ["MINIMUM_RESYNC_PERIOD", "InformerStatistics", "SharedIndexInformer"]


@dataclass(frozen=True, kw_only=True, slots=True)
class InformerStatistics:
    """A snapshot of an informer, read with :meth:`SharedIndexInformer.statistics`."""

    #: The informer's name (``v1/pods`` in a factory).
    name: str
    #: Where the informer is in its life.
    state: State
    #: Whether the initial list is in the cache.
    synced: bool
    #: Objects in the cache.
    objects: int
    #: Deltas the cache refused (index or key errors); each was skipped.
    store_errors: int
    #: The reflector's counters (all zero before the informer started).
    reflector: ReflectorStatistics
    #: Every consumer (event streams and handlers), in registration order.
    listeners: tuple[ListenerStatistics, ...]
    shard: ShardStatistics | None = None  #: a sharded informer's filter, else None


logger = logging.getLogger(__name__)

#: The smallest resync period a consumer can ask for, in seconds.
MINIMUM_RESYNC_PERIOD = 1.0

_names = itertools.count(1)


class SharedIndexInformer(Service):
    """An indexed, always-fresh cache of one resource, shared by many consumers.

    Use it as ``async with informer:`` (runs in the background of the block; entering does not
    wait for the cache), or run it yourself: ``await tg.start(informer.run)`` returns once the
    cache is synced, and ``run`` returns after :meth:`aclose`. Stopping cancels the watch and
    every handler at once. An informer runs once (see :mod:`aioinformer._lifecycle`).

    :param lister_watcher: where objects come from (e.g. a
        :class:`~aioinformer.lowlevel.KubeListerWatcher`).
    :param resync_period: default resync period of consumers, in seconds; 0 (the default)
        disables resync entirely, whatever consumers ask for.
    :param indexers: extra index functions (the ``namespace`` index is built in).
    :param name: used in logs and metrics. Default ``"informer-N"``.
    :param watch: how the reflector lists and watches (page size, watch timeouts, streaming
        lists, backoff). Default :class:`~aioinformer.WatchConfig` ``()``.
    :param batch_size: the most keys processed per FIFO pop. Default 1000.
    :param cache: how the cache keeps objects. ``"compact"`` (the default): each object as the
        JSON bytes it came in, beside its index values, which CPython's cyclic garbage
        collector never scans, at about 1.2x the object's wire size; reads (``lister().get``,
        ``list``, index lookups) decode and return fresh dicts, about 10 µs per 2.5 KB Pod
        (bulk reads with the collector paused), which callers may mutate. ``"dict"``: the
        decoded dicts themselves, shared with every reader (never mutate them): reads cost a
        dict lookup, but each object is decoded on its way in, the cache is ~6x the wire
        size and every full collection rescans it (ingest several times slower on a large
        cache). Choose ``"dict"`` for read-heavy consumers that list thousands of objects
        many times a second; ``read_cache`` covers repeated gets of a few hot keys.
    :param read_cache: with the compact cache, keep the last ``read_cache`` objects read by
        ``get`` decoded: every reader of such a key gets the **same** dict until the object
        changes, a dict lookup instead of a decode (shared, read-only: never mutate it).
        Default 0: off, every read decodes a fresh dict.
    :param freeze_gc_after_sync: call :func:`gc.freeze` once the initial list is cached, so
        CPython's cyclic garbage collector stops rescanning it (and everything else alive at
        that moment) on every full collection. Only useful with ``cache="dict"`` (the compact
        cache holds nothing the collector scans). Process-wide and opt-in: objects frozen while
        alive that later become *cyclic* garbage are never reclaimed (acyclic ones, like cached
        objects, are freed as usual). A full collection runs first, once: a pause of about a
        second per 10,000 Pods. Default False.
    :param clock: time for resync scheduling, the reflector's waits and :meth:`aclose`'s
        bound. Default the system clock.
    :param shard_selector: cache one shard only (:mod:`aioinformer._sharding._informer_filter`).
    :param stop_timeout: the most seconds :meth:`aclose` may take, on ``clock``. Stopping
        cancels the watch and every handler at once, so it only bounds code that holds off its
        cancellation (a handler in a shielded scope). Default 30
        (:data:`~aioinformer._lifecycle.DEFAULT_STOP_TIMEOUT`).
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        *,
        resync_period: float = 0.0,
        indexers: Indexers | None = None,
        name: str | None = None,
        watch: WatchConfig = WatchConfig(),
        batch_size: int = DEFAULT_BATCH_SIZE,
        cache: CacheMode = DEFAULT_CACHE_MODE,
        read_cache: int = 0,
        freeze_gc_after_sync: bool = False,
        clock: Clock = SYSTEM_CLOCK,
        shard_selector: ShardSelector | str | None = None,
        stop_timeout: float = DEFAULT_STOP_TIMEOUT,
    ) -> None:
        self._stop_timeout = check_stop_timeout(stop_timeout)
        self.name = name or f"informer-{next(_names)}"
        self._shard = sharded_lister_watcher(lister_watcher, shard_selector, self.name)
        self._freeze_gc = freeze_gc_after_sync
        self._watch_config = watch
        self._lw = self._shard or lister_watcher
        self._default_resync = max(0.0, resync_period)
        self._check_period = self._default_resync
        if read_cache < 0:
            raise ValueError("read_cache must not be negative")
        self._indexer: CacheIndexer = new_indexer(cache, indexers=indexers, recent=read_cache)
        self._cache_mode: CacheMode = cache
        # What the reflector decodes of each object: the compact cache's declared fields, and
        # the uid when a shard filter hashes it.
        indexer = self._indexer
        self._decoder = indexer.decoder if isinstance(indexer, CompactIndexer) else WireDecoder()
        if self._shard is not None and not self._decoder.fields.uid:
            self._decoder.set_fields(dataclasses.replace(self._decoder.fields, uid=True))
        self._batch_size = batch_size
        self._clock = clock
        self._transform: TransformFunc | None = None
        self._watch_error_handler: WatchErrorHandler | None = None
        self._listeners: list[Listener] = []
        self._registrations: list[Registration] = []
        self._listener_ids = itertools.count(1)
        self._fifo: DeltaFIFO | None = None
        self._reflector: Reflector | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._synced = False
        self._sync_or_stop: anyio.Event | None = None  # created by the first waiter
        self._store_errors = 0

    def __repr__(self) -> str:
        return (
            f"<SharedIndexInformer {self.name} [{self.state.value}] objects={len(self._indexer)}"
            f" listeners={len(self._listeners)} synced={self.has_synced()}>"
        )

    # -- configuration ---------------------------------------------------------------------

    @property
    def cache(self) -> Cache:
        """The cache, read-only (a :class:`~aioinformer.Cache`). With ``cache="compact"``
        (the default) every read returns fresh dicts; with ``"dict"`` the cached objects
        themselves: never mutate those."""
        return Cache(self._indexer)

    indexer = cache  # the former name, kept as an alias of the same read-only view

    @property
    def cache_mode(self) -> CacheMode:
        """How the cache keeps objects: ``"compact"`` or ``"dict"`` (see the class)."""
        return self._cache_mode

    def lister(self) -> Lister:
        """A :class:`~aioinformer.Lister` over the cache."""
        resource = getattr(self._lw, "resource", None)
        return Lister(self._indexer, resource=resource if isinstance(resource, Resource) else None)

    def add_indexers(self, indexers: Indexers) -> None:
        """Add index functions, before or after start (existing objects are indexed at once).

        :raises LifecycleError: after the informer stopped.
        """
        if self.state is State.STOPPED:
            raise LifecycleError(f"informer {self.name} has stopped")
        self._indexer.add_indexers(indexers)

    def set_transform(self, transform: TransformFunc | None) -> None:
        """Transform every object before it is cached (e.g. drop ``managedFields``).

        The transform must be idempotent and cheap; it may mutate and return its argument.
        It needs the whole object: this informer then decodes every object once on its way
        in (a list item, a watch event's object) and encodes the transform's result, where
        an informer without a transform decodes nothing but metadata.

        :raises LifecycleError: once the informer started.
        """
        self._require_new("set_transform")
        self._transform = transform

    def set_watch_error_handler(self, handler: WatchErrorHandler | None) -> None:
        """Call ``handler(reflector, error)`` for every list or watch error.

        :raises LifecycleError: once the informer started.
        """
        self._require_new("set_watch_error_handler")
        self._watch_error_handler = handler

    # -- state -----------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """True once the initial list is in the cache (says nothing about consumers)."""
        return self._synced

    async def wait_for_cache_sync(self) -> bool:
        """Wait until the initial list is in the cache, or the informer stopped first.

        Bound it with :func:`anyio.fail_after` or :func:`anyio.move_on_after`.

        :returns: whether the cache synced (False if the informer stopped unsynced).
        """
        if not self._synced and self.state is not State.STOPPED:
            if self._sync_or_stop is None:
                self._sync_or_stop = anyio.Event()
            await self._sync_or_stop.wait()
        return self._synced

    @property
    def last_sync_resource_version(self) -> str:
        """The resource version the reflector last saw (``""`` before the first list)."""
        return self._reflector.last_sync_resource_version if self._reflector else ""

    def statistics(self) -> InformerStatistics:
        """A snapshot: state, cache size, the reflector's counters and every consumer's."""
        reflector = self._reflector
        return InformerStatistics(
            name=self.name,
            state=self.state,
            synced=self._synced,
            objects=len(self._indexer),
            store_errors=self._store_errors,
            reflector=reflector.statistics() if reflector else ReflectorStatistics(),
            listeners=tuple(listener.statistics() for listener in self._listeners),
            shard=self._shard.statistics() if self._shard is not None else None,
        )

    @property
    def resync_check_period(self) -> float:
        """How often the reflector checks whether consumers are due for resync (0: never)."""
        return self._check_period

    # -- consumers -------------------------------------------------------------------------

    def events(self, *, resync_period: float | None = None) -> EventStream:
        """Subscribe: an async iterator of :class:`~aioinformer.Event`.

        A subscriber that joins after the cache holds objects first receives them as synthetic
        ``ADDED`` events (``is_in_initial_list=True``), atomically with respect to other
        notifications. Leaving the ``async for`` unregisters the subscriber at once.

        :param resync_period: this subscriber's resync period (None: the informer's).
        :raises LifecycleError: if the informer stopped.
        """
        return EventStream(self._new_listener(resync_period, "events"), self._remove_listener)

    def add_event_handler(
        self, handler: object, *, resync_period: float | None = None
    ) -> Registration:
        """Register a handler with any of ``on_add(obj, is_in_initial_list)``,
        ``on_update(old, new)`` and ``on_delete(obj_or_tombstone)`` (sync or async).

        It runs in a task of its own; an exception is logged and counted and delivery goes
        on. Joining late replays the cache as ``ADDED`` notifications, like :meth:`events`.

        Delivery yields to the event loop every few milliseconds of handler work
        (:data:`~aioinformer._informer._listener.SLICE_SECONDS`), so a handler draining a large
        backlog shares the loop with the watch and everything else. One *call* still runs to its
        end: a blocking call in a sync handler (``time.sleep``, a synchronous HTTP client, a big
        computation) blocks the whole loop for its duration. Make such a handler async and run the
        blocking part with ``await anyio.to_thread.run_sync(...)``, or keep handlers to enqueueing
        keys and do the work in a :class:`~aioinformer.Controller`.

        :param resync_period: this handler's resync period (None: the informer's).
        :raises TypeError: if the handler has none of the three methods (a plain function, a
            misspelt method): see :func:`~aioinformer._informer._handlers.validate_handler`.
        :raises LifecycleError: if the informer stopped.
        """
        validate_handler(handler)  # before anything is registered
        listener = self._new_listener(resync_period, "handler")
        registration = Registration(handler, listener)
        self._registrations.append(registration)
        if self._task_group is not None:
            self._task_group.start_soon(registration.run)
        return registration

    def remove_event_handler(self, registration: Registration) -> None:
        """Stop delivery to a handler (idempotent); pending notifications are dropped.

        A registration of another informer is left alone (a no-op, like client-go's).
        """
        if not any(own is registration for own in self._registrations):
            logger.debug("%s: %r is not a registration of this informer", self.name, registration)
            return
        self._registrations = [own for own in self._registrations if own is not registration]
        self._remove_listener(registration.listener)

    def _new_listener(self, resync_period: float | None, kind: str) -> Listener:
        if self.state is State.STOPPED:
            raise LifecycleError(f"informer {self.name} has stopped")
        requested = self._default_resync if resync_period is None else max(0.0, resync_period)
        if requested > 0:
            requested = max(requested, MINIMUM_RESYNC_PERIOD)
            if requested < self._check_period:
                if self.state is not State.NEW:  # the reflector's period is fixed
                    logger.debug(
                        "%s: resync period %s raised to %s",
                        self.name,
                        requested,
                        self._check_period,
                    )
                    requested = self._check_period
                else:
                    self._check_period = requested
                    for listener in self._listeners:
                        listener.resync_period = effective_resync(
                            listener.requested_resync_period, requested
                        )
        listener = Listener(
            name=f"{self.name}/{kind}-{next(self._listener_ids)}",
            requested_resync_period=requested,
            resync_period=effective_resync(requested, self._check_period),
            now=self._clock.now(),
            upstream_synced=False,
        )
        if len(self._indexer):
            listener.replay(self._indexer.stored())
        if self._synced:
            # Only now: the consumer is synced once it processed the replayed cache.
            listener.set_upstream_synced()
        # Copy on write: distribution iterates the old list undisturbed.
        self._listeners = [*self._listeners, listener]
        return listener

    async def _wait_consumers_synced(self) -> None:  # for the integrations' readiness
        for listener in self._listeners:  # every current consumer synced (or left)
            await listener.wait_for_cache_sync()

    def _remove_listener(self, listener: Listener) -> None:
        listener.close()
        if listener in self._listeners:
            self._listeners = [other for other in self._listeners if other is not listener]

    # -- running ---------------------------------------------------------------------------

    async def _serve(self, ready: Callable[[], None]) -> None:
        transform = self._transform
        fifo = DeltaFIFO(
            known_objects=self._indexer,
            transformer=None if transform is None else self._transformed,
        )
        reflector = Reflector(
            self._lw,
            fifo,
            config=self._watch_config,
            name=self.name,
            resync_period=self._check_period,
            should_resync=self._should_resync,
            watch_error_handler=self._watch_error_handler,
            clock=self._clock,
        )
        reflector._carry_bytes(self._decoder)
        self._fifo, self._reflector = fifo, reflector
        try:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                tg.start_soon(reflector.run)
                tg.start_soon(self._process_loop, fifo)
                tg.start_soon(self._watch_synced, fifo, ready)
                for registration in self._registrations:
                    tg.start_soon(registration.run)
                await self._wait_stop_requested()
                tg.cancel_scope.cancel()
        finally:
            self._task_group = None
            fifo.close()
            logger.debug("%s: stopped", self.name)

    def _on_stopped(self) -> None:
        """Consumers are released (their loops end) and sync waiters woken."""
        for listener in self._listeners:
            listener.close()
        self._listeners = []
        if self._sync_or_stop is not None:
            self._sync_or_stop.set()

    async def _watch_synced(self, fifo: DeltaFIFO, ready: Callable[[], None]) -> None:
        await fifo.wait_for_cache_sync()
        self._synced = True
        for listener in self._listeners:
            listener.set_upstream_synced()
        if self._sync_or_stop is not None:
            self._sync_or_stop.set()
        logger.debug("%s: cache synced (%d objects)", self.name, len(self._indexer))
        if self._freeze_gc:
            gc.collect()
            gc.freeze()
        ready()

    async def _process_loop(self, fifo: DeltaFIFO) -> None:
        while True:
            try:
                await fifo.pop_batch(self._process_batch, max_keys=self._batch_size)
            except FIFOClosedError:
                return
            except Exception:
                logger.exception("%s: processing a batch of deltas failed", self.name)
            # Popping never waits while keys are queued: let consumers and the watch run
            # between batches (a large relist is many batches).
            await anyio.lowlevel.checkpoint()

    def _process_batch(self, batch: list[list[Delta]], is_in_initial_list: bool) -> None:
        events: list[Event] = []
        syncs = 0
        for deltas in batch:
            syncs += self._apply(deltas, is_in_initial_list, events)
        self._distribute(events, syncs, is_in_initial_list)

    def handle_deltas(self, deltas: list[Delta], is_in_initial_list: bool = False) -> None:
        """Apply one key's deltas to the cache and notify listeners (oldest first)."""
        events: list[Event] = []
        syncs = self._apply(deltas, is_in_initial_list, events)
        self._distribute(events, syncs, is_in_initial_list)

    def _apply(self, deltas: list[Delta], is_in_initial_list: bool, events: list[Event]) -> int:
        syncs, refused = apply_deltas(
            self._indexer,
            deltas,
            is_in_initial_list,
            events,
            self._cache_refused,
            decode=self._cache_mode == "dict",
        )
        self._store_errors += refused
        return syncs

    def _cache_refused(self, delta_type: DeltaType, obj: KubeObject, exc: Exception) -> None:
        if self._reflector is not None and delta_type is not DeltaType.DELETED:
            # The hook, a once-per-key log line and the stale keys say it.
            self._reflector._cache_refused(obj, exc)
        else:
            logger.warning(
                "%s: cache refused a %s delta: %s: %s",
                self.name,
                delta_type.value,
                type(exc).__name__,
                exc,
            )

    def _transformed(self, obj: Any) -> Any:
        """The transform, on an object in wire form: decoded, transformed, encoded again."""
        transform = self._transform
        assert transform is not None
        if obj.__class__ is not WireObject:
            return transform(obj)
        result = transform(loads(obj.data))
        wire = self._decoder.from_document(result)
        if wire is None:
            problem = object_problem(result) or "it cannot be encoded"
            raise InvalidObjectError(f"the transform's result cannot be cached: {problem}")
        return wire

    def _distribute(self, events: list[Event], syncs: int, is_in_initial_list: bool) -> None:
        distribute(self._listeners, events, syncs, is_in_initial_list)

    def _should_resync(self) -> bool:
        """Called by the reflector's resync ticker: mark the listeners due and say if any is."""
        now = self._clock.now()
        needed = False
        for listener in self._listeners:
            due = listener.should_resync(now)
            listener.syncing = due
            if due:
                needed = True
                listener.next_resync = now + listener.resync_period
        return needed
