"""Every fault, and what a client (kubernetes_asyncio, or raw aiohttp) sees."""

# kubernetes_asyncio's generated API annotates bodies with its model classes and raw bodies
# as optional; these tests deliberately send plain dicts (which it accepts) and read bodies.
# mypy: disable-error-code="arg-type, index"
from __future__ import annotations

import asyncio
import errno
import json
from types import SimpleNamespace
from typing import Any

import aiohttp
import anyio
import pytest
from kubernetes_asyncio.client import ApiClient, ApiException, CoreV1Api
from kubernetes_asyncio.watch import Watch

from aioinformer.errors import TooManyRequestsError, api_error_from_status
from aioinformer.testing import FakeApiServer
from aioinformer.testing._apiserver._http import _api as _http_api

from .watching import decode, raw_lines, take


def _cm(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}}


def _watch_params(server: FakeApiServer, **extra: str) -> dict[str, str]:
    return {"watch": "1", "resourceVersion": server.objects.resource_version, **extra}


async def test_drop_watches_breaks_the_stream_abruptly(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """A dropped watch is an incomplete chunked response: aiohttp raises ClientPayloadError."""
    async with Watch() as watch:
        stream = watch.stream(
            CoreV1Api(api).list_namespaced_config_map,
            "default",
            resource_version=fake_apiserver.objects.resource_version,
        )
        fake_apiserver.objects.create("configmaps", _cm("a"))
        await take(stream, 1)
        assert fake_apiserver.requests.active_watches() == 1
        assert fake_apiserver.faults.drop_watches() == 1
        assert fake_apiserver.requests.active_watches() == 0
        with pytest.raises(aiohttp.ClientPayloadError):
            await take(stream, 1)


async def test_drop_watches_can_target_one_resource(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """Dropping the watches of one resource leaves the others streaming."""
    async with (
        http.get("/api/v1/pods", params=_watch_params(fake_apiserver)) as pods,
        http.get("/api/v1/configmaps", params=_watch_params(fake_apiserver)) as configmaps,
    ):
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for_watches(2)
        assert fake_apiserver.faults.drop_watches("pods") == 1
        with pytest.raises(aiohttp.ClientPayloadError):
            await raw_lines(pods)
        fake_apiserver.objects.create("configmaps", _cm("still-here"))
        assert decode(await raw_lines(configmaps, 1))[0]["type"] == "ADDED"


async def test_stall_watches_silences_open_watches_only() -> None:
    """A stalled watch sends nothing (not even bookmarks); a new watch works normally."""
    async with (
        FakeApiServer(bookmark_interval=0.05) as server,
        aiohttp.ClientSession(base_url=server.url) as http,
    ):
        params = _watch_params(server, allowWatchBookmarks="true")
        async with http.get("/api/v1/namespaces/default/configmaps", params=params) as stalled:
            assert decode(await raw_lines(stalled, 1))[0]["type"] == "BOOKMARK"
            assert server.faults.stall_watches() == 1
            server.objects.create("configmaps", _cm("a"))
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(stalled.content.readline(), 0.3)
            async with http.get(
                "/api/v1/namespaces/default/configmaps", params={"watch": "1"}
            ) as fresh:
                assert decode(await raw_lines(fresh, 1))[0]["object"]["metadata"]["name"] == "a"
            assert server.requests.active_watches() == 2
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(0, exactly=True)


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (401, "Unauthorized"),
        (403, "Forbidden"),
        (410, "Expired"),
        (500, "InternalError"),
        (503, "ServiceUnavailable"),
    ],
)
async def test_fail_next_answers_a_status_with_the_reason_of_its_code(
    fake_apiserver: FakeApiServer, api: ApiClient, code: int, reason: str
) -> None:
    """fail_next answers with the code and the real server's reason for it."""
    fake_apiserver.faults.fail_next(1, code)
    with pytest.raises(ApiException) as caught:
        await CoreV1Api(api).list_namespaced_pod("default")
    assert caught.value.status == code
    status = json.loads(caught.value.body)
    assert (status["kind"], status["code"], status["reason"]) == ("Status", code, reason)
    await CoreV1Api(api).list_namespaced_pod("default")


