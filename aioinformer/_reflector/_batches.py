"""The reflector's watch hand-off, a batch at a time.

A stream with ``next_batch`` (:class:`~aioinformer.listwatch.BatchWatchStream`, such as the
HTTP transport's) gives every event one read of the connection completed; a store with
``apply`` (the :class:`~aioinformer.delta_fifo.DeltaFIFO`) takes them in one call, with one
wake-up of its consumer. Streams and stores without them (a hand-written test double, a
user's store) are adapted here to the same shape: one event per read, one call per event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from .._delta_fifo import DeltaType, WatchChange
from .._listwatch import WatchEvent, WatchEventType, WatchStream
from ..errors import MalformedWatchEventError

__all__ = ["CHANGES", "BatchReader", "BatchWriter", "batch_reader", "batch_writer"]

#: Reads the next batch: events and malformed lines in order; empty once the stream ended.
BatchReader: TypeAlias = Callable[[], Awaitable[list[WatchEvent | MalformedWatchEventError]]]
#: Writes a batch of changes; returns the refused ones as ``(position, error)``.
BatchWriter: TypeAlias = Callable[[list[WatchChange]], Awaitable[list[tuple[int, Exception]]]]

#: The store change of each watch event type that changes the store.
CHANGES: dict[str, DeltaType] = {
    WatchEventType.ADDED: DeltaType.ADDED,
    WatchEventType.MODIFIED: DeltaType.UPDATED,
    WatchEventType.DELETED: DeltaType.DELETED,
}


def batch_reader(stream: WatchStream) -> BatchReader:
    """``stream.next_batch`` if it has one, else one ``__anext__`` per batch."""
    next_batch = getattr(stream, "next_batch", None)
    if next_batch is not None:
        reader: BatchReader = next_batch
        return reader

    async def read_one() -> list[WatchEvent | MalformedWatchEventError]:
        try:
            return [await stream.__anext__()]
        except StopAsyncIteration:
            return []
        except MalformedWatchEventError as exc:
            return [exc]

    return read_one


def batch_writer(store: Any) -> BatchWriter:
    """``store.apply`` if it has one, else ``add``/``update``/``delete`` per change."""
    apply = getattr(store, "apply", None)
    if apply is not None:
        writer: BatchWriter = apply
        return writer

    async def write_each(changes: list[WatchChange]) -> list[tuple[int, Exception]]:
        failures: list[tuple[int, Exception]] = []
        for position, (kind, obj, _raw) in enumerate(changes):
            try:
                if kind is DeltaType.ADDED:
                    await store.add(obj)
                elif kind is DeltaType.UPDATED:
                    await store.update(obj)
                else:
                    await store.delete(obj)
            except Exception as exc:
                failures.append((position, exc))
        return failures

    return write_each
