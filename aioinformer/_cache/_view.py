"""The read side of an informer's cache: what ``informer.cache`` hands out.

The informer's writable cache (an :class:`~aioinformer.lowlevel.Indexer`, or the compact
variant) is written only by the informer, from the reflector's deltas; consumers get this view
of it, which has the reads and no writes, so a caller cannot put the cache out of step with
the API server by accident.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import Any

from .._objects import KubeObject
from ._compact import CacheIndexer, CompactIndexer, encode
from ._store import IndexFunc

__all__ = ["Cache"]


class Cache:
    """A read-only view of an informer's cache (``informer.cache``): lookups by key, the
    whole content, and the indexes.

    It reads the live cache: every call sees the informer's latest state. With the compact
    cache (the informer's default) every read decodes fresh dicts, which the caller may
    mutate (bulk reads decode with the cyclic garbage collector paused for the call; for a
    large cache read in a loop, :meth:`iter` decodes one object at a time); with
    ``cache="dict"`` the objects are the cache's own, and with the informer's ``read_cache``
    on, ``get`` of a recently read key returns the same dict as before: never mutate those
    (copy first). For selector-based reads by namespace and name,
    :meth:`~aioinformer.SharedIndexInformer.lister` is more convenient.
    """

    __slots__ = ("_indexer",)

    def __init__(self, indexer: CacheIndexer) -> None:
        self._indexer = indexer

    def __repr__(self) -> str:
        return f"<Cache objects={len(self._indexer)}>"

    def __len__(self) -> int:
        return len(self._indexer)

    def __contains__(self, key: object) -> bool:
        """Whether an object is cached under ``key`` (``"namespace/name"`` or ``"name"``)."""
        return isinstance(key, str) and key in self._indexer

    @property
    def resource_version(self) -> str:
        """The resource version of the last list the cache was replaced with."""
        return self._indexer.resource_version

    def get(self, obj: Any) -> KubeObject | None:
        """The cached object with the same key as ``obj``, or None."""
        return self._indexer.get(obj)

    def get_by_key(self, key: str) -> KubeObject | None:
        """The cached object under ``key``, or None."""
        return self._indexer.get_by_key(key)

    def get_raw_by_key(self, key: str) -> bytes | None:
        """The JSON of the object under ``key`` as the API server sent it (nothing decoded:
        for a typed decoder of your own), or None. With ``cache="dict"`` it is encoded."""
        indexer = self._indexer
        if isinstance(indexer, CompactIndexer):
            return indexer.get_raw_by_key(key)
        found = indexer.get_by_key(key)
        return None if found is None else encode(found)

    def list(self) -> builtins.list[KubeObject]:
        """All cached objects (in no particular order)."""
        return self._indexer.list()

    def iter(self) -> Iterator[KubeObject]:
        """The cached objects one at a time (those cached when it was called), each decoded
        as it is taken with the compact cache: a loop that drops each object before the next
        reads a large cache at the cost of its decodes alone."""
        return self._indexer.iter()

    def list_keys(self) -> builtins.list[str]:
        """All keys (in no particular order)."""
        return self._indexer.list_keys()

    def index_names(self) -> builtins.list[str]:
        """The names of the indexes (the built-in ``"namespace"`` and those added)."""
        return builtins.list(self._indexer.get_indexers())

    def get_indexers(self) -> dict[str, IndexFunc]:
        """A copy of the index functions by name."""
        return self._indexer.get_indexers()

    def by_index(self, index_name: str, value: str) -> builtins.list[KubeObject]:
        """The objects indexed under ``value`` (in no particular order).

        :raises IndexNotFoundError: for an index name that was never added.
        """
        return self._indexer.by_index(index_name, value)

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """The keys indexed under ``value``, sorted.

        :raises IndexNotFoundError: for an index name that was never added.
        """
        return self._indexer.index_keys(index_name, value)

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value the index currently holds (in no particular order).

        :raises IndexNotFoundError: for an index name that was never added.
        """
        return self._indexer.list_index_func_values(index_name)

    def index(self, index_name: str, obj: Any) -> builtins.list[KubeObject]:
        """The cached objects sharing at least one index value with ``obj``.

        :raises IndexNotFoundError: for an index name that was never added.
        """
        return self._indexer.index(index_name, obj)
