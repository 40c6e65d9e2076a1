"""Stateful property test: DeltaFIFO against a plain reference model.

The model is a dict of key -> list of (type, object), an ordered list of keys, and a dict of
known objects standing in for the informer's indexer. Pops apply the deltas to the known
objects like the informer would (Deleted removes, everything else sets). Each step runs the
FIFO's coroutines on a private event loop owned by the state machine.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from aioinformer._cache._delta_fifo import Delta, DeltaFIFO, DeltaType, WatchChange
from aioinformer._objects import DeletedFinalStateUnknown, meta_namespace_key
from aioinformer.errors import KeyFuncError

NAMES = st.sampled_from(["a", "b", "c", "d"])
NAMESPACES = st.sampled_from(["", "ns"])


class KnownObjects:
    """The informer's cache as the FIFO sees it: a plain dict."""

    def __init__(self) -> None:
        self.items: dict[str, Any] = {}

    def __contains__(self, key: object) -> bool:
        return key in self.items

    def list_keys(self) -> list[str]:
        return list(self.items)

    def get_by_key(self, key: str) -> Any:
        return self.items.get(key)


def transform(obj: Any) -> Any:
    """Counts how often an object was transformed (it must be exactly once)."""
    return {**obj, "transformed": obj.get("transformed", 0) + 1}


class DeltaFIFOMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.runner = asyncio.Runner()
        self.counter = 0
        # Reference model.
        self.items: dict[str, list[tuple[DeltaType, Any, bytes | None]]] = {}
        self.queue: list[str] = []
        self.populated = False
        self.initial_count = 0
        self.known = KnownObjects()
        self.fifo = DeltaFIFO()
        self.emit_replaced = True
        self.use_transformer = False

    def teardown(self) -> None:
        self.runner.close()

    @initialize(
        emit_replaced=st.booleans(),
        use_transformer=st.booleans(),
        cached=st.lists(st.tuples(NAMES, NAMESPACES), max_size=3),
    )
    def setup(
        self, emit_replaced: bool, use_transformer: bool, cached: list[tuple[str, str]]
    ) -> None:
        self.emit_replaced = emit_replaced
        self.use_transformer = use_transformer
        # The cache may hold objects before the first replace (so that it queues deletions).
        for name, namespace in cached:
            obj = self.entering(self.make(name, namespace))
            self.known.items[meta_namespace_key(obj)] = obj
        self.fifo = DeltaFIFO(
            known_objects=self.known,
            emit_delta_type_replaced=emit_replaced,
            transformer=transform if use_transformer else None,
        )

    # -- helpers -------------------------------------------------------------------------

    def make(self, name: str, namespace: str) -> dict[str, Any]:
        self.counter += 1
        meta: dict[str, Any] = {"name": name, "resourceVersion": str(self.counter)}
        if namespace:
            meta["namespace"] = namespace
        return {"metadata": meta}

    def entering(self, obj: Any) -> Any:
        """What the model expects to be queued for an object entering the FIFO."""
        return transform(obj) if self.use_transformer else obj

    def model_append(self, key: str, delta: tuple[DeltaType, Any, bytes | None]) -> None:
        deltas = self.items.get(key)
        if deltas is None:
            self.items[key] = [delta]
            self.queue.append(key)
            return
        older = deltas[-1]
        if older[0] is DeltaType.DELETED and delta[0] is DeltaType.DELETED:
            if isinstance(older[1], DeletedFinalStateUnknown):
                deltas[-1] = delta
            return
        deltas.append(delta)

    def model_pop(self, count: int) -> list[list[tuple[DeltaType, Any, bytes | None]]]:
        popped = []
        for _ in range(count):
            key = self.queue.pop(0)
            deltas = self.items.pop(key)
            for kind, obj, _ in deltas:
                if kind is DeltaType.DELETED:
                    self.known.items.pop(key, None)
                else:
                    self.known.items[key] = obj
            popped.append(deltas)
        if self.initial_count > 0:
            self.initial_count -= count
        return popped

    def model_synced(self) -> bool:
        return self.populated and self.initial_count == 0

    # -- producers -----------------------------------------------------------------------

    def expected_raw(self, raw: bytes | None) -> bytes | None:
        """The JSON a delta carries: the producer's, unless a transform changed the object."""
        return None if self.use_transformer else raw

    @rule(name=NAMES, namespace=NAMESPACES, update=st.booleans(), with_raw=st.booleans())
    def add_or_update(self, name: str, namespace: str, update: bool, with_raw: bool) -> None:
        obj = self.make(name, namespace)
        raw = orjson.dumps(obj) if with_raw else None
        if update:
            self.runner.run(self.fifo.update(obj, raw=raw))
        else:
            self.runner.run(self.fifo.add(obj, raw=raw))
        self.populated = True
        kind = DeltaType.UPDATED if update else DeltaType.ADDED
        expected = (kind, self.entering(obj), self.expected_raw(raw))
        self.model_append(meta_namespace_key(obj), expected)

    @rule(
        changes=st.lists(
            st.tuples(
                st.sampled_from([DeltaType.ADDED, DeltaType.UPDATED, DeltaType.DELETED]),
                NAMES,
                NAMESPACES,
                st.sampled_from(["object", "object", "tombstone", "keyless", "wrong type"]),
            ),
            max_size=6,
        )
    )
    def apply(self, changes: list[tuple[DeltaType, str, str, str]]) -> None:
        """A batch is the same as its changes one by one; bad ones are left out and reported."""
        batch: list[WatchChange] = []
        expected_failures: list[int] = []
        for position, (kind, name, namespace, form) in enumerate(changes):
            obj: Any = self.make(name, namespace)
            key = meta_namespace_key(obj)
            raw: bytes | None = orjson.dumps(obj)
            if form == "keyless":
                obj, raw = {"metadata": {}}, None
            elif form == "tombstone":
                kind, obj, raw = DeltaType.DELETED, DeletedFinalStateUnknown(key, None), None
            elif form == "wrong type":
                kind = DeltaType.SYNC
            batch.append((kind, obj, raw))
            if form in ("keyless", "wrong type"):
                expected_failures.append(position)
                continue
            self.populated = True
            if kind is DeltaType.DELETED and key not in self.items and key not in self.known.items:
                continue
            queued = obj if form == "tombstone" else self.entering(obj)
            self.model_append(key, (kind, queued, self.expected_raw(raw)))
        failures = self.runner.run(self.fifo.apply(batch))
        assert [position for position, _ in failures] == expected_failures
        assert all(isinstance(exc, KeyFuncError | ValueError) for _, exc in failures)

    @rule(name=NAMES, namespace=NAMESPACES, as_tombstone=st.booleans())
    def delete(self, name: str, namespace: str, as_tombstone: bool) -> None:
        obj = self.make(name, namespace)
        key = meta_namespace_key(obj)
        if as_tombstone:
            # Tombstones carry cached objects, which were transformed when they were queued.
            tombstone = DeletedFinalStateUnknown(key, self.entering(obj))
            self.runner.run(self.fifo.delete(tombstone))
            queued: Any = tombstone
        else:
            self.runner.run(self.fifo.delete(obj))
            queued = self.entering(obj)
        self.populated = True
        if key in self.items or key in self.known.items:
            self.model_append(key, (DeltaType.DELETED, queued, None))

    @rule(
        listed=st.lists(st.tuples(NAMES, NAMESPACES), max_size=6),
    )
    def replace(self, listed: list[tuple[str, str]]) -> None:
        objs = [self.make(name, namespace) for name, namespace in listed]
        self.runner.run(self.fifo.replace(objs, str(self.counter)))
        kind = DeltaType.REPLACED if self.emit_replaced else DeltaType.SYNC
        keys: set[str] = set()
        for obj in objs:
            key = meta_namespace_key(obj)
            keys.add(key)
            self.model_append(key, (kind, self.entering(obj), None))
        deletions = 0
        for key in [k for k in self.queue if k not in keys]:
            last = self.items[key][-1][1]
            if isinstance(last, DeletedFinalStateUnknown):
                last = last.obj
            self.model_append(key, (DeltaType.DELETED, DeletedFinalStateUnknown(key, last), None))
            deletions += 1
        for key, obj in list(self.known.items.items()):
            if key in keys or key in self.items:
                continue
            self.model_append(key, (DeltaType.DELETED, DeletedFinalStateUnknown(key, obj), None))
            deletions += 1
        if not self.populated:
            self.populated = True
            self.initial_count = len(keys) + deletions

    @rule()
    def resync(self) -> None:
        self.runner.run(self.fifo.resync())
        for key, obj in self.known.items.items():
            if key not in self.items:
                self.model_append(key, (DeltaType.SYNC, obj, None))

    # -- consumer ------------------------------------------------------------------------

    @precondition(lambda self: bool(self.queue))
    @rule(fail=st.sampled_from([False, False, False, True]))
    def pop(self, fail: bool) -> None:
        seen: list[list[Delta]] = []
        synced_during: list[bool] = []
        synced_before = self.model_synced()

        def process(deltas: list[Delta]) -> None:
            seen.append(deltas)
            synced_during.append(self.fifo.has_synced())
            if fail:
                # A failing handler: the deltas are dropped, the pop still counts.
                raise RuntimeError("process failed")
            # The informer would apply the deltas to its cache here.
            for delta in deltas:
                key = self.fifo.key_of(delta.object)
                if delta.type is DeltaType.DELETED:
                    self.known.items.pop(key, None)
                else:
                    self.known.items[key] = delta.object

        before = dict(self.known.items)
        if fail:
            with pytest.raises(RuntimeError, match="process failed"):
                self.runner.run(asyncio.wait_for(self.fifo.pop(process), 5))
            (expected,) = self.model_pop(1)
            self.known.items = before  # the handler did not apply anything
            assert [[(d.type, d.object, d.raw) for d in deltas] for deltas in seen] == [expected]
        else:
            returned = self.runner.run(asyncio.wait_for(self.fifo.pop(process), 5))
            after = self.known.items
            self.known.items = before
            (expected,) = self.model_pop(1)
            assert seen == [returned]
            assert [(d.type, d.object, d.raw) for d in returned] == expected
            assert self.known.items == after
        # The pop is counted only after process ran.
        assert synced_during == [synced_before]

    @precondition(lambda self: bool(self.queue))
    @rule(max_keys=st.integers(min_value=1, max_value=4))
    def pop_batch(self, max_keys: int) -> None:
        calls: list[tuple[int, bool]] = []
        synced_before = self.model_synced()

        def process(batch: list[list[Delta]], initial: bool) -> None:
            calls.append((len(batch), initial))
            assert self.fifo.has_synced() == synced_before

        returned = self.runner.run(
            asyncio.wait_for(self.fifo.pop_batch(process, max_keys=max_keys), 5)
        )
        count = min(max_keys, len(self.queue))
        if self.initial_count > 0:
            count = min(count, self.initial_count)
        expected = self.model_pop(count)
        assert calls == [(count, not synced_before)]
        assert [[(d.type, d.object, d.raw) for d in deltas] for deltas in returned] == expected

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def queue_matches_model(self) -> None:
        assert self.fifo.list_keys() == self.queue
        assert len(self.fifo) == len(self.queue)
        for key in self.queue:
            deltas = self.fifo.get_by_key(key)
            assert deltas is not None
            assert [(d.type, d.object, d.raw) for d in deltas] == self.items[key]

    @invariant()
    def synced_matches_model(self) -> None:
        assert self.fifo.has_synced() == self.model_synced()
        if self.model_synced():
            # wait_for_cache_sync returns at once (the hang guard turns a missed wake-up into a
            # failure).
            self.runner.run(asyncio.wait_for(self.fifo.wait_for_cache_sync(), 1))

    @invariant()
    def only_two_consecutive_deletes_never_remain(self) -> None:
        for deltas in self.items.values():
            kinds = [kind for kind, _, _ in deltas]
            assert all(
                not (a is DeltaType.DELETED and b is DeltaType.DELETED)
                for a, b in itertools.pairwise(kinds)
            )

    @invariant()
    def every_queued_object_was_transformed_exactly_once(self) -> None:
        if not self.use_transformer:
            return
        for deltas in self.items.values():
            for _, obj, _ in deltas:
                inner = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
                assert inner is None or inner["transformed"] == 1


DeltaFIFOMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestDeltaFIFOModel = DeltaFIFOMachine.TestCase
TestDeltaFIFOModel.__doc__ = (
    "DeltaFIFO behaves like the plain reference model under random operations."
)
