"""Issue 12's status, dry-run and validation rows, driven by both Python clients.

kubernetes_asyncio runs on the test's event loop; the official ``kubernetes`` client is
synchronous, so it runs in a worker thread while the in-process server answers on the loop.
Each test states the real server's behaviour it checks and where it is specified.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import kubernetes.client
import pytest
from kubernetes_asyncio.client import ApiClient, ApiException, AppsV1Api, CoreV1Api

from aioinformer.testing import FakeApiServer

from .valid import deployment, pod

T = TypeVar("T")


async def _in_thread(call: Callable[[], T]) -> T:
    return await anyio.to_thread.run_sync(call)


async def test_a_put_carrying_status_keeps_the_stored_status_from_both_clients(
    fake_apiserver: FakeApiServer, api: ApiClient, official: kubernetes.client.ApiClient
) -> None:
    """``replace_namespaced_deployment`` with a changed ``status`` keeps the stored status
    (``deploymentStrategy.PrepareForUpdate``); ``replace_namespaced_deployment_status``
    writes it and keeps the spec (``deploymentStatusStrategy``). The official client's PUT
    is kept to the same rule."""
    fake_apiserver.objects.create("deployments.apps", deployment("web"))
    apps: Any = AppsV1Api(api)  # dict bodies: the generated signatures want models
    current = fake_apiserver.objects.get("deployments.apps", "web")
    await apps.replace_namespaced_deployment_status(
        "web", "default", {**current, "status": {"replicas": 1}}
    )
    current = fake_apiserver.objects.get("deployments.apps", "web")
    put = {**current, "status": {"replicas": 99}}
    put["spec"] = {**current["spec"], "replicas": 4}
    answered = await apps.replace_namespaced_deployment("web", "default", put)
    assert answered.status.replicas == 1 and answered.spec.replicas == 4
    sync: Any = kubernetes.client.AppsV1Api(official)  # dict bodies, as above
    current = fake_apiserver.objects.get("deployments.apps", "web")
    body = {**current, "status": {"replicas": 50}}
    await _in_thread(lambda: sync.replace_namespaced_deployment("web", "default", body))
    stored = fake_apiserver.objects.get("deployments.apps", "web")
    assert stored["status"] == {"replicas": 1} and stored["spec"]["replicas"] == 4


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_dry_run_from_both_clients_stores_nothing(
    fake_apiserver: FakeApiServer, api: ApiClient, official: kubernetes.client.ApiClient
) -> None:
    """``dry_run="All"`` on create, patch and delete (apiserver ``DryRunnableStorage``): the
    answer is the would-be object, nothing is stored and no resource version is taken."""
    core: Any = CoreV1Api(api)
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "kept"}})
    rv = fake_apiserver.objects.resource_version
    created = await core.create_namespaced_config_map(
        "default", {"metadata": {"name": "new"}}, dry_run="All"
    )
    assert created.metadata.uid
    patched = await core.patch_namespaced_config_map(
        "kept", "default", {"data": {"a": "1"}}, dry_run="All"
    )
    assert patched.data == {"a": "1"}
    sync: Any = kubernetes.client.CoreV1Api(official)
    await _in_thread(lambda: sync.delete_namespaced_config_map("kept", "default", dry_run="All"))
    answer = await _in_thread(
        lambda: sync.create_namespaced_pod("default", pod("p"), dry_run="All")
    )
    assert answer.status.phase == "Pending" and answer.spec.restart_policy == "Always"
    assert fake_apiserver.objects.resource_version == rv
    names = [o["metadata"]["name"] for o in fake_apiserver.objects.list("configmaps")]
    assert names == ["kept"] and fake_apiserver.objects.list("pods") == []


async def test_validation_answers_from_both_clients(
    api: ApiClient, official: kubernetes.client.ApiClient
) -> None:
    """An unknown field with ``field_validation="Strict"`` is a 400 naming it
    (``handlers/create.go``); an invalid Pod is a 422 ``Invalid`` whose ``details.kind`` is
    ``Pod`` (``errors.NewInvalid``), with the field path in its causes."""
    apps: Any = AppsV1Api(api)
    body = deployment("web")
    body["spec"]["replica"] = 2
    with pytest.raises(ApiException) as strict:
        await apps.create_namespaced_deployment("default", body, field_validation="Strict")
    assert strict.value.status == 400
    assert 'unknown field "spec.replica"' in json.loads(strict.value.body or b"{}")["message"]
    sync: Any = kubernetes.client.CoreV1Api(official)
    invalid = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app"}]}}
    with pytest.raises(kubernetes.client.ApiException) as caught:
        await _in_thread(lambda: sync.create_namespaced_pod("default", invalid))
    assert caught.value.status == 422
    details = json.loads(caught.value.body or "{}")["details"]
    assert details["kind"] == "Pod"
    assert details["causes"][0]["field"] == "spec.containers[0].image"
