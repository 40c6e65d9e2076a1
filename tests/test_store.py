"""The keyed cache and its indices (:class:`aioinformer.lowlevel.Store`,
:class:`aioinformer.lowlevel.Indexer`), in both cache modes.

Every test runs against the dict-backed cache (which shares the stored objects) and the
compact one (``aioinformer._cache._compact``: JSON bytes, a fresh decoded copy per read); what only
one mode does is in ``test_store_compact.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson
import pytest

from aioinformer._cache._compact import CacheIndexer, CacheMode, CompactIndexer, new_indexer
from aioinformer._cache._store import NAMESPACE_INDEX, Indexer, Indexers, Store
from aioinformer._objects import DeletedFinalStateUnknown
from aioinformer.errors import (
    IndexConflictError,
    IndexFuncError,
    IndexNotFoundError,
    KeyFuncError,
)

AnyStore = Store | CompactIndexer
NewIndexer = Callable[..., CacheIndexer]


@pytest.fixture(params=["dict", "compact"])
def cache(request: pytest.FixtureRequest) -> CacheMode:
    mode: CacheMode = request.param
    return mode


@pytest.fixture
def new(cache: CacheMode) -> NewIndexer:
    """Makes an indexer of the cache mode under test."""

    def make(indexers: Indexers | None = None) -> CacheIndexer:
        return new_indexer(cache, indexers=indexers)

    return make


#: Stores for the tests of the plain store contract.
STORES: list[Callable[[], AnyStore]] = [Store, lambda: new_indexer("dict"), CompactIndexer]
STORE_IDS = ["Store", "Indexer", "CompactIndexer"]


def held(store: AnyStore, got: Any, expected: Any) -> bool:
    """The dict cache returns the stored object itself; the compact one an equal fresh copy."""
    if isinstance(store, CompactIndexer):
        return bool(got == expected and got is not expected)
    return got is expected


def fingerprint(store: AnyStore, o: Any) -> object:
    """What identifies a stored object: itself (dict cache) or its exact content (compact)."""
    if isinstance(store, CompactIndexer):
        return orjson.dumps(o, option=orjson.OPT_SORT_KEYS)
    return id(o)


def obj(
    name: str, namespace: str = "", *, app: str | None = None, tier: Iterable[str] = ()
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    labels = {"app": app} if app is not None else {}
    return {"metadata": {**metadata, "labels": labels}, "spec": {"tier": list(tier)}}


def by_app(o: Any) -> list[str]:
    app = o["metadata"]["labels"].get("app")
    return [app] if app is not None else []


def by_tier(o: Any) -> list[str]:
    return list(o["spec"]["tier"])


def picky(o: Any) -> list[str]:
    """Raises for objects whose app label is ``boom``."""
    if o["metadata"]["labels"].get("app") == "boom":
        raise RuntimeError("boom")
    return by_app(o)


def snapshot(indexer: CacheIndexer) -> tuple[dict[str, object], dict[str, dict[str, list[str]]]]:
    """Every stored object (see ``fingerprint``) and the full content of every index."""
    items = {key: fingerprint(indexer, indexer.get_by_key(key)) for key in indexer.list_keys()}
    indices = {
        name: {
            value: indexer.index_keys(name, value) for value in indexer.list_index_func_values(name)
        }
        for name in indexer.get_indexers()
    }
    return items, indices


# -- Store -----------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", STORES, ids=STORE_IDS)
def test_add_then_get_returns_the_same_object(cls: Callable[[], AnyStore]) -> None:
    """get, get_by_key and list return the stored object: the object itself in the dict cache
    (shared, not copied), an equal fresh copy in the compact one."""
    store = cls()
    a = obj("a", "ns")
    store.add(a)
    assert held(store, store.get_by_key("ns/a"), a)
    assert held(store, store.get(obj("a", "ns")), a)
    assert store.list() == [a]
    assert held(store, store.list()[0], a)
    assert store.list_keys() == ["ns/a"]
    assert len(store) == 1
    assert "ns/a" in store


@pytest.mark.parametrize("cls", STORES, ids=STORE_IDS)
def test_get_of_an_absent_object_is_none(cls: Callable[[], AnyStore]) -> None:
    """get and get_by_key return None for a key that is not stored."""
    store = cls()
    store.add(obj("a", "ns"))
    assert store.get(obj("a", "other")) is None
    assert store.get_by_key("a") is None


@pytest.mark.parametrize("cls", STORES, ids=STORE_IDS)
@pytest.mark.parametrize("write", ["add", "update"])
def test_add_and_update_both_insert_or_replace(cls: Callable[[], AnyStore], write: str) -> None:
    """add and update both insert a new key and replace an existing one, returning the object
    they replaced (None for a new key)."""
    store = cls()
    first, second = obj("a", "ns", app="1"), obj("a", "ns", app="2")
    assert getattr(store, write)(first) is None
    assert held(store, store.get_by_key("ns/a"), first)
    assert held(store, getattr(store, write)(second), first)
    assert held(store, store.get_by_key("ns/a"), second)
    assert len(store) == 1


@pytest.mark.parametrize("cls", STORES, ids=STORE_IDS)
def test_delete_removes_the_object_and_absent_is_fine(cls: Callable[[], AnyStore]) -> None:
    """delete removes the object with the same key and returns it; deleting an absent key is not
    an error (None)."""
    store = cls()
    a = obj("a", "ns")
    store.add(a)
    store.add(obj("b", "ns"))
    assert held(store, store.delete(obj("a", "ns")), a)
    assert store.list_keys() == ["ns/b"]
    assert store.delete(obj("a", "ns")) is None
    assert store.list_keys() == ["ns/b"]


@pytest.mark.parametrize("cls", STORES, ids=STORE_IDS)
def test_delete_of_a_tombstone_deletes_by_its_key(cls: Callable[[], AnyStore]) -> None:
    """delete(DeletedFinalStateUnknown(key, stale)) removes whatever is stored under key."""
    store = cls()
    store.add(obj("a", "ns"))
    store.add(obj("b", "ns"))
    store.delete(DeletedFinalStateUnknown("ns/a", None))
    assert store.list_keys() == ["ns/b"]
    if isinstance(store, Indexer | CompactIndexer):
        assert store.index_keys(NAMESPACE_INDEX, "ns") == ["ns/b"]


@pytest.mark.parametrize("cls", STORES, ids=STORE_IDS)
def test_replace_swaps_the_whole_content_and_records_the_resource_version(
    cls: Callable[[], AnyStore],
) -> None:
    """replace drops keys absent from the list, stores the listed ones and keeps the RV."""
    store = cls()
    assert store.resource_version == ""
    store.add(obj("old", "ns"))
    a, b = obj("a", "ns"), obj("b")
    store.replace([a, b], "17")
    assert sorted(store.list_keys()) == ["b", "ns/a"]
    assert held(store, store.get_by_key("ns/a"), a)
    assert store.get_by_key("ns/old") is None
    assert store.resource_version == "17"


@pytest.mark.parametrize("cls", STORES, ids=STORE_IDS)
def test_a_key_function_error_leaves_the_store_unchanged(cls: Callable[[], AnyStore]) -> None:
    """A write whose key cannot be computed raises KeyFuncError and changes nothing."""
    store = cls()
    a = obj("a", "ns")
    store.replace([a], "1")
    with pytest.raises(KeyFuncError):
        store.add({"metadata": {}})
    with pytest.raises(KeyFuncError):
        store.replace([obj("b"), {"metadata": {}}], "2")
    assert store.list_keys() == ["ns/a"]
    assert store.resource_version == "1"


@pytest.mark.parametrize("cls", STORES, ids=STORE_IDS)
def test_resync_is_a_no_op(cls: Callable[[], AnyStore]) -> None:
    """resync leaves the content as it is."""
    store = cls()
    a = obj("a", "ns")
    store.add(a)
    store.resync()
    assert store.list() == [a]


@pytest.mark.parametrize("cls", [Store, CompactIndexer])
def test_custom_key_function_is_used(cls: type[AnyStore]) -> None:
    """The store keys objects with the key function it was given."""
    store = cls(key_func=lambda o: o["metadata"]["name"].upper())
    store.add(obj("a", "ns"))
    assert store.list_keys() == ["A"]


# -- Indexer: queries ------------------------------------------------------------------------


def test_namespace_index_is_built_in(new: NewIndexer) -> None:
    """Every Indexer indexes objects by namespace (``""`` for cluster-scoped) under "namespace"."""
    assert NAMESPACE_INDEX == "namespace"
    indexer = new({"app": by_app})
    indexer.add(obj("a", "ns1"))
    indexer.add(obj("b", "ns1"))
    indexer.add(obj("c", "ns2"))
    indexer.add(obj("node"))
    assert indexer.index_keys(NAMESPACE_INDEX, "ns1") == ["ns1/a", "ns1/b"]
    assert indexer.index_keys(NAMESPACE_INDEX, "") == ["node"]
    assert sorted(indexer.list_index_func_values(NAMESPACE_INDEX)) == ["", "ns1", "ns2"]
    assert set(indexer.get_indexers()) == {NAMESPACE_INDEX, "app"}


def test_constructor_indexers_can_override_the_namespace_index(new: NewIndexer) -> None:
    """An index passed as "namespace" replaces the built-in one."""
    indexer = new({NAMESPACE_INDEX: by_app})
    indexer.add(obj("a", "ns1", app="web"))
    assert indexer.index_keys(NAMESPACE_INDEX, "web") == ["ns1/a"]
    assert indexer.index_keys(NAMESPACE_INDEX, "ns1") == []


def test_by_index_returns_the_stored_objects_under_a_value(new: NewIndexer) -> None:
    """by_index gives the objects indexed under a value (as get_by_key would)."""
    indexer = new({"app": by_app})
    a, b, c = obj("a", "ns", app="web"), obj("b", "ns", app="web"), obj("c", "ns", app="db")
    for o in (a, b, c):
        indexer.add(o)
    web = sorted(indexer.by_index("app", "web"), key=lambda o: str(o["metadata"]["name"]))
    assert len(web) == 2
    assert held(indexer, web[0], a)
    assert held(indexer, web[1], b)
    assert indexer.by_index("app", "nothing") == []


def test_index_keys_are_sorted(new: NewIndexer) -> None:
    """index_keys returns the keys under a value in sorted order, whatever the insert order."""
    indexer = new({"app": by_app})
    names = ["m", "c", "x", "a", "q", "b", "z", "k"]
    for name in names:
        indexer.add(obj(name, "ns", app="web"))
    assert indexer.index_keys("app", "web") == [f"ns/{n}" for n in sorted(names)]
    assert indexer.index_keys("app", "nothing") == []


def test_an_object_is_indexed_under_every_value_of_a_multi_valued_index(new: NewIndexer) -> None:
    """An index function may return several values (duplicates count once) or none."""
    indexer = new({"tier": by_tier})
    a = obj("a", "ns", tier=["front", "back", "front"])
    indexer.add(a)
    indexer.add(obj("b", "ns"))
    assert indexer.index_keys("tier", "front") == ["ns/a"]
    assert indexer.index_keys("tier", "back") == ["ns/a"]
    assert sorted(indexer.list_index_func_values("tier")) == ["back", "front"]
    assert indexer.index("tier", a) == [a]


def test_index_returns_objects_sharing_any_value_without_duplicates(new: NewIndexer) -> None:
    """index(name, obj) is the union of the objects under each of obj's values, deduplicated."""
    indexer = new({"tier": by_tier})
    a = obj("a", "ns", tier=["front", "back"])
    b = obj("b", "ns", tier=["back"])
    c = obj("c", "ns", tier=["db"])
    for o in (a, b, c):
        indexer.add(o)
    probe = obj("probe", "ns", tier=["front", "back"])
    found = sorted(indexer.index("tier", probe), key=lambda o: str(o["metadata"]["name"]))
    assert len(found) == 2
    assert held(indexer, found[0], a)
    assert held(indexer, found[1], b)
    assert indexer.index("tier", obj("p", "ns", tier=["none"])) == []