async def test_fail_next_429_carries_retry_after(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """A 429 with retry_after has the Retry-After header and details.retryAfterSeconds."""
    fake_apiserver.faults.fail_next(1, 429, retry_after=2)
    with pytest.raises(ApiException) as caught:
        await CoreV1Api(api).read_namespace("default")
    assert caught.value.headers["Retry-After"] == "2"
    status = json.loads(caught.value.body)
    assert status["reason"] == "TooManyRequests" and status["details"]["retryAfterSeconds"] == 2
    error = api_error_from_status(status)
    assert isinstance(error, TooManyRequestsError) and error.retry_after == 2


async def test_fail_next_counts_and_filters_by_verb_and_resource(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """Only the next n requests with the verb and resource fail; others pass untouched."""
    core = CoreV1Api(api)
    fake_apiserver.faults.fail_next(2, 503, verb="list", resource="pods")
    await core.list_namespaced_config_map("default")
    await core.read_namespace("default")
    for _ in range(2):
        with pytest.raises(ApiException):
            await core.list_namespaced_pod("default")
    await core.list_namespaced_pod("default")
    statuses = [r.status for r in fake_apiserver.requests.records if r.resource == "pods"]
    assert statuses == [503, 503, 200]


async def test_fail_next_on_watch_makes_the_watch_call_fail(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """A failed watch request reaches kubernetes_asyncio's Watch as ApiException."""
    fake_apiserver.faults.fail_next(1, 500, verb="watch")
    async with Watch() as watch:
        stream = watch.stream(CoreV1Api(api).list_namespaced_pod, "default", timeout_seconds=5)
        with pytest.raises(ApiException) as caught:
            await take(stream, 1)
    assert caught.value.status == 500


async def test_compact_makes_older_rvs_expire_for_watches(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """After compact(), resuming below the compaction RV gets 410; from it works."""
    old = fake_apiserver.objects.resource_version
    fake_apiserver.objects.create("configmaps", _cm("a"))
    fake_apiserver.faults.compact()
    async with http.get(
        "/api/v1/namespaces/default/configmaps", params={"watch": "1", "resourceVersion": old}
    ) as resp:
        (event,) = decode(await raw_lines(resp))
    assert event["type"] == "ERROR" and event["object"]["code"] == 410
    async with http.get(
        "/api/v1/namespaces/default/configmaps", params=_watch_params(fake_apiserver)
    ) as resp:
        fake_apiserver.objects.create("configmaps", _cm("b"))
        assert decode(await raw_lines(resp, 1))[0]["type"] == "ADDED"


async def test_malformed_line_reaches_the_client_and_the_stream_continues(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """kubernetes_asyncio hands a non-JSON line back as a plain string; later events still flow."""
    async with Watch() as watch:
        stream = watch.stream(
            CoreV1Api(api).list_namespaced_config_map,
            "default",
            resource_version=fake_apiserver.objects.resource_version,
        )
        reading = asyncio.create_task(take(stream, 2))
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for_watches(1)
        fake_apiserver.faults.inject_malformed_line()
        fake_apiserver.objects.create("configmaps", _cm("a"))
        first, added = await reading
    malformed: object = first  # a str at run time: the client hands the bad line back as is
    assert isinstance(malformed, str)
    with pytest.raises(json.JSONDecodeError):
        json.loads(malformed)
    assert added["type"] == "ADDED"


async def test_raw_lines_are_sent_verbatim(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """inject_raw_line delivers any line, e.g. an unknown event type."""
    async with http.get("/api/v1/pods", params=_watch_params(fake_apiserver)) as resp:
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for_watches(1)
        fake_apiserver.faults.inject_raw_line(b'{"type":"SURPRISE","object":{}}')
        assert await raw_lines(resp, 1) == [b'{"type":"SURPRISE","object":{}}\n']


async def test_inject_watch_error_sends_an_error_event_then_ends(
    fake_apiserver: FakeApiServer, api: ApiClient, http: aiohttp.ClientSession
) -> None:
    """Every open watch gets an ERROR with the Status and then a clean end."""
    async with http.get("/api/v1/pods", params=_watch_params(fake_apiserver)) as resp:
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for_watches(1)
        assert fake_apiserver.faults.inject_watch_error(500, "InternalError", "etcd is sad") == 1
        events = decode(await raw_lines(resp))
    assert [e["type"] for e in events] == ["ERROR"]
    assert events[0]["object"]["message"] == "etcd is sad" and events[0]["object"]["code"] == 500
    async with Watch() as watch:
        stream = watch.stream(CoreV1Api(api).list_namespaced_pod, "default", timeout_seconds=5)
        listing = asyncio.create_task(take(stream, 1))
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for_watches(1)
        fake_apiserver.faults.inject_watch_error(410, "Expired", "too old resource version: 1 (2)")
        with pytest.raises(ApiException) as caught:
            await listing
    assert caught.value.status == 410


async def test_restart_drops_connections_resets_history_and_keeps_objects(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """After restart: watches broke, old RVs are 410, objects and the RV counter remain."""
    before = fake_apiserver.objects.resource_version
    fake_apiserver.objects.create("configmaps", _cm("a"))
    async with http.get(
        "/api/v1/namespaces/default/configmaps", params=_watch_params(fake_apiserver)
    ) as resp:
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for_watches(1)
        fake_apiserver.faults.restart()
        with pytest.raises(aiohttp.ClientPayloadError):
            await raw_lines(resp)
    current = fake_apiserver.objects.resource_version
    async with http.get(
        "/api/v1/namespaces/default/configmaps", params={"watch": "1", "resourceVersion": before}
    ) as resp:
        assert decode(await raw_lines(resp))[0]["object"]["code"] == 410
    assert [o["metadata"]["name"] for o in fake_apiserver.objects.list("configmaps")] == ["a"]
    created = fake_apiserver.objects.create("configmaps", _cm("b"))
    assert int(created["metadata"]["resourceVersion"]) == int(current) + 1


async def test_set_latency_delays_every_answer(
    fake_apiserver: FakeApiServer, api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With latency set the server waits that long before each answer; 0 restores speed.

    The server's wait is recorded instead of taken, so the test asserts what the server waits
    for, not how long the machine took."""
    waits: list[float] = []

    async def recorded_sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(_http_api, "asyncio", SimpleNamespace(sleep=recorded_sleep))
    core = CoreV1Api(api)
    fake_apiserver.faults.set_latency(0.3)
    await core.read_namespace("default")
    await core.read_namespace("default")
    assert waits == [0.3, 0.3]
    fake_apiserver.faults.set_latency(0)
    await core.read_namespace("default")
    assert waits == [0.3, 0.3]


async def test_stop_listening_refuses_connections_until_started_again(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """While stopped, connects get ECONNREFUSED and open watches drop; then the same port serves."""
    port = fake_apiserver.port
    async with http.get("/api/v1/pods", params=_watch_params(fake_apiserver)) as resp:
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for_watches(1)
        await fake_apiserver.faults.stop_listening()
        with pytest.raises(aiohttp.ClientPayloadError):
            await raw_lines(resp)
    with pytest.raises(aiohttp.ClientConnectorError) as caught:
        async with http.get("/version"):
            pass
    assert caught.value.os_error.errno == errno.ECONNREFUSED
    await fake_apiserver.faults.start_listening()
    assert fake_apiserver.port == port
    async with http.get("/version") as resp:
        assert resp.status == 200
