"""The DeltaFIFO (:class:`aioinformer.lowlevel.DeltaFIFO`): one named test per rule."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from aioinformer._cache._delta_fifo import Delta, DeltaFIFO, DeltaType
from aioinformer._cache._store import Indexer, Store
from aioinformer._objects import DeletedFinalStateUnknown
from aioinformer.errors import FIFOClosedError, KeyFuncError

ADDED, UPDATED, DELETED = DeltaType.ADDED, DeltaType.UPDATED, DeltaType.DELETED
REPLACED, SYNC = DeltaType.REPLACED, DeltaType.SYNC

#: Hang guard for awaits that must complete.
TIMEOUT = 5.0


def obj(name: str, namespace: str = "ns", rv: str = "1") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": rv}}


def known(*objs: dict[str, Any]) -> Store:
    store = Store()
    for o in objs:
        store.add(o)
    return store


def ignore(deltas: list[Delta]) -> None:
    pass


async def pop(fifo: DeltaFIFO) -> list[Delta]:
    return await asyncio.wait_for(fifo.pop(ignore), TIMEOUT)


def types(deltas: list[Delta] | None) -> list[DeltaType]:
    assert deltas is not None
    return [d.type for d in deltas]


# -- types -----------------------------------------------------------------------------------


def test_delta_types_have_the_client_go_names() -> None:
    """The five delta types carry client-go's names as values."""
    assert [t.value for t in DeltaType] == ["Added", "Updated", "Deleted", "Replaced", "Sync"]
    d = Delta(ADDED, obj("a"))
    assert d.type is ADDED
    assert d.object == obj("a")


# -- queueing --------------------------------------------------------------------------------


async def test_a_key_is_queued_once_and_its_deltas_accumulate_oldest_to_newest() -> None:
    """Several deltas for one key occupy one queue slot, oldest first."""
    fifo = DeltaFIFO()
    a1, a2, a3 = obj("a", rv="1"), obj("a", rv="2"), obj("a", rv="3")
    await fifo.add(a1)
    await fifo.update(a2)
    await fifo.update(a3)
    assert len(fifo) == 1
    assert fifo.list_keys() == ["ns/a"]
    assert fifo.get_by_key("ns/a") == [Delta(ADDED, a1), Delta(UPDATED, a2), Delta(UPDATED, a3)]
    deltas = await pop(fifo)
    assert [d.object for d in deltas] == [a1, a2, a3]
    assert all(d.object is o for d, o in zip(deltas, (a1, a2, a3), strict=True))
    assert len(fifo) == 0


async def test_keys_pop_in_the_order_they_were_first_queued() -> None:
    """A key keeps its queue position when more deltas arrive for it."""
    fifo = DeltaFIFO()
    await fifo.add(obj("a"))
    await fifo.add(obj("b"))
    await fifo.update(obj("a", rv="2"))
    await fifo.add(obj("c"))
    assert fifo.list_keys() == ["ns/a", "ns/b", "ns/c"]
    popped = [(await pop(fifo))[0].object["metadata"]["name"] for _ in range(3)]
    assert popped == ["a", "b", "c"]


async def test_a_popped_key_queued_again_goes_to_the_back() -> None:
    """After a key is popped, new deltas for it queue it anew at the end."""
    fifo = DeltaFIFO()
    await fifo.add(obj("a"))
    await fifo.add(obj("b"))
    await pop(fifo)
    await fifo.update(obj("a", rv="2"))
    assert fifo.list_keys() == ["ns/b", "ns/a"]
    assert types(fifo.get_by_key("ns/a")) == [UPDATED]


async def test_get_by_key_of_an_unqueued_key_is_none_and_a_copy_otherwise() -> None:
    """get_by_key gives None for keys not queued, else a copy of the queued deltas."""
    fifo = DeltaFIFO()
    assert fifo.get_by_key("ns/a") is None
    await fifo.add(obj("a"))
    copy = fifo.get_by_key("ns/a")
    assert copy is not None
    copy.clear()
    assert types(fifo.get_by_key("ns/a")) == [ADDED]


async def test_custom_key_function_is_used_but_tombstones_keep_their_key() -> None:
    """Objects are keyed with key_func; a tombstone is always keyed by its own key."""
    fifo = DeltaFIFO(key_func=lambda o: o["metadata"]["name"])
    await fifo.add(obj("a"))
    await fifo.delete(DeletedFinalStateUnknown("a", None))
    await fifo.delete(DeletedFinalStateUnknown("ns/z", None))
    assert fifo.list_keys() == ["a"]
    assert types(fifo.get_by_key("a")) == [ADDED, DELETED]


