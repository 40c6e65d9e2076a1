"""CRUD over HTTP through kubernetes_asyncio's real API classes, and the in-process mirror."""

# kubernetes_asyncio's generated API annotates bodies with its model classes and raw bodies
# as optional; these tests deliberately send plain dicts (which it accepts) and read bodies.
# mypy: disable-error-code="arg-type, index"
from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes_asyncio.client import (
    ApiClient,
    ApiException,
    AppsV1Api,
    CoordinationV1Api,
    CoreV1Api,
    CustomObjectsApi,
)

from aioinformer.errors import ConflictError, NotFoundError
from aioinformer.testing import FakeApiServer


def _status(exc: ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.body)
    return body


def _pod(name: str, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


async def test_create_sets_server_metadata_and_bumps_the_global_rv(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """A create gets uid, creationTimestamp, generation 1 and the next global RV."""
    before = int(fake_apiserver.objects.resource_version)
    pod = await CoreV1Api(api).create_namespaced_pod("default", _pod("a"))
    assert pod.metadata.uid and pod.metadata.creation_timestamp is not None
    assert pod.metadata.generation == 1
    assert (
        pod.metadata.resource_version == str(before + 1) == fake_apiserver.objects.resource_version
    )
    cm = await CoreV1Api(api).create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    assert int(cm.metadata.resource_version) == before + 2


async def test_create_twice_is_409_already_exists(api: ApiClient) -> None:
    """A second create of the same name answers a 409 AlreadyExists Status."""
    core = CoreV1Api(api)
    await core.create_namespaced_pod("default", _pod("a"))
    with pytest.raises(ApiException) as caught:
        await core.create_namespaced_pod("default", _pod("a"))
    assert caught.value.status == 409
    status = _status(caught.value)
    assert status["kind"] == "Status" and status["reason"] == "AlreadyExists"
    assert status["details"] == {"name": "a", "kind": "pods"}


async def test_generate_name_appends_a_random_suffix(api: ApiClient) -> None:
    """``generateName`` yields distinct names with the prefix and five more characters."""
    core = CoreV1Api(api)
    body = {"metadata": {"generateName": "web-"}}
    names = {
        (await core.create_namespaced_config_map("default", body)).metadata.name for _ in range(5)
    }
    assert len(names) == 5
    assert all(n.startswith("web-") and len(n) == 9 for n in names)


async def test_create_without_a_name_is_422_invalid(api: ApiClient) -> None:
    """No name and no generateName answers 422 Invalid."""
    with pytest.raises(ApiException) as caught:
        await CoreV1Api(api).create_namespaced_config_map("default", {"metadata": {}})
    assert caught.value.status == 422
    assert _status(caught.value)["reason"] == "Invalid"


async def test_get_of_a_missing_object_is_404_not_found(api: ApiClient) -> None:
    """A get of a missing object answers a NotFound Status naming it."""
    with pytest.raises(ApiException) as caught:
        await AppsV1Api(api).read_namespaced_deployment("nope", "default")
    assert caught.value.status == 404
    status = _status(caught.value)
    assert status["reason"] == "NotFound"
    assert status["message"] == 'deployments.apps "nope" not found'
    assert status["details"]["group"] == "apps"


async def test_namespaced_create_needs_the_namespace(api: ApiClient) -> None:
    """Creating in a namespace that does not exist answers 404 for the namespace."""
    with pytest.raises(ApiException) as caught:
        await CoreV1Api(api).create_namespaced_pod("ghost", _pod("a"))
    assert caught.value.status == 404
    assert _status(caught.value)["message"] == 'namespaces "ghost" not found'


async def test_auto_create_namespaces_creates_the_missing_namespace() -> None:
    """With ``auto_create_namespaces`` a namespaced create makes its namespace first."""
    async with FakeApiServer(auto_create_namespaces=True) as server, server.api_client() as api:
        await CoreV1Api(api).create_namespaced_pod("team", _pod("a"))
        namespace = await CoreV1Api(api).read_namespace("team")
        assert namespace.status.phase == "Active"


async def test_update_with_a_stale_resource_version_is_409_conflict(api: ApiClient) -> None:
    """PUT with an outdated ``metadata.resourceVersion`` answers 409 Conflict."""
    core = CoreV1Api(api)
    created = await core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    first = created.to_dict()
    await core.replace_namespaced_config_map("c", "default", {**_camel(first), "data": {"k": "1"}})
    with pytest.raises(ApiException) as caught:
        await core.replace_namespaced_config_map(
            "c", "default", {**_camel(first), "data": {"k": "2"}}
        )
    assert caught.value.status == 409
    assert _status(caught.value)["reason"] == "Conflict"
    assert "the object has been modified" in _status(caught.value)["message"]


def _camel(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    return {
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "resourceVersion": meta["resource_version"],
        }
    }


async def test_update_keeps_server_fields_and_bumps_generation_on_spec_changes(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """An update keeps uid/creationTimestamp; generation grows with spec, not with labels
    (``deploymentStrategy.PrepareForUpdate``: spec or annotations)."""
    apps = AppsV1Api(api)
    body = {
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": _pod("x")["spec"]},
        },
    }
    created = await apps.create_namespaced_deployment("default", body)
    relabelled = await apps.patch_namespaced_deployment(
        "d", "default", {"metadata": {"labels": {"x": "y"}}}
    )
    assert relabelled.metadata.generation == 1
    scaled = await apps.patch_namespaced_deployment("d", "default", {"spec": {"replicas": 3}})
    assert scaled.metadata.generation == 2
    assert scaled.metadata.uid == created.metadata.uid
    stored = fake_apiserver.objects.get("deployments.apps", "d")
    assert stored["metadata"][
        "creationTimestamp"
    ] == relabelled.metadata.creation_timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")


async def test_a_no_op_update_does_not_bump_the_resource_version(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """Writing an object unchanged returns it at the same RV (no new event)."""
    core = CoreV1Api(api)
    created = await core.create_namespaced_config_map(
        "default", {"metadata": {"name": "c"}, "data": {"k": "v"}}
    )
    again = await core.patch_namespaced_config_map("c", "default", {"data": {"k": "v"}})
    assert again.metadata.resource_version == created.metadata.resource_version
    assert fake_apiserver.objects.resource_version == created.metadata.resource_version


async def test_patch_types_merge_json_and_strategic(
    api: ApiClient, fake_apiserver: FakeApiServer
) -> None:
    """Merge, JSON and strategic-merge patches all apply over HTTP."""
    core = CoreV1Api(api)
    await core.create_namespaced_config_map(
        "default", {"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}
    )
    await core.patch_namespaced_config_map("c", "default", {"data": {"a": None, "c": "3"}})
    assert (fake_apiserver.objects.get("configmaps", "c"))["data"] == {"b": "2", "c": "3"}
    await core.patch_namespaced_config_map(
        "c", "default", [{"op": "replace", "path": "/data/b", "value": "20"}]
    )
    assert (fake_apiserver.objects.get("configmaps", "c"))["data"] == {"b": "20", "c": "3"}
    await core.api_client.call_api(  # type: ignore[attr-defined]  # set in __init__, unannotated
        "/api/v1/namespaces/default/configmaps/c",
        "PATCH",
        header_params={"Content-Type": "application/strategic-merge-patch+json"},
        body={"data": {"d": "4"}},
        response_types_map={200: "V1ConfigMap"},
    )
    assert (fake_apiserver.objects.get("configmaps", "c"))["data"] == {
        "b": "20",
        "c": "3",
        "d": "4",
    }


async def test_patch_with_a_stale_resource_version_is_a_conflict(api: ApiClient) -> None:
    """A merge patch carrying an old ``metadata.resourceVersion`` is a failed precondition."""
    core = CoreV1Api(api)
    created = await core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    await core.patch_namespaced_config_map("c", "default", {"data": {"k": "1"}})
    with pytest.raises(ApiException) as caught:
        await core.patch_namespaced_config_map(
            "c", "default", {"metadata": {"resourceVersion": created.metadata.resource_version}}
        )
    assert caught.value.status == 409


async def test_status_subresource_changes_only_status(
    api: ApiClient, fake_apiserver: FakeApiServer
) -> None:
    """Writes to ``/status`` change ``status``, never the spec (``podStatusStrategy.
    PrepareForUpdate`` keeps the stored spec and owner references; labels are not kept, so
    the test no longer sends them). The patch merges into the status the create set
    (``Pending`` and the QoS class, ``podStrategy.PrepareForCreate``)."""
    core = CoreV1Api(api)
    await core.create_namespaced_pod("default", _pod("p", app="x"))
    await core.patch_namespaced_pod_status(
        "p", "default", {"spec": {"nodeName": "ignored"}, "status": {"phase": "Running"}}
    )
    stored = fake_apiserver.objects.get("pods", "p")
    assert stored["status"] == {"phase": "Running", "qosClass": "BestEffort"}
    assert "nodeName" not in stored["spec"]


async def test_delete_missing_is_404_and_delete_returns_object_or_status(api: ApiClient) -> None:
    """Deleting a pod returns it at its deletion RV, a ConfigMap returns Success; twice is 404.

    An unscheduled pod's deletion is graceful with period 0 (``podStrategy.CheckGracefulDelete``):
    ``Store.Delete`` first writes ``deletionTimestamp`` (one RV), then deletes (the next)."""
    core = CoreV1Api(api)
    pod = await core.create_namespaced_pod("default", _pod("p"))
    deleted = await core.delete_namespaced_pod("p", "default")
    assert int(deleted.metadata.resource_version) == int(pod.metadata.resource_version) + 2
    assert deleted.metadata.deletion_grace_period_seconds == 0
    await core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    status = await core.delete_namespaced_config_map("c", "default")
    assert status.status == "Success" and status.details.name == "c"
    with pytest.raises(ApiException) as caught:
        await core.delete_namespaced_pod("p", "default")
    assert caught.value.status == 404


async def test_delete_precondition_on_uid_is_a_conflict(api: ApiClient) -> None:
    """DeleteOptions preconditions must match the stored object: 409 on the object's Kind
    with ``rest.BeforeDelete``'s message (``apiserver/pkg/registry/rest/delete.go``)."""
    core = CoreV1Api(api)
    await core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    with pytest.raises(ApiException) as caught:
        await core.delete_namespaced_config_map(
            "c", "default", body={"preconditions": {"uid": "nope"}}
        )
    assert caught.value.status == 409
    message = _status(caught.value)["message"]
    assert message.startswith(
        'Operation cannot be fulfilled on ConfigMap "c": the UID in the precondition (nope) '
        "does not match the UID in record ("
    )
    assert message.endswith("The object might have been deleted and then recreated")


async def test_finalizers_defer_deletion_until_they_are_removed(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """With finalizers, delete only sets deletionTimestamp; removing them deletes the object."""
    core = CoreV1Api(api)
    await core.create_namespaced_config_map(
        "default", {"metadata": {"name": "c", "finalizers": ["x/y"]}}
    )
    await core.delete_namespaced_config_map("c", "default")
    stored = fake_apiserver.objects.get("configmaps", "c")
    assert stored["metadata"]["deletionTimestamp"]
    await core.patch_namespaced_config_map("c", "default", {"metadata": {"finalizers": None}})
    with pytest.raises(NotFoundError):
        fake_apiserver.objects.get("configmaps", "c")


async def test_deletecollection_deletes_the_selected_objects(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """DELETE on a collection removes the objects matching its selector."""
    core = CoreV1Api(api)
    for name, tier in (("a", "web"), ("b", "web"), ("c", "db")):
        await core.create_namespaced_pod("default", _pod(name, tier=tier))
    await core.delete_collection_namespaced_pod("default", label_selector="tier=web")
    assert [p["metadata"]["name"] for p in fake_apiserver.objects.list("pods")] == ["c"]


async def test_deleting_a_namespace_deletes_its_contents(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """A namespace delete takes the objects inside it along (the namespace controller, once
    the DELETE answered)."""
    core = CoreV1Api(api)
    await core.create_namespace({"metadata": {"name": "team"}})
    await core.create_namespaced_config_map("team", {"metadata": {"name": "c"}})
    await core.delete_namespace("team")
    await fake_apiserver.objects.wait_idle()
    assert fake_apiserver.objects.list("configmaps", namespace="team") == []


async def test_every_builtin_resource_round_trips(api: ApiClient) -> None:
    """Each built-in resource is served: core, apps and coordination.k8s.io (with the fields
    their validation requires: a Service's ports, a pod template's containers)."""
    core, apps, coordination = CoreV1Api(api), AppsV1Api(api), CoordinationV1Api(api)
    meta = {"metadata": {"name": "x"}}
    await core.create_namespaced_service("default", {**meta, "spec": {"ports": [{"port": 80}]}})
    await core.create_namespaced_endpoints("default", meta)
    await core.create_namespaced_secret("default", {**meta, "type": "Opaque"})
    await core.create_node(meta)
    await core.create_namespaced_event("default", {**meta, "involvedObject": {"kind": "Pod"}})
    template = {"metadata": {"labels": {"a": "b"}}, "spec": _pod("x")["spec"]}
    spec = {"selector": {"matchLabels": {"a": "b"}}, "template": template}
    await apps.create_namespaced_replica_set("default", {**meta, "spec": spec})
    await apps.create_namespaced_stateful_set(
        "default", {**meta, "spec": {**spec, "serviceName": "x"}}
    )
    await apps.create_namespaced_daemon_set("default", {**meta, "spec": spec})
    lease = await coordination.create_namespaced_lease(
        "default", {**meta, "spec": {"holderIdentity": "me"}}
    )
    assert lease.spec.holder_identity == "me"
    assert (await core.read_node("x")).metadata.name == "x"
    assert len((await apps.list_replica_set_for_all_namespaces()).items) == 1
    assert (await core.read_namespaced_secret("x", "default")).type == "Opaque"


async def test_custom_resources_work_through_custom_objects_api(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """A registered custom resource supports create, get, list, patch and delete."""
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget", namespaced=True)
    custom = CustomObjectsApi(api)
    body = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": 1},
    }
    created = await custom.create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", body
    )
    assert created["metadata"]["generation"] == 1
    await custom.patch_namespaced_custom_object(  # type: ignore[call-arg]  # via **kwargs
        "example.com",
        "v1",
        "default",
        "widgets",
        "w",
        {"spec": {"size": 2}},
        _content_type="application/merge-patch+json",
    )
    got = await custom.get_namespaced_custom_object("example.com", "v1", "default", "widgets", "w")
    assert got["spec"] == {"size": 2} and got["metadata"]["generation"] == 2
    listed = await custom.list_namespaced_custom_object("example.com", "v1", "default", "widgets")
    assert listed["kind"] == "WidgetList" and [i["metadata"]["name"] for i in listed["items"]] == [
        "w"
    ]
    await custom.delete_namespaced_custom_object("example.com", "v1", "default", "widgets", "w")
    assert fake_apiserver.objects.list("example.com/v1/widgets") == []


async def test_in_process_writes_mirror_http_writes(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """The in-process API shares RVs, errors and state with HTTP, and copies objects."""
    obj = {"metadata": {"name": "c", "namespace": "default"}, "data": {"k": "v"}}
    created = fake_apiserver.objects.create("v1/configmaps", obj)
    assert "uid" not in obj["metadata"]
    created["data"]["k"] = "mutated"
    over_http = await CoreV1Api(api).read_namespaced_config_map("c", "default")
    assert over_http.data == {"k": "v"}
    assert over_http.metadata.resource_version == created["metadata"]["resourceVersion"]
    with pytest.raises(ConflictError) as caught:
        fake_apiserver.objects.create("configmaps", obj)
    assert caught.value.reason == "AlreadyExists"
    stale = {**obj, "metadata": {**obj["metadata"], "resourceVersion": "1"}}
    with pytest.raises(ConflictError):
        fake_apiserver.objects.update("configmaps", stale)


@pytest.mark.parametrize(
    "spec",
    [
        "pods",
        "v1/pods",
        "apps/v1/deployments",
        "deployments.apps",
        "deploy",
        "example.com/v1/widgets",
    ],
)
def test_resource_spellings_resolve(fake_apiserver: FakeApiServer, spec: str) -> None:
    """Every documented spelling of a resource resolves to it."""
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
    info = fake_apiserver.resource(spec)
    assert info.plural in spec or info.short_names[0] == spec


def test_unknown_resources_are_not_found(fake_apiserver: FakeApiServer) -> None:
    """An unknown resource spelling raises NotFoundError."""
    with pytest.raises(NotFoundError):
        fake_apiserver.resource("gizmos")
