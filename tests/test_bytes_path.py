"""Objects as bytes end to end (issue 20): what the informer decodes, and when.

Over HTTP against the fake API server, the LIST pages and watch lines are split into carriers
(the object's JSON bytes and its decoded metadata) that reach the FIFO, the compact cache and
every listener's backlog undecoded; an event's objects decode on first access; a consumer that
stops reading keeps no decoded object alive; bulk reads decode with the collector paused.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import msgspec
import orjson

from aioinformer import Event, EventType, SharedIndexInformer, index_on
from aioinformer._informer._event_stream import EventStream
from aioinformer._informer._listener import SPILL_AT, Listener
from aioinformer._wire._slices import WireObject
from aioinformer.testing import FakeApiServer, MemorySource

from .pods import make_pod
from .support import CONFIGMAPS, configmap, kube_client, new_informer

GUARD = 30.0  # a fail-safe for waits, not a measurement


def listener_of(stream: EventStream) -> Listener:
    return stream._subscription.listener


@contextmanager
def full_collections() -> Iterator[list[int]]:
    """Counts the full (oldest-generation) collections that start inside the block."""
    started: list[int] = []

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            started.append(1)

    gc.callbacks.append(callback)
    try:
        yield started
    finally:
        gc.callbacks.remove(callback)


@asynccontextmanager
async def synced_informer(fake_apiserver: FakeApiServer) -> AsyncIterator[SharedIndexInformer]:
    """An informer of 20 ConfigMaps over HTTP, synced, with a declared index."""
    for i in range(20):
        fake_apiserver.objects.create("configmaps", configmap(f"cm-{i:02d}", v="0"))
    async with kube_client(fake_apiserver) as client:
        informer = new_informer(client, indexers={"by-v": index_on("data.v")})
        async with informer:
            with anyio.fail_after(GUARD):
                assert await informer.wait_for_cache_sync()
            yield informer


async def test_list_items_and_watch_objects_reach_the_cache_as_bytes(
    fake_apiserver: FakeApiServer,
) -> None:
    """The transport splits the LIST (the reflector hands it a decoder) and the cache keeps
    the carriers: the exact JSON, plus the metadata and the declared index field."""
    async with synced_informer(fake_apiserver) as synced:
        informer = synced
        assert informer._reflector is not None and informer._reflector._lw_decodes
        stored = informer._indexer.get_stored("default/cm-03")
        assert isinstance(stored, WireObject)
        assert stored.extras == ("0",)
        assert msgspec.json.decode(stored.data)["data"] == {"v": "0"}
        assert informer.cache.index_keys("by-v", "0") == [f"default/cm-{i:02d}" for i in range(20)]
        with anyio.fail_after(GUARD):
            async with informer.events() as stream:
                fake_apiserver.objects.update("configmaps", configmap("cm-03", v="1"))
                async for event in stream:
                    if event.type is EventType.UPDATED:
                        break
        assert isinstance(informer._indexer.get_stored("default/cm-03"), WireObject)
        assert informer.cache.index_keys("by-v", "1") == ["default/cm-03"]


async def test_an_event_decodes_its_objects_on_first_access(
    fake_apiserver: FakeApiServer,
) -> None:
    """key, resource_version and data read the bytes; object and old_object decode once and
    then are the same dicts (shared by every consumer of the event)."""
    async with synced_informer(fake_apiserver) as synced:
        with anyio.fail_after(GUARD):
            async with synced.events() as stream:
                updated = fake_apiserver.objects.update("configmaps", configmap("cm-05", v="2"))
                async for event in stream:
                    if event.type is EventType.UPDATED:
                        break
        assert event._decoded is None and event._old_decoded is None
        assert event.key == "default/cm-05"
        assert event.resource_version == updated["metadata"]["resourceVersion"]
        assert event.data is not None
        assert msgspec.json.decode(event.data)["data"] == {"v": "2"}
        assert event._decoded is None  # nothing decoded so far
        new = event.object
        assert new["data"] == {"v": "2"} and event.object is new
        old = event.old_object
        assert old is not None and old["data"] == {"v": "0"} and event.old_object is old


async def test_a_stalled_consumer_keeps_no_decoded_object(
    fake_apiserver: FakeApiServer,
) -> None:
    """A fast consumer decodes every event; one that never reads keeps the same events in
    its backlog. Once the next batch arrives, none of them holds a decoded object any more
    (counted): the backlog holds bytes only."""
    async with synced_informer(fake_apiserver) as synced:
        updates = 300
        with anyio.fail_after(GUARD):
            async with synced.events() as stalled, synced.events() as fast:
                seen = initial = 0
                async for event in fast:
                    if event.is_in_initial_list:
                        event.object  # noqa: B018 (decoded: held by the event from now on)
                        initial += 1
                        if initial == 20:
                            for i in range(updates):
                                fake_apiserver.objects.update(
                                    "configmaps", configmap(f"cm-{i % 20:02d}", v=f"u{i}")
                                )
                        continue
                    if event.key == "default/marker":
                        break
                    assert event.object["data"]["v"].startswith("u")  # decoded, shared
                    assert event.old_object is not None
                    seen += 1
                    if seen == updates:  # the last update read: one more batch, never decoded
                        fake_apiserver.objects.create("configmaps", configmap("marker"))
                listener = listener_of(stalled)
                assert all(obj.__class__ is WireObject for obj in listener._replay)
                assert len(listener._replay) == 20  # the cache replayed to it: carriers
                backlog = list(listener._buffer)
                assert len(backlog) == updates + 1
                assert sum(event._has_decoded for event in backlog) == 0
                assert all(event._obj.__class__ is WireObject for event in backlog)


def test_a_long_backlog_is_searched_again_as_it_doubles() -> None:
    """The whole backlog is searched when it has doubled past SPILL_AT, so events decoded
    long after they were buffered (a consumer far behind) are caught too."""
    listener = Listener(
        name="t", requested_resync_period=0, resync_period=0, now=0.0, upstream_synced=True
    )
    source = MemorySource()
    wires = []
    for i in range(SPILL_AT + 1):
        obj = source.create("configmaps", configmap(f"c{i}"))
        wire = msgspec.json.encode(obj)
        from aioinformer._wire._slices import WireDecoder

        carrier = WireDecoder().from_document(obj, wire)
        assert carrier is not None
        wires.append(Event(EventType.ADDED, carrier))
    listener.add_batch(wires)
    for event in wires:
        event.object  # noqa: B018 (decoded after the previous batch was searched)
    listener.add_batch([Event(EventType.ADDED, wires[0]._obj)])
    assert sum(event._has_decoded for event in listener._buffer) == 0


async def test_a_bulk_list_of_10k_objects_runs_no_full_collection() -> None:
    """list(), a namespace listing and an index listing of 10,000 cached Pods decode with the
    collector paused for the call: no full collection starts (gc.callbacks), where decoding
    the same bytes with the collector running starts several (each rescanning everything
    decoded so far)."""
    source = MemorySource()
    for i in range(10_000):
        pod = make_pod(i)
        pod["metadata"]["namespace"] = f"ns{i % 10}"
        source.create("pods", pod)
    informer = SharedIndexInformer(source.lister_watcher("pods"))
    async with informer:
        with anyio.fail_after(GUARD):
            assert await informer.wait_for_cache_sync()
        lister = informer.lister()
        datas = [wire.data for wire in informer._indexer.stored()]  # type: ignore[union-attr]
        gc.collect()
        with full_collections() as unpaused:
            control = [orjson.loads(data) for data in datas]
        assert unpaused, "the control ran no full collection: the test proves nothing"
        del control
        gc.collect()
        with full_collections() as started:
            everything = lister.list()
            one = lister.namespace("ns3").list()
            indexed = informer.cache.by_index("namespace", "ns4")
            after = [[i] for i in range(1000)]  # the deferred young collection runs here
        assert started == []
        assert gc.isenabled()
        assert len(everything) == 10_000 and len(one) == 1_000 and len(indexed) == 1_000
        assert len(after) == 1000
        assert sum(1 for _ in informer.cache.iter()) == 10_000


async def test_the_read_cache_shares_hot_objects_until_they_change() -> None:
    """With read_cache, get of a hot key returns the same (read-only) dict until the object
    changes; without it, every get decodes a fresh dict."""
    for read_cache, shared in ((0, False), (16, True)):
        source = MemorySource()
        source.create("configmaps", configmap("hot", v="1"))
        informer = SharedIndexInformer(source.lister_watcher(CONFIGMAPS), read_cache=read_cache)
        async with informer:
            with anyio.fail_after(GUARD):
                assert await informer.wait_for_cache_sync()
            lister = informer.lister()
            first = lister.get("hot", "default")
            assert first is not None and first["data"] == {"v": "1"}
            assert (lister.get("hot", "default") is first) is shared
            raw = informer.cache.get_raw_by_key("default/hot")
            assert raw is not None and msgspec.json.decode(raw) == first
            with anyio.fail_after(GUARD):
                async with informer.events() as stream:
                    source.update("configmaps", configmap("hot", v="2"))
                    async for event in stream:
                        if event.type is EventType.UPDATED:
                            break
            changed = lister.get("hot", "default")
            assert changed is not None and changed["data"] == {"v": "2"}
            assert changed is not first


async def test_a_transform_decodes_each_object_for_its_informer_only() -> None:
    """A transform sees whole decoded objects; what it returns is cached (as bytes) and
    delivered."""
    source = MemorySource()
    source.create("configmaps", configmap("a", v="1", secret="s"))

    def drop_secret(obj: dict[str, Any]) -> dict[str, Any]:
        obj["data"].pop("secret", None)
        return obj

    informer = SharedIndexInformer(source.lister_watcher(CONFIGMAPS))
    informer.set_transform(drop_secret)
    async with informer:
        with anyio.fail_after(GUARD):
            assert await informer.wait_for_cache_sync()
            async with informer.events() as stream:
                source.update("configmaps", configmap("a", v="2", secret="t"))
                async for event in stream:
                    if event.type is EventType.UPDATED:
                        break
        assert event.object["data"] == {"v": "2"}
        assert informer.cache.get_by_key("default/a") == event.object
        assert isinstance(informer._indexer.get_stored("default/a"), WireObject)


async def test_the_dict_cache_shares_the_cached_dict_with_events(cache_mode: str) -> None:
    """cache="dict" decodes each object once on its way into the cache: events carry the
    cached dict itself; cache="compact" hands out fresh dicts on read."""
    source = MemorySource()
    source.create("configmaps", configmap("a", v="1"))
    informer = SharedIndexInformer(source.lister_watcher(CONFIGMAPS), cache=cache_mode)  # type: ignore[arg-type]
    async with informer:
        with anyio.fail_after(GUARD):
            assert await informer.wait_for_cache_sync()
            async with informer.events() as stream:
                async for event in stream:  # noqa: B007 (the first one)
                    break
        cached = informer.cache.get_by_key("default/a")
        assert (event.object is cached) is (cache_mode == "dict")
        assert event.object == cached
        assert event.key == "default/a"