def test_update_moves_the_key_between_index_values_and_drops_empty_values(new: NewIndexer) -> None:
    """After an update the key is only under its new values; values left empty disappear."""
    indexer = new({"app": by_app})
    indexer.add(obj("a", "ns", app="web"))
    indexer.update(obj("a", "ns", app="db"))
    assert indexer.index_keys("app", "web") == []
    assert indexer.index_keys("app", "db") == ["ns/a"]
    assert indexer.list_index_func_values("app") == ["db"]
    indexer.update(obj("a", "ns"))
    assert indexer.list_index_func_values("app") == []
    assert indexer.by_index("app", "db") == []


def test_delete_removes_the_key_from_every_index(new: NewIndexer) -> None:
    """A deleted object is no longer found under any index value."""
    indexer = new({"app": by_app})
    indexer.add(obj("a", "ns", app="web"))
    indexer.add(obj("b", "ns", app="web"))
    indexer.delete(obj("a", "ns"))
    assert indexer.index_keys("app", "web") == ["ns/b"]
    assert indexer.index_keys(NAMESPACE_INDEX, "ns") == ["ns/b"]
    indexer.delete(obj("b", "ns"))
    assert indexer.list_index_func_values("app") == []
    assert indexer.list_index_func_values(NAMESPACE_INDEX) == []


