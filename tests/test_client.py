"""KubeClient's verbs against the fake API server, over real HTTP.

The expected behaviours are the kube-apiserver's (``staging/src/k8s.io/apiserver/pkg/endpoints/
handlers``: create, update, patch, delete, deletecollection; ``apimachinery/pkg/api/errors``
for the Status of each failure); the fake implements them independently of the client.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

import aioinformer
from aioinformer import KubeClient, PatchType, Resource
from aioinformer._objects import KubeObject
from aioinformer._wire._verbs import delete_options
from aioinformer.errors import (
    AlreadyExistsError,
    ConflictError,
    ConnectionRefused,
    ForbiddenError,
    InternalServerError,
    InvalidError,
    NotFoundError,
    ServiceUnavailableError,
    TooManyRequestsError,
    UnauthorizedError,
    UnsupportedMediaTypeError,
)
from aioinformer.testing import FakeApiServer, RequestRecord
from aioinformer.testing.pytest_plugin import _serving as serving

from .support import configmap, kube_client
from .testing.valid import deployment

WIDGETS = Resource("example.com", "v1", "widgets", kind="Widget")


@pytest.fixture
async def server() -> AsyncIterator[FakeApiServer]:
    async with serving(FakeApiServer()) as fake:
        fake.objects.create("namespaces", {"metadata": {"name": "team-a"}})
        yield fake


@pytest.fixture
async def client(server: FakeApiServer) -> AsyncIterator[KubeClient]:
    async with aioinformer.connect(server=server.url) as kube:
        yield kube


def last(server: FakeApiServer) -> RequestRecord:
    return server.requests.records[-1]


def pod(name: str, *containers: str) -> KubeObject:
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": c, "image": f"{c}:1"} for c in containers]},
    }


def managers(obj: KubeObject) -> list[tuple[str, str, str]]:
    """``(manager, operation, subresource)`` of each managedFields entry, sorted."""
    return sorted(
        (entry["manager"], entry["operation"], entry.get("subresource", ""))
        for entry in obj["metadata"].get("managedFields", [])
    )


# -- reading -----------------------------------------------------------------------------------


async def test_get_returns_the_object_and_a_missing_one_is_not_found(
    server: FakeApiServer, client: KubeClient
) -> None:
    """GET of a name answers the object as stored; an unknown name answers 404 NotFound."""
    server.objects.create("configmaps", configmap("a", k="v"))
    got = await client.get("configmaps", "a")
    assert got["data"] == {"k": "v"}
    assert got["metadata"]["uid"]
    assert last(server).path == "/api/v1/namespaces/default/configmaps/a"
    with pytest.raises(NotFoundError) as caught:
        await client.get("configmaps", "absent", namespace="team-a")
    assert (caught.value.code, caught.value.reason) == (404, "NotFound")


@pytest.mark.parametrize(
    "resource", ["configmaps", "configmap", "cm", "v1/configmaps", Resource.parse("v1/configmaps")]
)
async def test_resources_are_named_the_way_the_factory_names_them(
    server: FakeApiServer, client: KubeClient, resource: Resource | str
) -> None:
    """kubectl's names of built-in resources, ``version/plural`` and a Resource all work."""
    server.objects.create("configmaps", configmap("a"))
    assert (await client.get(resource, "a"))["metadata"]["name"] == "a"


async def test_cluster_scoped_resources_have_no_namespace(
    server: FakeApiServer, client: KubeClient
) -> None:
    """A cluster-scoped object is addressed without a namespace; giving one is refused
    before any request."""
    assert (await client.get("namespaces", "team-a"))["metadata"]["name"] == "team-a"
    assert last(server).path == "/api/v1/namespaces/team-a"
    with pytest.raises(ValueError, match="cluster-scoped"):
        await client.get("nodes", "n1", namespace="default")


