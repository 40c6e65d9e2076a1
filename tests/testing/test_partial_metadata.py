"""``PartialObjectMetadata`` content negotiation on the fake API server, for LIST, GET and
WATCH (what client-go's metadata client and metadata informers ask for).

Sources: kubernetes/apiserver ``pkg/endpoints/handlers/response.go`` (``doTransformObject``,
``asPartialObjectMetadata``, ``asPartialObjectMetadataList``, ``transformResponseObject``,
``watchEmbeddedEncoder``), ``handlers/rest.go`` (``AllowsMediaTypeTransform``),
``handlers/negotiation/negotiate.go``, ``handlers/get.go`` (a watch negotiates before it
starts), apimachinery ``pkg/api/meta/meta.go`` (``AsPartialObjectMetadata``) and client-go
``metadata/metadata.go`` (the ``Accept`` headers).
"""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson

from aioinformer.testing import FakeApiServer

from .watching import decode, raw_lines

SECRETS = "/api/v1/namespaces/default/secrets"
ONE_V1 = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
LIST_V1 = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
#: client-go's metadata client (``metadata.go``): protobuf first, JSON, then plain JSON.
CLIENT_GO_LIST = (
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
    f"{LIST_V1},application/json"
)
CLIENT_GO_WATCH = (
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
    f"{ONE_V1},application/json"
)
NOT_ACCEPTABLE = (
    "only the following media types are accepted: application/json, application/yaml, "
    "application/vnd.kubernetes.protobuf"
)


async def _json(response: aiohttp.ClientResponse) -> Any:
    return orjson.loads(await response.read())


def _secret(server: FakeApiServer, name: str, **labels: str) -> None:
    server.objects.create(
        "secrets",
        {"metadata": {"name": name, "labels": labels}, "data": {"password": "aHVudGVyMg=="}},
    )


