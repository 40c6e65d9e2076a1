"""Discovery through kubernetes_asyncio's real discovery API classes."""

from __future__ import annotations

import aiohttp
from kubernetes_asyncio.client import (
    ApiClient,
    ApisApi,
    AppsApi,
    AppsV1Api,
    CoordinationV1Api,
    CoreApi,
    CoreV1Api,
    VersionApi,
)

from aioinformer._builtin_resources import BUILTIN_RESOURCES as BUILTIN_TABLE
from aioinformer._listwatch import Resource, resolve_builtin_resource
from aioinformer.testing import BUILTIN_RESOURCES, FakeApiServer
from aioinformer.testing._apiserver._http._discovery import storage_version_hash
from aioinformer.testing._apiserver._schema._published import schemas


async def test_version_reports_the_release_of_the_served_schemas(api: ApiClient) -> None:
    """/version answers a VersionInfo naming the newest release kubernetes-validate has
    schemas for (the one whose strategic-merge and apply rules the fake follows)."""
    info = await VersionApi(api).get_code()
    major, minor, patch = schemas().version
    assert (info.major, info.minor) == (str(major), str(minor))
    assert info.git_version.startswith(f"v{major}.{minor}.{patch}")
    assert (major, minor) >= (1, 37)


async def test_core_and_group_lists(api: ApiClient) -> None:
    """/api lists v1; /apis lists every group of the built-in table with its preferred
    version, apiextensions.k8s.io (CustomResourceDefinitions) included, in the real server's
    order (its APIServices sorted by group priority, ``pkg/controlplane/apiserver/
    aggregator.go``)."""
    assert (await CoreApi(api).get_api_versions()).versions == ["v1"]
    groups = {
        g.name: g.preferred_version.group_version
        for g in (await ApisApi(api).get_api_versions()).groups
    }
    assert list(groups.items()) == [
        ("apps", "apps/v1"),
        ("events.k8s.io", "events.k8s.io/v1"),
        ("authentication.k8s.io", "authentication.k8s.io/v1"),
        ("authorization.k8s.io", "authorization.k8s.io/v1"),
        ("autoscaling", "autoscaling/v2"),
        ("batch", "batch/v1"),
        ("networking.k8s.io", "networking.k8s.io/v1"),
        ("policy", "policy/v1"),
        ("rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1"),
        ("storage.k8s.io", "storage.k8s.io/v1"),
        ("admissionregistration.k8s.io", "admissionregistration.k8s.io/v1"),
        ("apiextensions.k8s.io", "apiextensions.k8s.io/v1"),
        ("scheduling.k8s.io", "scheduling.k8s.io/v1"),
        ("coordination.k8s.io", "coordination.k8s.io/v1"),
        ("discovery.k8s.io", "discovery.k8s.io/v1"),
    ]
    assert (await AppsApi(api).get_api_group()).name == "apps"


async def test_resource_lists_describe_every_resource(api: ApiClient) -> None:
    """Group-version resource lists carry names, kinds, scope, verbs and short names."""
    core = {r.name: r for r in (await CoreV1Api(api).get_api_resources()).resources}
    assert {
        "pods",
        "services",
        "endpoints",
        "configmaps",
        "secrets",
        "namespaces",
        "nodes",
        "events",
    } <= set(core)
    assert core["pods"].kind == "Pod" and core["pods"].namespaced and "watch" in core["pods"].verbs
    assert core["nodes"].namespaced is False and core["pods"].short_names == ["po"]
    assert "pods/status" in core
    assert "configmaps/status" not in core  # only kinds with a status subresource list one
    assert "deletecollection" not in core["namespaces"].verbs  # as kube-apiserver
    apps = {r.name for r in (await AppsV1Api(api).get_api_resources()).resources}
    assert {"deployments", "replicasets", "statefulsets", "daemonsets"} <= apps
    leases = (await CoordinationV1Api(api).get_api_resources()).resources
    assert leases[0].name == "leases"


async def test_custom_resources_appear_in_discovery(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A registered custom resource shows up under /apis and its group version."""
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget", namespaced=False)
    async with http.get("/apis") as resp:
        assert "example.com" in [g["name"] for g in (await resp.json())["groups"]]
    async with http.get("/apis/example.com/v1") as resp:
        resources = (await resp.json())["resources"]
    assert resources[0] == {
        "name": "widgets",
        "singularName": "widget",
        "namespaced": False,
        "kind": "Widget",
        "verbs": [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ],
        "storageVersionHash": storage_version_hash("example.com", "v1", "Widget"),
    }


async def test_unknown_group_version_is_404(http: aiohttp.ClientSession) -> None:
    """A group or version the server does not serve answers a NotFound Status."""
    for path in ("/apis/example.com/v1", "/apis/example.com", "/api/v2", "/apis/batch/v2"):
        async with http.get(path) as resp:
            assert resp.status == 404
            assert (await resp.json())["reason"] == "NotFound"


async def test_openapi_v3_declares_server_side_field_validation(
    http: aiohttp.ClientSession,
) -> None:
    """/openapi/v3 points at per-group-version documents with PATCH fieldValidation (the
    query parameter cli-runtime's ``query_param_verifier_v3`` looks for; the real document
    declares it as a string with ``uniqueItems``)."""
    async with http.get("/openapi/v3") as resp:
        paths = (await resp.json())["paths"]
    assert {"api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1", "apis/batch/v1"} <= set(paths)
    async with http.get(paths["api/v1"]["serverRelativeURL"]) as resp:
        document = await resp.json()
    patch = document["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    validation = [p for p in patch["parameters"] if p["name"] == "fieldValidation"]
    schema = {"type": "string", "uniqueItems": True}
    assert validation == [{"name": "fieldValidation", "in": "query", "schema": schema}]


def test_the_fake_serves_the_shared_table_of_built_in_resources() -> None:
    """The client's well-known resources and the fake's served ones come from one table
    (``aioinformer._builtin_resources``): same kinds, scopes and names on both sides."""
    client = {(r.group, r.plural): r for r in BUILTIN_TABLE}
    for info in BUILTIN_RESOURCES:
        row = client[(info.group, info.plural)]
        if info.version in row.also_served:  # autoscaling/v1 HPAs, stored as v2
            assert info.storage_version == row.version
            continue
        assert (info.version, info.kind, info.namespaced) == (row.version, row.kind, row.namespaced)
        assert (info.singular_name, info.short_names) == (row.singular, row.short_names)
        parsed = Resource.parse(f"{info.api_version}/{info.plural}")
        assert (parsed.kind, parsed.namespaced) == (info.kind, info.namespaced)
        # kubectl's names: the plural alone is the core group's (``events``), a group's
        # resource is also ``plural.group`` (``events.events.k8s.io``).
        assert resolve_builtin_resource(f"{info.plural}.{info.group}".rstrip(".")) == parsed
    served = {(r.group, r.plural) for r in BUILTIN_RESOURCES}
    assert set(client) == served


async def test_status_on_a_kind_without_it_is_404_and_unsupported_verbs_are_405(
    http: aiohttp.ClientSession,
) -> None:
    """``/status`` exists only where the kind has a status subresource (a ConfigMap has
    none: 404 like any unknown path); DELETE on the namespace collection is 405, as on
    kube-apiserver, whose namespaces have no ``deletecollection``."""
    async with http.get("/api/v1/namespaces/default/configmaps/x/status") as resp:
        assert resp.status == 404
    async with http.delete("/api/v1/namespaces") as resp:
        assert resp.status == 405
        assert (await resp.json())["reason"] == "MethodNotAllowed"