async def test_list_pages_with_selectors_limit_and_continue(
    server: FakeApiServer, client: KubeClient
) -> None:
    """LIST answers the ``*List`` with kind-tagged items; selectors filter, ``limit`` and
    ``continue`` page; no namespace lists the whole collection."""
    for i in range(5):
        body = configmap(f"web-{i}")
        body["metadata"]["labels"] = {"app": "web" if i < 4 else "db"}
        server.objects.create("configmaps", body)
    server.objects.create("configmaps", configmap("web-x", namespace="team-a"))
    first = await client.list("configmaps", namespace="default", label_selector="app=web", limit=3)
    assert first["kind"] == "ConfigMapList"
    assert [cm["metadata"]["name"] for cm in first["items"]] == ["web-0", "web-1", "web-2"]
    assert {cm["kind"] for cm in first["items"]} == {"ConfigMap"}
    token = first["metadata"]["continue"]
    rest = await client.list(
        "configmaps", namespace="default", label_selector="app=web", continue_token=token
    )
    assert [cm["metadata"]["name"] for cm in rest["items"]] == ["web-3"]
    assert not rest["metadata"].get("continue")
    assert last(server).query == {"labelSelector": "app=web", "continue": token}
    everywhere = await client.list("configmaps", field_selector="metadata.name=web-x")
    assert [cm["metadata"]["namespace"] for cm in everywhere["items"]] == ["team-a"]
    assert last(server).path == "/api/v1/configmaps"


# -- creating and replacing --------------------------------------------------------------------


async def test_create_places_the_object_in_its_namespace_or_the_clients(
    server: FakeApiServer, client: KubeClient
) -> None:
    """POST answers the stored object; the namespace comes from the argument, else the body,
    else the client's default namespace (kubectl's rule)."""
    made = await client.create("configmaps", {"metadata": {"name": "a"}, "data": {"k": "v"}})
    assert (made["metadata"]["namespace"], made["data"]) == ("default", {"k": "v"})
    assert made["metadata"]["resourceVersion"]
    await client.create("configmaps", configmap("b", namespace="team-a"))
    await client.create("configmaps", {"metadata": {"name": "c"}}, namespace="team-a")
    stored = server.objects.list("configmaps", namespace="team-a")
    assert sorted(cm["metadata"]["name"] for cm in stored) == ["b", "c"]


async def test_create_of_an_existing_name_is_already_exists(
    server: FakeApiServer, client: KubeClient
) -> None:
    """A second create of a name answers 409 AlreadyExists: an AlreadyExistsError, which is a
    ConflictError."""
    await client.create("configmaps", configmap("a"))
    with pytest.raises(AlreadyExistsError) as caught:
        await client.create("configmaps", configmap("a"))
    assert isinstance(caught.value, ConflictError)
    assert caught.value.reason == "AlreadyExists"


async def test_an_invalid_object_is_invalid_with_its_causes(client: KubeClient) -> None:
    """An object failing validation answers 422 Invalid; the causes name the fields
    (apimachinery's ``NewInvalid``)."""
    with pytest.raises(InvalidError) as caught:
        await client.create("configmaps", {"metadata": {"name": "Not_A_Name"}})
    assert caught.value.code == 422
    assert caught.value.fields == ["metadata.name"]
    assert "RFC 1123" in caught.value.causes[0]["message"]


async def test_replace_is_optimistic(server: FakeApiServer, client: KubeClient) -> None:
    """PUT with the resourceVersion as read succeeds once; again with the same (now stale)
    version it answers 409 Conflict."""
    read = await client.create("configmaps", configmap("a", v="1"))
    updated = await client.replace("configmaps", {**read, "data": {"v": "2"}})
    assert updated["data"] == {"v": "2"}
    assert updated["metadata"]["resourceVersion"] != read["metadata"]["resourceVersion"]
    with pytest.raises(ConflictError) as caught:
        await client.replace("configmaps", {**read, "data": {"v": "3"}})
    assert type(caught.value) is ConflictError
    assert (server.objects.get("configmaps", "a", namespace="default"))["data"] == {"v": "2"}
    with pytest.raises(ValueError, match=r"no metadata\.name"):
        await client.replace("configmaps", {"metadata": {}})


# -- patching and applying ---------------------------------------------------------------------