async def test_a_list_is_the_metadata_of_each_item(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``asPartialObjectMetadataList``: the list's ``resourceVersion``, ``continue`` and
    ``remainingItemCount``, and each item as ``PartialObjectMetadata`` with its own kind and
    the whole ObjectMeta (managedFields included) — no ``data``, ``type`` or anything else;
    client-go's header (protobuf first) is answered in JSON; the ``Content-Type`` is plain
    ``application/json``."""
    for name in ("a", "b", "c"):
        _secret(fake_apiserver, name, app="web")
    params = {"limit": "2"}
    async with http.get(SECRETS, headers={"Accept": CLIENT_GO_LIST}, params=params) as resp:
        listed = await _json(resp)
        assert resp.content_type == "application/json"
    assert (listed["kind"], listed["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert listed["metadata"]["continue"] and listed["metadata"]["remainingItemCount"] == 1
    assert listed["metadata"]["resourceVersion"] == fake_apiserver.objects.resource_version
    first = listed["items"][0]
    assert set(first) == {"kind", "apiVersion", "metadata"}
    assert (first["kind"], first["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert first["metadata"]["labels"] == {"app": "web"}
    assert first["metadata"]["managedFields"][0]["operation"] == "Update"
    assert first["metadata"]["uid"] and first["metadata"]["resourceVersion"]


async def test_an_empty_list_has_items_and_v1beta1_names_both_levels(
    http: aiohttp.ClientSession, fake_apiserver: FakeApiServer
) -> None:
    """An empty list answers ``"items": []``, never null (``transformResponseObject``);
    ``v=v1beta1`` gives ``meta.k8s.io/v1beta1`` on the list and on every item
    (``metav1beta1.PartialObjectMetadataList``)."""
    async with http.get(SECRETS, headers={"Accept": LIST_V1}) as resp:
        assert (await _json(resp))["items"] == []
    _secret(fake_apiserver, "a")
    beta = LIST_V1.replace("v=v1", "v=v1beta1")
    async with http.get(SECRETS, headers={"Accept": beta}) as resp:
        listed = await _json(resp)
    assert listed["apiVersion"] == "meta.k8s.io/v1beta1"
    assert listed["items"][0]["apiVersion"] == "meta.k8s.io/v1beta1"
    async with http.get(
        f"{SECRETS}/a", headers={"Accept": ONE_V1.replace("v=v1", "v=v1beta1")}
    ) as r:
        assert (await _json(r))["apiVersion"] == "meta.k8s.io/v1beta1"


async def test_the_list_and_single_forms_must_match_the_answer(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """Asking a GET of one object for ``PartialObjectMetadataList`` (or a LIST for
    ``PartialObjectMetadata``) is 406 ``NotAcceptable`` (``asPartialObjectMetadata(List)``,
    ``errNotAcceptable``, naming the handler's Go type: the internal type of a built-in
    kind, ``Unstructured`` for a custom resource); errors are never converted (a 404 stays a
    ``Status``)."""
    _secret(fake_apiserver, "a")
    async with http.get(f"{SECRETS}/a", headers={"Accept": LIST_V1}) as resp:
        refused = await _json(resp)
    assert (resp.status, refused["reason"]) == (406, "NotAcceptable")
    assert refused["message"] == (
        "you requested PartialObjectMetadataList, but the requested object is not a list"
        " (*core.Secret)"
    )
    async with http.get(SECRETS, headers={"Accept": ONE_V1}) as resp:
        refused = await _json(resp)
    assert resp.status == 406
    assert refused["message"] == (
        "you requested PartialObjectMetadata, but the requested object is a list (*core.SecretList)"
    )
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
    widgets = "/apis/example.com/v1/namespaces/default/widgets"
    async with http.get(widgets, headers={"Accept": ONE_V1}) as resp:
        refused = await _json(resp)
    assert refused["message"].endswith("is a list (*unstructured.UnstructuredList)")
    async with http.get(f"{SECRETS}/missing", headers={"Accept": ONE_V1}) as resp:
        missing = await _json(resp)
    assert (resp.status, missing["kind"], missing["reason"]) == (404, "Status", "NotFound")


async def test_an_accept_the_server_cannot_serve_is_406(http: aiohttp.ClientSession) -> None:
    """A clause is usable only for ``as=Table|PartialObjectMetadata|PartialObjectMetadataList``
    of ``meta.k8s.io`` ``v1``/``v1beta1`` (``AllowsMediaTypeTransform``; an ``as=`` without
    ``g``/``v`` is skipped too); with no usable clause the answer is 406 listing the media
    types (``negotiation.NegotiateOutputMediaType``), for a LIST and before a WATCH starts
    (``handlers/get.go``); a plain ``application/json`` clause after them serves the whole
    object."""
    for accept in (
        "application/json;as=Foo;g=meta.k8s.io;v=v1",
        "application/json;as=PartialObjectMetadataList",
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v2",
        "application/json;as=PartialObjectMetadataList;g=example.com;v=v1",
    ):
        async with http.get(SECRETS, headers={"Accept": accept}) as resp:
            refused = await _json(resp)
        assert (resp.status, refused["reason"], refused["message"]) == (
            406,
            "NotAcceptable",
            NOT_ACCEPTABLE,
        ), accept
        params = {"watch": "1"}
        async with http.get(SECRETS, headers={"Accept": accept}, params=params) as resp:
            assert resp.status == 406, accept
    fallback = "application/json;as=Foo;g=meta.k8s.io;v=v1,application/json"
    async with http.get(SECRETS, headers={"Accept": fallback}) as resp:
        assert (await _json(resp))["kind"] == "SecretList"


async def test_a_watch_sends_each_object_as_its_metadata(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A watch with ``as=PartialObjectMetadata`` converts every event's object
    (``watchEmbeddedEncoder`` → ``doTransformObject``): ADDED, MODIFIED and DELETED carry
    ``PartialObjectMetadata``; a BOOKMARK is converted too and keeps its resourceVersion;
    an ``ERROR`` keeps its ``Status`` (a watch from a compacted resource version: 410)."""
    _secret(fake_apiserver, "a")
    rv = fake_apiserver.objects.resource_version
    params = {"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true"}
    async with http.get(SECRETS, headers={"Accept": CLIENT_GO_WATCH}, params=params) as watch:
        assert watch.content_type == "application/json"
        await fake_apiserver.requests.wait_for_watches(1)
        _secret(fake_apiserver, "b")
        fake_apiserver.objects.patch("secrets", "b", {"metadata": {"labels": {"x": "y"}}})
        fake_apiserver.objects.delete("secrets", "b")
        events = decode(await raw_lines(watch, 3))
        fake_apiserver.faults.compact()
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    for event in events:
        obj = event["object"]
        assert set(obj) == {"kind", "apiVersion", "metadata"}, obj
        assert (obj["kind"], obj["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
        assert obj["metadata"]["name"] == "b"
    assert events[1]["object"]["metadata"]["labels"] == {"x": "y"}
    params = {"watch": "1", "resourceVersion": rv}
    async with http.get(SECRETS, headers={"Accept": ONE_V1}, params=params) as expired:
        [error] = decode(await raw_lines(expired))
    assert error["type"] == "ERROR"
    assert (error["object"]["kind"], error["object"]["code"]) == ("Status", 410)


async def test_a_streaming_list_ends_with_a_converted_bookmark(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``sendInitialEvents=true`` with ``as=PartialObjectMetadata``: the initial ADDED events
    and the ``k8s.io/initial-events-end`` BOOKMARK are all ``PartialObjectMetadata``; the
    bookmark keeps its resourceVersion and annotation (a metadata informer's watch-list)."""
    _secret(fake_apiserver, "a")
    _secret(fake_apiserver, "b")
    params = {
        "watch": "1",
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
    }
    async with http.get(SECRETS, headers={"Accept": ONE_V1}, params=params) as watch:
        events = decode(await raw_lines(watch, 3))
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    bookmark = events[2]["object"]
    assert (bookmark["kind"], bookmark["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert bookmark["metadata"]["resourceVersion"] == fake_apiserver.objects.resource_version
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert all(set(e["object"]) == {"kind", "apiVersion", "metadata"} for e in events)


async def test_a_watch_asking_the_list_form_gets_whole_objects(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A watch that asks ``as=PartialObjectMetadataList`` negotiates (the transform is
    allowed on every endpoint) but each object fails to convert (it is not a list), and the
    real server then sends the object as it is (``watchEmbeddedEncoder.doEncode``: "failed to
    transform object", ``result = obj``) — which is why metadata clients watch with
    ``as=PartialObjectMetadata``."""
    rv = fake_apiserver.objects.resource_version
    params = {"watch": "1", "resourceVersion": rv}
    async with http.get(SECRETS, headers={"Accept": LIST_V1}, params=params) as watch:
        assert watch.status == 200
        await fake_apiserver.requests.wait_for_watches(1)
        _secret(fake_apiserver, "a")
        [event] = decode(await raw_lines(watch, 1))
    assert event["object"]["kind"] == "Secret" and event["object"]["data"]


async def test_the_request_log_keeps_the_accept_header(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``server.requests`` records each request's ``Accept`` header, so a test can see what a
    client asked for."""
    async with http.get(SECRETS, headers={"Accept": CLIENT_GO_LIST}) as resp:
        assert resp.status == 200
    [record] = [r for r in fake_apiserver.requests.records if r.verb == "list"]
    assert record.accept == CLIENT_GO_LIST
