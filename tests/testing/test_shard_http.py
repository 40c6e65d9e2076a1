"""``shardSelector`` (KEP-5866) on the fake API server, end to end over HTTP with raw requests.

Each test names the rule it checks in ``shared/reference/state-of-the-art-2026.md`` (SOTA).
Expected shards are computed here from the hash (SOTA §1.4), not with either implementation's
matcher.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest

from aioinformer.testing import FakeApiServer
from aioinformer.testing.pytest_plugin import _serving as serving

from .watching import decode, raw_lines

LOWER = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
UPPER = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
# The same selector as LOWER, spelled differently: the server echoes the canonical form.
LOWER_SPELLED = 'shardRange(object.metadata.uid,"0x0000000000000000","0x8000000000000000")'


def _fnv(value: str) -> int:
    h = 0xCBF29CE484222325
    for byte in value.encode():
        h = (h ^ byte) * 0x100000001B3 % (1 << 64)
    return h


def _lower(obj: dict[str, Any]) -> bool:
    return _fnv(obj["metadata"].get("uid", "")) < 1 << 63


async def _fill(server: FakeApiServer, n: int = 24, **labels: str) -> list[dict[str, Any]]:
    made = []
    for i in range(n):
        body = {"metadata": {"name": f"cm-{i:02d}", "labels": labels}, "data": {}}
        made.append(server.objects.create("configmaps", body))
    # uids are random: make sure both halves are populated
    while len({_lower(o) for o in made}) < 2:
        body = {"metadata": {"name": f"cm-{len(made):02d}", "labels": labels}, "data": {}}
        made.append(server.objects.create("configmaps", body))
    return made


def _names(objs: list[dict[str, Any]]) -> set[str]:
    return {o["metadata"]["name"] for o in objs}


async def _get(http: aiohttp.ClientSession, path: str, **params: str) -> tuple[int, dict[str, Any]]:
    async with http.get(path, params=params) as resp:
        return resp.status, orjson.loads(await resp.read())


CM = "/api/v1/namespaces/default/configmaps"


async def test_list_is_filtered_and_echoes_the_canonical_selector(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """SOTA §1.6 LIST (filtered; ``shardInfo`` set by ``SetShardInfoOnList``) and §1.3 "The
    server echoes s.ShardSelector.String(), not the raw request text"."""
    made = await _fill(fake_apiserver)
    code, lower = await _get(http, CM, shardSelector=LOWER_SPELLED)
    assert code == 200
    assert lower["metadata"]["shardInfo"] == {"selector": LOWER}
    assert _names(lower["items"]) == _names([o for o in made if _lower(o)])
    _, upper = await _get(http, CM, shardSelector=UPPER)
    assert upper["metadata"]["shardInfo"] == {"selector": UPPER}
    assert _names(lower["items"]) | _names(upper["items"]) == _names(made)
    assert not _names(lower["items"]) & _names(upper["items"])


async def test_pages_are_filtered_without_remaining_item_count(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """SOTA §1.6 "Pagination and continue" (the selector is resent on every page; every page
    carries ``shardInfo``) and "remainingItemCount ... omitted when the predicate is non-empty"
    (the behaviour after k/k#140513)."""
    made = await _fill(fake_apiserver, 30)
    seen: list[dict[str, Any]] = []
    params = {"shardSelector": LOWER, "limit": "3"}
    while True:
        code, page = await _get(http, CM, **params)
        assert code == 200
        assert page["metadata"]["shardInfo"] == {"selector": LOWER}
        assert "remainingItemCount" not in page["metadata"]
        assert len(page["items"]) <= 3
        seen += page["items"]
        token = page["metadata"].get("continue")
        if not token:
            break
        params = {"shardSelector": LOWER, "limit": "3", "continue": token}
    assert [o["metadata"]["name"] for o in seen] == sorted(
        o["metadata"]["name"] for o in made if _lower(o)
    )


async def test_shard_and_label_selectors_combine_with_and(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """SOTA §1.6 "Composition with other selectors: AND"."""
    red = await _fill(fake_apiserver, 10, colour="red")
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "blue", "labels": {}}})
    _, both = await _get(http, CM, shardSelector=LOWER, labelSelector="colour=red")
    assert _names(both["items"]) == _names([o for o in red if _lower(o)])


