"""Metadata-only informers (issue 22): ``factory.for_resource(..., metadata_only=True)`` and
``KubeListerWatcher(metadata_only=True)``.

They ask as client-go's metadata client does (``k8s.io/client-go/metadata/metadata.go``:
``as=PartialObjectMetadataList`` for lists, ``as=PartialObjectMetadata`` for watches, a plain
``application/json`` clause last), so the server sends each object's metadata only; a server
that answers whole objects anyway (client-go re-decodes those as ``PartialObjectMetadata``),
or refuses with 406, is read in full and cut down, with one WARNING.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import orjson
import pytest
from aiohttp import web

import aioinformer
from aioinformer import ListOptions, Resource, SharedIndexInformer, SharedInformerFactory
from aioinformer._wire._metadata import LIST_ACCEPT, WATCH_ACCEPT, MetadataNegotiation
from aioinformer.errors import ApiError
from aioinformer.lowlevel import KubeListerWatcher
from aioinformer.testing import FakeApiServer, MemorySource

from .support import FAST_WATCH
from .testing.tiny_server import TinyServer

SECRETS = Resource.parse("v1/secrets")
PARTIAL = {"kind", "apiVersion", "metadata"}


def secret(name: str, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "data": {"password": "aHVudGVyMg=="},
    }


async def until(informer: SharedIndexInformer, holds: Callable[[], bool]) -> None:
    """Wait for the informer's cache to satisfy ``holds`` (re-checked on each event)."""
    with anyio.fail_after(10):
        async for _ in informer.events():
            if holds():
                return


async def test_a_metadata_only_informer_of_secrets_holds_no_data(
    fake_apiserver: FakeApiServer,
) -> None:
    """The issue's acceptance: a metadata-only informer over Secrets caches
    ``PartialObjectMetadata`` (names, labels, resource versions, no ``data``), follows
    changes and deletions, and the server saw ``as=PartialObjectMetadataList`` on the list
    and ``as=PartialObjectMetadata`` on the watch (its request log)."""
    fake_apiserver.objects.create("secrets", secret("db", app="web"))
    async with aioinformer.connect(server=fake_apiserver.url) as client:
        factory = SharedInformerFactory(client, watch=FAST_WATCH)
        secrets = factory.for_resource("secrets", metadata_only=True)
        async with factory:
            with anyio.fail_after(10):
                assert await factory.wait_for_cache_sync() == {SECRETS: True}
            [cached] = secrets.lister().list()
            assert set(cached) == PARTIAL
            assert (cached["kind"], cached["apiVersion"]) == (
                "PartialObjectMetadata",
                "meta.k8s.io/v1",
            )
            assert cached["metadata"]["labels"] == {"app": "web"}
            fake_apiserver.objects.create("secrets", secret("api"))
            fake_apiserver.objects.patch("secrets", "db", {"metadata": {"labels": {"v": "2"}}})
            fake_apiserver.objects.delete("secrets", "api")

            def caught_up() -> bool:
                db = secrets.lister().get("db", "default")
                return db is not None and db["metadata"]["labels"].get("v") == "2"

            await until(secrets, caught_up)
            assert secrets.lister().get("api", "default") is None
            assert all(set(o) == PARTIAL for o in secrets.lister().list())
    requests = fake_apiserver.requests.records
    lists = [r for r in requests if r.resource == "secrets" and r.verb == "list"]
    watches = [r for r in requests if r.resource == "secrets" and r.verb == "watch"]
    assert lists and all("as=PartialObjectMetadataList" in r.accept for r in lists)
    assert watches and all(r.accept == WATCH_ACCEPT for r in watches)
    assert lists[0].accept == LIST_ACCEPT


async def test_full_and_metadata_only_informers_of_one_resource_are_two(
    fake_apiserver: FakeApiServer,
) -> None:
    """A factory keeps a resource's full informer and its metadata-only one apart (two
    caches, named apart, each in the statistics), and starts and syncs both."""
    fake_apiserver.objects.create("secrets", secret("db"))
    async with aioinformer.connect(server=fake_apiserver.url) as client:
        factory = SharedInformerFactory(client, watch=FAST_WATCH)
        full = factory.for_resource("secrets")
        metadata = factory.for_resource("v1/secrets", metadata_only=True)
        assert factory.for_resource(SECRETS, metadata_only=True) is metadata
        assert full is not metadata and factory.for_resource("secrets") is full
        assert (full.name, metadata.name) == ("v1/secrets", "v1/secrets (metadata)")
        async with factory:
            with anyio.fail_after(10):
                assert await factory.wait_for_cache_sync() == {SECRETS: True}
            whole, cut = full.lister().get("db", "default"), metadata.lister().get("db", "default")
            assert whole is not None and whole["data"] == {"password": "aHVudGVyMg=="}
            assert cut is not None and "data" not in cut
            stats = factory.statistics()
        assert factory.informers == {SECRETS: full}
        assert factory.metadata_informers == {SECRETS: metadata}
        assert set(stats.informers) == set(stats.metadata_informers) == {SECRETS}


