"""The informer's processing step: deltas into the cache, notifications out to consumers.

:func:`apply_deltas` writes a key's deltas to the cache (either cache mode: ``upsert`` and
``remove``) and makes one :class:`~aioinformer.Event` per applied delta, following
client-go's ``HandleDeltas``: ``Sync``/``Replaced``/``Added``/``Updated`` update a cached key
(an ``UPDATED`` notification) and add an absent one (``ADDED``); ``Deleted`` removes it
(``DELETED``). An update is a *sync* notification for a ``Sync`` delta, and for a ``Replaced``
delta whose resource version did not change. With the compact cache nothing is decoded here:
the cache takes the carriers the reflector made, and the events carry them (and the replaced
carrier) to be decoded when a consumer reads them. With the dict cache each object is decoded
once, on its way into the cache, and the events share the cached dict.

:func:`distribute` hands a whole batch of notifications to every listener in one call each
(one deque extension, one wake-up), sync notifications only to the listeners due for resync.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._cache._compact import CacheIndexer
from .._cache._delta_fifo import Delta, DeltaType
from .._objects import KubeObject, try_resource_version
from .._wire._slices import WireObject, loads
from ._listener import Event, EventType, Listener

__all__ = ["apply_deltas", "distribute"]

_DELETED = DeltaType.DELETED
_SYNC = DeltaType.SYNC
_REPLACED = DeltaType.REPLACED


def apply_deltas(
    indexer: CacheIndexer,
    deltas: list[Delta],
    is_in_initial_list: bool,
    events: list[Event],
    refused_by_cache: Callable[[DeltaType, KubeObject, Exception], None],
    *,
    decode: bool = False,
) -> tuple[int, int]:
    """Apply one key's deltas (oldest first) to the cache, appending a notification per
    applied delta to ``events``. A delta the cache refuses is skipped and handed to
    ``refused_by_cache`` (the informer reports it). With ``decode`` (a dict cache), objects
    still in wire form are decoded before they are cached.

    :returns: ``(sync notifications made, deltas refused)``.
    """
    syncs = refused = 0
    append = events.append
    for delta in deltas:
        delta_type, obj = delta.type, delta.object
        try:
            if delta_type is _DELETED:
                old = indexer.remove(obj)
            else:
                if decode and obj.__class__ is WireObject:
                    obj = loads(obj.data)
                old = indexer.upsert(obj, raw=delta.raw)
        except Exception as exc:
            refused += 1
            refused_by_cache(delta_type, obj, exc)
            continue
        if delta_type is _DELETED:
            append(Event(EventType.DELETED, obj, old))
        elif old is None:
            append(Event(EventType.ADDED, obj, None, False, is_in_initial_list))
        else:
            is_sync = delta_type is _SYNC or (
                delta_type is _REPLACED and _resource_version(old) == _resource_version(obj)
            )
            append(Event(EventType.UPDATED, obj, old, is_sync))
            syncs += is_sync
    return syncs, refused


def _resource_version(obj: Any) -> str:
    if obj.__class__ is WireObject:
        rv: str = obj.resource_version
        return rv
    return try_resource_version(obj)


def distribute(
    listeners: Sequence[Listener], events: list[Event], syncs: int, is_in_initial_list: bool
) -> None:
    """Hand ``events`` (``syncs`` of them sync notifications) to every listener at once."""
    if not events:
        return
    initial = 0
    if is_in_initial_list:
        initial = sum(1 for event in events if event.is_in_initial_list)
    if syncs == 0:
        for listener in listeners:
            listener.add_batch(events, initial)
        return
    changes = [event for event in events if not event.is_sync]
    for listener in listeners:
        listener.add_batch(events if listener.syncing else changes, initial)