async def test_custom_resource_lists_are_filtered_without_shard_info(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """SOTA §1.6 "Custom-resource lists: absent": an UnstructuredList has no shardInfo, but the
    registry still filters."""
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
    made = [
        fake_apiserver.objects.create("widgets", {"metadata": {"name": f"w{i}"}}) for i in range(12)
    ]
    code, doc = await _get(http, "/apis/example.com/v1/widgets", shardSelector=LOWER)
    assert code == 200
    assert "shardInfo" not in doc["metadata"]
    assert _names(doc["items"]) == _names([o for o in made if _lower(o)])


async def test_namespace_sharding_puts_cluster_scoped_objects_in_one_shard(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """SOTA §1.8 item 6: under namespace sharding every cluster-scoped object hashes "" to
    0xcbf29ce484222325, so it is in the upper half and never in the lower."""
    for name in ("a", "b", "c"):
        fake_apiserver.objects.create("namespaces", {"metadata": {"name": name}})
    by_ns = "shardRange(object.metadata.namespace, '{}', '{}')"
    _, lower = await _get(
        http, "/api/v1/namespaces", shardSelector=by_ns.format("0x0000000000000000", LOW_END)
    )
    _, upper = await _get(
        http, "/api/v1/namespaces", shardSelector=by_ns.format(LOW_END, "0x10000000000000000")
    )
    assert lower["items"] == []
    assert _names(upper["items"]) == {"default", "a", "b", "c"}


LOW_END = "0x8000000000000000"


@pytest.mark.parametrize(
    ("method", "path", "extra"),
    [
        ("GET", CM, {}),
        ("GET", CM, {"watch": "true"}),
        (
            "GET",
            CM,
            {
                "watch": "true",
                "sendInitialEvents": "true",
                "resourceVersionMatch": "NotOlderThan",
                "allowWatchBookmarks": "true",
            },
        ),
        ("DELETE", CM, {}),
    ],
    ids=["list", "watch", "streaming-list", "deletecollection"],
)
async def test_invalid_selector_is_a_500_with_the_parser_message(
    fake_apiserver: FakeApiServer,
    http: aiohttp.ClientSession,
    method: str,
    path: str,
    extra: dict[str, str],
) -> None:
    """SOTA §1.3 "Error response for an invalid selector": a plain error from the registry
    (LIST, WATCH before the stream starts, DELETECOLLECTION through its list), answered as
    HTTP 500, reason unset, message ``invalid shard selector: <parser message>``."""
    params = {"shardSelector": "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"}
    async with http.request(method, path, params={**params, **extra}) as resp:
        assert resp.status == 500
        body = await resp.json()
    assert body["kind"] == "Status" and body["status"] == "Failure" and body["code"] == 500
    assert "reason" not in body
    assert body["message"] == (
        "invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value, got "
        '"0x0" (did you mean "0x0000000000000000"?)'
    )


async def test_empty_selector_is_ignored_but_blank_is_refused(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """SOTA §1.3 rule 1: the registry parses only a non-empty value, so ``shardSelector=``
    lists everything (no shardInfo) while a whitespace-only value is refused."""
    made = await _fill(fake_apiserver, 4)
    code, doc = await _get(http, CM, shardSelector="")
    assert code == 200 and "shardInfo" not in doc["metadata"]
    assert _names(doc["items"]) == _names(made)
    code, status = await _get(http, CM, shardSelector="  ")
    assert code == 500
    assert status["message"] == (
        "invalid shard selector: empty shard selector is not allowed; omit the parameter for "
        "unfiltered lists"
    )


async def test_bad_label_selector_is_reported_before_the_shard_selector(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """SOTA §1.3 "No earlier validation" of the shard selector: option decoding (400) and
    validation (422) come first; the selector is parsed in the registry."""
    code, _ = await _get(http, CM, shardSelector="nonsense", labelSelector="a b")
    assert code == 400
    code, _ = await _get(http, CM, shardSelector="nonsense", resourceVersionMatch="Exact")
    assert code == 422


async def _watch_until(resp: aiohttp.ClientResponse, name: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    while not events or events[-1]["object"]["metadata"].get("name") != name:
        events += decode(await raw_lines(resp, 1))
    return events


async def _in_half(server: FakeApiServer, name: str, lower: bool) -> dict[str, Any]:
    """Create configmaps named ``name-<n>`` until one lands in the wanted half."""
    for n in range(200):
        obj = server.objects.create("configmaps", {"metadata": {"name": f"{name}-{n}"}})
        if _lower(obj) == lower:
            return obj
    raise AssertionError("no object in the wanted half after 200 tries")


async def test_watch_delivers_only_its_shard(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """SOTA §1.6 WATCH: events are filtered with the same predicate. Every object created
    before the in-shard sentinel that is outside the shard must be missing from the stream."""
    rv = fake_apiserver.objects.resource_version
    async with http.get(
        CM, params={"watch": "1", "resourceVersion": rv, "shardSelector": LOWER}
    ) as resp:
        made = await _fill(fake_apiserver, 12)
        sentinel = await _in_half(fake_apiserver, "sentinel", lower=True)
        fake_apiserver.objects.patch(
            "configmaps", sentinel["metadata"]["name"], {"data": {"k": "v"}}
        )
        events = await _watch_until(resp, sentinel["metadata"]["name"])
        events += decode(await raw_lines(resp, 1))
    created = fake_apiserver.objects.list("configmaps")
    assert _names(made) <= _names(created)
    expected = {o["metadata"]["name"] for o in created if _lower(o)}
    added = {e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED"}
    assert added == expected
    assert events[-1]["type"] == "MODIFIED"
    assert all(_lower(e["object"]) for e in events)


async def test_streaming_list_filters_initial_events_and_keeps_the_bookmark(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """SOTA §1.6 WatchList: initial ADDED events are shard-filtered; the initial-events-end
    bookmark is sent (bookmarks are never filtered); no ``shardInfo`` on watch streams."""
    made = await _fill(fake_apiserver, 16)
    params = {
        "watch": "true",
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
        "shardSelector": UPPER,
    }
    expected = [o for o in made if not _lower(o)]
    async with http.get(CM, params=params) as resp:
        events = decode(await raw_lines(resp, len(expected) + 1))
    assert _names([e["object"] for e in events[:-1]]) == _names(expected)
    bookmark = events[-1]
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert all("shardInfo" not in e["object"]["metadata"] for e in events)


async def test_bookmarks_are_never_filtered() -> None:
    """SOTA §1.6 Bookmarks: ``convertToWatchEvent`` returns BOOKMARK before any filter. A
    bookmark has no uid (hash 0xcbf29ce484222325), outside this shard, and still arrives."""
    async with (
        FakeApiServer(bookmark_interval=0.05) as server,
        aiohttp.ClientSession(base_url=server.url) as http,
    ):
        params = {"watch": "1", "allowWatchBookmarks": "true", "shardSelector": LOWER}
        async with http.get(
            CM, params={**params, "resourceVersion": server.objects.resource_version}
        ) as resp:
            (event,) = decode(await raw_lines(resp, 1))
    assert event["type"] == "BOOKMARK"


async def test_deletecollection_deletes_only_its_shard(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """SOTA §1.6 DeleteCollection: ``Store.DeleteCollection`` lists with the same options, so
    the shard narrows what is deleted."""
    made = await _fill(fake_apiserver, 16)
    async with http.delete(CM, params={"shardSelector": LOWER}) as resp:
        assert resp.status == 200
        deleted = (await resp.json())["items"]
    assert _names(deleted) == _names([o for o in made if _lower(o)])
    left = fake_apiserver.objects.list("configmaps")
    assert _names(left) == _names([o for o in made if not _lower(o)])


@pytest.fixture
async def old_server() -> AsyncIterator[FakeApiServer]:
    async with serving(FakeApiServer(sharded_list_and_watch=False, admin_api=True)) as server:
        yield server


async def test_gate_off_ignores_the_parameter(old_server: FakeApiServer) -> None:
    """SOTA §1.6 "Gate off, or an older server": the parameter is ignored (not parsed): an
    unfiltered list with no ``shardInfo``, even for an invalid selector; watches unfiltered."""
    made = await _fill(old_server, 8)
    async with aiohttp.ClientSession(base_url=old_server.url) as http:
        for selector in (LOWER, "not a selector"):
            code, doc = await _get(http, CM, shardSelector=selector)
            assert code == 200 and "shardInfo" not in doc["metadata"]
            assert _names(doc["items"]) == _names(made)
        params = {"watch": "1", "resourceVersion": "0", "shardSelector": LOWER}
        async with http.get(CM, params=params) as resp:
            events = decode(await raw_lines(resp, len(made)))
        assert _names([e["object"] for e in events]) == _names(made)


async def test_gate_switches_at_run_time(old_server: FakeApiServer) -> None:
    """The switch: in process (``set_sharded_list_and_watch``) and over the admin API."""
    made = await _fill(old_server, 8)
    async with aiohttp.ClientSession(base_url=old_server.url) as http:
        gate = [old_server.faults.sharded_list_and_watch]
        old_server.faults.set_sharded_list_and_watch(True)
        gate.append(old_server.faults.sharded_list_and_watch)
        _, doc = await _get(http, CM, shardSelector=LOWER)
        assert doc["metadata"]["shardInfo"] == {"selector": LOWER}
        assert _names(doc["items"]) == _names([o for o in made if _lower(o)])
        async with http.post("/_fake/sharding", json={"enabled": False}) as resp:
            assert await resp.json() == {"shardedListAndWatch": False}
        gate.append(old_server.faults.sharded_list_and_watch)
        assert gate == [False, True, False]
        _, doc = await _get(http, CM, shardSelector=LOWER)
        assert "shardInfo" not in doc["metadata"] and _names(doc["items"]) == _names(made)
        async with http.post("/_fake/sharding", json={"enabled": "yes"}) as resp:
            assert resp.status == 400
