"""What only the compact cache does (``aioinformer._cache._compact``): JSON bytes out of the
GC's way, fresh objects per read, the caller's bytes taken as they are, undecoded old states,
declared index fields read without decoding, the bulk reads' scoped collector pause and the
opt-in cache of recently read objects.

The shared store contract runs against both cache modes in ``test_store.py`` and
``test_store_model.py``.
"""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import orjson
import pytest

from aioinformer import index_on
from aioinformer._cache._compact import CompactIndexer, encode, new_indexer
from aioinformer._cache._store import NAMESPACE_INDEX, Indexer
from aioinformer._wire._slices import WireObject
from aioinformer.errors import IndexFuncError


def pod(i: int, namespace: str = "ns", rv: str = "1", node: str = "n1") -> dict[str, Any]:
    """A small Pod-like object with nested containers (as a decoded object has)."""
    return {
        "metadata": {
            "name": f"p{i}",
            "namespace": namespace,
            "resourceVersion": rv,
            "labels": {"app": f"a{i % 3}", "tier": "web"},
        },
        "spec": {"nodeName": node, "containers": [{"name": "c", "ports": [{"port": 80}]}]},
    }


def by_node(o: Any) -> list[str]:
    return [o["spec"]["nodeName"]]


def by_labels(o: Any) -> list[str]:
    return [f"{k}={v}" for k, v in o["metadata"]["labels"].items()]


def test_every_read_returns_a_fresh_object_the_caller_may_mutate() -> None:
    """get, get_by_key, list, by_index and index each decode a new dict; mutating one changes
    neither the cache nor later reads."""
    indexer = CompactIndexer(indexers={"node": by_node})
    original = pod(1)
    indexer.add(original)
    original["spec"]["nodeName"] = "changed after the write"
    reads = [
        indexer.get_by_key("ns/p1"),
        indexer.get(pod(1)),
        indexer.list()[0],
        indexer.by_index("node", "n1")[0],
        indexer.index("node", pod(9))[0],
    ]
    assert len({id(r) for r in reads}) == len(reads)
    for read in reads:
        assert read == pod(1)
        assert read is not None
        read["metadata"]["labels"]["app"] = "mutated"
        read["spec"]["containers"].clear()
    assert indexer.get_by_key("ns/p1") == pod(1)
    assert indexer.index_keys("node", "n1") == ["ns/p1"]


def test_the_callers_json_is_stored_as_given_and_reads_decode_it() -> None:
    """A write with ``raw`` stores those bytes as they are (the caller vouches that they encode
    the object: no re-encoding); reads decode them."""
    indexer = CompactIndexer()
    obj = pod(1)
    raw = b' {"metadata": {"name": "p1", "namespace": "ns", "resourceVersion": "1"}} '
    indexer.upsert(obj, raw=raw)
    assert indexer.get_raw_by_key("ns/p1") is raw
    assert indexer.get_by_key("ns/p1") == orjson.loads(raw)
    indexer.add(obj)  # without raw: encoded
    assert indexer.get_raw_by_key("ns/p1") == orjson.dumps(obj)
    assert indexer.get_raw_by_key("ns/absent") is None


def test_encoded_objects_are_held_at_their_exact_size() -> None:
    """orjson returns its output inside a buffer about three times the JSON's length; what the
    cache keeps is an exact-size copy (measured with tracemalloc)."""
    obj = pod(1) | {"status": {"padding": "x" * 4000}}
    length = len(orjson.dumps(obj))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = encode(obj)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept == orjson.dumps(obj)
    assert length <= held < length + 256


