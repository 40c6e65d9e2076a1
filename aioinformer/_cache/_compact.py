"""The compact cache: every object kept as its JSON bytes, where the cyclic GC never looks.

A decoded Kubernetes object is dozens of dicts and lists, each one a container CPython's cyclic
garbage collector tracks and rescans on every full collection; a cache of them makes every
collection proportional to the cache (measured: 74% of an informer's time at 50,000 Pods) and
holds ~5x the object's wire size. :class:`CompactIndexer` keeps each object instead as one
entry of atomic values beside its key::

    entries[key] = (data, resource_version, slot_0, slot_1, ...)

``data`` is the object's JSON as an exact-size ``bytes`` (a slice of the watch line when the
caller has one, else ``orjson.dumps`` copied to its length: orjson returns its output in a
buffer about three times larger); ``resource_version`` is a ``str``; ``slot_i`` is the i-th
index's value for the object when it has exactly one (the common case), else None (its values
then live beside the index). Index values are shared with the index itself (one string per
distinct value). Indices map a value to a ``dict`` of keys used as an ordered set.

What the collector tracks: ``bytes`` and ``str`` are not containers; a tuple or dict holding
only those is untracked (a new tuple at its first collection, a dict from the start). So
after one collection no object per cached object is tracked: only the entries dict and a few
dicts per index, whose traversal is a loop over pointers to untracked objects.

Reads decode (``orjson.loads``, ~11 µs for a 2.5 KB Pod): each read returns a fresh dict that
the caller may mutate without touching the cache. Writes never decode: the replaced object comes
back as a :class:`LazyObject`, decoded only if someone looks at it.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any, Literal, TypeAlias

import orjson

from .._objects import (
    KeyFunc,
    KubeObject,
    deletion_handling_meta_namespace_key,
    try_resource_version,
)
from ..errors import IndexConflictError, IndexNotFoundError
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
    "LazyObject",
    "encode",
    "new_indexer",
    "previous_resource_version",
    "resolve",
]

#: How an informer keeps its cache: ``"compact"`` (JSON bytes, decoded on read; the default)
#: or ``"dict"`` (the decoded dicts themselves, shared with every reader).
CacheMode: TypeAlias = Literal["compact", "dict"]
#: The default cache mode.
DEFAULT_CACHE_MODE: CacheMode = "compact"

# An entry: (data, resource_version, slot_0, ..., slot_{n-1}); see _IndexState for slots.
_Entry: TypeAlias = tuple[Any, ...]

_loads = orjson.loads
_dumps = orjson.dumps


def encode(obj: Any) -> bytes:
    """The JSON of ``obj`` as an exact-size ``bytes`` object.

    :raises TypeError: (``orjson.JSONEncodeError``) if ``obj`` is not JSON-serializable.
    """
    return bytes(memoryview(_dumps(obj)))


class LazyObject:
    """The state an object had in the cache before a write, decoded on first access.

    The informer puts it in the ``old_object`` of update and delete notifications, so an
    event nobody reads the old state of never pays for decoding it. Once decoded, the same dict
    is returned on every access (it is shared like an event's other objects).
    """

    __slots__ = ("_data", "_object", "resource_version")

    def __init__(self, data: bytes, resource_version: str) -> None:
        self._data = data
        self._object: KubeObject | None = None
        #: ``metadata.resourceVersion`` of that state (``""`` when it had none).
        self.resource_version = resource_version

    @property
    def object(self) -> KubeObject:
        """The decoded object (decoded on the first access, then the same dict)."""
        obj = self._object
        if obj is None:
            obj = self._object = _loads(self._data)
            self._data = b""
        return obj

    def __repr__(self) -> str:
        state = "decoded" if self._object is not None else f"{len(self._data)} bytes"
        return f"<LazyObject rv={self.resource_version!r} {state}>"


def resolve(previous: KubeObject | LazyObject | None) -> KubeObject | None:
    """The object behind a write's result (a dict as is; a :class:`LazyObject` decoded)."""
    if isinstance(previous, LazyObject):
        return previous.object
    return previous


def previous_resource_version(previous: KubeObject | LazyObject) -> str:
    """``metadata.resourceVersion`` of a write's result, without decoding a LazyObject."""
    if isinstance(previous, LazyObject):
        return previous.resource_version
    return try_resource_version(previous)


class _IndexState:
    """One index: value -> keys, and where each entry's values live.

    An entry's slot holds its only value (a ``str``, the common case), or None when it has
    none or several; several live in ``multi`` (key -> tuple). Keeping tuples out of the entry
    matters to the collector: a tuple is untracked when a collection finds its items
    untracked, and one only reachable through a young entry is examined after that entry, so
    the entry would stay tracked one collection longer (and could reach the oldest generation).
    """

    __slots__ = ("canon", "func", "keys", "multi", "name")

    def __init__(self, name: str, func: IndexFunc) -> None:
        self.name = name
        self.func = func
        #: value -> keys (a dict used as an ordered set: str -> None is never GC-tracked).
        self.keys: dict[str, dict[str, None]] = {}
        #: value -> the one str object the entries and ``keys`` share for it.
        self.canon: dict[str, str] = {}
        #: key -> its values, for keys with several.
        self.multi: dict[str, tuple[str, ...]] = {}

    def values_for(self, key: str, obj: Any) -> tuple[str, ...]:
        """The canonical values of ``obj`` (raises IndexFuncError; changes nothing)."""
        if self.func is meta_namespace_index_func and type(obj) is dict:
            # The built-in index, on a decoded object: what the function computes, directly.
            metadata = obj.get("metadata")
            namespace = metadata.get("namespace") if type(metadata) is dict else None
            if type(namespace) is str:
                return (self.canon.get(namespace, namespace),)
        values = index_values(self.name, self.func, key, obj)
        canon = self.canon
        if len(values) == 1:
            value = values[0]
            return (canon.get(value, value),)
        return tuple([canon.get(value, value) for value in values])

    def values_of(self, key: str, slot: str | None) -> tuple[str, ...]:
        """The values an entry's slot stands for."""
        return (slot,) if slot is not None else self.multi.get(key, ())

    def insert(self, key: str, values: tuple[str, ...]) -> str | None:
        """Index ``key`` under ``values``; returns the entry's slot."""
        keys, canon = self.keys, self.canon
        for value in values:
            bucket = keys.get(value)
            if bucket is None:
                keys[value] = {key: None}
                canon[value] = value
            else:
                bucket[key] = None
        if len(values) == 1:
            return values[0]
        if values:
            self.multi[key] = values
        return None

    def discard(self, key: str, slot: str | None) -> None:
        """Remove ``key`` from the values its slot stands for."""
        values = self.multi.pop(key, ()) if slot is None else (slot,)
        keys, canon = self.keys, self.canon
        for value in values:
            bucket = keys.get(value)
            if bucket is None:
                continue
            bucket.pop(key, None)
            if not bucket:
                del keys[value]
                del canon[value]


class CompactIndexer:
    """An :class:`~aioinformer.lowlevel.Indexer` that keeps objects as JSON bytes.

    The same API and guarantees as the Indexer (all-or-nothing writes, the built-in namespace
    index, index functions added at any time), with two differences: every read returns a
    **fresh** dict (decoded from the cache; mutate it freely), and objects must be
    JSON-serializable (a write of one that is not raises ``TypeError`` and changes nothing).

    Writes take the object's JSON when the caller has it (``raw``, e.g. the object's slice of
    a watch line, see :func:`aioinformer._wire._framing.decode_event`); it must be the encoding of
    the very object given (after any transform), and is stored as is.

    :param indexers: index functions by name, added to the built-in
        :data:`~aioinformer.NAMESPACE_INDEX` (an entry named ``"namespace"`` replaces it).
    :param key_func: the key of an object (tombstones give their own key by default).
    """

    __slots__ = ("_entries", "_indices", "_key_func", "_rv")

    def __init__(
        self,
        *,
        indexers: Indexers | None = None,
        key_func: KeyFunc = deletion_handling_meta_namespace_key,
    ) -> None:
        funcs: dict[str, IndexFunc] = {NAMESPACE_INDEX: meta_namespace_index_func}
        funcs.update(indexers or {})
        self._key_func = key_func
        self._entries: dict[str, _Entry] = {}
        self._rv = ""
        self._indices = [_IndexState(name, func) for name, func in funcs.items()]

    # -- introspection ---------------------------------------------------------------------

    @property
    def key_func(self) -> KeyFunc:
        """The key function of this cache."""
        return self._key_func

    @property
    def resource_version(self) -> str:
        """The resource version given to the last :meth:`replace` (``""`` before any)."""
        return self._rv

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

    def upsert(self, obj: KubeObject, *, raw: bytes | None = None) -> LazyObject | None:
        """Insert or replace ``obj`` under its key; returns the replaced state, not decoded.

        :param raw: the JSON of ``obj`` if the caller has it (stored as is; else encoded).
        :raises KeyFuncError: if the key cannot be computed (nothing changes).
        :raises IndexFuncError: if an index function raises (nothing changes).
        :raises TypeError: if ``obj`` is not JSON-serializable (nothing changes).
        """
        old = self._put(obj, raw)
        return None if old is None else LazyObject(old[0], old[1])

    def remove(self, obj: Any) -> LazyObject | None:
        """Remove the object with the same key (a tombstone removes by its key); returns the
        removed state, not decoded (None if absent)."""
        old = self._pop(self._key_func(obj))
        return None if old is None else LazyObject(old[0], old[1])

    def add(self, obj: KubeObject, *, raw: bytes | None = None) -> KubeObject | None:
        """Insert or replace the object; returns the object it replaced (decoded), or None."""
        old = self._put(obj, raw)
        return None if old is None else _loads(old[0])

    def update(self, obj: KubeObject, *, raw: bytes | None = None) -> KubeObject | None:
        """Same as :meth:`add`."""
        return self.add(obj, raw=raw)

    def delete(self, obj: Any) -> KubeObject | None:
        """Remove the object with the same key; returns it (decoded), or None if absent."""
        old = self._pop(self._key_func(obj))
        return None if old is None else _loads(old[0])

    def replace(self, objs: Iterable[KubeObject], resource_version: str) -> None:
        """Replace the whole content with ``objs`` (the last of a key wins), atomically."""
        key_func = self._key_func
        objects = {key_func(obj): obj for obj in objs}
        indices = [_IndexState(index.name, index.func) for index in self._indices]
        entries: dict[str, _Entry] = {}
        for key, obj in objects.items():
            values = [index.values_for(key, obj) for index in indices]
            data = encode(obj)
            slots = [index.insert(key, v) for index, v in zip(indices, values, strict=True)]
            entries[key] = (data, try_resource_version(obj), *slots)
        self._entries, self._indices = entries, indices
        self._rv = resource_version

    def resync(self) -> None:
        """Nothing to do (part of the reflector's store contract)."""

    def add_indexers(self, indexers: Indexers) -> None:
        """Register more index functions; stored objects are decoded once and indexed.

        :raises IndexConflictError: if a name is already registered (nothing is added).
        :raises IndexFuncError: if a new function raises on a stored object (nothing is added).
        """
        taken = sorted(set(indexers) & {index.name for index in self._indices})
        if taken:
            raise IndexConflictError(f"indexer(s) already registered: {', '.join(taken)}")
        added = [_IndexState(name, func) for name, func in indexers.items()]
        entries: dict[str, _Entry] = {}
        for key, entry in self._entries.items():
            obj = _loads(entry[0])
            values = [index.values_for(key, obj) for index in added]
            slots = [index.insert(key, v) for index, v in zip(added, values, strict=True)]
            entries[key] = (*entry, *slots)
        self._entries = entries
        self._indices += added

    # -- reads -----------------------------------------------------------------------------

    def get(self, obj: Any) -> KubeObject | None:
        """A fresh copy of the stored object with the same key as ``obj``, or None."""
        return self.get_by_key(self._key_func(obj))

    def get_by_key(self, key: str) -> KubeObject | None:
        """A fresh copy of the stored object under ``key``, or None."""
        entry = self._entries.get(key)
        return None if entry is None else _loads(entry[0])

    def get_raw_by_key(self, key: str) -> bytes | None:
        """The stored JSON of the object under ``key`` (no decoding), or None."""
        entry = self._entries.get(key)
        return None if entry is None else entry[0]

    def list(self) -> builtins.list[KubeObject]:
        """Fresh copies of all stored objects (in no particular order)."""
        return [_loads(entry[0]) for entry in self._entries.values()]

    def list_keys(self) -> builtins.list[str]:
        """All keys (in no particular order)."""
        return list(self._entries)

    def by_index(self, index_name: str, value: str) -> builtins.list[KubeObject]:
        """Fresh copies of the objects indexed under ``value`` (in no particular order)."""
        entries = self._entries
        keys = self._index(index_name).keys.get(value, ())
        return [_loads(entries[key][0]) for key in keys]

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """The keys indexed under ``value``, sorted."""
        return sorted(self._index(index_name).keys.get(value, ()))

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value the index currently holds (in no particular order)."""
        return list(self._index(index_name).keys)

    def index(self, index_name: str, obj: Any) -> builtins.list[KubeObject]:
        """Fresh copies of the stored objects sharing at least one index value with ``obj``."""
        index = self._index(index_name)
        found: dict[str, None] = {}
        for value in index.values_for(self._key_func(obj), obj):
            found.update(index.keys.get(value, {}))
        entries = self._entries
        return [_loads(entries[key][0]) for key in found]

    # -- internals -------------------------------------------------------------------------

    def _index(self, index_name: str) -> _IndexState:
        for index in self._indices:
            if index.name == index_name:
                return index
        raise IndexNotFoundError(index_name)

    def _put(self, obj: Any, raw: bytes | None) -> _Entry | None:
        key = self._key_func(obj)
        indices = self._indices
        values = [index.values_for(key, obj) for index in indices]
        data = encode(obj) if raw is None else raw
        # Nothing has been changed before this point.
        entries = self._entries
        old = entries.get(key)
        slots: builtins.list[str | None] = []
        position = 2
        for index, new in zip(indices, values, strict=True):
            if old is not None:
                previous = old[position]
                if previous is not None and len(new) == 1 and previous is new[0]:
                    slots.append(previous)  # unchanged (canonical strings compare by identity)
                    position += 1
                    continue
                index.discard(key, previous)
            slots.append(index.insert(key, new))
            position += 1
        entries[key] = (data, try_resource_version(obj), *slots)
        return old

    def _pop(self, key: str) -> _Entry | None:
        old = self._entries.pop(key, None)
        if old is not None:
            for position, index in enumerate(self._indices, 2):
                index.discard(key, old[position])
        return old


#: Either kind of cache an informer may keep.
CacheIndexer: TypeAlias = Indexer | CompactIndexer


def new_indexer(
    cache: CacheMode = DEFAULT_CACHE_MODE,
    *,
    indexers: Indexers | None = None,
    key_func: KeyFunc = deletion_handling_meta_namespace_key,
) -> CacheIndexer:
    """The cache for ``cache`` mode: a :class:`CompactIndexer` or a dict-backed
    :class:`~aioinformer.lowlevel.Indexer`.

    :raises ValueError: for an unknown mode.
    """
    if cache == "compact":
        return CompactIndexer(indexers=indexers, key_func=key_func)
    if cache == "dict":
        return Indexer(indexers=indexers, key_func=key_func)
    raise ValueError(f"unknown cache mode {cache!r} (expected 'compact' or 'dict')")