async def test_an_object_without_a_key_is_rejected_and_nothing_is_queued() -> None:
    """A producer call whose key cannot be computed raises KeyFuncError and queues nothing."""
    fifo = DeltaFIFO()
    with pytest.raises(KeyFuncError):
        await fifo.add({"metadata": {}})
    with pytest.raises(KeyFuncError):
        await fifo.replace([obj("a"), {"metadata": {}}], "1")
    assert fifo.list_keys() == []


# -- dedup -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("older_is_tombstone", "newer_is_tombstone", "kept"),
    [
        (False, False, "older"),
        (False, True, "older"),
        (True, False, "newer"),
        (True, True, "newer"),
    ],
)
async def test_two_consecutive_deletes_keep_the_older_unless_tombstone(
    older_is_tombstone: bool, newer_is_tombstone: bool, kept: str
) -> None:
    """Two Deleted in a row merge into one: the older, unless the older is a tombstone."""
    fifo = DeltaFIFO()
    await fifo.add(obj("a"))
    older: Any = obj("a", rv="2")
    newer: Any = obj("a", rv="3")
    if older_is_tombstone:
        older = DeletedFinalStateUnknown("ns/a", older)
    if newer_is_tombstone:
        newer = DeletedFinalStateUnknown("ns/a", newer)
    await fifo.delete(older)
    await fifo.delete(newer)
    deltas = fifo.get_by_key("ns/a")
    assert types(deltas) == [ADDED, DELETED]
    assert deltas is not None
    assert deltas[-1].object is (older if kept == "older" else newer)


async def test_only_deletes_merge_other_consecutive_deltas_are_kept() -> None:
    """Identical consecutive Added/Updated/Replaced deltas are all kept."""
    fifo = DeltaFIFO()
    a = obj("a")
    await fifo.add(a)
    await fifo.add(a)
    await fifo.update(a)
    await fifo.update(a)
    await fifo.replace([a], "1")
    await fifo.replace([a], "1")
    assert types(fifo.get_by_key("ns/a")) == [ADDED, ADDED, UPDATED, UPDATED, REPLACED, REPLACED]


async def test_deletes_separated_by_another_delta_do_not_merge() -> None:
    """Only *consecutive* deletes merge: Deleted, Added, Deleted keeps all three."""
    fifo = DeltaFIFO(known_objects=known(obj("a")))
    await fifo.delete(obj("a"))
    await fifo.add(obj("a", rv="2"))
    await fifo.delete(obj("a", rv="3"))
    assert types(fifo.get_by_key("ns/a")) == [DELETED, ADDED, DELETED]


# -- delete filtering ------------------------------------------------------------------------


@pytest.mark.parametrize("with_known", [False, True])
async def test_delete_of_a_key_neither_queued_nor_known_is_dropped(with_known: bool) -> None:
    """A delete for a key neither queued nor in known_objects (or with none) is dropped."""
    fifo = DeltaFIFO(known_objects=known(obj("other")) if with_known else None)
    await fifo.delete(obj("a"))
    await fifo.delete(DeletedFinalStateUnknown("ns/b", obj("b")))
    assert fifo.list_keys() == []
    assert len(fifo) == 0


async def test_delete_of_a_queued_key_is_queued() -> None:
    """A delete for a key with queued deltas is queued even when nothing is known."""
    fifo = DeltaFIFO()
    await fifo.add(obj("a"))
    await fifo.delete(obj("a", rv="2"))
    assert types(fifo.get_by_key("ns/a")) == [ADDED, DELETED]


async def test_delete_of_a_known_key_is_queued() -> None:
    """A delete for a key that known_objects holds is queued even when the key is not queued."""
    fifo = DeltaFIFO(known_objects=known(obj("a")))
    gone = obj("a", rv="2")
    await fifo.delete(gone)
    assert fifo.get_by_key("ns/a") == [Delta(DELETED, gone)]


# -- replace ---------------------------------------------------------------------------------


async def test_replace_queues_replaced_for_every_listed_object() -> None:
    """Every listed object gets a Replaced delta, after any deltas already queued for it."""
    fifo = DeltaFIFO()
    await fifo.add(obj("a"))
    a2, b = obj("a", rv="2"), obj("b")
    await fifo.replace([a2, b], "10")
    assert fifo.get_by_key("ns/a") == [Delta(ADDED, obj("a")), Delta(REPLACED, a2)]
    assert fifo.get_by_key("ns/b") == [Delta(REPLACED, b)]
    assert fifo.list_keys() == ["ns/a", "ns/b"]


