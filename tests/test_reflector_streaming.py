"""The reflector's optional streaming list (``sendInitialEvents``), with its LIST fallbacks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from aioinformer import WatchConfig
from aioinformer._listwatch import ListOptions, ListResult, WatchEvent, WatchEventType, WatchStream
from aioinformer._reflector import INITIAL_EVENTS_END
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.errors import ExpiredError
from aioinformer.testing import FakeApiServer, FakeClock
from aioinformer.testing.pytest_plugin import _serving as serving

from .support import CONFIGMAPS, FAST_BACKOFF, configmap, kube_client, running_pipeline

STREAMING = WatchConfig(backoff=FAST_BACKOFF, streaming_list=True)


@pytest.fixture
async def server() -> AsyncIterator[FakeApiServer]:
    async with serving(FakeApiServer(bookmark_interval=60)) as fake:
        for i in range(3):
            fake.objects.create("configmaps", configmap(f"cm-{i}"))
        yield fake


def plain_watch(record: Any) -> bool:
    """A successful watch that is not a streaming list."""
    return (
        record.verb == "watch" and record.status == 200 and "sendInitialEvents" not in record.query
    )


def calls(server: FakeApiServer, start: int = 0) -> list[tuple[str, dict[str, str], int]]:
    return [
        (r.verb, r.query, r.status)
        for r in server.requests.records[start:]
        if r.verb in ("list", "watch") and r.resource == "configmaps"
    ]


async def test_streaming_list_syncs_without_a_list_and_keeps_the_stream(
    server: FakeApiServer,
) -> None:
    """The first sync is a watch with sendInitialEvents; the same stream then carries changes."""
    async with running_pipeline(server, config=STREAMING) as pipeline:
        await pipeline.converged()
        server.objects.create("configmaps", configmap("later"))
        await pipeline.converged()
        stats = pipeline.reflector.statistics()
    requests = calls(server)
    assert requests == [
        (
            "watch",
            {
                "resourceVersionMatch": "NotOlderThan",
                "timeoutSeconds": requests[0][1]["timeoutSeconds"],
                "allowWatchBookmarks": "true",
                "sendInitialEvents": "true",
                "watch": "1",
            },
            200,
        )
    ]
    assert stats.lists == 1 and stats.watches == 1 and stats.streaming_list_fallbacks == 0


async def test_streaming_relist_resumes_at_the_last_resource_version(
    server: FakeApiServer,
) -> None:
    """After a watch error, the next streaming list asks for the last RV, NotOlderThan."""
    async with running_pipeline(server, config=STREAMING) as pipeline:
        await pipeline.converged()
        last = pipeline.reflector.last_sync_resource_version
        start = len(server.requests.records)
        server.faults.inject_watch_error(500, "InternalError")
        with anyio.fail_after(10):
            record = await server.requests.wait_for(lambda r: r.verb == "watch", start=start)
        await pipeline.converged()
    assert record.query["resourceVersion"] == last
    assert record.query["sendInitialEvents"] == "true"
    assert [verb for verb, _, _ in calls(server, start)] == ["watch"]


async def test_a_rejected_streaming_list_falls_back_to_a_list(server: FakeApiServer) -> None:
    """A server refusing sendInitialEvents (an error answer) gets a normal LIST instead."""
    server.faults.fail_next(1, 400, verb="watch", message="sendInitialEvents is not supported")
    async with running_pipeline(server, config=STREAMING) as pipeline:
        await pipeline.converged()
        with anyio.fail_after(10):
            await server.requests.wait_for(plain_watch, start=0)
        assert pipeline.reflector.statistics().streaming_list_fallbacks == 1
    verbs = [(verb, status) for verb, _, status in calls(server)]
    assert verbs[:3] == [("watch", 400), ("list", 200), ("watch", 200)]
    assert calls(server)[1][1] == {"resourceVersion": "0", "limit": "500"}


async def test_an_expired_streaming_list_falls_back_to_a_consistent_list(
    server: FakeApiServer,
) -> None:
    """410 on the streaming list marks the RV unavailable: the fallback LIST is at RV ""."""
    server.faults.fail_next(1, 410, verb="watch")
    errors: list[BaseException] = []
    async with running_pipeline(
        server, config=STREAMING, watch_error_handler=lambda r, e: errors.append(e)
    ) as pipeline:
        await pipeline.converged()
    assert calls(server)[1] == ("list", {"limit": "500"}, 200)
    assert any(isinstance(e, ExpiredError) for e in errors)


class _NoEndBookmark:
    """A lister-watcher whose watches never deliver the initial-events-end bookmark."""

    def __init__(self, inner: KubeListerWatcher) -> None:
        self.inner = inner

    async def list(self, options: ListOptions) -> ListResult:
        return await self.inner.list(options)

    async def watch(self, options: ListOptions, *, idle_timeout: float | None = None) -> Any:
        return _DropEndBookmark(await self.inner.watch(options, idle_timeout=idle_timeout))


class _DropEndBookmark:
    def __init__(self, inner: WatchStream) -> None:
        self.inner = inner

    def __aiter__(self) -> _DropEndBookmark:
        return self

    async def __anext__(self) -> WatchEvent:
        while True:
            event = await self.inner.__anext__()
            annotations = (event.object.get("metadata") or {}).get("annotations") or {}
            if event.type == WatchEventType.BOOKMARK and INITIAL_EVENTS_END in annotations:
                continue
            return event

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_missing_end_bookmark_falls_back_to_a_list_after_the_deadline(
    server: FakeApiServer,
) -> None:
    """Where client-go waits forever, the reflector gives up on the bookmark after
    streaming_list_deadline (on its clock) and LISTs at once."""
    clock = FakeClock()
    errors: list[BaseException] = []
    async with kube_client(server) as client:
        lw = _NoEndBookmark(KubeListerWatcher(client, CONFIGMAPS))
        async with running_pipeline(
            server,
            lister_watcher=lw,
            config=WatchConfig(streaming_list=True, streaming_list_deadline=30),
            watch_error_handler=lambda r, e: errors.append(e),
            clock=clock,
        ) as pipeline:
            assert await clock.wait_for_timers() == (30,)
            assert [verb for verb, _, _ in calls(server)] == ["watch"]
            await clock.advance(30)
            await pipeline.converged()
            with anyio.fail_after(10):
                await server.requests.wait_for(plain_watch, start=0)
            assert pipeline.reflector.statistics().streaming_list_fallbacks == 1
    assert [verb for verb, _, _ in calls(server)][:3] == ["watch", "list", "watch"]
    assert any(isinstance(e, TimeoutError) and INITIAL_EVENTS_END in str(e) for e in errors)
    with anyio.fail_after(5):  # the abandoned stream was closed
        await server.requests.wait_for_watches(0, exactly=True)
