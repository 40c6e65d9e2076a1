"""Stateful property test: the cache, in both modes, against a plain-dict reference model.

The model is a dict of key -> object plus the registered index functions; every index is
recomputed from scratch from the model after each step and compared with the cache's
incremental indices. One index function raises on some objects, so failed writes must leave
everything unchanged; index functions are also added mid-run. The dict cache must return the
very objects written; the compact cache equal, fresh copies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from aioinformer._cache._compact import CacheIndexer, CacheMode, new_indexer
from aioinformer._cache._store import NAMESPACE_INDEX
from aioinformer._objects import (
    DeletedFinalStateUnknown,
    meta_namespace_key,
    namespace_of,
    try_resource_version,
)
from aioinformer._wire._slices import WireObject
from aioinformer.errors import IndexConflictError, IndexFuncError

IndexFn = Callable[[Any], list[str]]


def by_labels(obj: Any) -> list[str]:
    """Multi-valued: one value per label (possibly none)."""
    return [f"{k}={v}" for k, v in obj["metadata"]["labels"].items()]


def by_color(obj: Any) -> list[str]:
    return [obj["spec"]["color"]]


def picky(obj: Any) -> list[str]:
    """Raises on objects marked ``boom``."""
    if obj["spec"]["boom"]:
        raise RuntimeError("boom")
    return [obj["spec"]["color"]]


def by_first_label(obj: Any) -> list[str]:
    return sorted(obj["metadata"]["labels"])[:1]


def by_app(obj: Any) -> list[str]:
    app = obj["metadata"]["labels"].get("app")
    return [app] if app else []


def by_namespace(obj: Any) -> list[str]:
    return [namespace_of(obj)]


#: Candidate index sets for add_indexers. Some conflict with registered names; the two with
#: ``picky`` fail when a ``boom`` object is stored, after building a good index first (so a
#: half-applied add_indexers would show).
EXTRA_INDEXERS: list[dict[str, IndexFn]] = [
    {"color": by_color},
    {"first": by_first_label, "picky": picky},
    {"app": by_app, "picky": picky},
    {"labels": by_labels},
    {NAMESPACE_INDEX: by_color},
]

NAMES = st.sampled_from(["a", "b", "c", "d", "e"])
NAMESPACES = st.sampled_from(["", "ns1", "ns2"])
LABELS = st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["x", "y"]), max_size=2)
COLORS = st.sampled_from(["red", "blue"])


class IndexerMachine(RuleBasedStateMachine):
    cache: CacheMode = "dict"

    def __init__(self) -> None:
        super().__init__()
        self.model: dict[str, Any] = {}
        self.funcs: dict[str, IndexFn] = {}
        self.rv = ""
        self.indexer: CacheIndexer = new_indexer(self.cache)

    @initialize(with_picky=st.sampled_from([False, False, True]))
    def setup(self, with_picky: bool) -> None:
        self.funcs = {NAMESPACE_INDEX: by_namespace, "labels": by_labels}
        if with_picky:
            self.funcs["picky"] = picky
        initial = {name: fn for name, fn in self.funcs.items() if name != NAMESPACE_INDEX}
        self.indexer = new_indexer(self.cache, indexers=initial)

    @staticmethod
    def _make(
        name: str, namespace: str, labels: dict[str, str], color: str, boom: bool
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "labels": labels}
        if namespace:
            meta["namespace"] = namespace
        return {"metadata": meta, "spec": {"color": color, "boom": boom}}

    def _raises(self, obj: Any) -> bool:
        """Whether any registered index function raises on obj (per the model)."""
        return "picky" in self.funcs and bool(obj["spec"]["boom"])

    objects = st.builds(
        _make,
        NAMES,
        NAMESPACES,
        LABELS,
        COLORS,
        st.sampled_from([False, False, True]),
    )

    def _check_previous(self, returned: Any, previous: Any) -> None:
        """A write returns the object it replaced (its carrier, undecoded, from the compact
        cache's upsert/remove)."""
        if isinstance(returned, WireObject):
            assert returned.resource_version == try_resource_version(previous)
            returned = returned.decode()
        assert returned == previous

    @rule(obj=objects, write=st.sampled_from(["add", "update", "upsert"]))
    def add_or_update(self, obj: dict[str, Any], write: str) -> None:
        key = meta_namespace_key(obj)
        if write == "upsert":
            obj["metadata"]["resourceVersion"] = str(len(self.model))
        if self._raises(obj):
            with pytest.raises(IndexFuncError):
                getattr(self.indexer, write)(obj)
        else:
            self._check_previous(getattr(self.indexer, write)(obj), self.model.get(key))
            self.model[key] = obj

    @rule(
        name=NAMES,
        namespace=NAMESPACES,
        as_tombstone=st.booleans(),
        write=st.sampled_from(["delete", "remove"]),
    )
    def delete(self, name: str, namespace: str, as_tombstone: bool, write: str) -> None:
        probe = self._make(name, namespace, {}, "red", False)
        key = meta_namespace_key(probe)
        target = DeletedFinalStateUnknown(key, None) if as_tombstone else probe
        self._check_previous(getattr(self.indexer, write)(target), self.model.pop(key, None))

    @rule(objs=st.lists(objects, max_size=6), rv=st.integers(min_value=1, max_value=99))
    def replace(self, objs: list[dict[str, Any]], rv: int) -> None:
        # A key listed twice keeps its last object; only those are indexed.
        new = {meta_namespace_key(o): o for o in objs}
        if any(self._raises(o) for o in new.values()):
            with pytest.raises(IndexFuncError):
                self.indexer.replace(objs, str(rv))
            return
        self.indexer.replace(objs, str(rv))
        self.model = new
        self.rv = str(rv)

    @rule()
    def resync(self) -> None:
        self.indexer.resync()

    @rule(choice=st.integers(min_value=0, max_value=len(EXTRA_INDEXERS) - 1))
    def add_indexers(self, choice: int) -> None:
        extra = EXTRA_INDEXERS[choice]
        if set(extra) & set(self.funcs):
            with pytest.raises(IndexConflictError):
                self.indexer.add_indexers(extra)
        elif "picky" in extra and any(o["spec"]["boom"] for o in self.model.values()):
            with pytest.raises(IndexFuncError):
                self.indexer.add_indexers(extra)
        else:
            self.indexer.add_indexers(extra)
            self.funcs.update(extra)

    @rule(obj=objects, data=st.data())
    def query_index(self, obj: dict[str, Any], data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.funcs)))
        if name == "picky" and obj["spec"]["boom"]:
            with pytest.raises(IndexFuncError):
                self.indexer.index(name, obj)
            return
        values = set(self.funcs[name](obj))
        expected = {key for key, o in self.model.items() if values & set(self.funcs[name](o))}
        found = self.indexer.index(name, obj)
        assert len(found) == len(expected)
        assert {meta_namespace_key(o) for o in found} == expected

    @invariant()
    def content_matches_model(self) -> None:
        assert sorted(self.indexer.list_keys()) == sorted(self.model)
        assert len(self.indexer) == len(self.model)
        for key, obj in self.model.items():
            got = self.indexer.get_by_key(key)
            if self.cache == "dict":
                assert got is obj
            else:
                assert got == obj
                assert got is not obj
        assert self.indexer.resource_version == self.rv

    @invariant()
    def indices_match_a_rebuild_from_the_model(self) -> None:
        assert set(self.indexer.get_indexers()) == set(self.funcs)
        for name, fn in self.funcs.items():
            expected: dict[str, set[str]] = {}
            for key, obj in self.model.items():
                for value in fn(obj):
                    expected.setdefault(value, set()).add(key)
            assert sorted(self.indexer.list_index_func_values(name)) == sorted(expected)
            for value, keys in expected.items():
                assert self.indexer.index_keys(name, value) == sorted(keys)
                found = self.indexer.by_index(name, value)
                assert sorted(meta_namespace_key(o) for o in found) == sorted(keys)


class CompactIndexerMachine(IndexerMachine):
    cache: CacheMode = "compact"


SETTINGS = settings(
    max_examples=300,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
IndexerMachine.TestCase.settings = SETTINGS
CompactIndexerMachine.TestCase.settings = SETTINGS
TestIndexerModel = IndexerMachine.TestCase
TestIndexerModel.__doc__ = (
    "The dict cache behaves like the plain-dict reference model under random writes."
)
TestCompactIndexerModel = CompactIndexerMachine.TestCase
TestCompactIndexerModel.__doc__ = (
    "The compact cache behaves like the plain-dict reference model under random writes."
)
