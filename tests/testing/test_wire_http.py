"""Wire formats of the running server: protobuf bodies, Tables, metadata-only answers,
the OpenAPI documents and the served version.

Each test states the real server's behaviour and where it is specified.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson

from aioinformer.testing import FakeApiServer

from .test_protobuf import b, envelope
from .valid import pod
from .watching import decode, raw_lines

PROTOBUF = {"Content-Type": "application/vnd.kubernetes.protobuf"}
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
PODS = "/api/v1/namespaces/default/pods"


async def _json(response: aiohttp.ClientResponse) -> Any:
    return orjson.loads(await response.read())


def _configmap_protobuf(name: str, **data: str) -> bytes:
    """A ConfigMap as kubectl's typed client sends it (``k8s.io/api/core/v1``
    ``generated.proto``: ``metadata`` 1 with ``name`` 1; ``data`` 2, a map of entries)."""
    entries = b"".join(b(2, b(1, key) + b(2, value)) for key, value in data.items())
    return envelope("v1", "ConfigMap", b(1, b(1, name)) + entries)


async def test_protobuf_bodies_are_decoded_and_run_the_same_rules(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``application/vnd.kubernetes.protobuf`` bodies (kubectl's typed commands) decode to
    the object (``runtime/serializer/protobuf``) and are then created like a JSON body; a
    custom resource cannot be protobuf (400, ``Unstructured`` has no protobuf form); a
    content type the server has no serializer for is 415
    (``NegotiateInputSerializerForMediaType``)."""
    body = _configmap_protobuf("c", a="b")
    async with http.post("/api/v1/namespaces/default/configmaps", data=body, headers=PROTOBUF) as r:
        assert r.status == 201
        created = await _json(r)
    assert created["data"] == {"a": "b"} and created["metadata"]["namespace"] == "default"
    assert fake_apiserver.objects.get("configmaps", "c")["data"] == {"a": "b"}
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
    url = "/apis/example.com/v1/namespaces/default/widgets"
    async with http.post(url, data=body, headers=PROTOBUF) as resp:
        assert resp.status == 400
    text = {"Content-Type": "text/plain"}
    async with http.post("/api/v1/namespaces/default/configmaps", data=b"x", headers=text) as r:
        assert r.status == 415
        assert (await _json(r))["reason"] == "UnsupportedMediaType"


async def test_tables_for_get_list_and_watch(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``Accept: …;as=Table;v=v1;g=meta.k8s.io`` (what ``kubectl get`` sends) answers a
    ``meta.k8s.io/v1`` Table with the kind's columns (``pkg/printers/internalversion``) for a
    GET and a LIST; a watch sends one Table per event, the column definitions only in the
    first (``watchEmbeddedEncoder``); ``includeObject=Object`` puts the object in the row."""
    fake_apiserver.objects.create("pods", pod("a"))
    async with http.get(f"{PODS}/a", headers=TABLE) as resp:
        table = await _json(resp)
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names[:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert table["rows"][0]["cells"][:3] == ["a", "0/1", "Pending"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    async with http.get(PODS, headers=TABLE, params={"includeObject": "Object"}) as resp:
        listed = await _json(resp)
    assert listed["rows"][0]["object"]["spec"]["containers"][0]["name"] == "app"
    assert listed["metadata"]["resourceVersion"] == fake_apiserver.objects.resource_version
    params = {"watch": "1", "resourceVersion": fake_apiserver.objects.resource_version}
    async with http.get(PODS, headers=TABLE, params=params) as watch:
        fake_apiserver.objects.create("pods", pod("b"))
        fake_apiserver.objects.create("pods", pod("c"))
        first, second = decode(await raw_lines(watch, 2))
    assert first["type"] == second["type"] == "ADDED"
    assert first["object"]["kind"] == "Table" and first["object"]["columnDefinitions"]
    assert second["object"]["columnDefinitions"] is None
    assert second["object"]["rows"][0]["cells"][0] == "c"


async def test_partial_object_metadata_for_metadata_clients(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``as=PartialObjectMetadata`` / ``PartialObjectMetadataList`` (client-go's metadata
    client) answer the metadata only; asking the single form of a list is 406
    (``asPartialObjectMetadata``)."""
    fake_apiserver.objects.create("pods", pod("a", labels={"app": "web"}))
    one = {"Accept": "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"}
    many = {"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"}
    async with http.get(f"{PODS}/a", headers=one) as resp:
        partial = await _json(resp)
    assert partial["kind"] == "PartialObjectMetadata" and "spec" not in partial
    assert partial["metadata"]["labels"] == {"app": "web"}
    async with http.get(PODS, headers=many) as resp:
        listed = await _json(resp)
    assert listed["kind"] == "PartialObjectMetadataList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    async with http.get(PODS, headers=one) as resp:
        assert resp.status == 406


async def test_openapi_documents_and_version_name_one_release(
    http: aiohttp.ClientSession,
) -> None:
    """``/version``, the OpenAPI v3 documents and ``/openapi/v2`` report the one Kubernetes
    release the fake serves (the newest of the published schemas); v3 documents carry the
    kinds' schemas (``kubectl explain`` walks them); ``/openapi/v2`` is JSON for a JSON
    ``Accept`` and 406 for kubectl's protobuf-only one."""
    async with http.get("/version") as resp:
        version = await _json(resp)
    served = f"v{version['major']}.{version['minor']}.0"
    assert version["gitVersion"].startswith(served) and int(version["minor"]) >= 36
    async with http.get("/openapi/v3") as resp:
        url = (await _json(resp))["paths"]["apis/apps/v1"]["serverRelativeURL"]
    async with http.get(url) as resp:
        document = await _json(resp)
    assert document["info"]["version"] == served
    replicas = document["components"]["schemas"]["io.k8s.api.apps.v1.DeploymentSpec"]
    assert replicas["properties"]["replicas"]["type"] == "integer"
    async with http.get("/openapi/v2", headers={"Accept": "application/json"}) as resp:
        v2 = await _json(resp)
    assert v2["swagger"] == "2.0" and v2["info"]["version"] == served
    assert "io.k8s.api.core.v1.Pod" in v2["definitions"]
    kubectl = {"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}
    async with http.get("/openapi/v2", headers=kubectl) as resp:
        assert resp.status == 406