def test_writes_return_the_previous_state_undecoded() -> None:
    """upsert and remove return the replaced carrier (its resource version at once, the
    object decoded only when asked); add, update and delete return the decoded object."""
    indexer = CompactIndexer()
    assert indexer.upsert(pod(1, rv="1")) is None
    previous = indexer.upsert(pod(1, rv="2"))
    assert isinstance(previous, WireObject)
    assert previous.resource_version == "1"
    assert previous.key == "ns/p1"
    assert "bytes" in repr(previous)
    assert previous.decode() == pod(1, rv="1")
    removed = indexer.remove(pod(1))
    assert isinstance(removed, WireObject)
    assert removed.resource_version == "2"
    assert removed.decode() == pod(1, rv="2")
    assert indexer.remove(pod(1)) is None
    assert indexer.add(pod(1, rv="3")) is None
    assert indexer.update(pod(1, rv="4")) == pod(1, rv="3")
    assert indexer.delete(pod(1)) == pod(1, rv="4")


def test_carriers_are_stored_as_they_are() -> None:
    """A carrier (what the informer writes) is the entry itself: nothing is encoded or
    decoded, and reads decode its bytes."""
    indexer = CompactIndexer()
    wire = indexer.decoder.from_document(pod(5))
    assert wire is not None
    assert indexer.upsert(wire) is None
    assert indexer.get_stored("ns/p5") is wire
    assert indexer.get_raw_by_key("ns/p5") is wire.data
    assert indexer.get_by_key("ns/p5") == pod(5)
    assert indexer.stored() == [wire]


def test_an_object_that_is_not_json_serializable_is_refused_and_nothing_changes() -> None:
    """Encoding happens before anything changes: a TypeError leaves content and indices as
    they were."""
    indexer = CompactIndexer(indexers={"node": by_node})
    indexer.add(pod(1))
    bad = pod(1, node="n2") | {"spec": {"nodeName": "n2", "weird": {1, 2}}}
    with pytest.raises(TypeError):
        indexer.update(bad)
    with pytest.raises(TypeError):
        indexer.replace([pod(2), bad], "5")
    assert indexer.get_by_key("ns/p1") == pod(1)
    assert indexer.list_keys() == ["ns/p1"]
    assert indexer.index_keys("node", "n1") == ["ns/p1"]
    assert indexer.list_index_func_values("node") == ["n1"]
    assert indexer.resource_version == ""


def test_the_cache_adds_no_object_the_garbage_collector_tracks() -> None:
    """After writes, a collection leaves no tracked object per cached object: the count of
    tracked objects grows by a constant (the cache's own dicts), not with the content; the
    same holds after updates that move objects between index values and after deletes."""
    count = 2000
    indexer = CompactIndexer(indexers={"node": by_node, "labels": by_labels})
    gc.collect()
    baseline = len(gc.get_objects())
    for i in range(count):
        indexer.add(pod(i, node=f"n{i % 7}"))
    for i in range(0, count, 2):
        indexer.update(pod(i, rv="2", node=f"n{i % 5}"))
    for i in range(0, count, 10):
        indexer.delete(pod(i))
    gc.collect()
    assert len(gc.get_objects()) - baseline < 50
    assert len(indexer) == count - count // 10
    assert indexer.index_keys("labels", "tier=web") == sorted(indexer.list_keys())


def test_the_dict_cache_holds_tracked_objects_per_cached_object() -> None:
    """The reference point of the previous test: the dict cache keeps every decoded container
    (here five per object) where the collector rescans it."""
    count = 2000
    indexer = Indexer(indexers={"node": by_node})
    gc.collect()
    baseline = len(gc.get_objects())
    for i in range(count):
        indexer.add(pod(i))
    gc.collect()
    assert len(gc.get_objects()) - baseline >= 5 * count


def test_index_values_are_shared_between_entries() -> None:
    """The keys of one index value share one string, not a copy per object."""
    indexer = CompactIndexer(indexers={"node": by_node})
    for i in range(3):
        indexer.add(orjson.loads(orjson.dumps(pod(i, namespace="shared", node="n7"))))
    (node,) = [index for index in indexer._indices if index.name == "node"]
    values = list(node.values.values())
    assert values == ["n7"] * 3
    assert all(value is values[0] for value in values)


