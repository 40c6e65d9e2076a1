"""``informer.cache``: the read side of the cache, with no way to write (issue 11)."""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer import NAMESPACE_INDEX, Cache, SharedIndexInformer
from aioinformer._cache._compact import CacheMode
from aioinformer.errors import IndexNotFoundError
from aioinformer.lowlevel import Delta, DeltaType, ListerWatcher
from aioinformer.testing import FakeClock, ScriptedListerWatcher

WRITES = ("add", "update", "upsert", "delete", "remove", "replace", "resync", "add_indexers")


def cm(name: str, node: str, namespace: str = "default") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": "1"},
        "data": {"node": node},
    }


def by_node(obj: Any) -> list[str]:
    return [obj["data"]["node"]]


def new_informer(cache_mode: CacheMode) -> SharedIndexInformer:
    lister_watcher: ListerWatcher = ScriptedListerWatcher(clock=FakeClock())
    return SharedIndexInformer(lister_watcher, indexers={"by_node": by_node}, cache=cache_mode)


def test_the_cache_has_every_read_and_no_write(cache_mode: CacheMode) -> None:
    """The view answers what the writable indexer answers and has none of its writes (the
    dict cache hands out its own objects, the compact cache equal fresh ones)."""
    informer = new_informer(cache_mode)
    a, b, c = cm("a", "n1"), cm("b", "n2"), cm("c", "n1", namespace="other")
    informer.handle_deltas([Delta(DeltaType.ADDED, obj) for obj in (a, b, c)], False)
    cache = informer.cache
    assert isinstance(cache, Cache)
    assert [name for name in WRITES if hasattr(cache, name)] == []
    assert len(cache) == 3 and "default/a" in cache and "default/x" not in cache
    assert cache.get_by_key("default/a") == a and cache.get(cm("b", "")) == b
    same = cache_mode == "dict"
    assert (cache.get_by_key("default/a") is a) is same and (cache.get(cm("b", "")) is b) is same
    assert sorted(cache.list_keys()) == ["default/a", "default/b", "other/c"]
    assert {o["metadata"]["name"] for o in cache.list()} == {"a", "b", "c"}
    assert {o["metadata"]["name"] for o in cache.by_index("by_node", "n1")} == {"a", "c"}
    assert cache.index_keys("by_node", "n1") == ["default/a", "other/c"]
    assert sorted(cache.list_index_func_values(NAMESPACE_INDEX)) == ["default", "other"]
    assert [o["metadata"]["name"] for o in cache.index("by_node", cm("x", "n2"))] == ["b"]
    assert sorted(cache.index_names()) == ["by_node", NAMESPACE_INDEX]
    with pytest.raises(IndexNotFoundError):
        cache.by_index("by_zone", "z")


def test_the_cache_is_live_and_the_old_name_is_the_same_view(cache_mode: CacheMode) -> None:
    """A view read later sees later changes; ``informer.indexer`` is no writable indexer."""
    informer = new_informer(cache_mode)
    cache = informer.cache
    informer.handle_deltas([Delta(DeltaType.ADDED, cm("a", "n1"))], False)
    informer.add_indexers({"by_name": lambda o: [o["metadata"]["name"]]})
    assert cache.list_keys() == ["default/a"] and cache.index_keys("by_name", "a") == ["default/a"]
    assert type(informer.indexer) is Cache
    assert [name for name in WRITES if hasattr(informer.indexer, name)] == []
