"""WATCH over HTTP through kubernetes_asyncio's Watch (and raw lines where it cannot show it)."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio.client import ApiClient, ApiException, CoreV1Api
from kubernetes_asyncio.watch import Watch

from aioinformer.testing import FakeApiServer

from .valid import deployment, pod
from .watching import decode, drain, raw_lines, summary, take


def _cm(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "data": {}}


async def test_watch_from_an_rv_replays_later_events_then_goes_live(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """Resuming at RV N delivers every event after N in order, then live events."""
    start = fake_apiserver.objects.resource_version
    fake_apiserver.objects.create("configmaps", _cm("a"))
    fake_apiserver.objects.patch("configmaps", "a", {"data": {"k": "v"}})
    fake_apiserver.objects.create("configmaps", _cm("b"))
    fake_apiserver.objects.delete("configmaps", "a")
    async with Watch() as watch:
        stream = watch.stream(
            CoreV1Api(api).list_namespaced_config_map, "default", resource_version=start
        )
        replayed = await take(stream, 4)
        fake_apiserver.objects.create("configmaps", _cm("c"))
        live = await take(stream, 1)
    assert summary(replayed + live) == [
        ("ADDED", "a"),
        ("MODIFIED", "a"),
        ("ADDED", "b"),
        ("DELETED", "a"),
        ("ADDED", "c"),
    ]
    rvs = [int(e["raw_object"]["metadata"]["resourceVersion"]) for e in replayed + live]
    assert rvs == sorted(rvs) and len(set(rvs)) == 5


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
@pytest.mark.parametrize("rv", ["0", ""])
async def test_watch_from_zero_or_unset_starts_with_synthetic_adds_and_no_replay(
    fake_apiserver: FakeApiServer, api: ApiClient, rv: str
) -> None:
    """RV "0"/"" starts with ADDED for the current state, never replaying history."""
    fake_apiserver.objects.create("configmaps", _cm("a"))
    fake_apiserver.objects.patch("configmaps", "a", {"data": {"k": "v"}})
    fake_apiserver.objects.create("configmaps", _cm("gone"))
    fake_apiserver.objects.delete("configmaps", "gone")
    fake_apiserver.objects.create("configmaps", _cm("b"))
    kwargs = {"resource_version": rv} if rv else {}
    async with Watch() as watch:
        stream = watch.stream(CoreV1Api(api).list_namespaced_config_map, "default", **kwargs)
        initial = await take(stream, 2)
        fake_apiserver.objects.create("configmaps", _cm("c"))
        live = await take(stream, 1)
    assert summary(initial) == [("ADDED", "a"), ("ADDED", "b")]
    assert initial[0]["raw_object"]["data"] == {"k": "v"}
    assert summary(live) == [("ADDED", "c")]


async def test_watch_from_an_expired_rv_gets_one_410_error_event_then_ends(
    http: aiohttp.ClientSession,
) -> None:
    """Below the history window the stream is 200, one ERROR (410 Expired), then EOF."""
    async with (
        FakeApiServer(history_limit=2) as server,
        aiohttp.ClientSession(base_url=server.url) as session,
    ):
        for i in range(6):
            server.objects.create("configmaps", _cm(f"cm-{i}"))
        params = {"watch": "1", "resourceVersion": "2"}
        async with session.get("/api/v1/namespaces/default/configmaps", params=params) as resp:
            assert resp.status == 200
            events = decode(await raw_lines(resp))
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"].startswith("too old resource version: 2")


async def test_kubernetes_asyncio_watch_raises_410_for_an_expired_rv() -> None:
    """kubernetes_asyncio's Watch turns the ERROR event into ApiException(410)."""
    async with FakeApiServer(history_limit=1) as server, server.api_client() as api:
        for i in range(4):
            server.objects.create("configmaps", _cm(f"cm-{i}"))
        async with Watch() as watch:
            stream = watch.stream(
                CoreV1Api(api).list_namespaced_config_map,
                "default",
                resource_version="2",
                timeout_seconds=5,
            )
            with pytest.raises(ApiException) as caught:
                await take(stream, 1)
    assert caught.value.status == 410


