"""The OpenAPI documents: their shape, and kubectl 1.32 ``explain`` and ``apply`` reading them.

What a real server publishes: kube-openapi's ``/openapi/v3`` discovery and group-version
documents (``components.schemas`` with ``x-kubernetes-group-version-kind``, references as
``allOf``, PATCH operations declaring ``fieldValidation``) and ``/openapi/v2``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web

from aioinformer.testing._apiserver._http._openapi import Endpoint, OpenAPIDocuments, v2_acceptable

from .tiny_server import KUBECTL, NO_KUBECTL, Kubectl, TinyServer, status

WIDGET_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "description": "What the widget should be.",
            "properties": {"size": {"type": "integer", "description": "How big it is."}},
        }
    },
}
ENDPOINTS = [
    Endpoint("", "v1", "pods", "Pod", True, ("status",)),
    Endpoint("", "v1", "configmaps", "ConfigMap", True),
    Endpoint("", "v1", "namespaces", "Namespace", False, ("status",)),
    Endpoint("apps", "v1", "deployments", "Deployment", True, ("status", "scale")),
    Endpoint("example.com", "v1", "widgets", "Widget", True, custom=True, schema=WIDGET_SCHEMA),
]


@pytest.fixture(scope="module")
def docs() -> OpenAPIDocuments:
    return OpenAPIDocuments(ENDPOINTS, version="v1.37.0")


def _load(data: bytes | None) -> dict[str, Any]:
    assert data is not None
    loaded: dict[str, Any] = orjson.loads(data)
    return loaded


def _walk(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def test_v3_discovery_points_at_hashed_documents(docs: OpenAPIDocuments) -> None:
    """kube-openapi ``handler3``: ``/openapi/v3`` lists each group version with a
    ``serverRelativeURL`` whose ``hash`` is the document's SHA-512 ETag (upper-case hex)."""
    root = _load(docs.v3_root())
    assert sorted(root["paths"]) == ["api/v1", "apis/apps/v1", "apis/example.com/v1"]
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    digest = hashlib.sha512(docs.v3("apis/apps/v1") or b"").hexdigest().upper()
    assert url == f"/openapi/v3/apis/apps/v1?hash={digest}"
    assert docs.v3("apis/batch/v1") is None


def test_v3_schemas_are_published_as_real(docs: OpenAPIDocuments) -> None:
    """A group version's document holds the schemas its operations use: the kind with its
    ``x-kubernetes-group-version-kind``, references as ``allOf`` beside a description,
    ``IntOrString`` as a ``oneOf`` (apimachinery ``OpenAPIV3OneOfTypes``), and none of the
    JSON Schema conversion's additions (``null`` types, ``enum`` on apiVersion/kind)."""
    document = _load(docs.v3("apis/apps/v1"))
    assert document["openapi"].startswith("3.")
    schemas = document["components"]["schemas"]
    deployment = schemas["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}
    ]
    assert deployment["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    assert "enum" not in deployment["properties"]["kind"]
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["oneOf"] == [
        {"type": "integer"},
        {"type": "string"},
    ]
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert "io.k8s.api.autoscaling.v1.Scale" in schemas  # the scale subresource
    for key, value in _walk(document):
        assert not (key == "type" and isinstance(value, list)), value
        if key == "$ref":
            assert value.removeprefix("#/components/schemas/") in schemas, value


def test_v3_patch_operations_declare_field_validation(docs: OpenAPIDocuments) -> None:
    """cli-runtime ``query_param_verifier_v3.go``: kubectl leaves validation to the server
    when the kind's PATCH operation lists the ``fieldValidation`` query parameter; paths
    carry ``x-kubernetes-action`` and operation ids as the apiserver names them."""
    paths = _load(docs.v3("apis/apps/v1"))["paths"]
    item = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
    patch = item["patch"]
    assert patch["operationId"] == "patchAppsV1NamespacedDeployment"
    assert patch["x-kubernetes-action"] == "patch"
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "apps",
        "kind": "Deployment",
        "version": "v1",
    }
    assert {"name": "fieldValidation", "in": "query"}.items() <= patch["parameters"][2].items()
    assert "application/apply-patch+yaml" in patch["requestBody"]["content"]
    scale = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"]
    assert scale["x-kubernetes-group-version-kind"]["kind"] == "Scale"
    listing = paths["/apis/apps/v1/deployments"]["get"]
    assert listing["operationId"] == "listAppsV1DeploymentForAllNamespaces"
    core = _load(docs.v3("api/v1"))["paths"]["/api/v1/namespaces/{name}"]
    assert core["get"]["operationId"] == "readCoreV1Namespace"


def test_custom_resources_and_v2(docs: OpenAPIDocuments) -> None:
    """apiextensions' ``openapi/builder``: a CRD version's schema under
    ``com.example.v1.Widget`` with apiVersion, kind and metadata added; ``/openapi/v2`` is
    Swagger 2.0 with ``#/definitions/`` references beside their descriptions."""
    widget = _load(docs.v3("apis/example.com/v1"))["components"]["schemas"]
    assert set(widget["com.example.v1.Widget"]["properties"]) == {
        "apiVersion",
        "kind",
        "metadata",
        "spec",
    }
    assert "com.example.v1.WidgetList" in widget
    v2 = _load(docs.v2())
    assert v2["swagger"] == "2.0" and v2["info"]["version"] == "v1.37.0"
    metadata = v2["definitions"]["io.k8s.api.core.v1.Pod"]["properties"]["metadata"]
    assert metadata["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert v2["definitions"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {
        "format": "int-or-string",
        "type": "string",
    }
    assert v2_acceptable("application/json") and v2_acceptable(None)
    assert not v2_acceptable("application/com.github.proto-openapi.spec.v2@v1.0+protobuf")


