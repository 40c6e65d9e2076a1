"""Writes over real HTTP from both Python clients: strategic merge, apply, managedFields.

Each test states the real server's behaviour it checks and where it is specified. The
official ``kubernetes`` client is synchronous, so it runs in a worker thread while the
in-process server answers on the event loop.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any, TypeVar

import aiohttp
import anyio
import kubernetes.client
import pytest
from kubernetes_asyncio.client import ApiClient, AppsV1Api, CoreV1Api

from aioinformer.errors import BadRequestError, ConflictError, UnprocessableEntityError
from aioinformer.testing import FakeApiServer

T = TypeVar("T")

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "shop:1",
                        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                    },
                    {"name": "proxy", "image": "envoy:1"},
                ]
            },
        },
    },
}

_APPLY = "application/apply-patch+yaml"


def _summary(deployment: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return [(c["name"], c["image"], [e["name"] for e in c.get("env", [])]) for c in containers]


async def _in_thread(call: Callable[[], T]) -> T:
    return await anyio.to_thread.run_sync(call)


def _official(server: FakeApiServer) -> kubernetes.client.ApiClient:
    configuration = kubernetes.client.Configuration(host=server.url)
    return kubernetes.client.ApiClient(configuration)


async def test_dict_patches_from_both_clients_merge_containers_by_name(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """Both clients send a dict patch as a strategic merge patch; the server merges the
    containers by ``name`` (``patchMergeKey: name`` in the schema), so patching one image
    keeps the other container and the env (issue 12: they were lost)."""
    fake_apiserver.objects.create("deployments.apps", DEPLOYMENT)
    one = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "shop:2"}]}}}}
    await AppsV1Api(api).patch_namespaced_deployment("web", "default", one)
    stored = fake_apiserver.objects.get("deployments.apps", "web")
    assert _summary(stored) == [("app", "shop:2", ["A", "B"]), ("proxy", "envoy:1", [])]

    two = {"spec": {"template": {"spec": {"containers": [{"name": "proxy", "image": "envoy:2"}]}}}}
    with _official(fake_apiserver) as client:
        apps = kubernetes.client.AppsV1Api(client)
        await _in_thread(lambda: apps.patch_namespaced_deployment("web", "default", two))
    stored = fake_apiserver.objects.get("deployments.apps", "web")
    assert _summary(stored) == [("app", "shop:2", ["A", "B"]), ("proxy", "envoy:2", [])]


async def test_every_write_records_managed_fields(
    fake_apiserver: FakeApiServer, api: ApiClient, http: aiohttp.ClientSession
) -> None:
    """Create, update and patch each record an ``Update`` entry for their manager: the
    ``fieldManager`` parameter, else the User-Agent up to its first ``/`` (apiserver
    ``handlers/create.go`` ``managerOrUserAgent``); status writes record the subresource."""
    core: Any = CoreV1Api(api)  # dict bodies: the generated signatures want models
    await core.create_namespaced_config_map(
        "default", {"metadata": {"name": "c"}, "data": {"a": "1"}}
    )
    await core.patch_namespaced_config_map(
        "c", "default", {"data": {"b": "2"}}, field_manager="patcher"
    )
    async with http.put(
        "/api/v1/namespaces/default/configmaps/c",
        json={"metadata": {"name": "c"}, "data": {"a": "1", "b": "2", "c": "3"}},
        headers={"User-Agent": "my-controller/1.0 (linux)"},
    ) as response:
        assert response.status == 200
    stored = fake_apiserver.objects.get("configmaps", "c")
    entries = {e["manager"]: e for e in stored["metadata"]["managedFields"]}
    assert set(entries) == {"OpenAPI-Generator", "patcher", "my-controller"}
    assert entries["patcher"]["fieldsV1"] == {"f:data": {"f:b": {}}}
    assert entries["my-controller"]["fieldsV1"] == {"f:data": {"f:c": {}}}
    assert {e["operation"] for e in entries.values()} == {"Update"}

    fake_apiserver.objects.create("deployments.apps", DEPLOYMENT, field_manager="seed")
    await AppsV1Api(api).patch_namespaced_deployment_status(
        "web", "default", {"status": {"replicas": 1}}, field_manager="ctrl"
    )
    stored = fake_apiserver.objects.get("deployments.apps", "web")
    status_entry = next(e for e in stored["metadata"]["managedFields"] if e["manager"] == "ctrl")
    assert status_entry["subresource"] == "status"
    assert "f:replicas" in status_entry["fieldsV1"]["f:status"]
    assert set(status_entry["fieldsV1"]) == {"f:status"}


async def test_server_side_apply_from_both_clients_with_conflicts_and_force(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """An apply creates the object (201); another manager applying an owned field with a new
    value gets 409 Conflict naming field and manager; ``force=true`` moves the field
    (apiserver ``handlers/patch.go`` applyPatcher, apimachinery ``internal/conflict.go``)."""
    apps: Any = AppsV1Api(api)  # _content_type is accepted through **kwargs
    await apps.patch_namespaced_deployment(
        "web", "default", DEPLOYMENT, field_manager="ci", _content_type=_APPLY
    )
    scale = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    scale["spec"] = {"replicas": 3}
    with _official(fake_apiserver) as client:
        official = kubernetes.client.AppsV1Api(client)

        def apply(force: bool | None) -> Any:
            return official.patch_namespaced_deployment(
                "web",
                "default",
                scale,
                field_manager="autoscaler",
                force=force,
                _content_type=_APPLY,
            )

        with pytest.raises(kubernetes.client.ApiException) as caught:
            await _in_thread(lambda: apply(None))
        assert caught.value.status == 409
        status = json.loads(caught.value.body or "{}")
        assert status["message"].endswith('conflict with "ci": .spec.replicas')
        assert status["details"]["causes"][0]["field"] == ".spec.replicas"
        await _in_thread(lambda: apply(True))
    stored = fake_apiserver.objects.get("deployments.apps", "web")
    assert stored["spec"]["replicas"] == 3
    owners = {e["manager"]: e["fieldsV1"] for e in stored["metadata"]["managedFields"]}
    assert owners["autoscaler"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in owners["ci"]["f:spec"]


async def test_apply_removes_what_the_manager_stops_applying(
    fake_apiserver: FakeApiServer,
) -> None:
    """Re-applying a configuration without a container and an env entry removes them, when
    no other manager owns them (structured-merge-diff ``merge/update.go`` ``prune``)."""
    fake_apiserver.objects.patch(
        "deployments.apps", "web", DEPLOYMENT, patch_type="apply", field_manager="ci"
    )
    smaller = copy.deepcopy(DEPLOYMENT)
    smaller["spec"]["template"]["spec"]["containers"] = [
        {"name": "app", "image": "shop:2", "env": [{"name": "B", "value": "2"}]}
    ]
    stored = fake_apiserver.objects.patch(
        "deployments.apps", "web", smaller, patch_type="apply", field_manager="ci"
    )
    assert _summary(stored) == [("app", "shop:2", ["B"])]


async def test_write_options_are_validated_as_real(fake_apiserver: FakeApiServer) -> None:
    """Apply needs ``fieldManager``, and ``force`` is only for apply: both 422 on
    ``PatchOptions.meta.k8s.io`` (apimachinery ``ValidatePatchOptions``); a patch or apply
    may not rename the object (400, ``checkName`` in apiserver ``handlers/rest.go``);
    in-process conflicts raise the same 409."""
    with pytest.raises(UnprocessableEntityError) as missing:
        fake_apiserver.objects.patch("deployments.apps", "web", DEPLOYMENT, patch_type="apply")
    assert "fieldManager: Required value: is required for apply patch" in str(missing.value)
    with pytest.raises(UnprocessableEntityError):
        fake_apiserver.objects.patch("configmaps", "c", {}, patch_type="merge", force=True)
    nameless = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"}}
    with pytest.raises(BadRequestError, match=r"the name of the object \(\) does not match"):
        fake_apiserver.objects.patch(
            "configmaps", "c", nameless, patch_type="apply", field_manager="m"
        )
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "c"}})
    with pytest.raises(BadRequestError, match=r"the name of the object \(d\) does not match"):
        fake_apiserver.objects.patch("configmaps", "c", {"metadata": {"name": "d"}})
    fake_apiserver.objects.patch(
        "deployments.apps", "web", DEPLOYMENT, patch_type="apply", field_manager="a"
    )
    scale = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    scale["spec"] = {"replicas": 7}
    with pytest.raises(ConflictError):
        fake_apiserver.objects.patch(
            "deployments.apps", "web", scale, patch_type="apply", field_manager="b"
        )


@pytest.mark.parametrize(
    ("content_type", "custom"),
    [
        ("application/strategic-merge-patch+json", True),
        ("application/apply-patch+cbor", False),
        ("text/plain", False),
    ],
)
async def test_unsupported_patch_types_are_415(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession, content_type: str, custom: bool
) -> None:
    """A strategic merge patch of a custom resource, a CBOR apply (its feature gate is off)
    and unknown types answer 415 UnsupportedMediaType listing the accepted types (apiserver
    ``endpoints/installer.go`` and ``handlers/negotiation/errors.go``)."""
    if custom:
        fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
        fake_apiserver.objects.create("widgets.example.com", {"metadata": {"name": "w"}})
        path = "/apis/example.com/v1/namespaces/default/widgets/w"
        accepted = (
            "application/json-patch+json, application/merge-patch+json, "
            "application/apply-patch+yaml"
        )
    else:
        fake_apiserver.objects.create("configmaps", {"metadata": {"name": "c"}})
        path = "/api/v1/namespaces/default/configmaps/c"
        accepted = (
            "application/json-patch+json, application/merge-patch+json, "
            "application/strategic-merge-patch+json, application/apply-patch+yaml"
        )
    async with http.patch(path, data=b"{}", headers={"Content-Type": content_type}) as response:
        assert response.status == 415
        body = await response.json()
    assert body["reason"] == "UnsupportedMediaType"
    assert body["message"] == (
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{accepted}"
    )


async def test_invalid_strategic_patches_answer_the_real_status(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A merging-list item without its merge key is a plain error (500, no reason: the empty
    ``StatusReasonUnknown`` is omitted from ``metav1.Status`` JSON, the bare message); a
    malformed directive is 400 (``interpretStrategicMergePatchError`` in apiserver's
    ``handlers/patch.go``)."""
    fake_apiserver.objects.create("deployments.apps", DEPLOYMENT)
    path = "/apis/apps/v1/namespaces/default/deployments/web"
    headers = {"Content-Type": "application/strategic-merge-patch+json"}
    keyless = {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}
    async with http.patch(path, json=keyless, headers=headers) as response:
        body = await response.json()
    assert (response.status, "reason" in body) == (500, False)
    assert body["message"] == "map: map[image:x] does not contain declared merge key: name"
    retain = {"metadata": {"$retainKeys": "name"}}
    async with http.patch(path, json=retain, headers=headers) as response:
        body = await response.json()
    assert (response.status, body["message"]) == (400, "invalid patch format of retainKeys")