async def test_replace_queues_sync_when_emit_delta_type_replaced_is_false() -> None:
    """With emit_delta_type_replaced=False the listed objects get Sync deltas instead."""
    fifo = DeltaFIFO(emit_delta_type_replaced=False)
    await fifo.replace([obj("a"), obj("b")], "10")
    assert types(fifo.get_by_key("ns/a")) == [SYNC]
    assert types(fifo.get_by_key("ns/b")) == [SYNC]


async def test_replace_tombstones_known_keys_absent_from_the_list_with_the_known_object() -> None:
    """A known key missing from the list gets Deleted(DeletedFinalStateUnknown(key, known obj))."""
    gone = obj("gone")
    fifo = DeltaFIFO(known_objects=known(obj("kept"), gone))
    await fifo.replace([obj("kept", rv="2")], "10")
    assert types(fifo.get_by_key("ns/kept")) == [REPLACED]
    deltas = fifo.get_by_key("ns/gone")
    assert deltas == [Delta(DELETED, DeletedFinalStateUnknown("ns/gone", gone))]
    assert deltas[0].object.obj is gone


async def test_replace_tombstones_queued_keys_absent_from_the_list_with_the_newest_object() -> None:
    """A queued key missing from the list gets a tombstone carrying its newest queued object."""
    fifo = DeltaFIFO()
    await fifo.add(obj("a", rv="1"))
    newest = obj("a", rv="2")
    await fifo.update(newest)
    await fifo.replace([obj("b")], "10")
    deltas = fifo.get_by_key("ns/a")
    assert types(deltas) == [ADDED, UPDATED, DELETED]
    assert deltas is not None
    assert deltas[-1].object == DeletedFinalStateUnknown("ns/a", newest)
    assert deltas[-1].object.obj is newest


async def test_replace_unwraps_a_queued_tombstone_instead_of_nesting_it() -> None:
    """If the newest queued delta holds a tombstone, the new tombstone carries its object."""
    last = obj("a")
    fifo = DeltaFIFO(known_objects=known(last))
    await fifo.replace([], "1")
    await fifo.replace([], "2")
    deltas = fifo.get_by_key("ns/a")
    # The second tombstone merged into the first (both tombstones: the newer is kept).
    assert deltas == [Delta(DELETED, DeletedFinalStateUnknown("ns/a", last))]


async def test_replace_uses_the_queued_object_for_a_key_both_known_and_queued() -> None:
    """A known key with queued deltas is tombstoned once, with its newest queued object."""
    cached, newer = obj("a", rv="1"), obj("a", rv="2")
    fifo = DeltaFIFO(known_objects=known(cached))
    await fifo.update(newer)
    await fifo.replace([], "10")
    deltas = fifo.get_by_key("ns/a")
    assert deltas == [
        Delta(UPDATED, newer),
        Delta(DELETED, DeletedFinalStateUnknown("ns/a", newer)),
    ]


async def test_replace_tombstone_carries_none_when_the_known_object_vanished() -> None:
    """A key listed by known_objects whose object cannot be fetched gets a tombstone of None."""

    class Vanishing:
        def __contains__(self, key: object) -> bool:
            return False

        def list_keys(self) -> list[str]:
            return ["ns/ghost"]

        def get_by_key(self, key: str) -> dict[str, Any] | None:
            return None

    fifo = DeltaFIFO(known_objects=Vanishing())
    await fifo.replace([], "1")
    assert fifo.get_by_key("ns/ghost") == [
        Delta(DELETED, DeletedFinalStateUnknown("ns/ghost", None))
    ]


async def test_replace_does_not_tombstone_listed_keys() -> None:
    """Keys that are in the list get no Deleted delta, queued or known."""
    fifo = DeltaFIFO(known_objects=known(obj("a")))
    await fifo.add(obj("b"))
    await fifo.replace([obj("a"), obj("b")], "1")
    assert types(fifo.get_by_key("ns/a")) == [REPLACED]
    assert types(fifo.get_by_key("ns/b")) == [ADDED, REPLACED]


# -- population and has_synced ---------------------------------------------------------------


async def test_first_replace_sets_initial_population_to_listed_plus_queued_deletions() -> None:
    """has_synced turns true after exactly listed keys + queued deletions pops (not before)."""
    # Two known keys vanish (2 deletions); the list has 3 unique keys (one listed twice).
    fifo = DeltaFIFO(known_objects=known(obj("x"), obj("y"), obj("a")))
    assert not fifo.has_synced()
    await fifo.replace([obj("a"), obj("b"), obj("c"), obj("a", rv="2")], "1")
    assert len(fifo) == 5
    for _ in range(4):
        await pop(fifo)
        assert not fifo.has_synced()
    await fifo.add(obj("late"))  # not part of the initial population
    await pop(fifo)
    assert fifo.has_synced()
    assert len(fifo) == 1


