"""The request log and the awaitable helpers tests use instead of sleeping."""

# kubernetes_asyncio's generated API annotates bodies with its model classes and raw bodies
# as optional; these tests deliberately send plain dicts (which it accepts) and read bodies.
# mypy: disable-error-code="arg-type, index"
from __future__ import annotations

import logging

import aiohttp
import anyio
import pytest
from kubernetes_asyncio.client import ApiClient, ApiException, AppsV1Api, CoreV1Api

from aioinformer.testing import FakeApiServer, RequestRecord

from .valid import deployment


async def test_each_request_is_recorded_with_its_verb_and_resource(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """Records name method, path, query, verb, group/version/resource, namespace, name, status."""
    apps = AppsV1Api(api)
    await apps.list_namespaced_deployment("default", label_selector="a=b")
    # Valid (ValidateDeploymentSpec: a selector matching the template, a container).
    await apps.create_namespaced_deployment("default", deployment("d"))
    with pytest.raises(ApiException):
        await apps.read_namespaced_deployment("missing", "default")
    listed, created, missing = fake_apiserver.requests.records
    assert listed == RequestRecord(
        method="GET",
        path="/apis/apps/v1/namespaces/default/deployments",
        query={"labelSelector": "a=b"},
        verb="list",
        group="apps",
        version="v1",
        resource="deployments",
        subresource="",
        namespace="default",
        name="",
        status=200,
    )
    assert (created.verb, created.status) == ("create", 201)
    assert (missing.verb, missing.name, missing.status) == ("get", "missing", 404)


async def test_verbs_cover_patch_update_delete_and_deletecollection(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """Every write verb is classified like the real server's RequestInfo."""
    core = CoreV1Api(api)
    created = await core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    await core.patch_namespaced_config_map("c", "default", {"data": {"a": "b"}})
    body = {"metadata": {"name": "c", "resourceVersion": None}, "data": {}}
    body["metadata"]["resourceVersion"] = str(int(created.metadata.resource_version) + 1)
    await core.replace_namespaced_config_map("c", "default", body)
    await core.delete_namespaced_config_map("c", "default")
    await core.delete_collection_namespaced_config_map("default")
    await core.read_namespace_status("default")
    verbs = [(r.verb, r.subresource) for r in fake_apiserver.requests.records]
    assert verbs == [
        ("create", ""),
        ("patch", ""),
        ("update", ""),
        ("delete", ""),
        ("deletecollection", ""),
        ("get", "status"),
    ]


async def test_wait_for_request_waits_for_a_request_after_the_call(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """By default only a request answered after the call matches (issue 10: a test waiting
    for "the next list" must not get the initial one at once); ``start`` looks back from an
    index of :attr:`requests` (``start=0``: every request so far)."""
    async with http.get("/api/v1/pods"):
        pass
    mark = len(fake_apiserver.requests.records)
    with anyio.fail_after(10):
        assert (await fake_apiserver.requests.wait_for(is_list, start=0)).resource == "pods"
    found: dict[str, RequestRecord] = {}

    async def wait(name: str, start: int | None) -> None:
        with anyio.fail_after(10):
            found[name] = await fake_apiserver.requests.wait_for(is_list, start=start)

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait, "after the call", None)
        tg.start_soon(wait, "from the mark", mark)
        async with http.get("/api/v1/configmaps"):
            pass
    assert {name: r.resource for name, r in found.items()} == {
        "after the call": "configmaps",
        "from the mark": "configmaps",
    }


def is_list(record: RequestRecord) -> bool:
    return record.verb == "list"


async def test_a_wait_cancelled_by_its_bound_says_what_it_waited_for(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    """The waiter takes no timeout; when the caller's bound cancels it, the log says (INFO,
    ``aioinformer.testing``) what was awaited (a lambda's source, a function's name) and
    which requests came meanwhile."""
    caplog.set_level(logging.INFO, logger="aioinformer.testing")
    with anyio.move_on_after(0) as scope:
        await fake_apiserver.requests.wait_for(lambda r: r.verb == "delete")
    assert scope.cancelled_caught
    assert caplog.messages[-1] == (
        'stopped waiting for a request matching lambda r: r.verb == "delete"'
        " (from request #0; 0 since)"
    )
    async with http.get("/api/v1/pods"):
        pass
    with pytest.raises(TimeoutError), anyio.fail_after(0):
        await fake_apiserver.requests.wait_for(is_delete, start=0)
    assert caplog.messages[-1] == (
        "stopped waiting for a request matching is_delete (from request #0; 1 since,"
        " the last ones: GET /api/v1/pods (list 200))"
    )


def is_delete(record: RequestRecord) -> bool:
    return record.verb == "delete"


async def test_watches_are_logged_when_their_stream_starts(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A watch shows up in the log (status 200) while it is still open, and is counted."""
    async with http.get("/apis/apps/v1/deployments", params={"watch": "true"}) as resp:
        with anyio.fail_after(10):
            record = await fake_apiserver.requests.wait_for(lambda r: r.verb == "watch", start=0)
        assert (record.status, record.resource, record.group) == (200, "deployments", "apps")
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for_watches(1, resource="deployments.apps")
        assert fake_apiserver.requests.active_watches("apps/v1/deployments") == 1
        assert fake_apiserver.requests.active_watches("pods") == 0
        resp.close()
    with anyio.fail_after(10):
        await fake_apiserver.requests.wait_for_watches(0, exactly=True)


async def test_wait_for_watches_is_bounded_by_the_caller(fake_apiserver: FakeApiServer) -> None:
    """Waiting for watches that never open lasts until the caller's bound (no timeout of its
    own)."""
    with pytest.raises(TimeoutError), anyio.fail_after(0.05):
        await fake_apiserver.requests.wait_for_watches(1)


async def test_discovery_and_unknown_paths_are_logged(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """Discovery requests have verb ``discovery``; unknown paths are 404 with verb ``""``."""
    async with http.get("/apis"):
        pass
    async with http.get("/nonsense") as resp:
        assert resp.status == 404
    assert [(r.verb, r.status) for r in fake_apiserver.requests.records] == [
        ("discovery", 200),
        ("", 404),
    ]
