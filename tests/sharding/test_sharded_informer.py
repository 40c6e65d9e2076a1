"""Sharded informers (issue 14.2) against the fake API server, with its feature gate on and off.

Rules (``shared/reference/state-of-the-art-2026.md``, SOTA): the selector is sent the same on
every LIST page, WATCH and streaming list (§1.6 "the client must resend exactly the same
shardSelector on every page"; §1.8 item 1); ``shardInfo`` proves server-side filtering, its
absence does not (§1.6, §1.8 item 3), so the client filters every object again; an invalid
selector is HTTP 500 ``invalid shard selector:`` (§1.3) and must not be retried (§1.8 item 4);
``remainingItemCount`` is ignored on sharded lists (§1.8 item 5). Expected shards are computed
here from FNV-1a 64 (§1.4), not with the library's matcher.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from aioinformer import KubeClient
from aioinformer._informer._factory import SharedInformerFactory
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._listwatch import ListOptions, ListResult, WatchEvent
from aioinformer._sharding import shard
from aioinformer._sharding._informer_filter import ShardedListerWatcher
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.errors import InvalidShardSelectorError, ShardSelectorRejectedError
from aioinformer.metrics import InformerCollector
from aioinformer.testing import FakeApiServer
from tests.support import CONFIGMAPS, FAST_WATCH, kube_client

GUARD = 20.0


def _fnv(value: str) -> int:
    h = 0xCBF29CE484222325
    for byte in value.encode():
        h = (h ^ byte) * 0x100000001B3 % (1 << 64)
    return h


def _half(obj: dict[str, Any]) -> int:
    return 0 if _fnv(obj["metadata"].get("uid", "")) < 1 << 63 else 1


def _fill(server: FakeApiServer, start: int, n: int) -> None:
    for i in range(start, start + n):
        server.objects.create("configmaps", {"metadata": {"name": f"cm-{i:03d}"}, "data": {}})


def _expected(server: FakeApiServer) -> list[set[str]]:
    halves: list[set[str]] = [set(), set()]
    for obj in server.objects.list("configmaps"):
        halves[_half(obj)].add(f"default/{obj['metadata']['name']}")
    return halves


async def _until(informer: SharedIndexInformer, predicate: Callable[[], bool]) -> None:
    """Wait until ``predicate()`` holds, re-checked at each event the informer delivers."""
    if predicate():
        return
    async for _ in informer.events():
        if predicate():
            return


def _holds(informer: SharedIndexInformer, keys: set[str]) -> Callable[[], bool]:
    return lambda: set(informer.indexer.list_keys()) == keys


async def _run_halves(
    server: FakeApiServer, client: KubeClient, *, streaming: bool = False
) -> tuple[list[set[str]], list[Any]]:
    """Two informers on the two halves: list, then watch creations and deletions."""
    watch = dataclasses.replace(FAST_WATCH, page_size=5, streaming_list=streaming)
    informers = [
        SharedIndexInformer(
            KubeListerWatcher(client, CONFIGMAPS), shard_selector=shard(i, 2), watch=watch
        )
        for i in range(2)
    ]
    async with informers[0], informers[1]:
        for informer in informers:
            assert await informer.wait_for_cache_sync()
        _fill(server, 100, 8)
        for name in ("cm-000", "cm-001"):
            server.objects.delete("configmaps", name, namespace="default")
        expected = _expected(server)
        for informer, keys in zip(informers, expected, strict=True):
            await _until(informer, _holds(informer, keys))
        caches = [set(i.indexer.list_keys()) for i in informers]
        stats = [i.statistics().shard for i in informers]
    return caches, stats


def _sharded_requests(server: FakeApiServer, first: int) -> list[Any]:
    return [
        r
        for r in server.requests.records[first:]
        if r.resource == "configmaps" and r.verb in ("list", "watch")
    ]


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_caches_are_the_same_with_the_gate_on_and_off(fake_apiserver: FakeApiServer) -> None:
    """Both halves cover every object once, the caches do not depend on the server filtering,
    and the statistics say who filtered (SOTA §1.6 gate off: "selector ignored", no shardInfo)."""
    _fill(fake_apiserver, 0, 40)
    with anyio.fail_after(GUARD):
        async with kube_client(fake_apiserver) as client:
            first = len(fake_apiserver.requests.records)
            on_caches, on_stats = await _run_halves(fake_apiserver, client)
            on_requests = _sharded_requests(fake_apiserver, first)
            # Put the objects back as they were, so the second run sees the same set.
            for name in ("cm-000", "cm-001"):
                fake_apiserver.objects.create("configmaps", {"metadata": {"name": name}})
            for i in range(100, 108):
                fake_apiserver.objects.delete("configmaps", f"cm-{i:03d}", namespace="default")
            fake_apiserver.faults.set_sharded_list_and_watch(False)
            first = len(fake_apiserver.requests.records)
            off_caches, off_stats = await _run_halves(fake_apiserver, client)
            off_requests = _sharded_requests(fake_apiserver, first)
    # cm-000 and cm-001 were re-created with new UIDs: compare by the expected halves.
    assert on_caches[0].isdisjoint(on_caches[1]) and off_caches[0].isdisjoint(off_caches[1])
    assert on_caches[0] | on_caches[1] == off_caches[0] | off_caches[1]
    assert off_caches == _expected(fake_apiserver)
    assert [s.filtering for s in on_stats] == ["server-side", "server-side"]
    assert [s.filtering for s in off_stats] == ["client-side", "client-side"]
    assert all(s.dropped == 0 and s.lists_confirmed >= 1 for s in on_stats)
    assert all(s.dropped > 0 and s.lists_unconfirmed >= 1 for s in off_stats)
    # Sent byte-identical on every list and watch.
    for requests in (on_requests, off_requests):
        selectors = {r.query.get("shardSelector") for r in requests}
        assert selectors == {str(shard(0, 2)), str(shard(1, 2))}
        assert any(r.verb == "watch" for r in requests)


@pytest.mark.parametrize("gate", [True, False])
async def test_every_page_carries_the_selector(fake_apiserver: FakeApiServer, gate: bool) -> None:
    """Continued pages carry the same selector (SOTA §1.6 "Pagination and continue": the token
    does not encode it); with the gate on every page carries shardInfo."""
    fake_apiserver.faults.set_sharded_list_and_watch(gate)
    _fill(fake_apiserver, 0, 30)
    pages: list[ListResult] = []
    with anyio.fail_after(GUARD):
        async with kube_client(fake_apiserver) as client:
            first = len(fake_apiserver.requests.records)
            lw = ShardedListerWatcher(KubeListerWatcher(client, CONFIGMAPS), shard(1, 2), name="t")
            token: str | None = None
            while not pages or token:
                pages.append(await lw.list(ListOptions(limit=4, continue_token=token)))
                token = pages[-1].continue_token
    requests = _sharded_requests(fake_apiserver, first)
    assert len(requests) == len(pages) > 1
    assert {r.query["shardSelector"] for r in requests} == {str(shard(1, 2))}
    assert sum(1 for r in requests if "continue" in r.query) == len(pages) - 1
    listed = {f"default/{o['metadata']['name']}" for p in pages for o in p.items}
    assert listed == _expected(fake_apiserver)[1]
    assert all(p.remaining_item_count is None for p in pages)
    stats = lw.statistics()
    assert (stats.lists_confirmed, stats.dropped == 0) == (
        (len(pages), True) if gate else (0, False)
    )


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
@pytest.mark.parametrize("gate", [True, False])
async def test_streaming_list_is_filtered(fake_apiserver: FakeApiServer, gate: bool) -> None:
    """A streaming list carries the selector too; watch streams never carry shardInfo (SOTA
    §1.6 WatchList), so the informer says "client-side" whatever the gate."""
    fake_apiserver.faults.set_sharded_list_and_watch(gate)
    _fill(fake_apiserver, 0, 16)
    with anyio.fail_after(GUARD):
        async with kube_client(fake_apiserver) as client:
            first = len(fake_apiserver.requests.records)
            caches, stats = await _run_halves(fake_apiserver, client, streaming=True)
    assert caches == _expected(fake_apiserver)
    assert [s.filtering for s in stats] == ["client-side", "client-side"]
    assert (sum(s.dropped for s in stats) > 0) is not gate
    requests = _sharded_requests(fake_apiserver, first)
    assert any(r.query.get("sendInitialEvents") == "true" for r in requests)
    assert all(r.query.get("shardSelector") for r in requests)


async def test_a_refused_selector_stops_the_informer(fake_apiserver: FakeApiServer) -> None:
    """HTTP 500 ``invalid shard selector:`` (SOTA §1.3) is a configuration error: the informer
    stops with it after one request instead of retrying."""

    def bogus(options: ListOptions) -> ListOptions:
        return dataclasses.replace(options, shard_selector="shardRange(object.metadata.name)")

    with anyio.fail_after(GUARD):
        async with kube_client(fake_apiserver) as client:
            lw = KubeListerWatcher(client, CONFIGMAPS, tweak_list_options=bogus)
            informer = SharedIndexInformer(lw, watch=FAST_WATCH)
            with pytest.raises(ShardSelectorRejectedError) as caught:
                await informer.run()
    assert str(caught.value.message).startswith("invalid shard selector:")
    assert len(_sharded_requests(fake_apiserver, 0)) == 1
    assert not informer.has_synced()


def test_a_selector_text_is_checked_when_the_informer_is_made() -> None:
    """The client refuses what the server would (SOTA §1.3 rule 6: short hex) up front."""
    lw = _Pages([])
    with pytest.raises(InvalidShardSelectorError):
        SharedIndexInformer(
            lw, shard_selector="shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"
        )
    with pytest.raises(InvalidShardSelectorError):
        SharedInformerFactory(lister_watcher=lambda *a, **k: lw, shard_selector="bogus")


class _Pages:
    """A lister-watcher answering with fixed pages (no watch)."""

    def __init__(self, pages: list[ListResult]) -> None:
        self.pages = pages
        self.options: list[ListOptions] = []

    async def list(self, options: ListOptions) -> ListResult:
        self.options.append(options)
        return self.pages[len(self.options) - 1]

    async def watch(self, options: ListOptions, *, idle_timeout: float | None = None) -> Any:
        raise NotImplementedError


async def test_remaining_item_count_is_dropped_and_the_info_compared_as_sets() -> None:
    """A wrong ``remainingItemCount`` (1.36.x, SOTA §1.6) is not passed on; ``shardInfo`` in
    another spelling of the same selector confirms server-side filtering (§1.3 canonical)."""
    selector = shard(0, 2)
    items: list[dict[str, Any]] = [{"metadata": {"uid": u}} for u in ("ab", "a", "abc")]
    echoed = "shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')"
    lw = _Pages([ListResult(items, "7", "next", 99, echoed)])
    wrapped = ShardedListerWatcher(lw, selector, name="t")
    result = await wrapped.list(ListOptions(limit=5))
    assert [o["metadata"]["uid"] for o in result.items] == ["ab"]  # SOTA §1.7: "ab" in shard 0
    assert result.remaining_item_count is None and result.continue_token == "next"
    assert lw.options[0].shard_selector == str(selector)
    stats = wrapped.statistics()
    assert (stats.filtering, stats.kept, stats.dropped) == ("server-side", 1, 2)


async def test_watch_events_are_filtered_but_bookmarks_pass() -> None:
    """Bookmarks are never filtered (SOTA §1.6 Bookmarks; §1.8 item 3)."""

    class Stream:
        def __init__(self) -> None:
            self.events = [
                WatchEvent("ADDED", {"metadata": {"uid": "a"}}),
                WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": "9"}}),
                WatchEvent("MODIFIED", {"metadata": {"uid": "ab"}}),
            ]

        def __aiter__(self) -> Stream:
            return self

        async def __anext__(self) -> WatchEvent:
            if not self.events:
                raise StopAsyncIteration
            return self.events.pop(0)

        async def aclose(self) -> None:
            return None

    class Watcher(_Pages):
        async def watch(self, options: ListOptions, *, idle_timeout: float | None = None) -> Any:
            self.options.append(options)
            return Stream()

    lw = Watcher([])
    wrapped = ShardedListerWatcher(lw, shard(0, 2), name="t")
    stream = await wrapped.watch(ListOptions(resource_version="5"))
    assert [e.type async for e in stream] == ["BOOKMARK", "MODIFIED"]
    assert lw.options[0].shard_selector == str(shard(0, 2))


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_factory_default_and_per_resource_selectors(fake_apiserver: FakeApiServer) -> None:
    """The factory's selector applies to every informer unless a resource has its own (None:
    unsharded); metrics say who filters."""
    _fill(fake_apiserver, 0, 12)
    with anyio.fail_after(GUARD):
        async with kube_client(fake_apiserver) as client:
            factory = SharedInformerFactory(
                client,
                watch=FAST_WATCH,
                shard_selector=shard(0, 2),
                custom_shard_selector={"v1/secrets": None, "v1/namespaces": str(shard(1, 2))},
            )
            configmaps = factory.for_resource("configmaps")
            secrets = factory.for_resource("secrets")
            namespaces = factory.for_resource("namespaces")
            async with factory:
                await factory.wait_for_cache_sync()
                assert set(configmaps.indexer.list_keys()) == _expected(fake_apiserver)[0]
    assert secrets.statistics().shard is None
    namespace_shard = namespaces.statistics().shard
    assert namespace_shard is not None and namespace_shard.selector == str(shard(1, 2))
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in InformerCollector(factory).collect()
        for s in family.samples
    }
    mode = ("aioinformer_informer_shard_filtering", (("informer", "v1/configmaps"), ("mode",
            "server-side")))  # fmt: skip
    assert samples[mode] == 1.0
