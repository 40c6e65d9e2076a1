"""Issue 12's missing endpoints: ``pods/log``, ``pods/eviction``, ``serviceaccounts/token``,
and ``batch/v1`` in discovery; with kubernetes_asyncio, the official client and kubectl.

Each test names the real server's behaviour it checks and where it is specified.
"""

from __future__ import annotations

import base64
import shutil
from functools import partial
from typing import Any

import aiohttp
import anyio
import kubernetes.client
import orjson
import pytest
from kubernetes_asyncio.client import ApiClient, ApiException, CoreV1Api

from aioinformer.testing import FakeApiServer

from .standalone import Kubectl
from .valid import pod

PODS = "/api/v1/namespaces/default/pods"


async def test_pod_log_serves_what_the_test_wrote(
    fake_apiserver: FakeApiServer,
    api: ApiClient,
    official: kubernetes.client.ApiClient,
    http: aiohttp.ClientSession,
) -> None:
    """``GET pods/<name>/log`` answers the container's log as text (``pods/log``, proxied to
    the kubelet by ``pkg/registry/core/pod/rest/log.go``), with ``tailLines``; a pod with
    several containers needs ``container``; an unscheduled pod has no node to ask: 204 No
    Content (``LogLocation`` returns no location, ``StreamObject`` answers 204)."""
    server = fake_apiserver
    server.objects.create("pods", pod("p", node="node-1"))
    server.objects.append_pod_log("p", "one\ntwo\nthree\n")
    core: Any = CoreV1Api(api)
    assert await core.read_namespaced_pod_log("p", "default") == "one\ntwo\nthree\n"
    assert await core.read_namespaced_pod_log("p", "default", tail_lines=1) == "three\n"
    sync: Any = kubernetes.client.CoreV1Api(official)
    read = partial(sync.read_namespaced_pod_log, "p", "default", tail_lines=2)
    assert await anyio.to_thread.run_sync(read) == "two\nthree\n"
    two = pod("two", node="node-1")
    two["spec"]["containers"].append({"name": "side", "image": "busybox"})
    server.objects.create("pods", two)
    with pytest.raises(ApiException) as caught:
        await core.read_namespaced_pod_log("two", "default")
    assert orjson.loads(caught.value.body or b"{}")["message"] == (
        "a container name must be specified for pod two, choose one of: [app side]"
    )
    server.objects.append_pod_log("two", "from side", container="side")
    assert await core.read_namespaced_pod_log("two", "default", container="side") == ("from side\n")
    server.objects.create("pods", pod("pending"))
    async with http.get(f"{PODS}/pending/log") as response:
        assert (response.status, await response.read()) == (204, b"")


async def test_pod_log_follow_streams_until_the_container_finishes(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``follow=true`` keeps the response open and sends lines as the container writes
    them; the stream ends when the container does."""
    server = fake_apiserver
    server.objects.create("pods", pod("p", node="node-1"))
    server.objects.append_pod_log("p", "first")
    with anyio.fail_after(10):
        async with http.get(f"{PODS}/p/log", params={"follow": "true"}) as response:
            assert response.headers["Content-Type"].startswith("text/plain")
            assert await response.content.readline() == b"first\n"
            server.objects.append_pod_log("p", "second")
            assert await response.content.readline() == b"second\n"
            server.objects.append_pod_log("p", "last", finished=True)
            assert await response.read() == b"last\n"


async def test_eviction_deletes_the_pod_with_its_grace_period(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``POST pods/<name>/eviction`` with a ``policy/v1`` Eviction deletes the pod (with
    the Eviction's ``deleteOptions``; a scheduled pod gets its grace period) and answers 201
    with a Status Success (``pkg/registry/core/pod/storage/eviction.go``); a name that is not
    the URL's is 400."""
    server = fake_apiserver
    server.objects.create("pods", pod("p", node="node-1"))
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}}
    async with http.post(f"{PODS}/p/eviction", json=eviction) as response:
        assert response.status == 201
        assert (await response.json())["status"] == "Success"
    assert server.objects.get("pods", "p")["metadata"]["deletionGracePeriodSeconds"] == 30
    wrong = {**eviction, "metadata": {"name": "other"}}
    async with http.post(f"{PODS}/p/eviction", json=wrong) as response:
        assert response.status == 400
    now = {**eviction, "deleteOptions": {"gracePeriodSeconds": 0}}
    async with http.post(f"{PODS}/p/eviction", json=now) as response:
        assert response.status == 201
    assert server.objects.list("pods") == []


