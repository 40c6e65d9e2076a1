"""Lister: reads of the cache by name, namespace and label selector."""

from __future__ import annotations

import asyncio

import pytest

from aioinformer._cache._compact import CacheMode, new_indexer
from aioinformer._cache._lister import Lister
from aioinformer._cache._selectors import parse_label_selector
from aioinformer._cache._store import Indexer, Store
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._listwatch import Resource
from aioinformer._objects import KubeObject
from aioinformer.errors import SelectorSyntaxError
from aioinformer.testing import MemorySource

from .support import CONFIGMAPS, FAST_WATCH, configmap


def obj(name: str, namespace: str = "", **labels: str) -> KubeObject:
    metadata: dict[str, object] = {"name": name, "labels": labels}
    if namespace:
        metadata["namespace"] = namespace
    return {"metadata": metadata}


@pytest.fixture
def lister(cache_mode: CacheMode) -> Lister:
    indexer = new_indexer(cache_mode)
    for item in (
        obj("web", "prod", app="web", tier="front"),
        obj("db", "prod", app="db", tier="back"),
        obj("web", "dev", app="web"),
        obj("cache", "dev"),
    ):
        indexer.add(item)
    return Lister(indexer)


def names(objects: list[KubeObject]) -> list[str]:
    return sorted(
        f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}".lstrip("/") for o in objects
    )


def test_list_everything_or_by_label_selector(lister: Lister) -> None:
    """list() returns all objects; a selector string or a parsed selector filters them."""
    assert names(lister.list()) == ["dev/cache", "dev/web", "prod/db", "prod/web"]
    assert names(lister.list("")) == names(lister.list())
    assert names(lister.list("app=web")) == ["dev/web", "prod/web"]
    assert names(lister.list("app in (web,db),tier")) == ["prod/db", "prod/web"]
    assert names(lister.list("!app")) == ["dev/cache"]
    assert names(lister.list(parse_label_selector("tier!=front"))) == [
        "dev/cache",
        "dev/web",
        "prod/db",
    ]


def test_get_by_name_and_namespace(lister: Lister) -> None:
    """get(name, namespace) finds one object; a wrong namespace or name finds nothing."""
    found = lister.get("web", "prod")
    assert found is not None and found["metadata"]["labels"]["tier"] == "front"
    assert lister.get("web", "staging") is None
    assert lister.get("nope", "prod") is None
    with pytest.raises(ValueError, match="namespaced"):
        lister.get("web")  # namespaced objects need their namespace: asking without is a bug


def test_cluster_scoped_objects_are_got_by_name(cache_mode: CacheMode) -> None:
    """Objects without a namespace are found by name alone."""
    indexer = new_indexer(cache_mode)
    indexer.add(obj("node-1", role="worker"))
    lister = Lister(indexer)
    assert lister.get("node-1") is not None
    assert names(lister.list("role=worker")) == ["node-1"]


def test_namespace_view(lister: Lister) -> None:
    """namespace(ns) lists and gets inside one namespace only."""
    prod = lister.namespace("prod")
    assert prod.namespace == "prod"
    assert names(prod.list()) == ["prod/db", "prod/web"]
    assert names(prod.list("tier=back")) == ["prod/db"]
    assert prod.get("db") is not None
    assert prod.get("cache") is None
    assert lister.namespace("empty").list() == []


def test_a_bad_selector_raises(lister: Lister) -> None:
    """A selector that does not parse raises SelectorSyntaxError instead of matching nothing."""
    with pytest.raises(SelectorSyntaxError):
        lister.list("app in web")
    with pytest.raises(SelectorSyntaxError):
        lister.namespace("prod").list("=web")


def test_the_lister_reads_the_live_cache(cache_mode: CacheMode) -> None:
    """A lister sees later writes to its indexer (it is a view, not a copy)."""
    indexer = new_indexer(cache_mode)
    lister = Lister(indexer)
    assert lister.list() == []
    indexer.add(obj("a", "ns"))
    assert lister.namespace("ns").get("a") is not None
    indexer.delete(obj("a", "ns"))
    assert lister.get("a", "ns") is None


def memory_informer(source: MemorySource, cache_mode: CacheMode) -> SharedIndexInformer:
    return SharedIndexInformer(
        source.lister_watcher(CONFIGMAPS), watch=FAST_WATCH, cache=cache_mode
    )


