"""Issue 12's list and watch rows: the legacy exact rule for ``limit`` with
``resourceVersion``, the streaming-list option checks, and the server's own watch timeout.

Each test names the real server's behaviour it checks and where it is specified.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import anyio
import orjson
import pytest

from aioinformer.testing import FakeApiServer

CM = "/api/v1/namespaces/default/configmaps"


async def _json(response: aiohttp.ClientResponse) -> Any:
    return orjson.loads(await response.read())


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_limit_with_a_resource_version_and_no_match_is_served_at_that_version(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``limit`` with ``resourceVersion=N`` and no ``resourceVersionMatch`` is the legacy
    exact read: the state at N (etcd3 ``GetList``'s legacy case, the cacher's
    ``isLegacyExactMatch`` in ``shouldDelegateList``), 410 Expired once N is compacted.
    Without ``limit`` the same request is NotOlderThan (the current state)."""
    server = fake_apiserver
    server.objects.create("configmaps", {"metadata": {"name": "a"}})
    at = server.objects.resource_version
    server.objects.create("configmaps", {"metadata": {"name": "b"}})
    async with http.get(CM, params={"limit": "10", "resourceVersion": at}) as response:
        page = await _json(response)
    assert [i["metadata"]["name"] for i in page["items"]] == ["a"]
    assert page["metadata"]["resourceVersion"] == at
    async with http.get(CM, params={"resourceVersion": at}) as response:
        assert len((await _json(response))["items"]) == 2
    server.faults.compact()
    async with http.get(CM, params={"limit": "10", "resourceVersion": at}) as response:
        assert response.status == 410
        assert (await _json(response))["reason"] == "Expired"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"watch": "1", "sendInitialEvents": "false"},
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
            "resourceVersionMatch to NotOlderThan",
        ),
        (
            {"watch": "1", "resourceVersionMatch": "Exact", "resourceVersion": "1"},
            "[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch "
            "unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "
            '"Exact": supported values: "NotOlderThan"]',
        ),
        (
            {"sendInitialEvents": "true"},
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        ),
    ],
)
async def test_list_option_checks_are_the_real_ones(
    http: aiohttp.ClientSession, params: dict[str, str], message: str
) -> None:
    """``ValidateListOptions`` (``apimachinery/pkg/apis/meta/internalversion/validation``):
    ``sendInitialEvents``, true or false, needs ``resourceVersionMatch=NotOlderThan`` on a
    watch; a watch's match needs ``sendInitialEvents`` and must be ``NotOlderThan`` (all
    problems in one aggregate); a LIST may not carry ``sendInitialEvents``."""
    async with http.get(CM, params=params) as response:
        assert response.status == 422
        body = await _json(response)
    assert body["message"] == f'ListOptions.meta.k8s.io "" is invalid: {message}'


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_streaming_list_without_bookmarks_sends_the_initial_events_only(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``allowWatchBookmarks`` is not required with ``sendInitialEvents=true``: the initial
    events come without the ``initial-events-end`` bookmark (the cacher's
    ``getBookmarkAfterResourceVersionLockedFunc`` returns 0 without bookmarks)."""
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "a"}})
    params = {
        "watch": "1",
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "timeoutSeconds": "1",
    }
    async with http.get(CM, params=params) as response:
        assert response.status == 200
        lines = [orjson.loads(line) for line in (await response.read()).splitlines()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("ADDED", "a")]


async def test_a_watch_without_timeout_is_ended_by_the_server() -> None:
    """A watch that gives no ``timeoutSeconds`` is ended by the server after a random time
    between ``--min-request-timeout`` and twice that (``handlers/get.go``, default 1800 s);
    ``min_request_timeout`` shortens it for tests."""
    async with (
        FakeApiServer(min_request_timeout=0.2, system_objects=False) as server,
        aiohttp.ClientSession(base_url=server.url) as http,
    ):
        with anyio.fail_after(10):
            async with http.get(CM, params={"watch": "1"}) as response:
                assert response.status == 200
                assert await response.read() == b""