def test_replace_rebuilds_every_index(new: NewIndexer) -> None:
    """After replace the indices describe exactly the new content."""
    indexer = new({"app": by_app})
    indexer.add(obj("old", "ns", app="web"))
    indexer.replace([obj("a", "ns2", app="db"), obj("b", "ns2", app="web")], "5")
    assert indexer.index_keys("app", "web") == ["ns2/b"]
    assert indexer.index_keys("app", "db") == ["ns2/a"]
    assert indexer.list_index_func_values(NAMESPACE_INDEX) == ["ns2"]


@pytest.mark.parametrize("query", ["by_index", "index_keys", "list_index_func_values", "index"])
def test_querying_an_unknown_index_raises_index_not_found(query: str, new: NewIndexer) -> None:
    """Every index query on a name that was never registered raises IndexNotFoundError."""
    indexer = new()
    indexer.add(obj("a", "ns"))
    args: tuple[Any, ...] = {
        "by_index": ("v",),
        "index_keys": ("v",),
        "list_index_func_values": (),
        "index": (obj("a", "ns"),),
    }[query]
    with pytest.raises(IndexNotFoundError) as exc:
        getattr(indexer, query)("nope", *args)
    assert isinstance(exc.value, KeyError)
    assert exc.value.index_name == "nope"