async def test_informer_lister(cache_mode: CacheMode) -> None:
    """informer.lister() reads the informer's cache."""
    source = MemorySource()
    labelled = configmap("web", v="1")
    labelled["metadata"]["labels"] = {"app": "web"}
    source.create(CONFIGMAPS, labelled)
    source.create(CONFIGMAPS, configmap("plain"))
    informer = memory_informer(source, cache_mode)
    async with informer:
        assert await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
        lister = informer.lister()
        assert names(lister.list("app=web")) == ["default/web"]
        assert names(lister.namespace("default").list()) == ["default/plain", "default/web"]
        web = lister.get("web", "default")
        assert web is not None and web == informer.indexer.get_by_key("default/web")
        if cache_mode == "dict":  # the cached object itself, shared
            assert web is informer.indexer.get_by_key("default/web")
        else:  # a fresh copy: mutating it leaves the cache alone
            web["data"] = {"changed": "yes"}
            assert lister.get("web", "default") == informer.indexer.get_by_key("default/web")
            assert lister.get("web", "default") != web


def test_the_empty_namespace_view_lists_every_namespace(cache_mode: CacheMode) -> None:
    """namespace("") lists all namespaces, like client-go's ListAllByNamespace."""
    indexer = new_indexer(cache_mode)
    for ns, name in (("a", "x"), ("b", "y")):
        indexer.add({"metadata": {"namespace": ns, "name": name, "labels": {"k": ns}}})
    view = Lister(indexer).namespace("")
    assert sorted(o["metadata"]["name"] for o in view.list()) == ["x", "y"]
    assert [o["metadata"]["name"] for o in view.list("k=b")] == ["y"]


def test_get_without_a_namespace_on_a_namespaced_resource_says_so(cache_mode: CacheMode) -> None:
    """For a resource known to be namespaced, get(name) raises (even on an empty cache) and
    says how to ask; a known cluster-scoped resource refuses a namespace the same way."""
    pods = Lister(new_indexer(cache_mode), resource=Resource.parse("v1/pods"))
    with pytest.raises(ValueError, match=r"v1/pods are namespaced: get\('web'\) needs"):
        pods.get("web")
    with pytest.raises(ValueError, match="namespaced"):
        pods.namespace("").get("web")
    assert pods.get("web", "prod") is None
    assert pods.namespace("prod").get("web") is None
    nodes = Lister(new_indexer(cache_mode), resource=Resource.parse("v1/nodes"))
    with pytest.raises(ValueError, match=r"v1/nodes are cluster-scoped: call get\('n1'\)"):
        nodes.get("n1", "default")
    with pytest.raises(ValueError, match="cluster-scoped"):
        nodes.namespace("default").get("n1")
    assert nodes.get("n1") is None


def test_an_unknown_resource_takes_its_scope_from_the_cache(cache_mode: CacheMode) -> None:
    """A custom resource (kind unknown) answers None on an empty cache, and raises once the
    cache shows which scope its objects have."""
    widgets = Resource.parse("example.com/v1/widgets")
    indexer = new_indexer(cache_mode)
    lister = Lister(indexer, resource=widgets)
    assert lister.get("w") is None
    assert lister.get("w", "default") is None
    indexer.add(obj("w", "default"))
    with pytest.raises(ValueError, match=r"example\.com/v1/widgets are namespaced"):
        lister.get("w")
    assert lister.get("w", "default") is not None


def test_an_informers_lister_knows_its_resource(cache_mode: CacheMode) -> None:
    """informer.lister() checks namespaces with the informer's resource, and shows it."""
    informer = memory_informer(MemorySource(), cache_mode)
    lister = informer.lister()
    assert repr(lister) == "<Lister v1/configmaps objects=0>"
    assert repr(lister.namespace("a")) == "<NamespaceLister v1/configmaps namespace='a'>"
    with pytest.raises(ValueError, match="v1/configmaps are namespaced"):
        lister.get("x")


def test_reprs_say_what_is_inside(lister: Lister) -> None:
    """Store, Indexer and Lister reprs show their size (and index names)."""
    indexer = Indexer(indexers={"by_app": lambda o: [o["metadata"]["labels"].get("app", "")]})
    indexer.add(obj("web", "prod", app="web"))
    assert repr(indexer) == "<Indexer objects=1 indexers=[by_app, namespace]>"
    assert repr(Store()) == "<Store objects=0>"
    assert repr(lister) == "<Lister objects=4>"
