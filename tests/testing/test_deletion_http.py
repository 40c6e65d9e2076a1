"""Issue 12's deletion rows over HTTP, driven by both Python clients and by raw requests.

kubernetes_asyncio runs on the test's event loop; the official ``kubernetes`` client is
synchronous and runs in a worker thread. Each test names the real server's behaviour it
checks and where that is specified (``handlers/delete.go``, ``Store.Delete``, the garbage
collector, the namespace registry).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import aiohttp
import anyio
import kubernetes.client
import orjson
from kubernetes_asyncio.client import ApiClient, AppsV1Api, CoreV1Api, V1DeleteOptions

from aioinformer.testing import FakeApiServer

from .valid import deployment, pod

T = TypeVar("T")


async def _in_thread(call: Callable[[], T]) -> T:
    return await anyio.to_thread.run_sync(call)


def _owned_rs(server: FakeApiServer, owner: dict[str, Any], name: str) -> None:
    rs = {**deployment(name), "kind": "ReplicaSet"}
    rs["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    server.objects.create("replicasets.apps", rs)


DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def _web_owning_a_replicaset(server: FakeApiServer) -> FakeApiServer:
    """Deployment ``web`` owning ReplicaSet ``web-rs``; returns the server."""
    _owned_rs(server, server.objects.create("deployments.apps", deployment("web")), "web-rs")
    return server


async def _events(
    http: aiohttp.ClientSession, path: str, since: str, count: int
) -> list[tuple[str, str, int]]:
    """The first ``count`` watch events (type, name, resource version) after ``since``."""
    out: list[tuple[str, str, int]] = []
    async with http.get(path, params={"watch": "1", "resourceVersion": since}) as response:
        async for line in response.content:
            event = orjson.loads(line)
            meta = event["object"]["metadata"]
            out.append((event["type"], meta["name"], int(meta["resourceVersion"])))
            if len(out) == count:
                break
    return out


async def test_foreground_from_both_clients_removes_replicasets_before_the_deployment(
    fake_apiserver: FakeApiServer,
    api: ApiClient,
    official: kubernetes.client.ApiClient,
    http: aiohttp.ClientSession,
) -> None:
    """``propagationPolicy=Foreground`` in the ``DeleteOptions`` body: the Deployment is
    marked (``foregroundDeletion``), its ReplicaSets are deleted first and then the
    Deployment (``Store.Delete`` and the garbage collector's ``processDeletingDependentsItem``);
    watchers see the ReplicaSet's DELETED before the Deployment's."""
    server = fake_apiserver
    for name, client in (("a", "asyncio"), ("b", "official")):
        owner = server.objects.create("deployments.apps", deployment(name))
        _owned_rs(server, owner, f"{name}-rs")
        since = server.objects.resource_version
        if client == "asyncio":  # answers are typed V1Status: the events tell the story
            apps: Any = AppsV1Api(api)
            await apps.delete_namespaced_deployment(
                name, "default", body=V1DeleteOptions(propagation_policy="Foreground")
            )
        else:
            sync: Any = kubernetes.client.AppsV1Api(official)
            call = partial(
                sync.delete_namespaced_deployment, name, "default", propagation_policy="Foreground"
            )
            await _in_thread(call)
        rs_events = await _events(http, "/apis/apps/v1/replicasets", since, 1)
        deploy_events = await _events(http, "/apis/apps/v1/deployments", since, 2)
        assert rs_events[0][:2] == ("DELETED", f"{name}-rs")
        assert [e[:2] for e in deploy_events] == [("MODIFIED", name), ("DELETED", name)]
        assert deploy_events[0][2] < rs_events[0][2] < deploy_events[1][2]


async def test_orphan_and_grace_period_from_the_query_and_202_for_cascading(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """Without a body, ``DeleteOptions`` come from the query (``handlers/delete.go``):
    ``propagationPolicy=Orphan`` keeps the dependents; ``gracePeriodSeconds=0`` removes a
    scheduled pod at once. A delete that does not remove the object and asked to cascade
    (``orphanDependents=false``) is answered 202 Accepted."""
    server = _web_owning_a_replicaset(fake_apiserver)
    path = f"{DEPLOYMENTS}/web"
    async with http.delete(path, params={"propagationPolicy": "Orphan"}) as response:
        assert response.status == 200
    await server.objects.wait_idle()
    assert "ownerReferences" not in server.objects.get("replicasets.apps", "web-rs")["metadata"]
    server.objects.create("pods", pod("p", node="n"))
    pods = "/api/v1/namespaces/default/pods"
    async with http.delete(f"{pods}/p", params={"orphanDependents": "false"}) as response:
        assert response.status == 202
        assert (await response.json())["metadata"]["deletionGracePeriodSeconds"] == 30
    async with http.delete(f"{pods}/p", params={"gracePeriodSeconds": "0"}) as response:
        assert response.status == 200
    assert server.objects.list("pods") == []


async def test_dry_run_delete_over_http_touches_nothing(
    fake_apiserver: FakeApiServer, api: ApiClient, http: aiohttp.ClientSession
) -> None:
    """``DELETE ?dryRun=All`` (and ``dryRun`` in the body) answers and stores nothing: no
    resource version, no watch event (``DryRunnableStorage``); a namespace stays Active."""
    server = fake_apiserver
    server.objects.create("pods", pod("p", node="n"))
    rv = server.objects.resource_version
    async with http.delete(
        "/api/v1/namespaces/default/pods/p", params={"dryRun": "All"}
    ) as response:
        assert (await response.json())["metadata"]["deletionGracePeriodSeconds"] == 30
    core: Any = CoreV1Api(api)
    await core.delete_namespace("default", dry_run="All")  # typed V1Status: not read
    assert server.objects.resource_version == rv
    assert server.objects.get("namespaces", "default")["status"]["phase"] == "Active"


async def test_creating_in_a_terminating_namespace_is_403_from_the_official_client(
    fake_apiserver: FakeApiServer, official: kubernetes.client.ApiClient
) -> None:
    """``NamespaceLifecycle`` admission refuses creates in a terminating namespace: 403
    Forbidden, reason ``Forbidden``, the cause ``NamespaceTerminating``."""
    server = fake_apiserver
    server.objects.create("namespaces", {"metadata": {"name": "demo"}})
    held = {"metadata": {"name": "held", "namespace": "demo", "finalizers": ["example.com/x"]}}
    server.objects.create("configmaps", held)
    sync: Any = kubernetes.client.CoreV1Api(official)
    await _in_thread(lambda: sync.delete_namespace("demo"))
    assert server.objects.get("namespaces", "demo")["status"]["phase"] == "Terminating"

    def create_refused() -> tuple[int, str]:
        # The refusal is read in the worker thread: an ApiException carried back across the
        # thread would keep urllib3's response (and its socket) alive in the worker's frames
        # after the test, which the leak guard would count.
        try:
            sync.create_namespaced_config_map("demo", {"metadata": {"name": "new"}})
        except kubernetes.client.ApiException as exc:
            return int(exc.status or 0), exc.body or "{}"
        raise AssertionError("the create was accepted")

    status, text = await _in_thread(create_refused)
    body = orjson.loads(text)
    assert (status, body["reason"]) == (403, "Forbidden")
    assert body["details"]["causes"][0]["reason"] == "NamespaceTerminating"


async def test_deletecollection_reads_its_options_like_delete(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``DELETE`` on a collection deletes each object with the request's ``DeleteOptions``
    (``Store.DeleteCollection``): an orphaning delete keeps the dependents, a bad policy is
    422 before anything is deleted (``ValidateDeleteOptions``)."""
    server = _web_owning_a_replicaset(fake_apiserver)
    path = DEPLOYMENTS
    async with http.delete(path, json={"propagationPolicy": "Sideways"}) as response:
        assert response.status == 422
    assert len(server.objects.list("deployments.apps")) == 1
    async with http.delete(path, json={"propagationPolicy": "Orphan"}) as response:
        assert response.status == 200
    await server.objects.wait_idle()
    assert server.objects.list("deployments.apps") == []
    assert "ownerReferences" not in server.objects.get("replicasets.apps", "web-rs")["metadata"]