def test_declared_index_fields_are_read_without_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """An index made by index_on reads the fields its carrier was decoded with: writes and
    updates decode nothing; a plain index function gets the object decoded once per write."""
    indexer = CompactIndexer(indexers={"node": index_on("spec.nodeName")})
    assert indexer.decoder.fields.paths == (("spec", "nodeName"),)
    wires = [indexer.decoder.from_document(pod(i, node=f"n{i % 2}")) for i in range(4)]
    import aioinformer._cache._compact as compact

    decoded: list[bytes] = []
    real = compact.loads  # type: ignore[attr-defined]

    def counting(data: bytes) -> Any:
        decoded.append(data)
        return real(data)

    monkeypatch.setattr(compact, "loads", counting)
    for wire in wires:
        assert wire is not None
        indexer.upsert(wire)
    moved = indexer.decoder.from_document(pod(0, rv="2", node="n1"))
    assert moved is not None
    indexer.upsert(moved)
    assert decoded == []
    assert indexer.index_keys("node", "n1") == ["ns/p0", "ns/p1", "ns/p3"]
    indexer.add_indexers({"plain": by_node})
    assert len(decoded) == 4  # each stored object decoded once for the new plain index
    assert indexer.index_keys("plain", "n0") == ["ns/p2"]


def test_index_on_values() -> None:
    """index_on: a string, a list of strings, nothing for absent or null; several fields (or
    a computed value) through values=; anything else is an index error."""
    by_owner = index_on(
        "metadata.ownerReferences", values=lambda refs: [r["uid"] for r in refs or ()]
    )
    owned = pod(1) | {"metadata": {"name": "o", "ownerReferences": [{"uid": "u1"}, {"uid": "u2"}]}}
    for indexer in (
        CompactIndexer(indexers={"owner": by_owner}),
        Indexer(indexers={"owner": by_owner}),
    ):
        indexer.add(owned)
        indexer.add(pod(2))
        assert indexer.index_keys("owner", "u2") == ["o"]
    tags = index_on("spec.tags")
    assert list(tags({"spec": {"tags": ["a", "b"]}})) == ["a", "b"]
    assert list(tags({"spec": {"tags": None}})) == []
    assert list(tags({})) == []
    indexer = CompactIndexer(indexers={"tags": tags})
    with pytest.raises(IndexFuncError):
        indexer.add(pod(3) | {"spec": {"tags": {"a": 1}}})
    with pytest.raises(ValueError, match="values="):
        index_on("a", "b")
    with pytest.raises(ValueError):
        index_on()
    assert "spec.tags" in repr(tags)


def test_add_indexers_decodes_stored_objects_and_rolls_back_on_failure() -> None:
    """An index added later is computed from the stored bytes; if its function raises on one
    object, neither that index nor any other of the same call is added."""
    indexer = CompactIndexer()
    indexer.add(pod(1, node="n1"))
    indexer.add(pod(2, node="boom"))

    def picky(o: Any) -> list[str]:
        if o["spec"]["nodeName"] == "boom":
            raise RuntimeError("boom")
        return ["ok"]

    with pytest.raises(IndexFuncError):
        indexer.add_indexers({"node": by_node, "picky": picky})
    assert set(indexer.get_indexers()) == {NAMESPACE_INDEX}
    indexer.add_indexers({"node": by_node})
    assert indexer.index_keys("node", "boom") == ["ns/p2"]
    indexer.update(pod(2, node="n1"))
    assert indexer.index_keys("node", "n1") == ["ns/p1", "ns/p2"]
    assert "node" in repr(indexer)


def test_new_indexer_makes_the_cache_of_each_mode() -> None:
    """new_indexer("compact") is the compact cache, new_indexer("dict") the dict-backed
    Indexer; an unknown mode is a ValueError."""
    assert isinstance(new_indexer(), CompactIndexer)
    assert isinstance(new_indexer("compact"), CompactIndexer)
    assert isinstance(new_indexer("dict"), Indexer)
    with pytest.raises(ValueError, match="cache mode"):
        new_indexer("pickle")  # type: ignore[arg-type]
