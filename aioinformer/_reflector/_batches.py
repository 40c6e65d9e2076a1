"""The reflector's watch hand-off, a batch at a time.

A stream with ``next_batch`` (:class:`~aioinformer._listwatch.BatchWatchStream`, such as the
HTTP transport's) gives every event one read of the connection completed; a store with
``apply`` (the :class:`~aioinformer.lowlevel.DeltaFIFO`) takes them in one call, with one
wake-up of its consumer. Streams and stores without them (a hand-written test double, a
user's store) are adapted here to the same shape: one event per read, one call per event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from .._cache._delta_fifo import DeltaType, WatchChange
from .._listwatch import WatchEvent, WatchEventType, WatchStream
from .._wire._slices import WireDecoder, WireEvent, WireObject
from ..errors import MalformedWatchEventError
from ._machine import ListWatch
from ._reports import Reporter
from ._statistics import Counters
from ._steps import Action, Apply, Malformed, Pause, Reject

__all__ = [
    "CHANGES",
    "BatchReader",
    "BatchWriter",
    "WireStream",
    "batch_reader",
    "batch_writer",
    "hand_off",
]

#: Reads the next batch: events and malformed lines in order; empty once the stream ended.
BatchReader: TypeAlias = Callable[
    [], Awaitable[list[WatchEvent | WireEvent | MalformedWatchEventError]]
]
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

    async def read_one() -> list[WatchEvent | WireEvent | MalformedWatchEventError]:
        try:
            return [await stream.__anext__()]
        except StopAsyncIteration:
            return []
        except MalformedWatchEventError as exc:
            return [exc]

    return read_one


class WireStream:
    """A stream of decoded events (a lister-watcher that returns dicts) as wire events: each
    object becomes a carrier (encoded once), as the informer's FIFO and cache take them."""

    def __init__(self, stream: WatchStream, decoder: WireDecoder) -> None:
        self._stream = stream
        self._read = batch_reader(stream)
        self._event_from = decoder.event_from

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)  # e.g. bytes_received

    def __aiter__(self) -> WireStream:
        return self

    async def __anext__(self) -> WireEvent:
        event: WatchEvent = await self._stream.__anext__()
        return self._event_from(event)

    async def next_batch(self) -> list[WireEvent | MalformedWatchEventError]:
        """The next batch of the stream, each event as a wire event (see
        :meth:`~aioinformer._listwatch.BatchWatchStream.next_batch`)."""
        event_from = self._event_from
        batch = await self._read()
        return [
            item if isinstance(item, MalformedWatchEventError) else event_from(item)  # type: ignore[arg-type]
            for item in batch
        ]

    async def aclose(self) -> None:
        await self._stream.aclose()


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


async def hand_off(
    batch: list[WatchEvent | WireEvent | MalformedWatchEventError],
    write: BatchWriter,
    machine: ListWatch,
    counters: Counters,
    reporter: Reporter,
    *,
    has_transform: bool,
) -> Action | None:
    """Feed a batch to the machine, in order, and its changes to the store in one call.

    The batch stops at a malformed line or an event whose resource version went back: the
    events before it are applied, and the machine's action (a relist from the last good
    RV) is returned. Invalid objects are skipped and reported; unknown event types are
    counted and reported, and the watch goes on."""
    events = counters.events
    received: list[WatchEvent | WireEvent] = []
    malformed: MalformedWatchEventError | None = None
    for item in batch:
        if isinstance(item, MalformedWatchEventError):
            malformed = item
            break
        received.append(item)
    changes: list[WatchChange] = []
    stop: Action | None = None
    for event, action in zip(received, machine.events(received), strict=False):
        if action.__class__ is Apply:
            kind = action.type
            change = CHANGES.get(kind)
            if change is not None:
                obj = event.object
                if obj.__class__ is WireObject:
                    changes.append((change, obj, None))  # the carrier holds its JSON
                else:
                    changes.append((change, obj, event.raw))  # type: ignore[union-attr]
            events[kind] = events.get(kind, 0) + 1
        elif isinstance(action, Reject):
            reporter.invalid(action.error)
        elif isinstance(action, Pause):
            stop = action  # the event was not applied
            break
        else:
            counters.unknown_events += 1
            # The watch goes on: the hook hears of it, one WARNING line says it.
            reporter.report(
                MalformedWatchEventError(
                    f"skipping watch event of unknown type {str(event.type)[:40]!r}"
                )
            )
    if changes:
        refused = dict(await write(changes))
        for position, (_kind, obj, _raw) in enumerate(changes):
            exc = refused.get(position)
            if exc is not None:
                reporter.refused(obj, exc, has_transform=has_transform)
            elif counters.stale:
                reporter.accepted(obj)
    if stop is None and malformed is not None:
        counters.malformed_events += 1
        stop = machine.feed(Malformed(malformed))
    return stop
