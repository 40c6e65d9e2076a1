"""The compact cache: every object kept as its wire bytes, where the cyclic GC never looks.

A decoded Kubernetes object is dozens of dicts and lists, each one a container CPython's cyclic
garbage collector tracks and rescans on every full collection; a cache of them makes every
collection proportional to the cache and holds ~6x the object's wire size.
:class:`CompactIndexer` keeps each object instead as the carrier the informer received it in
(a :class:`~aioinformer._wire._slices.WireObject`: the object's exact JSON bytes, its key,
resource version, uid and the fields its declared indexers read), an object the collector
never tracks. Nothing is decoded on the way in: a LIST item or a watch event's object goes
from the socket to the cache as the slice of the page or line it came in.

Indices map a value to a ``dict`` of keys used as an ordered set, and remember each key's
values (one shared string per distinct value). The built-in namespace index and the
:func:`~aioinformer.index_on` indexers read the carrier's decoded fields;
a plain callable index function needs the whole object, so each written object is decoded
once for it (and the dict dropped): declare what an index reads to avoid that.

Reads decode (``orjson.loads``, ~10 µs for a 2.5 KB Pod): each read returns a fresh dict the
caller may mutate without touching the cache. Bulk reads (:meth:`CompactIndexer.list`,
:meth:`~CompactIndexer.by_index`, :meth:`~CompactIndexer.index`) decode with the cyclic
collector paused for the duration of the call (scoped: never left off), so building 10,000
dicts does not run collections over everything built so far; :meth:`~CompactIndexer.iter`
decodes one object at a time. An optional :class:`~aioinformer._cache._recent.RecentObjects`
makes repeated ``get`` of hot keys a dict lookup (shared, read-only dicts: opt-in).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator
from typing import Any, Literal, TypeAlias

from .._objects import KeyFunc, KubeObject, object_problem
from .._wire._slices import (
    WireDecoder,
    WireObject,
    decode_many,
    encode,
    gc_paused,
    loads,
    value_at,
)
from ..errors import IndexConflictError, IndexNotFoundError, InvalidObjectError
from ._deltas import object_key
from ._field_index import FieldIndex, declared_fields
from ._recent import RecentObjects
from ._store import (
    NAMESPACE_INDEX,
    Indexer,
    Indexers,
    IndexFunc,
    index_values,
    meta_namespace_index_func,
)

__all__ = [
    "DEFAULT_CACHE_MODE",
    "CacheIndexer",
    "CacheMode",
    "CompactIndexer",
    "encode",
    "new_indexer",
]

#: How an informer keeps its cache: ``"compact"`` (JSON bytes, decoded on read; the default)
#: or ``"dict"`` (the decoded dicts themselves, shared with every reader).
CacheMode: TypeAlias = Literal["compact", "dict"]
#: The default cache mode.
DEFAULT_CACHE_MODE: CacheMode = "compact"

_NO_VALUES: tuple[str, ...] = ()


class _Decoded:
    """One written object decoded at most once, for the plain index functions that need it."""

    __slots__ = ("_obj", "wire")

    def __init__(self, wire: WireObject) -> None:
        self.wire = wire
        self._obj: Any = None

    def get(self) -> Any:
        if self._obj is None:
            self._obj = loads(self.wire.data)
        return self._obj


class _IndexState:
    """One index: value -> keys, and each key's values (absent: none).

    ``positions`` say where a declared index's fields are among the decoder's extras.
    """

    __slots__ = ("canon", "func", "keys", "name", "namespace", "positions", "values")

    def __init__(self, name: str, func: IndexFunc, decoder: WireDecoder) -> None:
        self.name = name
        self.func = func
        self.namespace = func is meta_namespace_index_func
        paths = decoder.fields.paths
        self.positions: tuple[int, ...] | None = None
        if isinstance(func, FieldIndex):
            self.positions = tuple(
                paths.index(path) if path in paths else -1 for path in func.paths
            )
        #: value -> keys (a dict used as an ordered set: str -> None is never GC-tracked).
        self.keys: dict[str, dict[str, None]] = {}
        #: value -> the one str object every key's values share for it.
        self.canon: dict[str, str] = {}
        #: key -> its value, or its values when several (not for the namespace index, whose
        #: value is the entry's namespace).
        self.values: dict[str, str | tuple[str, ...]] = {}

    def values_for(self, key: str, decoded: _Decoded) -> tuple[str, ...]:
        """The canonical values of an object (raises IndexFuncError; changes nothing)."""
        wire = decoded.wire
        canon = self.canon
        if self.namespace:
            namespace = wire.namespace
            return (canon.get(namespace, namespace),)
        positions = self.positions
        if positions is not None:
            func = self.func
            assert isinstance(func, FieldIndex)
            extras = wire.extras
            found = [
                extras[at] if 0 <= at < len(extras) else value_at(decoded.get(), path)
                for at, path in zip(positions, func.paths, strict=True)
            ]
            values = index_values(self.name, lambda _: func.values_from(*found), key, None)
        else:
            values = index_values(self.name, self.func, key, decoded.get())
        if len(values) == 1:
            value = values[0]
            return (canon.get(value, value),)
        return tuple([canon.get(value, value) for value in values])

    def old_values(self, key: str, old: WireObject) -> tuple[str, ...]:
        if self.namespace:
            return (old.namespace,)
        found = self.values.get(key)
        if found is None:
            return _NO_VALUES
        return (found,) if found.__class__ is str else found  # type: ignore[return-value]

    def insert(self, key: str, values: tuple[str, ...]) -> None:
        keys, canon = self.keys, self.canon
        for value in values:
            bucket = keys.get(value)
            if bucket is None:
                keys[value] = {key: None}
                canon[value] = value
            else:
                bucket[key] = None
        if not self.namespace and values:
            self.values[key] = values[0] if len(values) == 1 else values

    def discard(self, key: str, values: tuple[str, ...]) -> None:
        keys, canon = self.keys, self.canon
        for value in values:
            bucket = keys.get(value)
            if bucket is None:
                continue
            bucket.pop(key, None)
            if not bucket:
                del keys[value]
                del canon[value]
        if not self.namespace:
            self.values.pop(key, None)


class CompactIndexer:
    """An :class:`~aioinformer.lowlevel.Indexer` that keeps objects as their wire bytes.

    The same API and guarantees as the Indexer (all-or-nothing writes, the built-in namespace
    index, index functions added at any time), with two differences: every read returns a
    **fresh** dict (decoded from the cache; mutate it freely), unless ``recent`` is on, and
    objects must be JSON-serializable (a write of one that is not raises ``TypeError`` and
    changes nothing).

    Writes take the informer's carriers as they are, or decoded objects (encoded once, or
    stored as ``raw`` when the caller has their JSON: it must be the encoding of the very
    object given).

    :param indexers: index functions by name, added to the built-in
        :data:`~aioinformer.NAMESPACE_INDEX` (an entry named ``"namespace"`` replaces it).
        Those made by :func:`~aioinformer.index_on` read only what the decoder decoded; the
        others get each written object decoded.
    :param key_func: the key of a decoded object; by default its ``namespace/name`` (a
        carrier's key is decoded with it, a tombstone gives its own). Another key function
        gets every written object decoded.
    :param recent: keep the last ``recent`` objects read by ``get`` decoded, and hand the same
        dict to every reader of a key until it changes (shared and read-only). Default 0: off.
    """

    __slots__ = ("_decoder", "_entries", "_indices", "_key_func", "_recent", "_rv")

    def __init__(
        self,
        *,
        indexers: Indexers | None = None,
        key_func: KeyFunc | None = None,
        recent: int = 0,
    ) -> None:
        funcs: dict[str, IndexFunc] = {NAMESPACE_INDEX: meta_namespace_index_func}
        funcs.update(indexers or {})
        self._key_func = key_func
        self._decoder = WireDecoder(declared_fields(funcs.values()))
        self._entries: dict[str, WireObject] = {}
        self._rv = ""
        self._indices = [_IndexState(name, func, self._decoder) for name, func in funcs.items()]
        self._recent = RecentObjects(recent) if recent > 0 else None

    # -- introspection ---------------------------------------------------------------------

    @property
    def key_func(self) -> KeyFunc:
        """The key function of this cache."""
        return self._key_func or object_key

    @property
    def decoder(self) -> WireDecoder:
        """The decoder of this cache's carriers: it decodes what the indexers declared."""
        return self._decoder

    @property
    def resource_version(self) -> str:
        """The resource version given to the last :meth:`replace` (``""`` before any)."""
        return self._rv

    @property
    def recent(self) -> RecentObjects | None:
        """The cache of recently read objects, when on."""
        return self._recent

    def __repr__(self) -> str:
        indexers = ", ".join(sorted(index.name for index in self._indices))
        return f"<CompactIndexer objects={len(self._entries)} indexers=[{indexers}]>"

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get_indexers(self) -> dict[str, IndexFunc]:
        """A copy of the registered index functions."""
        return {index.name: index.func for index in self._indices}

    # -- writes ----------------------------------------------------------------------------

    def upsert(self, obj: Any, *, raw: bytes | None = None) -> WireObject | None:
        """Insert or replace ``obj`` (a carrier, or a decoded object) under its key; returns
        the replaced carrier, not decoded.

        :param raw: the JSON of a decoded ``obj`` if the caller has it (stored as is).
        :raises KeyFuncError: if the key cannot be computed (nothing changes).
        :raises IndexFuncError: if an index function raises (nothing changes).
        :raises InvalidObjectError: if the object cannot be cached (nothing changes).
        :raises TypeError: if ``obj`` is not JSON-serializable (nothing changes).
        """
        wire = self._carrier(obj, raw)
        return self._put(self._key(wire), wire)

    def remove(self, obj: Any) -> WireObject | None:
        """Remove the object with the same key (a tombstone removes by its key); returns the
        removed carrier, not decoded (None if absent)."""
        return self._pop(self._key(obj))

    def add(self, obj: Any, *, raw: bytes | None = None) -> KubeObject | None:
        """Insert or replace the object; returns the object it replaced (decoded), or None."""
        old = self.upsert(obj, raw=raw)
        return None if old is None else loads(old.data)

    def update(self, obj: Any, *, raw: bytes | None = None) -> KubeObject | None:
        """Same as :meth:`add`."""
        return self.add(obj, raw=raw)

    def delete(self, obj: Any) -> KubeObject | None:
        """Remove the object with the same key; returns it (decoded), or None if absent."""
        old = self.remove(obj)
        return None if old is None else loads(old.data)

    def replace(self, objs: Iterable[Any], resource_version: str) -> None:
        """Replace the whole content with ``objs`` (the last of a key wins), atomically."""
        wires: dict[str, WireObject] = {}
        for obj in objs:
            wire = self._carrier(obj, None)
            wires[self._key(wire)] = wire
        indices = [_IndexState(index.name, index.func, self._decoder) for index in self._indices]
        with gc_paused():  # whole-object index functions: each decode dropped at once
            computed = [
                [index.values_for(key, _Decoded(wire)) for index in indices]
                for key, wire in wires.items()
            ]
        for key, values in zip(wires, computed, strict=True):
            for index, found in zip(indices, values, strict=True):
                index.insert(key, found)
        self._entries, self._indices = wires, indices
        self._rv = resource_version
        if self._recent is not None:
            self._recent.clear()

    def resync(self) -> None:
        """Nothing to do (part of the reflector's store contract)."""

    def add_indexers(self, indexers: Indexers) -> None:
        """Register more index functions; stored objects are indexed at once (decoded once
        each when a new function needs the whole object, or reads fields the decoder has not
        decoded so far). From then on the decoder also decodes the new declared fields.

        :raises IndexConflictError: if a name is already registered (nothing is added).
        :raises IndexFuncError: if a new function raises on a stored object (nothing is added).
        """
        taken = sorted(set(indexers) & {index.name for index in self._indices})
        if taken:
            raise IndexConflictError(f"indexer(s) already registered: {', '.join(taken)}")
        decoder = self._decoder
        fields = decoder.fields | declared_fields(indexers.values())
        previous = decoder.fields
        decoder.set_fields(fields)
        added = [_IndexState(name, func, decoder) for name, func in indexers.items()]
        try:
            with gc_paused():
                computed = [
                    (key, [index.values_for(key, _Decoded(wire)) for index in added])
                    for key, wire in self._entries.items()
                ]
        except BaseException:
            decoder.set_fields(previous)
            raise
        for key, values in computed:
            for index, found in zip(added, values, strict=True):
                index.insert(key, found)
        self._indices += added

    # -- reads -----------------------------------------------------------------------------

    def get(self, obj: Any) -> KubeObject | None:
        """A fresh copy of the stored object with the same key as ``obj``, or None."""
        return self.get_by_key(self._key(obj))

    def get_by_key(self, key: str) -> KubeObject | None:
        """A fresh copy of the stored object under ``key`` (the shared one when ``recent`` is
        on), or None."""
        wire = self._entries.get(key)
        if wire is None:
            return None
        recent = self._recent
        if recent is None:
            found: KubeObject = loads(wire.data)
            return found
        hit = recent._items.get(key)  # the hit path inlined: a hot key costs two lookups
        if hit is not None and hit[0] is wire:
            kept: KubeObject = hit[1]
            return kept
        decoded: KubeObject = recent.get(key, wire)
        return decoded

    def get_stored(self, key: str) -> WireObject | None:
        """The carrier stored under ``key`` (nothing decoded), or None."""
        return self._entries.get(key)

    def get_raw_by_key(self, key: str) -> bytes | None:
        """The stored JSON of the object under ``key`` (no decoding), or None."""
        wire = self._entries.get(key)
        return None if wire is None else wire.data

    def list(self) -> builtins.list[KubeObject]:
        """Fresh copies of all stored objects (in no particular order), decoded with the
        cyclic collector paused for the call."""
        return decode_many([wire.data for wire in self._entries.values()])

    def iter(self) -> Iterator[KubeObject]:
        """Fresh copies of the stored objects, decoded one at a time as the caller takes them
        (of the objects stored when it was called: later writes are not seen). Cheaper than
        :meth:`list` for a large cache when each object is dropped before the next."""
        for wire in builtins.list(self._entries.values()):
            yield loads(wire.data)

    def list_keys(self) -> builtins.list[str]:
        """All keys (in no particular order)."""
        return builtins.list(self._entries)

    def stored(self) -> builtins.list[WireObject]:
        """Every stored carrier (nothing decoded)."""
        return builtins.list(self._entries.values())

    def by_index(self, index_name: str, value: str) -> builtins.list[KubeObject]:
        """Fresh copies of the objects indexed under ``value`` (in no particular order)."""
        entries = self._entries
        keys = self._index(index_name).keys.get(value, ())
        return decode_many([entries[key].data for key in keys])

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """The keys indexed under ``value``, sorted."""
        return sorted(self._index(index_name).keys.get(value, ()))

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value the index currently holds (in no particular order)."""
        return builtins.list(self._index(index_name).keys)

    def index(self, index_name: str, obj: Any) -> builtins.list[KubeObject]:
        """Fresh copies of the stored objects sharing at least one index value with ``obj``."""
        index = self._index(index_name)
        key = self._key(obj)
        if obj.__class__ is WireObject:
            values = index.values_for(key, _Decoded(obj))
        else:
            values = index_values(index_name, index.func, key, obj)
        found: dict[str, None] = {}
        for value in values:
            found.update(index.keys.get(value, {}))
        entries = self._entries
        return decode_many([entries[key].data for key in found])

    # -- internals -------------------------------------------------------------------------

    def _index(self, index_name: str) -> _IndexState:
        for index in self._indices:
            if index.name == index_name:
                return index
        raise IndexNotFoundError(index_name)

    def _key(self, obj: Any) -> str:
        key_func = self._key_func
        if key_func is None:
            return object_key(obj)
        if obj.__class__ is WireObject:
            return key_func(loads(obj.data))
        return key_func(obj)

    def _carrier(self, obj: Any, raw: bytes | None) -> WireObject:
        """``obj`` as a carrier (a decoded object encoded, or its ``raw`` JSON)."""
        if obj.__class__ is WireObject:
            wire: WireObject = obj
            return wire
        problem = object_problem(obj)
        if problem is not None:
            self._key(obj)  # the key function's error first, as for any store
            raise InvalidObjectError(problem)
        made = self._decoder.from_document(obj, raw)
        assert made is not None
        return made

    def _put(self, key: str, wire: WireObject) -> WireObject | None:
        indices = self._indices
        decoded = _Decoded(wire)
        values = [index.values_for(key, decoded) for index in indices]
        # Nothing has been changed before this point.
        entries = self._entries
        old = entries.get(key)
        for index, new in zip(indices, values, strict=True):
            if old is not None:
                previous = index.old_values(key, old)
                if previous == new:
                    continue
                index.discard(key, previous)
            index.insert(key, new)
        entries[key] = wire
        return old

    def _pop(self, key: str) -> WireObject | None:
        old = self._entries.pop(key, None)
        if old is not None:
            for index in self._indices:
                index.discard(key, index.old_values(key, old))
            if self._recent is not None:
                self._recent.discard(key)
        return old


#: Either kind of cache an informer may keep.
CacheIndexer: TypeAlias = Indexer | CompactIndexer


def new_indexer(
    cache: CacheMode = DEFAULT_CACHE_MODE,
    *,
    indexers: Indexers | None = None,
    key_func: KeyFunc | None = None,
    recent: int = 0,
) -> CacheIndexer:
    """The cache for ``cache`` mode: a :class:`CompactIndexer` or a dict-backed
    :class:`~aioinformer.lowlevel.Indexer` (``recent`` is the compact cache's only).

    :raises ValueError: for an unknown mode.
    """
    if cache == "compact":
        return CompactIndexer(indexers=indexers, key_func=key_func, recent=recent)
    if cache == "dict":
        if key_func is None:
            return Indexer(indexers=indexers)
        return Indexer(indexers=indexers, key_func=key_func)
    raise ValueError(f"unknown cache mode {cache!r} (expected 'compact' or 'dict')")
