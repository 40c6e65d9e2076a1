"""Watch streams and gzip (issue 10, item 4).

From Kubernetes 1.37 a watch-list response to a request with ``Accept-Encoding: gzip`` is a
stream of many gzip members (RFC 1952 allows a file of several members; the API server
compresses each flushed chunk of the stream on its own). aiohttp before 3.14 decoded only
the first member and silently dropped the rest — the ``k8s.io/initial-events-end`` bookmark
with it. The client therefore asks for ``identity`` on watches, and requires an aiohttp that
decodes every member should a server or proxy compress anyway.

The fake API server does not compress, so these tests serve the stream from a small aiohttp
application of their own.
"""

from __future__ import annotations

import gzip
import importlib.metadata
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import orjson
import pytest
from aiohttp import web
from kubernetes_asyncio.client import ApiClient, Configuration
from packaging.requirements import Requirement

from aioinformer import KubeClient
from aioinformer._listwatch import ListOptions, WatchEventType
from aioinformer._wire._transport import KubeListerWatcher

from ._web import serve_aiohttp
from .support import CONFIGMAPS, configmap

INITIAL_EVENTS_END = "k8s.io/initial-events-end"


def watch_lines(n: int) -> list[bytes]:
    """``n`` ADDED events then the initial-events-end bookmark, one JSON line each."""
    lines = []
    for i in range(n):
        obj = configmap(f"cm-{i}")
        obj["metadata"]["resourceVersion"] = str(i + 1)
        lines.append(orjson.dumps({"type": "ADDED", "object": obj}) + b"\n")
    bookmark = {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": str(n), "annotations": {INITIAL_EVENTS_END: "true"}},
    }
    lines.append(orjson.dumps({"type": "BOOKMARK", "object": bookmark}) + b"\n")
    return lines


@dataclass
class GzipWatchServer:
    """Answers every request with a watch stream of one gzip member per line, whatever the
    request's ``Accept-Encoding`` (like a compressing proxy), and records the headers."""

    lines: list[bytes]
    accept_encodings: list[str] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.accept_encodings.append(request.headers.get("Accept-Encoding", ""))
        response = web.StreamResponse(
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}
        )
        await response.prepare(request)
        for line in self.lines:
            await response.write(gzip.compress(line))  # one complete gzip member per write
        await response.write_eof()
        return response


@pytest.fixture
async def gzip_server() -> AsyncIterator[tuple[GzipWatchServer, KubeClient]]:
    server = GzipWatchServer(watch_lines(50))
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", server.handle)
    async with serve_aiohttp(app) as url, KubeClient(ApiClient(Configuration(host=url))) as client:
        yield server, client


async def test_watches_ask_for_an_uncompressed_stream(
    gzip_server: tuple[GzipWatchServer, KubeClient],
) -> None:
    """A watch (a streaming list included) is requested with ``Accept-Encoding: identity``."""
    server, client = gzip_server
    stream = await KubeListerWatcher(client, CONFIGMAPS).watch(
        ListOptions(send_initial_events=True, allow_watch_bookmarks=True)
    )
    await stream.aclose()
    assert server.accept_encodings == ["identity"]


async def test_a_multi_member_gzip_watch_stream_is_read_to_its_end(
    gzip_server: tuple[GzipWatchServer, KubeClient],
) -> None:
    """Every event of a stream of 51 gzip members arrives, the final initial-events-end
    bookmark included (aiohttp < 3.14 stopped after the first member)."""
    _, client = gzip_server
    stream = await KubeListerWatcher(client, CONFIGMAPS).watch(ListOptions())
    events = [event async for event in stream]
    assert [e.object["metadata"]["name"] for e in events[:-1]] == [f"cm-{i}" for i in range(50)]
    assert events[-1].type is WatchEventType.BOOKMARK
    assert events[-1].object["metadata"]["annotations"] == {INITIAL_EVENTS_END: "true"}


def test_the_package_requires_an_aiohttp_that_decodes_every_gzip_member() -> None:
    """The installed metadata asks for aiohttp >= 3.14, and that is what is installed."""
    (aiohttp_requirement,) = [
        Requirement(r)
        for r in importlib.metadata.requires("aioinformer") or []
        if Requirement(r).name == "aiohttp"
    ]
    assert "3.13.9" not in aiohttp_requirement.specifier
    assert "3.14.0" in aiohttp_requirement.specifier
    assert importlib.metadata.version("aiohttp") in aiohttp_requirement.specifier
