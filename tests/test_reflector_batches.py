"""The reflector's batch hand-off: a stream's batches reach the store in one ``apply`` each."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import anyio
from hypothesis import given
from hypothesis import strategies as st

from aioinformer._cache._delta_fifo import DeltaType, WatchChange
from aioinformer._listwatch import ListOptions, ListResult, WatchEvent, WatchEventType
from aioinformer._objects import KubeObject
from aioinformer._reflector._machine import ListWatch
from aioinformer._reflector._states import Cursor, Watching
from aioinformer._reflector._steps import Action, Pause
from aioinformer.errors import MalformedWatchEventError
from aioinformer.lowlevel import Reflector


def cm(name: str, rv: str) -> KubeObject:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


BATCHES: list[list[WatchEvent | MalformedWatchEventError]] = [
    [
        WatchEvent(WatchEventType.ADDED, cm("a", "2"), b"{}"),
        WatchEvent(WatchEventType.MODIFIED, cm("b", "3")),
    ],
    [
        WatchEvent(WatchEventType.BOOKMARK, {"metadata": {"resourceVersion": "4"}}),
        WatchEvent(WatchEventType.DELETED, cm("a", "5"), b"{}"),
        MalformedWatchEventError("not JSON"),
        WatchEvent(WatchEventType.DELETED, cm("b", "6"), b"{}"),
    ],
]


class BatchStream:
    """Hands out BATCHES, then waits forever (until the test is done)."""

    def __init__(self, done: anyio.Event) -> None:
        self._batches = list(BATCHES)
        self._done = done

    def __aiter__(self) -> BatchStream:
        return self

    async def __anext__(self) -> WatchEvent:
        raise AssertionError("the reflector reads batches")

    async def next_batch(self) -> list[WatchEvent | MalformedWatchEventError]:
        if self._batches:
            return self._batches.pop(0)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        pass


class OneBatchListerWatcher:
    def __init__(self, done: anyio.Event) -> None:
        self._done = done

    async def list(self, options: ListOptions) -> ListResult:
        return ListResult([], "1")

    async def watch(self, options: ListOptions, *, idle_timeout: float | None = None) -> Any:
        return BatchStream(self._done)


class Recorder:
    """A store; with ``batches`` it offers ``apply``, else only the per-event calls."""

    def __init__(self, done: anyio.Event, expected_calls: int) -> None:
        self.calls: list[Any] = []
        self._done = done
        self._expected = expected_calls

    def _record(self, call: Any) -> None:
        self.calls.append(call)
        if len(self.calls) == self._expected:
            self._done.set()

    async def add(self, obj: KubeObject) -> None:
        self._record(("add", obj["metadata"]["name"]))

    async def update(self, obj: KubeObject) -> None:
        self._record(("update", obj["metadata"]["name"]))

    async def delete(self, obj: Any) -> None:
        self._record(("delete", obj["metadata"]["name"]))

    async def replace(self, objs: Iterable[KubeObject], resource_version: str) -> None:
        self.calls.append(("replace", resource_version))

    async def resync(self) -> None:
        pass


class BatchRecorder(Recorder):
    async def apply(self, changes: Iterable[WatchChange]) -> list[tuple[int, Exception]]:
        self._record([(kind, obj["metadata"]["name"], raw) for kind, obj, raw in changes])
        return [(0, ValueError("refused"))] if len(self.calls) == 3 else []


async def run_until(store: Recorder, done: anyio.Event) -> Reflector:
    reflector = Reflector(OneBatchListerWatcher(done), store)
    async with anyio.create_task_group() as tg:
        tg.start_soon(reflector.run)
        with anyio.fail_after(10):
            await done.wait()
        tg.cancel_scope.cancel()
    return reflector


async def test_each_batch_is_one_apply_with_the_raw_json() -> None:
    """A batch's changes go to the store in one apply, in order, with each event's raw JSON;
    a bookmark moves the RV only, a refused change is counted; a malformed line is counted
    and ends the batch and the watch (issue 15: a relist from the last good RV follows), so
    the event after it is not applied."""
    done = anyio.Event()
    store = BatchRecorder(done, expected_calls=3)
    reflector = await run_until(store, done)
    assert store.calls == [
        ("replace", "1"),
        [(DeltaType.ADDED, "a", b"{}"), (DeltaType.UPDATED, "b", None)],
        [(DeltaType.DELETED, "a", b"{}")],
    ]
    stats = reflector.statistics()
    assert (stats.malformed_events, stats.store_errors) == (1, 1)
    assert reflector.last_sync_resource_version == "5"


async def test_a_store_without_apply_gets_one_call_per_event() -> None:
    """A store with only add/update/delete still receives every change, in order."""
    done = anyio.Event()
    store = Recorder(done, expected_calls=4)
    await run_until(store, done)
    assert store.calls == [("replace", "1"), ("add", "a"), ("update", "b"), ("delete", "a")]


_TYPES = [*WatchEventType, "SURPRISE"]


@st.composite
def watch_runs(draw: st.DrawFn) -> tuple[Watching, list[WatchEvent]]:
    """A Watching state and a run of events of any type, with or without a usable RV."""
    start = Watching(
        Cursor(draw(st.sampled_from(["", "0", "4"]))),
        replaying=draw(st.booleans()),
        delivered=draw(st.booleans()),
    )
    events = []
    for _ in range(draw(st.integers(0, 8))):
        rv = draw(st.sampled_from([None, "", "5", "6", 7]))
        metadata: dict[str, Any] = {} if rv is None else {"resourceVersion": rv}
        if draw(st.booleans()):
            metadata["name"] = "a"
        obj: dict[str, Any] = {"metadata": metadata} if draw(st.booleans()) else {}
        events.append(WatchEvent(draw(st.sampled_from(_TYPES)), obj))
    return start, events


@given(watch_runs())
def test_a_run_of_events_is_the_same_as_one_event_at_a_time(
    run: tuple[Watching, list[WatchEvent]],
) -> None:
    """ListWatch.events(run) gives the actions and the final state that event() per event
    gives, up to and including a Pause that ends the watch (the reflector's batch step is
    only a faster way to take the same steps)."""
    start, events = run
    batched, stepped = (ListWatch(page_size=500, streaming_list=False) for _ in range(2))
    batched.state = stepped.state = start
    one_by_one: list[Action] = []
    for event in events:
        one_by_one.append(stepped.event(event))
        if isinstance(one_by_one[-1], Pause):
            break
    # Exceptions compare by identity: actions are compared by their repr (type and message).
    assert [repr(a) for a in batched.events(events)] == [repr(a) for a in one_by_one]
    assert batched.state == stepped.state
