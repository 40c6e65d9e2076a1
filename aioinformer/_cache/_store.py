"""The local cache: a keyed :class:`Store` and the :class:`Indexer` that adds secondary indices.

Both are synchronous and never block: they are written by one task (the informer's delta
processor) and read by anyone. Objects are shared, not copied: every reader gets the stored
dict itself (see :mod:`aioinformer._objects`).

Every write is all-or-nothing. Index values for the new state are computed before anything is
changed, so an index function that raises (or a key function that fails) leaves the store and
every index exactly as they were, and the write raises :class:`~aioinformer.errors.IndexFuncError`
(or :class:`~aioinformer.errors.KeyFuncError`).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeAlias

from .._objects import KeyFunc, KubeObject, namespace_of
from .._wire._slices import WireObject, loads
from ..errors import IndexConflictError, IndexFuncError, IndexNotFoundError
from ._deltas import object_key

__all__ = [
    "NAMESPACE_INDEX",
    "IndexFunc",
    "Indexer",
    "Indexers",
    "Store",
    "meta_namespace_index_func",
]

#: An index function: the values under which an object is indexed (possibly none).
IndexFunc: TypeAlias = Callable[[Any], Iterable[str]]
#: Index functions by index name.
Indexers: TypeAlias = Mapping[str, IndexFunc]

#: Name of the built-in index of objects by namespace.
NAMESPACE_INDEX = "namespace"


def _decoded(obj: Any) -> KubeObject:
    """A decoded object as it is; an informer's carrier in wire form decoded."""
    if obj.__class__ is WireObject:
        decoded: KubeObject = loads(obj.data)
        return decoded
    return obj  # type: ignore[no-any-return]


def meta_namespace_index_func(obj: Any) -> list[str]:
    """Index objects by ``metadata.namespace`` (``""`` for cluster-scoped objects)."""
    return [namespace_of(obj)]


class Store:
    """A keyed object cache.

    :param key_func: computes the key of an object; the default accepts tombstones, so
        ``delete(DeletedFinalStateUnknown(...))`` deletes by the tombstone's key.

    Objects given in an informer's wire form are decoded on the way in (the store keeps
    dicts).
    """

    __slots__ = ("_items", "_key_func", "_resource_version")

    def __init__(self, *, key_func: KeyFunc = object_key) -> None:
        self._key_func = key_func
        self._items: dict[str, KubeObject] = {}
        self._resource_version = ""

    @property
    def key_func(self) -> KeyFunc:
        """The key function of this store."""
        return self._key_func

    @property
    def resource_version(self) -> str:
        """The resource version given to the last :meth:`replace` (``""`` before any)."""
        return self._resource_version

    def __repr__(self) -> str:
        return f"<{type(self).__name__} objects={len(self._items)}>"

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def add(self, obj: KubeObject) -> KubeObject | None:
        """Insert or replace the object under its key; returns the object it replaced."""
        obj = _decoded(obj)
        key = self._key_func(obj)
        old = self._items.get(key)
        self._put(key, obj)
        return old

    def update(self, obj: KubeObject) -> KubeObject | None:
        """Same as :meth:`add`: insert or replace; returns the object it replaced."""
        return self.add(obj)

    def upsert(self, obj: KubeObject, *, raw: bytes | None = None) -> KubeObject | None:
        """Same as :meth:`add` (``raw``, the object's JSON, is not needed here). The informer
        writes through ``upsert`` and :meth:`remove`, which both cache modes implement."""
        return self.add(obj)

    def remove(self, obj: Any) -> KubeObject | None:
        """Same as :meth:`delete`."""
        return self.delete(obj)

    def delete(self, obj: Any) -> KubeObject | None:
        """Remove the object with the same key (a tombstone deletes by its key); absent is
        fine. Returns the object removed, or None."""
        key = self._key_func(obj)
        old = self._items.get(key)
        if old is not None:
            self._remove(key)
        return old

    def get(self, obj: Any) -> KubeObject | None:
        """The stored object with the same key as ``obj``, or None."""
        return self._items.get(self._key_func(obj))

    def get_by_key(self, key: str) -> KubeObject | None:
        """The stored object under ``key``, or None."""
        return self._items.get(key)

    def get_stored(self, key: str) -> KubeObject | None:
        """The stored object under ``key``, or None (the same as :meth:`get_by_key`)."""
        return self._items.get(key)

    def list(self) -> list[KubeObject]:
        """All stored objects (in no particular order)."""
        return list(self._items.values())

    def iter(self) -> Iterator[KubeObject]:
        """The stored objects (of those stored when called), one at a time."""
        return iter(list(self._items.values()))

    def stored(self) -> builtins.list[KubeObject]:
        """All stored objects (the same as :meth:`list`)."""
        return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        """All keys (in no particular order)."""
        return list(self._items)

    def replace(self, objs: Iterable[KubeObject], resource_version: str) -> None:
        """Replace the whole content with ``objs``, atomically."""
        items = {self._key_func(obj): obj for obj in map(_decoded, objs)}
        self._swap(items)
        self._resource_version = resource_version

    def resync(self) -> None:
        """Nothing to do for a plain store (part of the reflector's store contract)."""

    # Subclass hooks; the plain store keeps no derived state.
    def _put(self, key: str, obj: KubeObject) -> None:
        self._items[key] = obj

    def _remove(self, key: str) -> None:
        del self._items[key]

    def _swap(self, items: dict[str, KubeObject]) -> None:
        self._items = items