# -- Indexer: add_indexers -------------------------------------------------------------------


def test_add_indexers_before_data_indexes_later_writes(new: NewIndexer) -> None:
    """An index added to an empty indexer is maintained by later writes."""
    indexer = new()
    indexer.add_indexers({"app": by_app})
    indexer.add(obj("a", "ns", app="web"))
    assert indexer.index_keys("app", "web") == ["ns/a"]


def test_add_indexers_after_data_is_present_indexes_existing_objects(new: NewIndexer) -> None:
    """An index added later is built over the objects already stored, then maintained."""
    indexer = new()
    indexer.add(obj("a", "ns", app="web"))
    indexer.add(obj("b", "ns", app="db"))
    indexer.add_indexers({"app": by_app, "tier": by_tier})
    assert indexer.index_keys("app", "web") == ["ns/a"]
    assert sorted(indexer.list_index_func_values("app")) == ["db", "web"]
    indexer.update(obj("b", "ns", app="web"))
    assert indexer.index_keys("app", "web") == ["ns/a", "ns/b"]


def test_add_indexers_with_a_taken_name_raises_and_adds_nothing(new: NewIndexer) -> None:
    """A name already registered raises IndexConflictError; the other new names are not added."""
    indexer = new({"app": by_app})
    indexer.add(obj("a", "ns", app="web", tier=["x"]))
    before = snapshot(indexer)
    with pytest.raises(IndexConflictError):
        indexer.add_indexers({"tier": by_tier, "app": by_tier})
    with pytest.raises(IndexConflictError):
        indexer.add_indexers({NAMESPACE_INDEX: by_tier})
    assert snapshot(indexer) == before
    assert set(indexer.get_indexers()) == {NAMESPACE_INDEX, "app"}
    with pytest.raises(IndexNotFoundError):
        indexer.index_keys("tier", "x")


