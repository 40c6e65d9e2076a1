"""A bounded cache of recently read objects, for hot keys (opt-in).

The compact cache decodes on every read (a fresh dict the caller owns). For a consumer that
reads the same few keys over and over (a web handler serving one object, a controller's
lookups of a parent), :class:`RecentObjects` keeps the last objects read, decoded, and hands
out the **same** dict to every reader of a key until the object changes: those dicts are
shared and read-only (copy before changing one). It needs no invalidation: an entry remembers
the very carrier it was decoded from, and the cache replaces the carrier on every write, so an
identity check tells a stale entry from a fresh one.
"""

from __future__ import annotations

from typing import Any

from .._wire._slices import WireObject, loads

__all__ = ["RecentObjects"]


class RecentObjects:
    """The last ``maxsize`` objects decoded for reads, by key (the oldest decoded is dropped
    first: a hit costs one dict lookup and an identity check, nothing more).

    :param maxsize: how many decoded objects to keep (a 2.5 KB Pod decodes to ~14 KB and ~33
        containers the garbage collector tracks: keep it in the hundreds).
    """

    __slots__ = ("_items", "_max")

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self._max = maxsize
        self._items: dict[str, tuple[WireObject, Any]] = {}

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str, wire: WireObject) -> Any:
        """The decoded object for ``key`` whose carrier is ``wire`` (the cache's current one):
        the kept one when it was decoded from this very carrier, else decoded now and kept."""
        items = self._items
        hit = items.get(key)
        if hit is not None and hit[0] is wire:
            return hit[1]
        obj = loads(wire.data)
        if hit is not None:
            del items[key]  # re-inserted last: a changed object counts as newly decoded
        elif len(items) >= self._max:
            del items[next(iter(items))]
        items[key] = (wire, obj)
        return obj

    def discard(self, key: str) -> None:
        """Forget ``key`` (on delete: releases its memory early; never needed for
        correctness)."""
        self._items.pop(key, None)

    def clear(self) -> None:
        """Forget everything."""
        self._items.clear()