def index_values(index_name: str, func: IndexFunc, key: str, obj: Any) -> tuple[str, ...]:
    """The distinct values ``func`` indexes ``obj`` under (in order).

    :raises IndexFuncError: if ``func`` raises or returns anything but an iterable of strings.
    """
    try:
        result = func(obj)
        if isinstance(result, str | bytes):
            raise TypeError("an index function must return an iterable of strings, not a string")
        values = tuple(dict.fromkeys(result))
        for value in values:
            if not isinstance(value, str):
                raise TypeError(f"index value {value!r} is not a string")
    except Exception as exc:
        raise IndexFuncError(index_name, key) from exc
    return values


class Indexer(Store):
    """A :class:`Store` with secondary indices.

    :param indexers: index functions by name, added to the built-in :data:`NAMESPACE_INDEX`
        (an entry named ``"namespace"`` replaces the built-in one).
    :param key_func: as for :class:`Store`.
    """

    __slots__ = ("_index_funcs", "_indices", "_values")

    def __init__(
        self,
        *,
        indexers: Indexers | None = None,
        key_func: KeyFunc = object_key,
    ) -> None:
        super().__init__(key_func=key_func)
        funcs: dict[str, IndexFunc] = {NAMESPACE_INDEX: meta_namespace_index_func}
        funcs.update(indexers or {})
        self._index_funcs = funcs
        # index name -> indexed value -> keys
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in funcs}
        # index name -> key -> the values it is indexed under (absent when none)
        self._values: dict[str, dict[str, tuple[str, ...]]] = {name: {} for name in funcs}

    def __repr__(self) -> str:
        indexers = ", ".join(sorted(self._index_funcs))
        return f"<{type(self).__name__} objects={len(self._items)} indexers=[{indexers}]>"

    def get_indexers(self) -> dict[str, IndexFunc]:
        """A copy of the registered index functions."""
        return dict(self._index_funcs)

    def add_indexers(self, indexers: Indexers) -> None:
        """Register more index functions; objects already stored are indexed at once.

        :raises IndexConflictError: if a name is already registered (nothing is added).
        :raises IndexFuncError: if a new function raises on a stored object (nothing is added).
        """
        taken = sorted(set(indexers) & set(self._index_funcs))
        if taken:
            raise IndexConflictError(f"indexer(s) already registered: {', '.join(taken)}")
        built = {name: self._build(name, func, self._items) for name, func in indexers.items()}
        for name, (index, values) in built.items():
            self._index_funcs[name] = indexers[name]
            self._indices[name] = index
            self._values[name] = values

    def by_index(self, index_name: str, value: str) -> builtins.list[KubeObject]:
        """The objects indexed under ``value`` (in no particular order)."""
        items = self._items
        return [items[key] for key in self._index(index_name).get(value, ())]

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """The keys indexed under ``value``, sorted."""
        return sorted(self._index(index_name).get(value, ()))

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value the index currently holds (in no particular order)."""
        return list(self._index(index_name))

    def index(self, index_name: str, obj: Any) -> builtins.list[KubeObject]:
        """The stored objects sharing at least one index value with ``obj``."""
        index = self._index(index_name)
        func = self._index_funcs[index_name]
        values = index_values(index_name, func, self._key_func(obj), obj)
        keys: dict[str, None] = {}
        for value in values:
            keys.update(dict.fromkeys(index.get(value, ())))
        items = self._items
        return [items[key] for key in keys]

    def _index(self, index_name: str) -> dict[str, set[str]]:
        try:
            return self._indices[index_name]
        except KeyError:
            raise IndexNotFoundError(index_name) from None

    def _put(self, key: str, obj: KubeObject) -> None:
        funcs = self._index_funcs
        new = [(name, index_values(name, func, key, obj)) for name, func in funcs.items()]
        # Nothing has been changed before this point.
        self._items[key] = obj
        for name, values in new:
            known = self._values[name]
            old = known.get(key, ())
            if old == values:
                continue
            index = self._indices[name]
            for value in old:
                _discard(index, value, key)
            for value in values:
                keys = index.get(value)
                if keys is None:
                    index[value] = {key}
                else:
                    keys.add(key)
            if values:
                known[key] = values
            else:
                del known[key]

    def _remove(self, key: str) -> None:
        del self._items[key]
        for name, known in self._values.items():
            old = known.pop(key, ())
            index = self._indices[name]
            for value in old:
                _discard(index, value, key)

    def _swap(self, items: dict[str, KubeObject]) -> None:
        built = {name: self._build(name, func, items) for name, func in self._index_funcs.items()}
        self._items = items
        for name, (index, values) in built.items():
            self._indices[name] = index
            self._values[name] = values

    @staticmethod
    def _build(
        name: str, func: IndexFunc, items: Mapping[str, KubeObject]
    ) -> tuple[dict[str, set[str]], dict[str, tuple[str, ...]]]:
        index: dict[str, set[str]] = {}
        values_by_key: dict[str, tuple[str, ...]] = {}
        for key, obj in items.items():
            values = index_values(name, func, key, obj)
            if not values:
                continue
            values_by_key[key] = values
            for value in values:
                keys = index.get(value)
                if keys is None:
                    index[value] = {key}
                else:
                    keys.add(key)
        return index, values_by_key


def _discard(index: dict[str, set[str]], value: str, key: str) -> None:
    keys = index.get(value)
    if keys is None:
        return
    keys.discard(key)
    if not keys:
        del index[value]