async def test_watch_from_a_future_rv_is_504(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A watch beyond the current RV is refused with 504 Too large resource version."""
    future = str(int(fake_apiserver.objects.resource_version) + 5)
    async with http.get("/api/v1/pods", params={"watch": "1", "resourceVersion": future}) as resp:
        assert resp.status == 504
        status = await resp.json()
    assert status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


async def test_bookmarks_arrive_every_interval_at_the_current_rv() -> None:
    """With allowWatchBookmarks, BOOKMARK events carry kind, apiVersion and the current RV."""
    async with FakeApiServer(bookmark_interval=0.05) as server, server.api_client() as api:
        server.objects.create("deployments.apps", deployment("d"))
        async with Watch() as watch:
            stream = watch.stream(
                CoreV1Api(api).list_namespaced_config_map,
                "default",
                resource_version=server.objects.resource_version,
                allow_watch_bookmarks=True,
            )
            events = await take(stream, 2)
    for event in events:
        assert event["type"] == "BOOKMARK"
        assert event["raw_object"] == {
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": server.objects.resource_version},
        }


async def test_no_bookmarks_without_allow_watch_bookmarks(http: aiohttp.ClientSession) -> None:
    """Without allowWatchBookmarks the stream stays silent (and ends cleanly at its timeout)."""
    async with (
        FakeApiServer(bookmark_interval=0.01) as server,
        aiohttp.ClientSession(base_url=server.url) as session,
    ):
        params = {
            "watch": "1",
            "resourceVersion": server.objects.resource_version,
            "timeoutSeconds": "0.3",
        }
        async with session.get("/api/v1/pods", params=params) as resp:
            assert await raw_lines(resp) == []


async def test_timeout_seconds_ends_the_stream_cleanly(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """``timeoutSeconds`` closes the stream cleanly: the Watch just stops, after a bookmark."""
    async with Watch() as watch:
        stream = watch.stream(
            CoreV1Api(api).list_namespaced_pod,
            "default",
            resource_version=fake_apiserver.objects.resource_version,
            allow_watch_bookmarks=True,
            timeout_seconds=1,
        )
        events = await drain(stream)
    assert [e["type"] for e in events] == ["BOOKMARK"]


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_send_initial_events_ends_with_the_annotated_bookmark(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """sendInitialEvents streams ADDED for the state, then a BOOKMARK marked initial-events-end."""
    fake_apiserver.objects.create("configmaps", _cm("a"))
    fake_apiserver.objects.create("configmaps", _cm("b"))
    rv = fake_apiserver.objects.resource_version
    async with Watch() as watch:
        stream = watch.stream(
            CoreV1Api(api).list_namespaced_config_map,
            "default",
            send_initial_events=True,
            resource_version_match="NotOlderThan",
            allow_watch_bookmarks=True,
        )
        initial = await take(stream, 3)
        fake_apiserver.objects.create("configmaps", _cm("c"))
        live = await take(stream, 1)
    assert summary(initial) == [("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", "")]
    bookmark = initial[2]["raw_object"]
    assert bookmark["metadata"] == {
        "resourceVersion": rv,
        "annotations": {"k8s.io/initial-events-end": "true"},
    }
    assert summary(live) == [("ADDED", "c")]


@pytest.mark.parametrize(
    "params",
    [
        {"sendInitialEvents": "true", "allowWatchBookmarks": "true"},
        {"sendInitialEvents": "false", "allowWatchBookmarks": "true"},
        {"resourceVersionMatch": "NotOlderThan", "resourceVersion": "1"},
    ],
)
async def test_invalid_streaming_list_options_are_422(
    http: aiohttp.ClientSession, params: dict[str, str]
) -> None:
    """sendInitialEvents (true or false) needs NotOlderThan; a match without it is refused
    (``validateWatchOptions``)."""
    async with http.get("/api/v1/pods", params={"watch": "1", **params}) as resp:
        assert resp.status == 422
        assert (await resp.json())["reason"] == "Invalid"


async def test_selector_transitions_become_added_and_deleted(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """Entering a label selector is ADDED, leaving it is DELETED with the previous state."""
    async with Watch() as watch:
        stream = watch.stream(
            CoreV1Api(api).list_namespaced_config_map,
            "default",
            resource_version=fake_apiserver.objects.resource_version,
            label_selector="app=web",
        )
        fake_apiserver.objects.create("configmaps", _cm("x", app="db"))
        fake_apiserver.objects.patch("configmaps", "x", {"metadata": {"labels": {"app": "web"}}})
        fake_apiserver.objects.patch("configmaps", "x", {"data": {"k": "v"}})
        left = fake_apiserver.objects.patch(
            "configmaps", "x", {"metadata": {"labels": {"app": "db"}}}
        )
        fake_apiserver.objects.delete("configmaps", "x")
        fake_apiserver.objects.create("configmaps", _cm("y", app="web"))
        events = await take(stream, 4)
    assert summary(events) == [("ADDED", "x"), ("MODIFIED", "x"), ("DELETED", "x"), ("ADDED", "y")]
    deleted = events[2]["raw_object"]
    assert deleted["metadata"]["labels"] == {"app": "web"}
    assert deleted["metadata"]["resourceVersion"] == left["metadata"]["resourceVersion"]


async def test_field_selector_transitions_follow_pod_phase(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A pod whose status.phase leaves the field selector is DELETED for that watch (a
    created pod is ``Pending``: ``podStrategy.PrepareForCreate``)."""
    fake_apiserver.objects.create("pods", pod("p"))
    params = {
        "watch": "1",
        "fieldSelector": "status.phase=Running",
        "resourceVersion": fake_apiserver.objects.resource_version,
    }
    async with http.get("/api/v1/namespaces/default/pods", params=params) as resp:
        fake_apiserver.objects.patch(
            "pods", "p", {"status": {"phase": "Running"}}, subresource="status"
        )
        fake_apiserver.objects.patch(
            "pods", "p", {"status": {"phase": "Succeeded"}}, subresource="status"
        )
        events = decode(await raw_lines(resp, 2))
    assert [(e["type"], e["object"]["status"]["phase"]) for e in events] == [
        ("ADDED", "Running"),
        ("DELETED", "Running"),
    ]


async def test_deleted_carries_the_final_object_at_the_deletion_rv(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """A DELETED event holds the whole last state with the RV of the delete."""
    fake_apiserver.objects.create(
        "configmaps", {"metadata": {"name": "c", "labels": {"a": "b"}}, "data": {"k": "v"}}
    )
    async with Watch() as watch:
        stream = watch.stream(
            CoreV1Api(api).list_namespaced_config_map,
            "default",
            resource_version=fake_apiserver.objects.resource_version,
        )
        fake_apiserver.objects.delete("configmaps", "c")
        (event,) = await take(stream, 1)
    assert event["type"] == "DELETED"
    assert event["raw_object"]["data"] == {"k": "v"}
    assert event["raw_object"]["metadata"]["labels"] == {"a": "b"}
    assert (
        event["raw_object"]["metadata"]["resourceVersion"]
        == fake_apiserver.objects.resource_version
    )


async def test_watch_is_scoped_to_its_namespace(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A namespaced watch never sees other namespaces' objects."""
    fake_apiserver.objects.create("namespaces", {"metadata": {"name": "other"}})
    params = {"watch": "1", "resourceVersion": fake_apiserver.objects.resource_version}
    async with http.get("/api/v1/namespaces/other/configmaps", params=params) as resp:
        fake_apiserver.objects.create("configmaps", _cm("hidden"))
        fake_apiserver.objects.create("configmaps", _cm("seen"), namespace="other")
        events = decode(await raw_lines(resp, 1))
    assert events[0]["object"]["metadata"]["name"] == "seen"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/namespaces/default/configmaps/one?watch=1",
        "/api/v1/watch/namespaces/default/configmaps/one",
    ],
)
async def test_watching_one_named_object(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession, path: str
) -> None:
    """A watch on a named object (or the legacy /watch/ path) sees only that object."""
    rv = fake_apiserver.objects.resource_version
    async with http.get(f"{path}{'&' if '?' in path else '?'}resourceVersion={rv}") as resp:
        assert resp.status == 200
        fake_apiserver.objects.create("configmaps", _cm("other"))
        fake_apiserver.objects.create("configmaps", _cm("one"))
        events = decode(await raw_lines(resp, 1))
    assert events[0]["object"]["metadata"]["name"] == "one"


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_concurrent_writes_never_cause_gaps_or_duplicates(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """Watches opened while writes stream in each see every later event exactly once, in order."""
    total = 300
    written: list[int] = []
    finished = asyncio.Event()

    async def watcher(from_rv: str) -> list[dict[str, Any]]:
        async with Watch() as watch:
            stream = watch.stream(
                CoreV1Api(api).list_namespaced_config_map, "default", resource_version=from_rv
            )
            seen: list[dict[str, Any]] = []
            async with asyncio.timeout(30):
                async for event in stream:
                    seen.append(event["raw_object"])
                    if finished.is_set() and seen[-1]["metadata"]["name"] == f"cm-{total - 1}":
                        return seen
        raise AssertionError("the watch ended early")

    resumed: list[tuple[int, asyncio.Task[list[dict[str, Any]]]]] = []
    async with asyncio.TaskGroup() as tg:
        from_zero = tg.create_task(watcher("0"))
        for i in range(total):
            if i % 60 == 0:
                rv = fake_apiserver.objects.resource_version
                resumed.append((int(rv), tg.create_task(watcher(rv))))
            obj = fake_apiserver.objects.create("configmaps", _cm(f"cm-{i}"))
            written.append(int(obj["metadata"]["resourceVersion"]))
            if i % 7 == 0:
                await asyncio.sleep(0)
        finished.set()
    assert len(resumed) == 5
    for start, task in resumed:
        rvs = [int(o["metadata"]["resourceVersion"]) for o in task.result()]
        assert rvs == [rv for rv in written if rv > start]
    names = [o["metadata"]["name"] for o in from_zero.result()]
    assert sorted(names) == sorted(f"cm-{i}" for i in range(total))