# --- kubectl against a tiny server serving the documents


def _discovery(endpoints: list[Endpoint]) -> dict[str, Any]:
    verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
    out: dict[str, Any] = {
        "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []},
        "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    }
    for e in endpoints:
        gv = f"{e.group}/{e.version}" if e.group else e.version
        resource = {"name": e.plural, "singularName": e.kind.lower(), "namespaced": e.namespaced}
        listed = out.setdefault(
            f"/{e.gv_path}", {"kind": "APIResourceList", "groupVersion": gv, "resources": []}
        )
        listed["resources"].append({**resource, "kind": e.kind, "verbs": verbs})
        groups = out["/apis"]["groups"]
        if e.group and all(g["name"] != e.group for g in groups):
            version = {"groupVersion": gv, "version": e.version}
            groups.append({"name": e.group, "versions": [version], "preferredVersion": version})
    return out


class ApiWithDocs:
    """Discovery, the OpenAPI documents (or none), and one stored Deployment for apply."""

    def __init__(self, docs: OpenAPIDocuments | None) -> None:
        self.docs = docs
        self.discovery = _discovery(ENDPOINTS)
        self.stored: dict[str, Any] | None = None
        self.patches: list[bytes] = []

    async def __call__(self, request: web.Request, body: bytes) -> web.StreamResponse:
        path = request.path
        if path in self.discovery:
            return web.json_response(self.discovery[path])
        document = None
        if self.docs is not None and path == "/openapi/v3":
            document = self.docs.v3_root()
        elif self.docs is not None and path.startswith("/openapi/v3/"):
            document = self.docs.v3(path.removeprefix("/openapi/v3/"))
        if document is not None:
            return web.Response(body=document, content_type="application/json")
        if path.startswith("/apis/apps/v1/namespaces/default/deployments"):
            return self._deployment(request.method, body)
        return status(404, "NotFound", "the server could not find the requested resource")

    def _deployment(self, method: str, body: bytes) -> web.StreamResponse:
        if method == "GET" and self.stored is None:
            return status(404, "NotFound", 'deployments.apps "web" not found')
        if method == "POST":
            self.stored = {**json.loads(body), "metadata": {**json.loads(body)["metadata"]}}
            return web.json_response(self.stored, status=201)
        if method == "PATCH":
            self.patches.append(body)
        return web.json_response(self.stored)


MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
{containers}
"""


def _manifest(*containers: str) -> str:
    body = "".join(
        f"      - {{name: {c}, image: {c}:1, env: [{{name: A, value: a}}]}}\n" for c in containers
    )
    return MANIFEST.format(containers=body)


@pytest.mark.skipif(KUBECTL is None, reason=NO_KUBECTL)
async def test_kubectl_explain_reads_the_v3_documents(
    docs: OpenAPIDocuments, tmp_path: Path
) -> None:
    """``kubectl explain`` (1.32, OpenAPI v3 by default) finds the kind by its GVK and walks
    the field path through ``allOf`` references, for built-in and custom kinds."""
    async with TinyServer(ApiWithDocs(docs)) as server:
        kubectl = Kubectl(server.url, tmp_path)
        replicas = await kubectl.out("explain", "deployment.spec.replicas")
        surge = await kubectl.out("explain", "deployments.spec.strategy.rollingUpdate")
        widget = await kubectl.out("explain", "widgets.spec.size")
    assert "GROUP:      apps\nKIND:       Deployment\nVERSION:    v1" in replicas
    assert "FIELD: replicas <integer>" in replicas
    assert "Number of desired pods." in replicas
    assert "maxSurge\t<IntOrString>" in surge
    assert "KIND:       Widget" in widget and "FIELD: size <integer>" in widget
    assert "How big it is." in widget


@pytest.mark.skipif(KUBECTL is None, reason=NO_KUBECTL)
async def test_kubectl_apply_builds_the_same_patch_from_the_documents(
    docs: OpenAPIDocuments, tmp_path: Path
) -> None:
    """Client-side ``kubectl apply`` of a changed manifest takes the patch strategies and
    merge keys from the v3 schema when the server publishes it (else, validation off, from
    its compiled-in types): the three-way strategic merge patch must come out the same."""
    patches = []
    for published in (docs, None):
        home = tmp_path / ("with-docs" if published else "without")
        home.mkdir()
        manifest = home / "web.yaml"
        handler = ApiWithDocs(published)
        async with TinyServer(handler) as server:
            kubectl = Kubectl(server.url, home)
            validate = "--validate=strict" if published else "--validate=false"
            manifest.write_text(_manifest("app", "proxy"))
            await kubectl.out("apply", validate, "-f", str(manifest))
            manifest.write_text(_manifest("app"))
            await kubectl.out("apply", validate, "-f", str(manifest))
        assert len(handler.patches) == 1
        patches.append(json.loads(handler.patches[0]))
        read = {r.path for r in server.requests}
        assert ("/openapi/v3/apis/apps/v1" in read) == (published is not None)
    with_docs, without = patches
    assert with_docs == without
    containers = with_docs["spec"]["template"]["spec"]
    assert containers["$setElementOrder/containers"] == [{"name": "app"}]
    assert {"$patch": "delete", "name": "proxy"} in containers["containers"]