async def test_each_patch_type_merges_its_way(server: FakeApiServer, client: KubeClient) -> None:
    """A merge patch replaces lists, a strategic merge patch merges containers by name, a
    JSON patch applies its operations (the content type says which). (A Deployment: a Pod's
    containers cannot be added to after creation, ``ValidatePodUpdate``.)"""
    await client.create("deployments", deployment("web"))
    strategic = await client.patch(
        "deployments", "web",
        {"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "s:1"}]}}}},
        patch_type=PatchType.STRATEGIC,
    )  # fmt: skip
    names = [c["name"] for c in strategic["spec"]["template"]["spec"]["containers"]]
    assert names == ["sidecar", "app"]
    await client.create("pods", pod("p", "app"))
    merged = await client.patch("pods", "p", {"metadata": {"labels": {"tier": "web"}}})
    assert merged["metadata"]["labels"] == {"tier": "web"}
    ops = [{"op": "replace", "path": "/metadata/labels/tier", "value": "db"}]
    patched = await client.patch("pods", "p", ops, patch_type=PatchType.JSON)
    assert patched["metadata"]["labels"] == {"tier": "db"}
    with pytest.raises(ValueError, match="a JSON patch is a list of operations"):
        await client.patch("pods", "p", {"spec": {}}, patch_type=PatchType.JSON)
    with pytest.raises(ValueError, match="a MERGE patch is a dict"):
        await client.patch("pods", "p", ops)


async def test_a_strategic_patch_of_a_custom_resource_is_unsupported(
    server: FakeApiServer, client: KubeClient
) -> None:
    """Custom resources take merge, JSON and apply patches only: 415 UnsupportedMediaType."""
    server.register_resource("example.com", "v1", "widgets", "Widget")
    await client.create(WIDGETS, {"metadata": {"name": "w"}, "spec": {"size": 1}})
    with pytest.raises(UnsupportedMediaTypeError):
        await client.patch(WIDGETS, "w", {"spec": {"size": 2}}, patch_type=PatchType.STRATEGIC)
    assert (await client.patch(WIDGETS, "w", {"spec": {"size": 2}}))["spec"] == {"size": 2}


async def test_apply_owns_fields_per_manager(server: FakeApiServer, client: KubeClient) -> None:
    """Server-side apply creates the object (apiVersion and kind filled in), records the
    manager with operation Apply, refuses to take a field another manager set (409 with
    causes naming field and manager) unless forced, and ``fieldManager`` is required."""
    made = await client.apply(
        "configmaps", {"metadata": {"name": "a"}, "data": {"x": "1"}}, field_manager="ctl"
    )
    assert made["data"] == {"x": "1"}
    assert managers(made) == [("ctl", "Apply", "")]
    await client.patch("configmaps", "a", {"data": {"y": "2"}}, field_manager="human")
    with pytest.raises(ConflictError) as caught:
        await client.apply(
            "configmaps", {"metadata": {"name": "a"}, "data": {"y": "3"}}, field_manager="ctl"
        )
    assert caught.value.causes[0]["field"] == ".data.y"
    assert '"human"' in caught.value.causes[0]["message"]
    forced = await client.apply(
        "configmaps",
        {"metadata": {"name": "a"}, "data": {"y": "3"}},
        field_manager="ctl",
        force=True,
    )
    assert forced["data"] == {"y": "3"}  # x: no longer applied by its only manager
    assert last(server).query == {"fieldManager": "ctl", "force": "true"}
    with pytest.raises(ValueError, match="field_manager"):
        await client.apply("configmaps", {"metadata": {"name": "a"}}, field_manager="")


# -- status ------------------------------------------------------------------------------------


async def test_status_writes_change_only_the_status(
    server: FakeApiServer, client: KubeClient
) -> None:
    """Writes to the ``status`` subresource keep everything else as stored and are recorded
    per manager with ``subresource: status``."""
    created = await client.create("pods", pod("p", "app"))
    patched = await client.patch_status(
        "pods", "p", {"status": {"phase": "Running"}}, field_manager="kubelet"
    )
    assert patched["status"]["phase"] == "Running"
    assert ("kubelet", "Update", "status") in managers(patched)
    assert last(server).path == "/api/v1/namespaces/default/pods/p/status"
    replaced = await client.replace_status(
        "pods", {**patched, "spec": {"containers": []}, "status": {"phase": "Succeeded"}}
    )
    assert replaced["status"]["phase"] == "Succeeded"
    assert replaced["spec"] == created["spec"]
    applied = await client.apply(
        "pods",
        {"metadata": {"name": "p"}, "status": {"message": "done"}},
        field_manager="reporter",
        subresource="status",
    )
    assert applied["status"]["message"] == "done"
    assert ("reporter", "Apply", "status") in managers(applied)


# -- deleting ----------------------------------------------------------------------------------


def test_delete_options_carry_preconditions_policy_grace_and_dry_run() -> None:
    """The DeleteOptions body (``meta/v1``): preconditions, propagationPolicy,
    gracePeriodSeconds and dryRun as the API names them; nothing unset."""
    assert delete_options() == {"kind": "DeleteOptions", "apiVersion": "v1"}
    assert delete_options(
        uid="u-1",
        resource_version="7",
        propagation_policy="Foreground",
        grace_period_seconds=0,
        dry_run=True,
    ) == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "preconditions": {"uid": "u-1", "resourceVersion": "7"},
        "propagationPolicy": "Foreground",
        "gracePeriodSeconds": 0,
        "dryRun": ["All"],
    }