async def test_has_synced_waits_until_the_last_initial_item_is_processed() -> None:
    """During process of the last initial item has_synced is still false; after it, true."""
    fifo = DeltaFIFO()
    await fifo.replace([obj("a"), obj("b")], "1")
    seen: list[bool] = []
    await asyncio.wait_for(fifo.pop(lambda d: seen.append(fifo.has_synced())), TIMEOUT)
    await asyncio.wait_for(fifo.pop(lambda d: seen.append(fifo.has_synced())), TIMEOUT)
    assert seen == [False, False]
    assert fifo.has_synced()


async def test_second_replace_does_not_change_the_population_count() -> None:
    """Only the first replace sets the initial population; later ones add nothing to it."""
    fifo = DeltaFIFO()
    await fifo.replace([obj("a")], "1")
    await fifo.replace([obj("b"), obj("c")], "2")
    await pop(fifo)
    assert fifo.has_synced()


@pytest.mark.parametrize("first", ["add", "update", "delete", "dropped_delete"])
async def test_a_first_add_update_or_delete_counts_as_populated(first: str) -> None:
    """A producer write before any replace makes the FIFO synced at once (even a dropped delete)."""
    fifo = DeltaFIFO()
    if first == "delete":
        await fifo.add(obj("a"))
        await fifo.delete(obj("a"))
    elif first == "dropped_delete":
        await fifo.delete(obj("a"))
    else:
        await getattr(fifo, first)(obj("a"))
    assert fifo.has_synced()
    await asyncio.wait_for(fifo.wait_for_cache_sync(), TIMEOUT)
    await fifo.replace([obj("b"), obj("c")], "1")
    assert fifo.has_synced()


async def test_an_empty_first_replace_is_synced_at_once() -> None:
    """A first replace with nothing listed and nothing to delete is synced immediately."""
    fifo = DeltaFIFO(known_objects=known())
    await fifo.replace([], "1")
    assert fifo.has_synced()
    await asyncio.wait_for(fifo.wait_for_cache_sync(), TIMEOUT)


async def test_resync_before_replace_does_not_count_as_populated() -> None:
    """resync is not a producer write: the FIFO stays unsynced until the first replace."""
    fifo = DeltaFIFO(known_objects=known(obj("a")))
    await fifo.resync()
    assert not fifo.has_synced()
    await fifo.replace([obj("a", rv="2")], "1")
    assert not fifo.has_synced()
    await pop(fifo)
    assert fifo.has_synced()


async def test_wait_for_cache_sync_returns_once_the_initial_population_is_processed() -> None:
    """wait_for_cache_sync blocks until has_synced, then returns."""
    fifo = DeltaFIFO()
    await fifo.replace([obj("a")], "1")
    synced = anyio.Event()

    async def wait() -> None:
        await fifo.wait_for_cache_sync()
        synced.set()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            assert not synced.is_set()
            await pop(fifo)
    assert synced.is_set()


async def test_a_process_that_raises_drops_the_deltas_and_still_counts() -> None:
    """If process raises, the exception propagates, the key is gone and the pop still counts."""
    fifo = DeltaFIFO()
    await fifo.replace([obj("a")], "1")

    def fail(deltas: list[Delta]) -> None:
        raise RuntimeError("handler failed")

    with pytest.raises(RuntimeError, match="handler failed"):
        await asyncio.wait_for(fifo.pop(fail), TIMEOUT)
    assert fifo.list_keys() == []
    assert fifo.get_by_key("ns/a") is None
    assert fifo.has_synced()


# -- resync ----------------------------------------------------------------------------------


async def test_resync_queues_sync_for_each_known_key_without_queued_deltas() -> None:
    """resync queues Sync(cached object) for every known key."""
    a, b = obj("a"), obj("b")
    fifo = DeltaFIFO(known_objects=known(a, b))
    await fifo.resync()
    assert fifo.get_by_key("ns/a") == [Delta(SYNC, a)]
    assert fifo.get_by_key("ns/b") == [Delta(SYNC, b)]
    assert fifo.get_by_key("ns/a")[0].object is a  # type: ignore[index]


async def test_resync_skips_keys_that_have_queued_deltas() -> None:
    """A known key with queued deltas gets no Sync (the queued deltas are newer)."""
    fifo = DeltaFIFO(known_objects=known(obj("a"), obj("b")))
    newer = obj("a", rv="2")
    await fifo.update(newer)
    await fifo.resync()
    assert fifo.get_by_key("ns/a") == [Delta(UPDATED, newer)]
    assert types(fifo.get_by_key("ns/b")) == [SYNC]
    await fifo.resync()
    assert types(fifo.get_by_key("ns/b")) == [SYNC]


