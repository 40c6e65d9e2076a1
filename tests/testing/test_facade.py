"""The server's entry points: ``objects`` (synchronous), ``faults`` and ``requests``."""

from __future__ import annotations

import inspect
from typing import Any

import anyio
import pytest

from aioinformer.errors import (
    BadRequestError,
    ConflictError,
    LifecycleError,
    NotFoundError,
    UnprocessableEntityError,
)
from aioinformer.testing import FakeApiServer, ServerFaults, ServerObjects, ServerRequests


def _configmap(name: str, namespace: str = "default", **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels}}


def test_the_object_api_is_synchronous_and_works_before_start() -> None:
    """Storage is synchronous, so every object method returns its result at once (no
    coroutine), with the global resource version moving as on the server."""
    server = FakeApiServer(namespaces=("default", "team"))
    for name in ("create", "get", "update", "patch", "delete", "delete_collection", "list"):
        assert not inspect.iscoroutinefunction(getattr(server.objects, name)), name
    before = int(server.objects.resource_version)
    created = server.objects.create("configmaps", _configmap("a", app="web"))
    assert created["metadata"]["resourceVersion"] == server.objects.resource_version
    assert int(server.objects.resource_version) == before + 1
    patched = server.objects.patch("configmaps", "a", {"data": {"k": "v"}})
    assert server.objects.get("configmaps", "a") == patched
    server.objects.create("configmaps", _configmap("b", "team", app="db"))
    assert [o["metadata"]["name"] for o in server.objects.list("configmaps")] == ["a", "b"]
    assert [o["metadata"]["name"] for o in server.objects.list("cm", namespace="team")] == ["b"]
    web = server.objects.list("configmaps", label_selector="app=web")
    assert [o["metadata"]["name"] for o in web] == ["a"]
    gone = server.objects.delete_collection("configmaps", field_selector="metadata.name=a")
    assert [o["metadata"]["name"] for o in gone] == ["a"]


def test_objects_handed_out_are_copies() -> None:
    """Mutating what the object API returns (or was given) does not touch the stored state."""
    server = FakeApiServer()
    body = _configmap("a", app="web")  # an empty label map is not stored (omitempty)
    created = server.objects.create("configmaps", body)
    created["metadata"]["labels"] = {"changed": "yes"}
    body["metadata"]["name"] = "renamed"
    assert server.objects.get("configmaps", "a")["metadata"]["labels"] == {"app": "web"}


def test_refusals_are_the_clients_exceptions_carrying_the_servers_status() -> None:
    """The in-process API raises what the client raises for the same HTTP answer: the
    ``ApiError`` subclass of the Status, with the whole Status attached."""
    server = FakeApiServer()
    with pytest.raises(NotFoundError) as missing:
        server.objects.get("configmaps", "nope")
    assert missing.value.status["message"] == 'configmaps "nope" not found'
    assert missing.value.status["details"] == {"name": "nope", "kind": "configmaps"}
    server.objects.create("configmaps", _configmap("a"))
    with pytest.raises(ConflictError) as exists:
        server.objects.create("configmaps", _configmap("a"))
    assert exists.value.reason == "AlreadyExists"
    with pytest.raises(UnprocessableEntityError):
        server.objects.create("configmaps", _configmap("Not_A_Name"))
    with pytest.raises(BadRequestError) as bad:
        server.objects.list("configmaps", label_selector="a in (x")
    assert bad.value.message == "unable to parse requirement: found '', expected: ',' or ')'"
    with pytest.raises(NotFoundError):
        server.resource("widgets")
    with pytest.raises(NotFoundError):
        server.faults.fail_next(1, 500, resource="widgets")


async def test_watch_faults_need_a_started_server_and_requests_start_empty() -> None:
    """Faults on open watches raise LifecycleError before start; the request log is empty
    and no watch is open; a restart before start only resets the history."""
    server = FakeApiServer()
    with pytest.raises(LifecycleError):
        server.faults.drop_watches()
    with pytest.raises(LifecycleError):
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(1)
    server.faults.restart()
    assert server.requests.records == [] and server.requests.active_watches() == 0


async def test_records_are_a_copy_and_wait_for_sees_later_requests(
    fake_apiserver: FakeApiServer,
) -> None:
    """``requests.records`` is a snapshot; ``requests.wait_for`` returns the first matching
    request after the call (or from ``start``)."""
    async with fake_apiserver.api_client() as api:
        snapshot = fake_apiserver.requests.records
        await api.call_api("/api/v1/namespaces", "GET", _preload_content=False)
        assert len(fake_apiserver.requests.records) == len(snapshot) + 1
        with anyio.fail_after(10):
            record = await fake_apiserver.requests.wait_for(
                lambda r: r.resource == "namespaces", start=len(snapshot)
            )
    assert (record.verb, record.status) == ("list", 200)


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_the_server_keeps_lifecycle_address_and_resources_and_three_entry_points() -> None:
    """Issue 11: the facade splits into obvious entry points; none of the old flat members
    is left on the server."""
    assert _public(FakeApiServer) == {
        "run",
        "aclose",
        "wait_stopped",
        "state",
        "statistics",
        "host",
        "port",
        "url",
        "configuration",
        "api_client",
        "register_resource",
        "resource",
        "resource_for_kind",
        "resources",
        "objects",
        "faults",
        "requests",
    }
    assert _public(ServerObjects) == {
        "append_pod_log",
        "create",
        "get",
        "update",
        "patch",
        "delete",
        "delete_collection",
        "finish_deletion",
        "list",
        "resource_version",
        "wait_idle",
    }
    assert _public(ServerFaults) == {
        "drop_watches",
        "stall_watches",
        "fail_next",
        "compact",
        "inject_malformed_line",
        "inject_raw_line",
        "inject_watch_error",
        "restart",
        "set_latency",
        "stop_listening",
        "start_listening",
        "sharded_list_and_watch",
        "set_sharded_list_and_watch",
    }
    assert _public(ServerRequests) == {"records", "wait_for", "active_watches", "wait_for_watches"}