async def test_delete_checks_its_preconditions(server: FakeApiServer, client: KubeClient) -> None:
    """A precondition that does not hold (uid or resourceVersion) answers 409 Conflict and
    deletes nothing; when they hold the object goes (a Status Success for ConfigMaps)."""
    made = await client.create("configmaps", configmap("a"))
    with pytest.raises(ConflictError, match="the UID in the precondition"):
        await client.delete("configmaps", "a", uid="another-uid")
    with pytest.raises(ConflictError, match="the ResourceVersion in the precondition"):
        await client.delete("configmaps", "a", resource_version="1")
    gone = await client.delete(
        "configmaps",
        "a",
        uid=made["metadata"]["uid"],
        resource_version=made["metadata"]["resourceVersion"],
        propagation_policy="Background",
        grace_period_seconds=0,
    )
    assert (gone["kind"], gone["status"]) == ("Status", "Success")
    with pytest.raises(NotFoundError):
        await client.delete("configmaps", "a")


async def test_delete_of_an_object_with_finalizers_marks_it(
    server: FakeApiServer, client: KubeClient
) -> None:
    """An object with finalizers is not removed: it comes back with a deletionTimestamp and
    goes once the finalizers are gone."""
    body = configmap("a")
    body["metadata"]["finalizers"] = ["example.com/cleanup"]
    await client.create("configmaps", body)
    marked = await client.delete("configmaps", "a")
    assert marked["metadata"]["deletionTimestamp"]
    await client.patch("configmaps", "a", {"metadata": {"finalizers": None}})
    with pytest.raises(NotFoundError):
        await client.get("configmaps", "a")


async def test_delete_collection_deletes_what_the_selectors_match(
    server: FakeApiServer, client: KubeClient
) -> None:
    """DELETECOLLECTION of a namespace deletes the matching objects and answers them."""
    for name, app in (("a", "web"), ("b", "web"), ("c", "db")):
        body = configmap(name)
        body["metadata"]["labels"] = {"app": app}
        await client.create("configmaps", body)
    deleted = await client.delete_collection("configmaps", label_selector="app=web")
    assert sorted(cm["metadata"]["name"] for cm in deleted["items"]) == ["a", "b"]
    assert last(server).path == "/api/v1/namespaces/default/configmaps"
    left = await client.list("configmaps", namespace="default")
    assert [cm["metadata"]["name"] for cm in left["items"]] == ["c"]


# -- dry run and field managers ----------------------------------------------------------------


