"""The DeltaFIFO's unit of change: :class:`DeltaType`, :class:`Delta`, a watch change, and
the key of whatever a delta carries (:func:`object_key`)."""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from typing import Any, TypeAlias

from .._objects import DeletedFinalStateUnknown, meta_namespace_key
from .._wire._slices import WireObject

__all__ = ["Delta", "DeltaType", "WatchChange", "object_key"]


def object_key(obj: Any) -> str:
    """The cache key of what a delta carries: a decoded object (its ``namespace/name``), an
    object still in its wire bytes (the key decoded with its metadata) or a tombstone (its
    key); a string is a key already.

    :raises KeyFuncError: for a decoded object without ``metadata.name``.
    """
    if obj.__class__ is WireObject:
        key: str = obj.key
        return key
    if obj.__class__ is DeletedFinalStateUnknown:
        tombstone_key: str = obj.key
        return tombstone_key
    return meta_namespace_key(obj)


class DeltaType(StrEnum):
    """What happened to an object."""

    ADDED = "Added"
    UPDATED = "Updated"
    DELETED = "Deleted"
    #: The object was in a (re)list; emitted by ``replace`` unless ``emit_delta_type_replaced``
    #: is false (then ``SYNC`` is used).
    REPLACED = "Replaced"
    #: A periodic resync re-delivers the cached object.
    SYNC = "Sync"


class Delta:
    """One change: its type, the object (or a tombstone, for some ``DELETED`` deltas) and,
    when the producer had it, the object's JSON (``raw``, which a compact cache stores as is).

    In an informer the object is its wire bytes with the decoded metadata (an internal
    carrier that holds its own JSON; ``raw`` is then None); a pipeline of your own that feeds
    the FIFO dicts gets dicts back.

    ``delta_type, obj = delta`` unpacks the type and the object; equality compares those two.
    """

    __slots__ = ("object", "raw", "type")

    def __init__(self, type: DeltaType, object: Any, raw: bytes | None = None) -> None:
        self.type = type
        self.object = object
        #: The JSON of ``object`` exactly (None when not known; never for a tombstone).
        self.raw = raw

    def __iter__(self) -> Iterator[Any]:
        return iter((self.type, self.object))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Delta):
            return NotImplemented
        return self.type == other.type and self.object == other.object

    __hash__ = None  # type: ignore[assignment]  # objects are dicts: never hashable

    def __repr__(self) -> str:
        return f"Delta({self.type!r}, {self.object!r})"


#: One watch event for :meth:`aioinformer.lowlevel.DeltaFIFO.apply`:
#: ``(ADDED | UPDATED | DELETED, object, raw)``, ``raw`` being the object's JSON or None.
WatchChange: TypeAlias = tuple[DeltaType, Any, bytes | None]