def test_add_indexers_whose_function_raises_on_stored_data_adds_nothing(new: NewIndexer) -> None:
    """If a new index function raises on a stored object, IndexFuncError and no index is added."""
    indexer = new()
    indexer.add(obj("a", "ns", app="boom"))
    indexer.add(obj("b", "ns", app="web"))
    before = snapshot(indexer)
    with pytest.raises(IndexFuncError) as exc:
        indexer.add_indexers({"tier": by_tier, "picky": picky})
    assert exc.value.index_name == "picky"
    assert isinstance(exc.value.__cause__, RuntimeError)
    assert snapshot(indexer) == before
    assert set(indexer.get_indexers()) == {NAMESPACE_INDEX}


# -- Indexer: a raising index function fails the write as a whole ----------------------------


def _indexer_with_data(new: NewIndexer) -> CacheIndexer:
    # "picky" comes after "app" and "tier": a half-applied write would show in them.
    indexer = new({"app": by_app, "tier": by_tier, "picky": picky})
    indexer.add(obj("a", "ns", app="web", tier=["front"]))
    indexer.add(obj("b", "ns2", app="db", tier=["back"]))
    return indexer


def test_an_index_function_that_raises_on_add_leaves_store_and_indices_unchanged(
    new: NewIndexer,
) -> None:
    """Adding a new object that makes an index function raise changes nothing at all."""
    indexer = _indexer_with_data(new)
    before = snapshot(indexer)
    with pytest.raises(IndexFuncError) as exc:
        indexer.add(obj("c", "ns3", app="boom", tier=["front"]))
    assert (exc.value.index_name, exc.value.key) == ("picky", "ns3/c")
    assert snapshot(indexer) == before
    assert indexer.get_by_key("ns3/c") is None


def test_an_index_function_that_raises_on_update_keeps_the_old_object_and_indices(
    new: NewIndexer,
) -> None:
    """Updating to an object that makes an index function raise keeps the old state."""
    indexer = _indexer_with_data(new)
    old = indexer.get_by_key("ns/a")
    before = snapshot(indexer)
    with pytest.raises(IndexFuncError):
        indexer.update(obj("a", "ns", app="boom", tier=["other"]))
    assert snapshot(indexer) == before
    assert held(indexer, indexer.get_by_key("ns/a"), old)
    assert indexer.index_keys("tier", "front") == ["ns/a"]
    assert indexer.index_keys("tier", "other") == []


def test_an_index_function_that_raises_on_replace_leaves_everything_unchanged(
    new: NewIndexer,
) -> None:
    """A replace that makes an index function raise changes no content, index or RV."""
    indexer = _indexer_with_data(new)
    indexer.replace([obj("a", "ns", app="web"), obj("b", "ns2", app="db")], "3")
    before = snapshot(indexer)
    with pytest.raises(IndexFuncError):
        indexer.replace([obj("x", "ns", app="new"), obj("y", "ns", app="boom")], "9")
    assert snapshot(indexer) == before
    assert indexer.resource_version == "3"


@pytest.mark.parametrize(
    "bad_result",
    ["web", [1], [None], ["ok", b"bytes"]],
)
def test_an_index_function_must_return_strings(bad_result: Any, new: NewIndexer) -> None:
    """A bare string or a non-string value is an index function error; the write is refused."""
    indexer = new({"bad": lambda o: bad_result})
    with pytest.raises(IndexFuncError):
        indexer.add(obj("a", "ns"))
    assert indexer.list_keys() == []


def test_index_query_propagates_index_function_errors(new: NewIndexer) -> None:
    """index(name, obj) raises IndexFuncError when the index function raises on obj."""
    indexer = _indexer_with_data(new)
    with pytest.raises(IndexFuncError):
        indexer.index("picky", obj("z", "ns", app="boom"))
