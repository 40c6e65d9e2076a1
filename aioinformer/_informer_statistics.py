"""What :meth:`SharedIndexInformer.statistics <aioinformer.SharedIndexInformer.statistics>`
returns."""

from __future__ import annotations

from dataclasses import dataclass

from ._lifecycle import State
from ._listener import ListenerStatistics
from ._reflector import ReflectorStatistics
from ._sharding._informer_filter import ShardStatistics

__all__ = ["InformerStatistics"]


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