async def test_resync_without_known_objects_queues_nothing() -> None:
    """With no known_objects, resync is a no-op."""
    fifo = DeltaFIFO()
    await fifo.resync()
    assert len(fifo) == 0


# -- pop and close ---------------------------------------------------------------------------


async def test_pop_returns_the_deltas_it_gave_to_process() -> None:
    """pop hands the key's deltas to process and returns that same list."""
    fifo = DeltaFIFO()
    await fifo.add(obj("a"))
    got: list[list[Delta]] = []
    deltas = await asyncio.wait_for(fifo.pop(got.append), TIMEOUT)
    assert got == [deltas]
    assert got[0] is deltas
    assert types(deltas) == [ADDED]


async def test_pop_on_an_empty_fifo_waits_for_an_item() -> None:
    """pop blocks while the FIFO is empty and returns as soon as a producer queues something."""
    fifo = DeltaFIFO()
    popped: list[list[Delta]] = []

    async def popper() -> None:
        popped.append(await fifo.pop(ignore))

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(popper)
            await anyio.wait_all_tasks_blocked()
            assert popped == []
            await fifo.add(obj("a"))
    assert [types(deltas) for deltas in popped] == [[ADDED]]


async def test_pop_after_close_raises_fifo_closed_error() -> None:
    """pop on a closed, empty FIFO raises FIFOClosedError; close is idempotent."""
    fifo = DeltaFIFO()
    fifo.close()
    fifo.close()
    assert fifo.closed
    with pytest.raises(FIFOClosedError):
        await asyncio.wait_for(fifo.pop(ignore), TIMEOUT)


async def test_close_wakes_a_waiting_pop_which_raises() -> None:
    """A pop waiting on an empty FIFO is woken by close and raises FIFOClosedError."""
    fifo = DeltaFIFO()
    raised: list[BaseException] = []

    async def popper() -> None:
        try:
            await fifo.pop(ignore)
        except FIFOClosedError as exc:
            raised.append(exc)

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(popper)
            await anyio.wait_all_tasks_blocked()
            assert raised == []
            fifo.close()
    assert [type(exc) for exc in raised] == [FIFOClosedError]


async def test_pop_drains_queued_items_after_close_then_raises() -> None:
    """After close, pops still return what was queued, then raise FIFOClosedError."""
    fifo = DeltaFIFO()
    await fifo.add(obj("a"))
    await fifo.add(obj("b"))
    fifo.close()
    assert (await pop(fifo))[0].object["metadata"]["name"] == "a"
    assert (await pop(fifo))[0].object["metadata"]["name"] == "b"
    with pytest.raises(FIFOClosedError):
        await pop(fifo)


async def test_close_from_inside_process_stops_the_next_pop() -> None:
    """close() called by process (inside a pop) makes the next empty pop raise."""
    fifo = DeltaFIFO()
    await fifo.add(obj("a"))
    await asyncio.wait_for(fifo.pop(lambda d: fifo.close()), TIMEOUT)
    with pytest.raises(FIFOClosedError):
        await pop(fifo)


async def test_a_cancelled_waiting_pop_loses_nothing() -> None:
    """Cancelling a pop that waits leaves the FIFO usable and later items intact."""
    fifo = DeltaFIFO()
    scope = anyio.CancelScope()

    async def popper() -> None:
        with scope:
            await fifo.pop(ignore)

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(popper)
            await anyio.wait_all_tasks_blocked()  # the pop waits
            scope.cancel()
    assert scope.cancelled_caught
    await fifo.add(obj("a"))
    assert types(await pop(fifo)) == [ADDED]


async def test_process_runs_before_any_ready_producer_interleaves() -> None:
    """While process runs, no producer has run: the FIFO is consistent and the key is gone."""
    fifo = DeltaFIFO()
    await fifo.add(obj("a"))
    await fifo.add(obj("b"))
    producer_ran = asyncio.Event()

    async def producer() -> None:
        await fifo.add(obj("c"))
        producer_ran.set()

    observed: list[tuple[bool, list[str], int]] = []

    def process(deltas: list[Delta]) -> None:
        observed.append((producer_ran.is_set(), fifo.list_keys(), len(fifo)))

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(producer)  # ready to run before pop starts
            # Awaited directly (a wait_for task would let the producer run first); it cannot
            # block, since the FIFO is not empty.
            await fifo.pop(process)
            assert observed == [(False, ["ns/b"], 1)]
    assert fifo.list_keys() == ["ns/b", "ns/c"]


# -- pop_batch -------------------------------------------------------------------------------


