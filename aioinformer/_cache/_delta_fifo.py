"""The DeltaFIFO: a keyed queue of deltas between the reflector and the informer.

Producers (the reflector) ``await add/update/delete/replace/resync``, or hand over many watch
events at once with ``await apply(events)``; one consumer (the informer) ``await pop(process)``.
Each key is queued once however many deltas it gathers; its deltas are kept oldest to newest,
and keys come out in the order they were first queued. Every critical section is synchronous
(``process`` included), so no lock is needed: a pop is atomic (no producer interleaves with it,
and cancellation cannot split it), and a consumer that finds the queue empty waits on a future
that the next producer (or :meth:`DeltaFIFO.close`) completes.

Semantics follow client-go's ``DeltaFIFO`` (see ``docs``/DESIGN §2.3), with one deliberate
difference: the initial-population count is decremented **after** ``process`` ran, so
:meth:`DeltaFIFO.has_synced` never turns true while the last item of the initial list is still
being processed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeAlias

import anyio.lowlevel

from .._deprecation import warn_renamed
from .._objects import DeletedFinalStateUnknown, KeyFunc, KubeObject
from ..errors import FIFOClosedError

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "KeyListerGetter",
    "TransformFunc",
    "WatchChange",
]

from ._deltas import Delta, DeltaType, WatchChange, object_key

logger = logging.getLogger(__name__)

#: The most keys one :meth:`DeltaFIFO.pop_batch` hands to its ``process`` callable.
DEFAULT_BATCH_SIZE = 1000
# replace() computes keys and transforms this many objects between yields to the event loop.
_PREPARE_CHUNK = 2000

#: Transforms an object before it is queued (for example to drop ``managedFields``).
#: It must be idempotent; it may mutate and return its argument.
TransformFunc: TypeAlias = Callable[[Any], Any]


class KeyListerGetter(Protocol):
    """What the FIFO needs of the informer's cache (``known_objects``); an Indexer fits.

    A cache that also has ``get_stored(key)`` (both of the informer's caches) hands the FIFO
    its stored objects as they are, for tombstones and resync deltas: the compact cache's
    carriers stay undecoded.
    """

    def __contains__(self, key: object) -> bool: ...

    def list_keys(self) -> list[str]: ...

    def get_by_key(self, key: str) -> KubeObject | None: ...


def _stored_getter(known: KeyListerGetter) -> Callable[[str], Any]:
    getter: Callable[[str], Any] = getattr(known, "get_stored", known.get_by_key)
    return getter


_CHANGES = frozenset((DeltaType.ADDED, DeltaType.UPDATED, DeltaType.DELETED))


class DeltaFIFO:
    """A keyed FIFO of deltas with client-go ``DeltaFIFO`` semantics.

    :param key_func: the key of an object; tombstones always give their own key.
        Default: ``namespace/name`` (:func:`~aioinformer.meta_namespace_key` of a decoded
        object; an informer's carriers bring theirs).
    :param known_objects: the consumer's cache (the informer's indexer). Used to detect deletes
        missed while disconnected (``replace``), to drop deletes of unknown objects, and as
        the source of ``resync``. Default None.
    :param emit_delta_type_replaced: ``replace`` queues ``REPLACED`` deltas (True, the default)
        or ``SYNC`` deltas (False, client-go's legacy behaviour).
    :param transformer: applied to every object entering the queue, except tombstones and
        resync ``SYNC`` deltas (whose objects were transformed already). Default None.
    """

    def __init__(
        self,
        *,
        key_func: KeyFunc = object_key,
        known_objects: KeyListerGetter | None = None,
        emit_delta_type_replaced: bool = True,
        transformer: TransformFunc | None = None,
    ) -> None:
        self._key_func = key_func
        self._known = known_objects
        self._emit_replaced = emit_delta_type_replaced
        self._transformer = transformer
        self._items: dict[str, list[Delta]] = {}
        self._queue: deque[str] = deque()
        # Pops waiting for a key (the informer has one consumer; any number works).
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._synced = asyncio.Event()
        # True once replace() ran, or add/update/delete came first.
        self._populated = False
        # Pops still to be processed before the initial population is through.
        self._initial_population_count = 0
        self._closed = False

    # -- introspection ---------------------------------------------------------------------

    def __len__(self) -> int:
        """The number of queued keys."""
        return len(self._queue)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<DeltaFIFO [{state}, {len(self._queue)} keys queued, synced={self.has_synced()}]>"

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    @property
    def transformer(self) -> TransformFunc | None:
        """The transformer given at construction."""
        return self._transformer

    def has_synced(self) -> bool:
        """True once the first ``replace`` was fully popped **and processed**.

        Also true as soon as an add, update or delete came before any ``replace``.
        """
        return self._populated and self._initial_population_count == 0

    async def wait_for_cache_sync(self) -> None:
        """Wait until :meth:`has_synced` is true."""
        await self._synced.wait()

    async def wait_synced(self) -> None:
        """Deprecated alias of :meth:`wait_for_cache_sync` (warns)."""
        warn_renamed("DeltaFIFO.wait_synced()", "wait_for_cache_sync()")
        await self.wait_for_cache_sync()

    def list_keys(self) -> list[str]:
        """The queued keys, oldest first."""
        return list(self._queue)

    def get_by_key(self, key: str) -> list[Delta] | None:
        """A copy of the deltas queued for ``key``, or None."""
        deltas = self._items.get(key)
        return list(deltas) if deltas is not None else None

    def key_of(self, obj: Any) -> str:
        """The key of an object or tombstone."""
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        return self._key_func(obj)

    # -- producers -------------------------------------------------------------------------

    async def add(self, obj: KubeObject, *, raw: bytes | None = None) -> None:
        """Queue an ``ADDED`` delta (``raw``: the object's JSON, if known)."""
        self._queue_change(DeltaType.ADDED, obj, raw)

    async def update(self, obj: KubeObject, *, raw: bytes | None = None) -> None:
        """Queue an ``UPDATED`` delta (``raw``: the object's JSON, if known)."""
        self._queue_change(DeltaType.UPDATED, obj, raw)

    async def delete(self, obj: Any) -> None:
        """Queue a ``DELETED`` delta, unless the key is neither queued nor known (then drop it).

        ``obj`` may be a :class:`~aioinformer.DeletedFinalStateUnknown`.
        """
        self._queue_change(DeltaType.DELETED, obj, None)

    async def apply(self, changes: Iterable[WatchChange]) -> list[tuple[int, Exception]]:
        """Queue many watch events at once, in order: the same as one :meth:`add`,
        :meth:`update` or :meth:`delete` each, with one wake-up of the consumer for all.

        A change whose key or transform fails (or whose type is not ``ADDED``, ``UPDATED`` or
        ``DELETED``) is left out, and the others are queued; the failures are returned as
        ``(position in changes, exception)``.
        """
        failures: list[tuple[int, Exception]] = []
        items, queue, known = self._items, self._queue, self._known
        key_func, transformer = self._key_func, self._transformer
        queued = False
        for position, (kind, obj, raw) in enumerate(changes):
            try:
                if kind not in _CHANGES:
                    raise ValueError(f"not a watch change: {kind!r}")
                if isinstance(obj, DeletedFinalStateUnknown):
                    key = obj.key
                else:
                    key = key_func(obj)
                    if transformer is not None:
                        obj, raw = transformer(obj), None  # the transform changes the JSON
            except Exception as exc:
                failures.append((position, exc))
                continue
            queued = True
            deltas = items.get(key)
            if deltas is not None:
                self._append(key, Delta(kind, obj, raw))
            elif kind is not DeltaType.DELETED or (known is not None and key in known):
                items[key] = [Delta(kind, obj, raw)]
                queue.append(key)
            # else: a delete of an unknown key, already reported by a relist: dropped
        if queued:
            self._populated = True
            self._changed()
        return failures

    async def replace(self, objs: Iterable[KubeObject], resource_version: str) -> None:
        """Queue the result of a (re)list.

        ``REPLACED`` (or ``SYNC``) for every listed object; then a ``DELETED`` delta carrying a
        :class:`~aioinformer.DeletedFinalStateUnknown` for every queued key absent from
        the list, and for every key of ``known_objects`` absent from the list and not queued.
        All keys and transforms are computed first: if one fails, nothing is queued.

        ``resource_version`` is not used by the FIFO (it is part of the store contract).
        """
        await self._replace(objs, None)

    async def replace_skipping(
        self, objs: Iterable[KubeObject], resource_version: str
    ) -> list[tuple[Any, Exception]]:
        """:meth:`replace`, except that an object whose key or transform fails is skipped
        instead of failing the whole list: it is returned with its exception. Its key (when
        the key function worked) is not deleted: what the cache has for it stays, stale, until
        a version of it is accepted.
        """
        refused: list[tuple[Any, Exception]] = []
        await self._replace(objs, refused)
        return refused

    async def _replace(
        self, objs: Iterable[KubeObject], refused: list[tuple[Any, Exception]] | None
    ) -> None:
        action = DeltaType.REPLACED if self._emit_replaced else DeltaType.SYNC
        prepared: list[tuple[str, Any]] = []
        kept: set[str] = set()  # keys of refused objects: not deleted
        for count, obj in enumerate(objs, 1):
            if refused is None:
                prepared.append(self._prepare(obj, transform=True))
            else:
                try:
                    prepared.append(self._prepare(obj, transform=True))
                except Exception as exc:
                    refused.append((obj, exc))
                    with contextlib.suppress(Exception):
                        kept.add(self.key_of(obj))
            if count % _PREPARE_CHUNK == 0:
                await anyio.lowlevel.checkpoint()  # a large list: let other tasks run
        listed: set[str] = set()
        for key, obj in prepared:
            listed.add(key)
            self._append(key, Delta(action, obj))
        kept -= listed
        queued_deletions = 0
        for key in [k for k in self._queue if k not in listed and k not in kept]:
            last = self._items[key][-1].object
            if isinstance(last, DeletedFinalStateUnknown):
                last = last.obj
            self._append(key, Delta(DeltaType.DELETED, DeletedFinalStateUnknown(key, last)))
            queued_deletions += 1
        if self._known is not None:
            get = _stored_getter(self._known)
            for key in self._known.list_keys():
                if key in listed or key in self._items or key in kept:
                    continue
                known = get(key)
                if known is None:
                    logger.debug("key %s vanished from known objects during replace", key)
                tombstone = DeletedFinalStateUnknown(key, known)
                self._append(key, Delta(DeltaType.DELETED, tombstone))
                queued_deletions += 1
        if not self._populated:
            self._populated = True
            self._initial_population_count = len(listed) + queued_deletions
        self._changed()

    async def resync(self) -> None:
        """Queue a ``SYNC`` delta for every known key that has no queued deltas."""
        if self._known is None:
            return
        get = _stored_getter(self._known)
        for key in self._known.list_keys():
            if key in self._items:
                # The queued deltas are newer than the cached object.
                continue
            obj = get(key)
            if obj is None:
                continue
            self._append(key, Delta(DeltaType.SYNC, obj))
        self._changed()

    def close(self) -> None:
        """Close the FIFO: pops drain what is queued, then raise :class:`FIFOClosedError`."""
        if self._closed:
            return
        self._closed = True
        waiters, self._waiters = self._waiters, deque()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # -- consumer --------------------------------------------------------------------------

    async def pop(self, process: Callable[[list[Delta]], object]) -> list[Delta]:
        """Wait for a key, remove it with its deltas, run ``process(deltas)``, return the deltas.

        ``process`` runs while the FIFO is consistent (no producer interleaves). If it raises,
        the deltas are dropped (not re-queued) and the exception propagates.

        :raises FIFOClosedError: once the FIFO is closed and empty.
        """

        def process_one(batch: list[list[Delta]], is_in_initial_list: bool) -> None:
            process(batch[0])

        return (await self.pop_batch(process_one, max_keys=1))[0]

    async def pop_batch(
        self,
        process: Callable[[list[list[Delta]], bool], object],
        *,
        max_keys: int = DEFAULT_BATCH_SIZE,
    ) -> list[list[Delta]]:
        """Like :meth:`pop`, for up to ``max_keys`` keys at once.

        ``process(batch, is_in_initial_list)`` receives the deltas of each popped key, oldest key
        first. A batch never straddles the end of the initial population, so
        ``is_in_initial_list`` holds for the whole batch.
        """
        if max_keys < 1:
            raise ValueError("max_keys must be at least 1")
        while not self._queue:
            if self._closed:
                raise FIFOClosedError("DeltaFIFO is closed")
            await self._wait()
        is_in_initial_list = not self.has_synced()
        count = min(max_keys, len(self._queue))
        if self._initial_population_count > 0:
            count = min(count, self._initial_population_count)
        queue, items = self._queue, self._items
        batch = [items.pop(queue.popleft()) for _ in range(count)]
        try:
            process(batch, is_in_initial_list)
        finally:
            if self._initial_population_count > 0:
                self._initial_population_count -= count
            self._changed()
        return batch

    # -- internals -------------------------------------------------------------------------

    async def _wait(self) -> None:
        """Wait until a producer or close() wakes this pop."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                if self._queue:
                    self._wake_one()  # woken, but leaving: pass the wake-up on
            else:
                waiter.cancel()
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
            raise

    def _wake_one(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _queue_change(self, kind: DeltaType, obj: Any, raw: bytes | None) -> None:
        key, transformed = self._prepare(obj, transform=True)
        self._populated = True
        if kind is DeltaType.DELETED and not self._is_known(key):
            # Already reported as deleted by a relist; do not report it twice.
            self._changed()
            return
        raw = raw if self._transformer is None else None  # a transform changes the JSON
        self._append(key, Delta(kind, transformed, raw))
        self._changed()

    def _is_known(self, key: str) -> bool:
        """Whether ``key`` is queued or cached (a delete of anything else is dropped)."""
        return key in self._items or (self._known is not None and key in self._known)

    def _prepare(self, obj: Any, *, transform: bool) -> tuple[str, Any]:
        key = self.key_of(obj)
        if (
            transform
            and self._transformer is not None
            and not isinstance(obj, DeletedFinalStateUnknown)
        ):
            obj = self._transformer(obj)
        return key, obj

    def _append(self, key: str, delta: Delta) -> None:
        deltas = self._items.get(key)
        if deltas is None:
            self._items[key] = [delta]
            self._queue.append(key)
            return
        last = deltas[-1]
        if delta.type is DeltaType.DELETED and last.type is DeltaType.DELETED:
            # Two deletes in a row: keep the older one, unless it is only a tombstone.
            if isinstance(last.object, DeletedFinalStateUnknown):
                deltas[-1] = delta
            return
        deltas.append(delta)

    def _changed(self) -> None:
        if self._queue and self._waiters:
            self._wake_one()
        if self.has_synced() and not self._synced.is_set():
            self._synced.set()