async def test_dry_run_and_field_manager_reach_the_server(
    server: FakeApiServer, client: KubeClient
) -> None:
    """Every write with ``dry_run=True`` asks ``dryRun=All`` and names its ``fieldManager``
    (the server does not persist a dry run; the fake API server does not implement it yet,
    so this checks the request, and delete's DeleteOptions above)."""
    server.objects.create("configmaps", configmap("a"))
    server.objects.create("pods", pod("p", "app"))
    options: dict[str, Any] = {"field_manager": "m", "dry_run": True}
    writes: list[tuple[str, Callable[[], Awaitable[KubeObject]]]] = [
        ("create", lambda: client.create("configmaps", configmap("b"), **options)),
        ("update", lambda: client.replace("configmaps", configmap("a"), **options)),
        ("patch", lambda: client.patch("configmaps", "a", {"data": {}}, **options)),
        ("patch", lambda: client.apply("configmaps", configmap("a"), **options)),
        ("patch", lambda: client.patch_status("pods", "p", {"status": {}}, **options)),
    ]
    for verb, write in writes:
        await write()
        assert (last(server).verb, last(server).query) == (
            verb,
            {"dryRun": "All", "fieldManager": "m"},
        )


# -- errors and credentials --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (403, ForbiddenError),
        (429, TooManyRequestsError),
        (500, InternalServerError),
        (503, ServiceUnavailableError),
    ],
)
async def test_error_statuses_become_typed_errors(
    server: FakeApiServer, client: KubeClient, status: int, error: type[Exception]
) -> None:
    """Each failure Status raises its class from aioinformer.errors, with code and Status."""
    server.faults.fail_next(1, status, verb="create", retry_after=2 if status == 429 else None)
    with pytest.raises(error) as caught:
        await client.create("configmaps", configmap("a"))
    assert caught.value.code == status  # type: ignore[attr-defined]
    assert caught.value.status["kind"] == "Status"  # type: ignore[attr-defined]
    if status == 429:
        assert caught.value.retry_after == 2  # type: ignore[attr-defined]


async def test_a_refused_connection_is_connection_refused(
    server: FakeApiServer, client: KubeClient
) -> None:
    """Nobody listening: ConnectionRefused (also a ConnectionRefusedError), naming the
    request."""
    await server.faults.stop_listening()
    with pytest.raises(ConnectionRefused, match="get of v1/configmaps 'a'"):
        await client.get("configmaps", "a")


async def test_a_401_reloads_credentials_and_sends_the_request_again(
    server: FakeApiServer,
) -> None:
    """A 401 reloads the credentials and repeats the request once (unauthenticated, it did
    nothing); a second 401 raises. Without a way to reload, the 401 raises at once."""
    reloads: list[str] = []

    async def refresher() -> None:
        reloads.append("reload")

    server.objects.create("configmaps", configmap("a"))
    async with kube_client(server, credential_refresher=refresher) as client:
        server.faults.fail_next(1, 401, verb="get")
        assert (await client.get("configmaps", "a"))["metadata"]["name"] == "a"
        assert reloads == ["reload"]
        assert [r.status for r in server.requests.records[-2:]] == [401, 200]
        server.faults.fail_next(2, 401, verb="create")
        with pytest.raises(UnauthorizedError):
            await client.create("configmaps", configmap("b"))
        assert reloads == ["reload", "reload"]
        assert [r.status for r in server.requests.records[-2:]] == [401, 401]
    async with kube_client(server) as plain:
        server.faults.fail_next(1, 401, verb="get")
        with pytest.raises(UnauthorizedError):
            await plain.get("configmaps", "a")
        assert server.requests.records[-1].status == 401
        assert (await plain.get("configmaps", "a"))["metadata"]["name"] == "a"


async def test_a_failing_reload_leaves_the_401(
    server: FakeApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """When reloading fails (an exec plugin that errs), the 401 is raised and the failure
    logged by type only: its message may hold a credential."""

    async def refresher() -> None:
        raise RuntimeError("token s3cr3t rejected")

    async with kube_client(server, credential_refresher=refresher) as client:
        server.faults.fail_next(1, 401, verb="get")
        with caplog.at_level(logging.DEBUG), pytest.raises(UnauthorizedError):
            await client.get("configmaps", "a")
    assert "reloading credentials failed: RuntimeError" in caplog.text
    assert "s3cr3t" not in caplog.text