async def test_pop_batch_takes_up_to_max_keys_in_queue_order() -> None:
    """pop_batch hands at most max_keys keys to process, oldest first, and returns them."""
    fifo = DeltaFIFO()
    for name in "abcde":
        await fifo.add(obj(name))
    calls: list[tuple[list[str], bool]] = []

    def process(batch: list[list[Delta]], initial: bool) -> None:
        calls.append(([d[0].object["metadata"]["name"] for d in batch], initial))

    batch = await asyncio.wait_for(fifo.pop_batch(process, max_keys=3), TIMEOUT)
    assert len(batch) == 3
    await asyncio.wait_for(fifo.pop_batch(process, max_keys=3), TIMEOUT)
    assert calls == [(["a", "b", "c"], False), (["d", "e"], False)]
    with pytest.raises(ValueError):
        await fifo.pop_batch(process, max_keys=0)


async def test_pop_batch_never_straddles_the_end_of_the_initial_population() -> None:
    """A batch ends at the end of the initial list; is_in_initial_list holds for all of it."""
    fifo = DeltaFIFO()
    await fifo.replace([obj("a"), obj("b"), obj("c")], "1")
    await fifo.add(obj("d"))
    await fifo.add(obj("e"))
    calls: list[tuple[list[str], bool, bool]] = []

    def process(batch: list[list[Delta]], initial: bool) -> None:
        names = [d[0].object["metadata"]["name"] for d in batch]
        calls.append((names, initial, fifo.has_synced()))

    await asyncio.wait_for(fifo.pop_batch(process, max_keys=2), TIMEOUT)
    await asyncio.wait_for(fifo.pop_batch(process, max_keys=10), TIMEOUT)
    await asyncio.wait_for(fifo.pop_batch(process, max_keys=10), TIMEOUT)
    assert calls == [
        (["a", "b"], True, False),
        (["c"], True, False),
        (["d", "e"], False, True),
    ]


# -- transformer -----------------------------------------------------------------------------


def _counting_transformer() -> tuple[Callable[[Any], Any], list[Any]]:
    seen: list[Any] = []

    def transform(o: Any) -> Any:
        seen.append(o)
        return {**o, "transformed": o.get("transformed", 0) + 1}

    return transform, seen


@pytest.mark.parametrize("emit_replaced", [True, False])
async def test_transformer_runs_on_every_object_entering_the_queue(emit_replaced: bool) -> None:
    """add, update, delete and replace objects are transformed once before they are queued."""
    transform, _ = _counting_transformer()
    fifo = DeltaFIFO(transformer=transform, emit_delta_type_replaced=emit_replaced)
    assert fifo.transformer is transform
    await fifo.add(obj("a"))
    await fifo.update(obj("a"))
    await fifo.delete(obj("a"))
    await fifo.replace([obj("b")], "1")
    queued = [d.object for k in fifo.list_keys() for d in fifo.get_by_key(k) or []]
    assert [o["transformed"] for o in queued] == [1, 1, 1, 1]


async def test_transformer_skips_tombstones_and_resync_sync_objects() -> None:
    """Tombstones (given or generated) and resync Sync objects are queued untransformed."""
    transform, seen = _counting_transformer()
    cached_a, cached_b = obj("a"), obj("b")
    fifo = DeltaFIFO(transformer=transform, known_objects=known(cached_a, cached_b))
    tombstone = DeletedFinalStateUnknown("ns/a", cached_a)
    await fifo.delete(tombstone)
    await fifo.resync()
    await fifo.replace([], "1")
    assert seen == []
    assert fifo.get_by_key("ns/a") == [Delta(DELETED, tombstone)]
    b = fifo.get_by_key("ns/b")
    assert b is not None
    assert b[0] == Delta(SYNC, cached_b)
    assert b[0].object is cached_b
    assert b[1].object == DeletedFinalStateUnknown("ns/b", cached_b)


async def test_a_failing_transformer_in_replace_queues_nothing() -> None:
    """If the transformer raises on one listed object, replace queues nothing at all."""

    def transform(o: Any) -> Any:
        if o["metadata"]["name"] == "bad":
            raise ValueError("cannot transform")
        return o

    fifo = DeltaFIFO(transformer=transform, known_objects=known(obj("x")))
    with pytest.raises(ValueError):
        await fifo.replace([obj("a"), obj("bad")], "1")
    assert fifo.list_keys() == []
    assert not fifo.has_synced()


# -- producers and a consumer on a real loop -------------------------------------------------