async def test_a_service_account_token_is_a_token_request_answer(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """``POST serviceaccounts/<name>/token`` (TokenRequest, ``authentication.k8s.io/v1``)
    answers 201 with a JWT-shaped token whose claims name the account, and its
    ``expirationTimestamp``; ``expirationSeconds`` defaults to 3600 and below 600 is 422
    (``pkg/apis/authentication/validation``)."""
    server = fake_apiserver
    server.objects.create("serviceaccounts", {"metadata": {"name": "robot"}})
    core: Any = CoreV1Api(api)
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    answered = await core.create_namespaced_service_account_token("robot", "default", body)
    assert answered.spec.expiration_seconds == 3600
    assert answered.status.expiration_timestamp is not None
    payload = answered.status.token.split(".")[1]
    claims = orjson.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["exp"] - claims["iat"] == 3600
    short = {**body, "spec": {"expirationSeconds": 60}}
    with pytest.raises(ApiException) as caught:
        await core.create_namespaced_service_account_token("robot", "default", short)
    assert caught.value.status == 422
    assert "may not specify a duration less than 10 minutes" in str(caught.value.body)
    with pytest.raises(ApiException) as caught:
        await core.create_namespaced_service_account_token("nobody", "default", body)
    assert caught.value.status == 404


async def test_discovery_lists_the_connect_subresources_and_batch(
    http: aiohttp.ClientSession,
) -> None:
    """Discovery lists ``pods/log`` (get), ``pods/eviction`` (create, ``policy/v1``
    Eviction), ``serviceaccounts/token`` (create, ``authentication.k8s.io/v1``
    TokenRequest), and ``batch/v1`` serves Jobs and CronJobs."""
    async with http.get("/api/v1") as response:
        core = {r["name"]: r for r in (await response.json())["resources"]}
    assert core["pods/log"]["verbs"] == ["get"]
    assert (core["pods/eviction"]["group"], core["pods/eviction"]["kind"]) == (
        "policy",
        "Eviction",
    )
    assert core["serviceaccounts/token"]["kind"] == "TokenRequest"
    async with http.get("/apis/batch/v1") as response:
        batch = {r["name"] for r in (await response.json())["resources"]}
    assert {"jobs", "cronjobs", "jobs/status", "cronjobs/status"} <= batch


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_logs_create_token_and_batch(kubectl: Kubectl) -> None:
    """``kubectl logs`` reads ``pods/log`` (204, so nothing printed and exit status 0, for
    a pod no node runs: ``LogLocation``), ``kubectl create token`` posts a TokenRequest and
    prints the token, ``kubectl create job`` and ``create cronjob`` are served by
    ``batch/v1``."""
    kubectl("create", "namespace", "sub")
    kubectl("run", "p", "--image=nginx", "-n", "sub")
    assert kubectl("logs", "p", "-n", "sub") == ""
    kubectl("create", "serviceaccount", "robot", "-n", "sub")
    token = kubectl("create", "token", "robot", "-n", "sub").strip()
    assert token.count(".") == 2
    kubectl("create", "job", "once", "--image=busybox", "-n", "sub")
    kubectl("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *", "-n", "sub")
    job = kubectl.raw("/apis/batch/v1/namespaces/sub/jobs/once")
    assert job["spec"]["completions"] == 1 and job["spec"]["backoffLimit"] == 6
    assert kubectl.raw("/apis/batch/v1/namespaces/sub/cronjobs/tick")["spec"]["suspend"] is False