async def test_a_memory_source_serves_metadata_only_informers() -> None:
    """``MemorySource.lister_watcher`` takes ``metadata_only`` as a factory passes it: lists
    and watches answer ``PartialObjectMetadata``."""
    source = MemorySource()
    source.create("secrets", secret("a"))
    factory = SharedInformerFactory(lister_watcher=source.lister_watcher)
    informer = factory.for_resource("secrets", metadata_only=True)
    async with factory:
        with anyio.fail_after(10):
            await factory.wait_for_cache_sync()
        source.create("secrets", secret("b"))
        await until(informer, lambda: informer.lister().get("b", "default") is not None)
        assert all(set(o) == PARTIAL for o in informer.lister().list())


# -- servers that do not serve PartialObjectMetadata ------------------------------------------


def _full_secret(name: str, rv: str) -> dict[str, Any]:
    body = secret(name)
    body["metadata"]["resourceVersion"] = rv
    return {"kind": "Secret", "apiVersion": "v1", **body}


def _ignoring_server(refuse: bool) -> Callable[[web.Request, bytes], Any]:
    """A server that answers whole objects whatever the ``Accept`` (an old or minimal API
    server), or (``refuse``) one that answers 406 to any ``as=`` and whole objects to the
    rest."""

    async def answer(request: web.Request, _: bytes) -> web.StreamResponse:
        accept = request.headers.get("Accept", "")
        if refuse and "as=" in accept:
            status = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": "NotAcceptable",
                "message": "only the following media types are accepted: application/json",
                "code": 406,
            }
            return web.json_response(status, status=406)
        if request.query.get("watch") in ("1", "true"):
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            await response.prepare(request)
            event = {"type": "ADDED", "object": _full_secret("b", "11")}
            await response.write(orjson.dumps(event) + b"\n")
            bookmark = {"type": "BOOKMARK", "object": {"kind": "Secret", "apiVersion": "v1",
                        "metadata": {"resourceVersion": "12"}}}  # fmt: skip
            await response.write(orjson.dumps(bookmark) + b"\n")
            return response
        listed = {
            "kind": "SecretList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "10"},
            "items": [_full_secret("a", "10")],
        }
        return web.json_response(listed)

    return answer


@pytest.mark.parametrize("refuse", [False, True], ids=["whole-objects", "406"])
async def test_a_server_without_the_metadata_form_is_read_in_full_and_cut_down(
    refuse: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that ignores ``as=`` (answering whole objects, as client-go's fallback
    clause allows) or refuses it with 406: the lister-watcher says so in one WARNING, after
    a 406 asks plain JSON (once more, then from then on), and hands out
    ``PartialObjectMetadata`` all the same — a LIST's items and each watch event's object
    cut down to their metadata (``meta.AsPartialObjectMetadata``), bookmarks included."""
    caplog.set_level(logging.WARNING, logger="aioinformer")
    async with (
        TinyServer(_ignoring_server(refuse)) as server,
        aioinformer.connect(server=server.url) as client,
    ):
        lw = KubeListerWatcher(client, SECRETS, namespace="default", metadata_only=True)
        listed = await lw.list(ListOptions())
        stream = await lw.watch(ListOptions(resource_version=listed.resource_version))
        try:
            with anyio.fail_after(10):
                events = [await anext(stream), await anext(stream)]
        finally:
            await stream.aclose()
        await lw.list(ListOptions())
    assert listed.resource_version == "10"
    assert [set(o) for o in listed.items] == [PARTIAL]
    assert listed.items[0]["metadata"]["name"] == "a"
    assert [(e.type, set(e.object)) for e in events] == [
        ("ADDED", PARTIAL),
        ("BOOKMARK", PARTIAL),
    ]
    assert events[1].object["metadata"]["resourceVersion"] == "12"
    warnings = [r for r in caplog.records if "metadata-only" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    accepts = [r.accept for r in server.requests if r.path.endswith("/secrets")]
    if refuse:
        assert accepts == [LIST_ACCEPT, "application/json", "application/json", "application/json"]
    else:
        assert accepts == [LIST_ACCEPT, WATCH_ACCEPT, LIST_ACCEPT]


def test_the_negotiation_passes_served_answers_untouched() -> None:
    """What a serving server sends passes through as it came (a prefix check, no decoding):
    ``PartialObjectMetadataList`` bodies, and watch lines whose object is
    ``PartialObjectMetadata`` or an ``ERROR``'s Status; other errors than 406 are not a
    refusal."""
    negotiation = MetadataNegotiation("v1/secrets")
    body = orjson.dumps(
        {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "items": []}
    )
    assert negotiation.list_body(body) is body
    line = (
        b'{"type":"MODIFIED","object":{"kind":"PartialObjectMetadata",'
        b'"apiVersion":"meta.k8s.io/v1","metadata":{"name":"a"}}}'
    )
    assert negotiation.watch_line(line) is line
    error = b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","code":410}}'
    assert negotiation.watch_line(error) is error
    assert negotiation.watch_line(b"not json") == b"not json"
    assert not negotiation.refusal(ApiError(code=403, reason="Forbidden", message="no"))
    assert negotiation.list_accept == LIST_ACCEPT and not negotiation.refused