async def test_producers_and_a_consumer_task_interleave_correctly() -> None:
    """Concurrent producers, a resync task and one consumer: per-key order and final state hold."""
    cache = Indexer()
    fifo = DeltaFIFO(known_objects=cache)
    rng = random.Random(1234)
    produced: dict[str, list[tuple[DeltaType, Any]]] = {}
    consumed: dict[str, list[tuple[DeltaType, Any]]] = {}
    stale_syncs: list[str] = []
    expected_final: dict[str, Any] = {}

    async def producer(p: int) -> None:
        # Each producer owns its keys: add, some updates, maybe delete and re-add.
        for k in range(5):
            name = f"p{p}-k{k}"
            key = f"ns/{name}"
            log = produced.setdefault(key, [])
            present = False
            for step in range(rng.randint(3, 12)):
                o = obj(name, rv=f"{p}.{k}.{step}")
                if not present:
                    await fifo.add(o)
                    log.append((ADDED, o))
                    present = True
                elif rng.random() < 0.25:
                    await fifo.delete(o)
                    log.append((DELETED, o))
                    present = False
                else:
                    await fifo.update(o)
                    log.append((UPDATED, o))
                if present:
                    expected_final[key] = o
                else:
                    expected_final.pop(key, None)
                if rng.random() < 0.5:
                    await anyio.lowlevel.checkpoint()  # let other producers and the consumer run

    def process(deltas: list[Delta]) -> None:
        for delta in deltas:
            key = fifo.key_of(delta.object)
            if delta.type is SYNC:
                # Resync never queues a stale object: it is exactly what the cache holds.
                if cache.get_by_key(key) is not delta.object:
                    stale_syncs.append(key)
                continue
            consumed.setdefault(key, []).append((delta.type, delta.object))
            if delta.type is DELETED:
                cache.delete(delta.object)
            else:
                cache.update(delta.object)

    async def consumer() -> None:
        while True:
            try:
                await fifo.pop(process)
            except FIFOClosedError:
                return

    producers_done = asyncio.Event()

    async def resyncer() -> None:
        while not producers_done.is_set():
            await fifo.resync()
            await anyio.lowlevel.checkpoint()

    async def run_producers() -> None:
        async with asyncio.TaskGroup() as producers:
            for p in range(4):
                producers.create_task(producer(p))
        producers_done.set()
        fifo.close()

    async def scenario() -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(consumer())
            tg.create_task(resyncer())
            tg.create_task(run_producers())

    await asyncio.wait_for(scenario(), 10)
    assert stale_syncs == []
    assert len(fifo) == 0
    # No delete was dropped and none merged (no two deletes in a row): delivery is exact.
    assert consumed.keys() == produced.keys()
    for key, log in produced.items():
        got = consumed[key]
        assert [t for t, _ in got] == [t for t, _ in log], key
        assert all(a is b for (_, a), (_, b) in zip(got, log, strict=True)), key
    assert {k: cache.get_by_key(k) for k in cache.list_keys()} == expected_final


# -- batch handoff, raw JSON, waking -----------------------------------------------------------


async def test_apply_queues_a_batch_in_order_like_single_producers() -> None:
    """apply([(type, obj, raw), ...]) queues what add/update/delete would, in order: deltas of
    one key accumulate, a delete of an unknown key is dropped, and the batch counts as
    populating the FIFO."""
    fifo = DeltaFIFO(known_objects=known(obj("cached")))
    a1, a2, b = obj("a", rv="1"), obj("a", rv="2"), obj("b")
    failures = await fifo.apply(
        [
            (ADDED, a1, b"a1"),
            (DELETED, obj("unknown"), None),
            (ADDED, b, None),
            (UPDATED, a2, b"a2"),
            (DELETED, obj("cached"), None),
        ]
    )
    assert failures == []
    assert fifo.has_synced()
    assert fifo.list_keys() == ["ns/a", "ns/b", "ns/cached"]
    deltas = fifo.get_by_key("ns/a")
    assert deltas == [Delta(ADDED, a1), Delta(UPDATED, a2)]
    assert deltas is not None
    assert [d.raw for d in deltas] == [b"a1", b"a2"]


async def test_apply_leaves_out_bad_changes_and_reports_them() -> None:
    """A change without a key, or of a type other than ADDED/UPDATED/DELETED, is left out and
    reported as (position, exception); the others are queued."""
    fifo = DeltaFIFO()
    failures = await fifo.apply(
        [(ADDED, {"metadata": {}}, None), (ADDED, obj("a"), None), (SYNC, obj("b"), None)]
    )
    assert [(position, type(exc)) for position, exc in failures] == [
        (0, KeyFuncError),
        (2, ValueError),
    ]
    assert fifo.list_keys() == ["ns/a"]


async def test_apply_of_nothing_but_failures_does_not_populate() -> None:
    """Like a single add that raises, a batch where every change failed leaves the FIFO
    unpopulated (a later replace still sets the initial population)."""
    fifo = DeltaFIFO()
    assert len(await fifo.apply([(ADDED, {"metadata": {}}, None)])) == 1
    assert await fifo.apply([]) == []
    await fifo.replace([obj("a")], "1")
    assert not fifo.has_synced()


async def test_a_batch_wakes_the_waiting_consumer_once_for_all_its_keys() -> None:
    """A pop waiting on an empty FIFO is woken by a batch and takes all its keys at once."""
    fifo = DeltaFIFO()
    batches: list[int] = []

    async def consumer() -> None:
        await fifo.pop_batch(lambda batch, initial: batches.append(len(batch)), max_keys=100)

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(consumer)
            await anyio.wait_all_tasks_blocked()
            await fifo.apply([(ADDED, obj(name), None) for name in "abcde"])
    assert batches == [5]


async def test_the_objects_json_travels_with_the_delta_unless_a_transform_ran() -> None:
    """raw given to add/update/apply reaches the delta; with a transformer it is dropped (the
    transform changed the object); tombstones, replace and resync carry none."""
    plain = DeltaFIFO(known_objects=known(obj("k")))
    await plain.add(obj("a"), raw=b"A")
    await plain.update(obj("a"), raw=b"B")
    await plain.replace([obj("b")], "1")
    await plain.resync()
    raws = {key: [d.raw for d in plain.get_by_key(key) or []] for key in plain.list_keys()}
    assert raws == {"ns/a": [b"A", b"B", None], "ns/b": [None], "ns/k": [None]}
    transformed = DeltaFIFO(transformer=lambda o: o)
    await transformed.add(obj("a"), raw=b"A")
    await transformed.apply([(UPDATED, obj("a"), b"B")])
    assert [d.raw for d in transformed.get_by_key("ns/a") or []] == [None, None]


def test_a_delta_unpacks_to_type_and_object_and_compares_by_them() -> None:
    """``kind, obj = delta`` still works; equality ignores raw; deltas are not hashable."""
    delta = Delta(ADDED, obj("a"), b"{}")
    kind, o = delta
    assert (kind, o) == (ADDED, obj("a"))
    assert delta == Delta(ADDED, obj("a"))
    assert delta != Delta(UPDATED, obj("a"))
    assert delta != (ADDED, obj("a"))
    assert repr(delta).startswith("Delta(<DeltaType.ADDED: 'Added'>, ")
    with pytest.raises(TypeError):
        hash(delta)


async def test_a_delete_asks_known_objects_only_whether_they_hold_the_key() -> None:
    """Whether a delete is dropped depends on membership (``key in known_objects``): the
    cached object is not read (a compact cache would decode it)."""

    class Known:
        def __contains__(self, key: object) -> bool:
            return key == "ns/a"

        def list_keys(self) -> list[str]:
            return ["ns/a"]

        def get_by_key(self, key: str) -> dict[str, Any] | None:
            raise AssertionError("a delete must not read the cached object")

    fifo = DeltaFIFO(known_objects=Known())
    await fifo.delete(obj("a"))
    await fifo.delete(obj("b"))
    await fifo.apply([(DELETED, obj("b"), None)])
    assert fifo.list_keys() == ["ns/a"]


async def test_close_wakes_every_waiting_pop() -> None:
    """close() (synchronous) wakes all pops waiting on an empty FIFO; each raises."""
    fifo = DeltaFIFO()
    raised: list[type[BaseException]] = []

    async def consumer() -> None:
        try:
            await fifo.pop(ignore)
        except FIFOClosedError as exc:
            raised.append(type(exc))

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(consumer)
            await anyio.wait_all_tasks_blocked()
            fifo.close()
    assert raised == [FIFOClosedError] * 3


async def test_a_woken_pop_that_is_cancelled_passes_the_wake_up_on() -> None:
    """If the pop a producer woke is cancelled before it runs, another waiting pop gets the
    key: nothing is left queued with a consumer asleep.

    asyncio tasks on purpose: ``Task.cancel()`` after the wake-up is what throws into a woken
    waiter (an anyio cancel scope lets a task whose wait is already over finish its step), owned
    by an ``asyncio.TaskGroup``."""
    fifo = DeltaFIFO()
    with anyio.fail_after(TIMEOUT):
        async with asyncio.TaskGroup() as tg:
            first = tg.create_task(fifo.pop(ignore))
            second = tg.create_task(fifo.pop(ignore))
            await anyio.wait_all_tasks_blocked()
            await fifo.add(obj("a"))  # wakes the first waiter
            first.cancel()
    assert first.cancelled()
    assert types(second.result()) == [ADDED]
