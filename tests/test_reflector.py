"""The Reflector's list/watch state machine, against the fake API server over real HTTP.

Each test checks the requests the reflector made (resource versions, limits, timeouts) and
what reached the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from aioinformer import WatchConfig
from aioinformer._cache._delta_fifo import DeltaFIFO, DeltaType
from aioinformer._listwatch import ListerWatcher, ListOptions, ListResult, WatchEvent, WatchStream
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.errors import (
    ConnectionRefused,
    ExpiredError,
    LifecycleError,
    MalformedWatchEventError,
    NotFoundError,
)
from aioinformer.lowlevel import Reflector
from aioinformer.testing import FakeApiServer, FakeClock
from aioinformer.testing.pytest_plugin import _serving as serving

from .support import (
    CONFIGMAPS,
    FAST_BACKOFF,
    configmap,
    kube_client,
    running_pipeline,
    wait_until,
)

#: Watches the server ends after 1-2 s.
SHORT_WATCHES = WatchConfig(backoff=FAST_BACKOFF, min_watch_timeout=1)


@pytest.fixture
async def server() -> AsyncIterator[FakeApiServer]:
    async with serving(FakeApiServer(bookmark_interval=60)) as fake:
        yield fake


def lists(server: FakeApiServer, start: int = 0) -> list[dict[str, str]]:
    return [
        r.query for r in server.requests.records[start:] if r.verb == "list" and r.status == 200
    ]


def watches(server: FakeApiServer, start: int = 0) -> list[dict[str, str]]:
    return [
        r.query for r in server.requests.records[start:] if r.verb == "watch" and r.status == 200
    ]


async def next_watch(server: FakeApiServer, start: int, *, status: int = 200) -> dict[str, str]:
    with anyio.fail_after(10):
        record = await server.requests.wait_for(
            lambda r: r.verb == "watch" and r.status == status, start=start
        )
    return record.query


async def next_list(server: FakeApiServer, start: int) -> dict[str, str]:
    with anyio.fail_after(10):
        record = await server.requests.wait_for(lambda r: r.verb == "list", start=start)
    return record.query


async def write(server: FakeApiServer, name: str, **data: str) -> str:
    """Create or update a ConfigMap; returns its new resource version."""
    try:
        obj = server.objects.patch("configmaps", name, {"data": data}, namespace="default")
    except NotFoundError:
        obj = server.objects.create("configmaps", configmap(name, **data))
    return str(obj["metadata"]["resourceVersion"])


# -- list -------------------------------------------------------------------------------------


async def test_initial_list_at_rv_0_paginated_then_watch_from_the_list_rv(
    server: FakeApiServer,
) -> None:
    """First LIST asks RV "0" with limit 500; the WATCH starts at the list's RV with bookmarks."""
    for i in range(3):
        await write(server, f"cm-{i}", v="1")
    list_rv = server.objects.resource_version
    async with running_pipeline(server) as pipeline:
        watch = await next_watch(server, 0)
        await pipeline.converged()
    (first,) = lists(server)
    assert first == {"resourceVersion": "0", "limit": "500"}
    assert watch["resourceVersion"] == list_rv
    assert watch["allowWatchBookmarks"] == "true"
    assert 300 <= int(watch["timeoutSeconds"]) < 600


async def test_watch_timeout_is_drawn_from_min_to_twice_min(server: FakeApiServer) -> None:
    """timeoutSeconds is uniform in [min_watch_timeout, 2 * min_watch_timeout)."""
    draws = iter([0.0, 0.999])
    async with running_pipeline(
        server,
        config=WatchConfig(backoff=FAST_BACKOFF, min_watch_timeout=300),
        rand=lambda: next(draws, 0.5),
    ):
        first = await next_watch(server, 0)
        start = len(server.requests.records)
        server.faults.inject_watch_error(500, "InternalError")  # force a second watch
        second = await next_watch(server, start)
    assert first["timeoutSeconds"] == "300"
    assert second["timeoutSeconds"] == "599"


async def test_clean_watch_end_rewatches_from_last_rv_without_relist() -> None:
    """When the server ends a watch (timeout), the reflector re-watches at once, no relist."""
    async with (
        FakeApiServer(bookmark_interval=0.2) as server,
        running_pipeline(server, config=SHORT_WATCHES) as pipeline,
    ):
        await next_watch(server, 0)
        await write(server, "a", v="1")
        await pipeline.converged()
        start = len(server.requests.records)
        second = await next_watch(server, start)
        assert len(lists(server)) == 1
        assert second["resourceVersion"] == server.objects.resource_version
        assert pipeline.reflector.statistics().watch_restarts.get("timeout", 0) >= 1


async def test_bookmarks_only_advance_the_resource_version() -> None:
    """A bookmark moves the RV the next watch resumes from; the store sees nothing."""
    async with (
        FakeApiServer(bookmark_interval=0.2) as server,
        running_pipeline(server, config=SHORT_WATCHES) as pipeline,
    ):
        await next_watch(server, 0)
        deltas_before = len(pipeline.popped)
        server.objects.create("secrets", {"metadata": {"name": "s", "namespace": "default"}})
        bumped = server.objects.resource_version
        start = len(server.requests.records)
        rewatch = await next_watch(server, start)
        assert rewatch["resourceVersion"] == bumped
        assert len(pipeline.popped) == deltas_before
        assert pipeline.reflector.statistics().events.get("BOOKMARK", 0) >= 1
        assert len(lists(server)) == 1


async def test_list_expired_retries_at_once_with_rv_empty_paginated(
    server: FakeApiServer,
) -> None:
    """A LIST failing with 410 is retried at once at RV "" with limit 500 (no error, no backoff)."""
    server.faults.fail_next(1, 410, verb="list")
    async with running_pipeline(server) as pipeline:
        watch = await next_watch(server, 0)
        listed = [r.query for r in server.requests.records if r.verb == "list"]
        assert listed == [{"resourceVersion": "0", "limit": "500"}, {"limit": "500"}]
        assert watch["resourceVersion"] == server.objects.resource_version
        assert pipeline.reflector.statistics().errors == 0


async def test_list_too_large_rv_retries_at_once_with_rv_empty(server: FakeApiServer) -> None:
    """A LIST failing with "too large resource version" is retried at RV "" as well."""
    server.faults.fail_next(
        1, 504, verb="list", message="Too large resource version: 99, current: 1"
    )
    async with running_pipeline(server) as pipeline:
        await next_watch(server, 0)
        listed = [r.query for r in server.requests.records if r.verb == "list"]
        assert listed == [{"resourceVersion": "0", "limit": "500"}, {"limit": "500"}]
        assert pipeline.reflector.statistics().errors == 0


async def test_watch_expired_relists_at_last_rv_without_pagination(server: FakeApiServer) -> None:
    """A watch ending in 410 relists at the last RV seen, unpaginated — never at RV ""."""
    errors: list[BaseException] = []
    async with running_pipeline(server, watch_error_handler=lambda r, e: errors.append(e)) as p:
        await next_watch(server, 0)
        last = await write(server, "a", v="1")
        await p.converged()
        start = len(server.requests.records)
        server.faults.inject_watch_error(410, "Expired", "too old resource version")
        relist = await next_list(server, start)
        rewatch = await next_watch(server, start)
    assert relist == {"resourceVersion": last}
    assert rewatch["resourceVersion"] == last
    assert any(isinstance(e, ExpiredError) for e in errors)
    assert p.reflector.statistics().watch_restarts["expired"] == 1


async def test_relist_after_watch_failure_expired_falls_back_to_rv_empty(
    server: FakeApiServer,
) -> None:
    """When the relist at the last RV itself gets 410, the next try is at RV "" with the same
    pager: unpaginated, as the relist was (client-go's ``Reflector.list``)."""
    async with running_pipeline(server) as pipeline:
        await next_watch(server, 0)
        await write(server, "a", v="1")
        await pipeline.converged()
        start = len(server.requests.records)
        server.faults.fail_next(1, 410, verb="list")
        server.faults.inject_watch_error(500, "InternalError")
        await next_watch(server, start)
        listed = [r.query for r in server.requests.records[start:] if r.verb == "list"]
    assert listed[0] == {"resourceVersion": pipeline.cache()["default/a"]}
    assert listed[1] == {}


async def test_error_event_backs_off_and_relists(server: FakeApiServer) -> None:
    """An ERROR event other than 410/429 counts as an error, backs off, and relists."""
    errors: list[BaseException] = []
    async with running_pipeline(server, watch_error_handler=lambda r, e: errors.append(e)) as p:
        await next_watch(server, 0)
        start = len(server.requests.records)
        server.faults.inject_watch_error(500, "InternalError", "boom")
        await next_list(server, start)
        await next_watch(server, start)
    assert [type(e).__name__ for e in errors] == ["InternalServerError"]
    assert p.reflector.statistics().watch_restarts["error"] == 1
    assert p.reflector.statistics().relists == 1


async def test_watch_429_waits_retry_after_and_rewatches_without_relist(
    server: FakeApiServer,
) -> None:
    """A 429 on watch start waits the server's Retry-After on the reflector's clock, then
    re-watches from the last RV; no relist."""
    clock = FakeClock()
    async with running_pipeline(server, clock=clock) as pipeline:
        await next_watch(server, 0)
        last = await write(server, "a", v="1")
        await pipeline.converged()
        start = len(server.requests.records)
        server.faults.fail_next(1, 429, retry_after=3, verb="watch")
        server.faults.drop_watches()
        await next_watch(server, start, status=429)
        assert await clock.wait_for_timers() == (clock.now() + 3,)
        assert watches(server, start) == []
        await clock.advance(3)
        rewatch = await next_watch(server, start)
        assert rewatch["resourceVersion"] == last
        assert lists(server, start) == []
        assert pipeline.reflector.statistics().watch_restarts["too_many_requests"] == 1


async def test_429_error_event_rewatches_without_relist(server: FakeApiServer) -> None:
    """A 429 ERROR event mid-stream re-watches after a wait, without relisting."""
    async with running_pipeline(server) as pipeline:
        await next_watch(server, 0)
        start = len(server.requests.records)
        server.faults.inject_watch_error(429, "TooManyRequests")
        await next_watch(server, start)
        assert lists(server, start) == []
        assert pipeline.reflector.statistics().watch_restarts["too_many_requests"] == 1


async def test_refused_connection_backs_off_and_rewatches_without_relist(
    server: FakeApiServer,
) -> None:
    """While connections are refused it backs off; then it re-watches at the last RV."""
    refused = asyncio.Event()

    def on_error(reflector: Reflector, error: BaseException) -> None:
        if isinstance(error, ConnectionRefused):
            refused.set()

    async with running_pipeline(server, watch_error_handler=on_error) as pipeline:
        await next_watch(server, 0)
        last = await write(server, "a", v="1")
        await pipeline.converged()
        start = len(server.requests.records)
        await server.faults.stop_listening()
        async with asyncio.timeout(10):
            await refused.wait()
        await server.faults.start_listening()
        rewatch = await next_watch(server, start)
        assert rewatch["resourceVersion"] == last
        assert lists(server, start) == []
        assert pipeline.reflector.statistics().watch_restarts["refused"] >= 1


async def test_unauthorized_watch_reloads_credentials_and_retries(server: FakeApiServer) -> None:
    """A 401 reloads credentials through the lister-watcher and retries the watch, no relist."""
    refreshed = asyncio.Event()

    async def refresher() -> None:
        refreshed.set()

    async with kube_client(server, credential_refresher=refresher) as client:
        lw = KubeListerWatcher(client, CONFIGMAPS)
        async with running_pipeline(server, lister_watcher=lw) as pipeline:
            await next_watch(server, 0)
            await write(server, "a", v="1")
            await pipeline.converged()
            start = len(server.requests.records)
            server.faults.fail_next(1, 401, verb="watch")
            server.faults.drop_watches()
            await next_watch(server, start, status=401)
            await next_watch(server, start)
            assert refreshed.is_set()
            assert lists(server, start) == []
            assert pipeline.reflector.statistics().watch_restarts["unauthorized"] == 1


async def test_unauthorized_list_reloads_credentials_and_relists(server: FakeApiServer) -> None:
    """A 401 on LIST reloads credentials, backs off and lists again."""
    calls: list[str] = []
    done = asyncio.Event()

    async def refresher() -> None:
        calls.append("refresh")
        done.set()

    server.faults.fail_next(1, 401, verb="list")
    async with kube_client(server, credential_refresher=refresher) as client:
        lw = KubeListerWatcher(client, CONFIGMAPS)
        async with running_pipeline(server, lister_watcher=lw):
            await next_watch(server, 0)
    assert calls == ["refresh"]
    assert [r.status for r in server.requests.records if r.verb == "list"] == [401, 200]


async def test_very_short_watch_counts_as_error_and_relists(server: FakeApiServer) -> None:
    """A watch that ends in under 1 s without any event backs off and relists."""
    async with running_pipeline(server) as pipeline:
        await next_watch(server, 0)
        start = len(server.requests.records)
        server.faults.drop_watches()
        await next_list(server, start)
        await next_watch(server, start)
        assert pipeline.reflector.statistics().watch_restarts["very_short"] == 1
        assert pipeline.reflector.statistics().relists == 1


async def test_dropped_connection_after_events_rewatches_at_once(server: FakeApiServer) -> None:
    """A connection broken after events resumes from the last RV without a relist."""
    async with running_pipeline(server) as pipeline:
        await next_watch(server, 0)
        last = await write(server, "a", v="1")
        await pipeline.converged()
        start = len(server.requests.records)
        server.faults.drop_watches()
        rewatch = await next_watch(server, start)
        assert rewatch["resourceVersion"] == last
        assert lists(server, start) == []
        assert pipeline.reflector.statistics().watch_restarts["disconnect"] == 1


async def test_unknown_event_types_are_counted_and_skipped(server: FakeApiServer) -> None:
    """An event of an unknown type is skipped; the same watch goes on."""
    async with running_pipeline(server) as pipeline:
        await next_watch(server, 0)
        server.faults.inject_raw_line(b'{"type": "SURPRISE", "object": {"metadata": {}}}')
        await write(server, "after", v="1")
        await pipeline.converged()
        stats = pipeline.reflector.statistics()
        assert stats.unknown_events == 1
        assert stats.watches == 1
        assert len(watches(server)) == 1


async def test_stalled_watch_is_abandoned_after_idle_timeout_without_relist(
    server: FakeApiServer,
) -> None:
    """A silent watch is given up after idle_timeout and, after one backoff delay, resumed
    from the last RV, no relist."""
    clock = FakeClock()
    config = WatchConfig(backoff=FAST_BACKOFF, idle_timeout=0.5)
    async with running_pipeline(server, config=config, clock=clock) as pipeline:
        await next_watch(server, 0)
        last = await write(server, "a", v="1")
        await pipeline.converged()
        start = len(server.requests.records)
        assert server.faults.stall_watches() == 1
        await write(server, "b", v="missed while stalled")
        # The idle deadline is the transport's; the backoff after it is on the clock.
        assert await clock.wait_for_timers() == (clock.now() + FAST_BACKOFF.initial,)
        assert watches(server, start) == []
        await clock.advance(FAST_BACKOFF.initial)
        rewatch = await next_watch(server, start)
        await pipeline.converged()
        assert rewatch["resourceVersion"] == last
        assert lists(server, start) == []
        assert pipeline.reflector.statistics().watch_restarts["idle"] == 1


async def test_resync_ticker_calls_store_resync_when_should_resync(server: FakeApiServer) -> None:
    """Each tick of the resync period calls resync() when should_resync() says so, producing
    Sync deltas."""
    clock = FakeClock()
    due = False
    async with running_pipeline(
        server, resync_period=1.0, should_resync=lambda: due, clock=clock
    ) as pipeline:
        await write(server, "a", v="1")
        await next_watch(server, 0)
        await pipeline.converged()
        await clock.advance(2.0)
        assert not any(d.type is DeltaType.SYNC for ds in pipeline.popped for d in ds)
        due = True
        await clock.advance(1.0)
        await wait_until(
            pipeline.changed,
            lambda: any(d.type is DeltaType.SYNC for ds in pipeline.popped for d in ds),
        )


class _RecordingStream:
    """Wraps a watch stream, noting the reflector's RV each time it asks for the next event."""

    def __init__(self, inner: WatchStream, reflector: list[Reflector], seen: list[Any]) -> None:
        self._inner = inner
        self._reflector = reflector
        self._seen = seen

    def __aiter__(self) -> _RecordingStream:
        return self

    async def __anext__(self) -> WatchEvent:
        if self._seen:
            self._seen[-1] = (self._seen[-1][0], self._reflector[0].last_sync_resource_version)
        event = await self._inner.__anext__()
        self._seen.append((event.type, None))
        return event

    async def aclose(self) -> None:
        await self._inner.aclose()


class _EmptyRVListerWatcher:
    """Lists with an empty RV, so the reflector watches from "" (synthetic ADDED replay)."""

    def __init__(self, inner: ListerWatcher, reflector: list[Reflector], seen: list[Any]) -> None:
        self._inner = inner
        self._reflector = reflector
        self._seen = seen

    async def list(self, options: ListOptions) -> ListResult:
        await self._inner.list(options)
        return ListResult([], "")

    async def watch(self, options: ListOptions, *, idle_timeout: float | None = None) -> Any:
        stream = await self._inner.watch(options, idle_timeout=idle_timeout)
        return _RecordingStream(stream, self._reflector, self._seen)


async def test_watch_from_rv_empty_does_not_advance_rv_during_synthetic_adds(
    server: FakeApiServer,
) -> None:
    """A watch from "" keeps the RV during its ADDED replay; the first other event moves it."""
    for i in range(3):
        await write(server, f"cm-{i}", v="1")
    seen: list[Any] = []
    holder: list[Reflector] = []
    async with kube_client(server) as client:
        lw = _EmptyRVListerWatcher(KubeListerWatcher(client, CONFIGMAPS), holder, seen)
        async with running_pipeline(server, lister_watcher=lw) as pipeline:
            holder.append(pipeline.reflector)
            watch = await next_watch(server, 0)
            assert "resourceVersion" not in watch
            await wait_until(pipeline.changed, lambda: len(pipeline.cache()) == 3)
            modified_rv = await write(server, "cm-0", v="2")
            await wait_until(pipeline.changed, lambda: len(seen) >= 4)
            await write(server, "cm-1", v="2")  # lets the reflector ask for a fifth event
            await wait_until(pipeline.changed, lambda: len(seen) >= 5)
    assert [t for t, _ in seen[:4]] == ["ADDED", "ADDED", "ADDED", "MODIFIED"]
    assert [rv for _, rv in seen[:3]] == ["", "", ""]
    assert seen[3][1] == modified_rv


async def test_paginated_list_expired_mid_way_falls_back_to_a_full_list(
    server: FakeApiServer,
) -> None:
    """When a continue token expires between pages, one unpaginated list at the same RV follows."""
    for i in range(5):
        await write(server, f"cm-{i}", v="1")

    class CompactAfterFirstPage:
        def __init__(self, inner: KubeListerWatcher) -> None:
            self.inner = inner

        async def list(self, options: ListOptions) -> ListResult:
            result = await self.inner.list(options)
            if options.limit and not options.continue_token and result.continue_token:
                server.objects.create(
                    "secrets", {"metadata": {"name": "bump", "namespace": "default"}}
                )
                server.faults.compact()
            return result

        async def watch(self, options: ListOptions, *, idle_timeout: float | None = None) -> Any:
            return await self.inner.watch(options, idle_timeout=idle_timeout)

    server.faults.fail_next(
        1, 410, verb="list"
    )  # the RV "0" list: move on to a paginated RV "" list
    async with kube_client(server) as client:
        lw = CompactAfterFirstPage(KubeListerWatcher(client, CONFIGMAPS))
        async with running_pipeline(
            server, lister_watcher=lw, config=WatchConfig(backoff=FAST_BACKOFF, page_size=2)
        ) as pipeline:
            await next_watch(server, 0)
            await pipeline.converged()
    listed = [(r.query, r.status) for r in server.requests.records if r.verb == "list"]
    assert listed[0] == ({"resourceVersion": "0", "limit": "2"}, 410)
    assert listed[1] == ({"limit": "2"}, 200)
    assert listed[2][0]["limit"] == "2" and "continue" in listed[2][0] and listed[2][1] == 410
    assert listed[3] == ({}, 200)


async def test_large_objects_and_ten_thousand_item_pages_pass_through(
    server: FakeApiServer,
) -> None:
    """A 1 MiB object (the largest ConfigMap a real server stores: ``ValidateConfigMap``
    refuses more; this test once used 5 MB) and a 10,000-object list page reach the store."""
    for i in range(10_000):
        server.objects.create("configmaps", configmap(f"cm-{i:05d}"))
    server.faults.fail_next(1, 410, verb="list")  # force the paginated RV "" list
    config = WatchConfig(backoff=FAST_BACKOFF, page_size=10_000)
    async with running_pipeline(server, config=config) as pipeline:
        await next_watch(server, 0)
        await pipeline.converged(within=60)
        server.objects.create("configmaps", configmap("huge", blob="h" * (1024 * 1024)))
        await pipeline.converged(within=30)
        huge = pipeline.indexer.get_by_key("default/huge")
        assert huge is not None and len(huge["data"]["blob"]) == 1024 * 1024
    listed = [r.query for r in server.requests.records if r.verb == "list" and r.status == 200]
    assert listed == [{"limit": "10000"}]
    assert len(pipeline.cache()) == 10_001


@pytest.mark.parametrize(
    ("seed", "streaming"), [(0, False), (1, False), (2, False), (3, True), (4, True)]
)
async def test_store_converges_to_the_server_after_any_fault_sequence(
    server: FakeApiServer, seed: int, streaming: bool
) -> None:
    """After drops, stalls, compaction, error events, 5xx, 429s, restarts and refusals in a
    seeded random order, the store equals the server (same keys, same resource versions),
    with LISTs and with streaming lists."""
    rng = random.Random(seed)
    async with running_pipeline(
        server,
        config=WatchConfig(
            backoff=FAST_BACKOFF, idle_timeout=0.5, min_watch_timeout=2, streaming_list=streaming
        ),
    ) as pipeline:
        await next_watch(server, 0)

        async def churn() -> None:
            for _ in range(rng.randint(1, 6)):
                name = f"cm-{rng.randrange(8)}"
                if rng.random() < 0.25:
                    with contextlib.suppress(NotFoundError):
                        server.objects.delete("configmaps", name, namespace="default")
                else:
                    await write(server, name, v=str(rng.random()))

        async def refuse_for_a_while() -> None:
            start = len(server.requests.records)
            await server.faults.stop_listening()
            await churn()
            await server.faults.start_listening()
            await next_watch(server, start)

        def compact_and_drop() -> None:
            server.faults.compact()
            server.faults.drop_watches()

        def fail_lists_and_drop() -> None:
            server.faults.fail_next(2, 500, verb="list")
            server.faults.drop_watches()

        def throttle_and_drop() -> None:
            server.faults.fail_next(1, 429, verb="watch", retry_after=0.1)
            server.faults.drop_watches()

        faults: list[Callable[[], object]] = [
            server.faults.drop_watches,
            server.faults.stall_watches,
            compact_and_drop,
            lambda: server.faults.inject_watch_error(500, "InternalError"),
            lambda: server.faults.inject_watch_error(410, "Expired"),
            fail_lists_and_drop,
            throttle_and_drop,
            server.faults.restart,
            server.faults.inject_malformed_line,
            refuse_for_a_while,
        ]
        for fault in rng.sample(faults, len(faults)) * 2:
            await churn()
            outcome = fault()
            if asyncio.iscoroutine(outcome):
                await outcome
            await churn()
            if rng.random() < 0.5:
                await pipeline.converged(within=15)
        await pipeline.converged(within=15)
        assert pipeline.cache() == await pipeline.server_state()
        assert pipeline.reflector.statistics().errors > 0


async def test_run_twice_is_refused(server: FakeApiServer) -> None:
    """A reflector runs once at a time."""
    async with running_pipeline(server) as pipeline:
        await next_watch(server, 0)
        with pytest.raises(LifecycleError):
            await pipeline.reflector.run()


async def test_cancellation_closes_the_watch(server: FakeApiServer) -> None:
    """Cancelling the reflector ends its watch connection promptly."""
    async with running_pipeline(server):
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(1)
    with anyio.fail_after(5):
        await server.requests.wait_for_watches(0, exactly=True)


async def test_handler_exceptions_do_not_break_the_reflector(server: FakeApiServer) -> None:
    """A watch-error handler that raises is logged; the reflector keeps going."""

    def bad_handler(reflector: Reflector, error: BaseException) -> None:
        raise RuntimeError("handler bug")

    async with running_pipeline(server, watch_error_handler=bad_handler) as pipeline:
        await next_watch(server, 0)
        start = len(server.requests.records)
        server.faults.inject_watch_error(500, "InternalError")
        await next_watch(server, start)
        await write(server, "a", v="1")
        await pipeline.converged()


async def test_reflector_feeds_a_deltafifo_directly(server: FakeApiServer) -> None:
    """The reflector's store contract is the DeltaFIFO's: replace, then add/update/delete."""
    await write(server, "a", v="1")
    fifo = DeltaFIFO()
    async with kube_client(server) as client:
        reflector = Reflector(KubeListerWatcher(client, CONFIGMAPS), fifo)
        async with anyio.create_task_group() as tg:
            tg.start_soon(reflector.run)
            deltas = await fifo.pop(lambda d: None)
            tg.cancel_scope.cancel()
    assert [d.type for d in deltas] == [DeltaType.REPLACED]
    assert fifo.has_synced()
    assert reflector.last_sync_resource_version == server.objects.resource_version


async def test_a_malformed_line_ends_the_watch_and_relists_from_the_last_good_rv(
    server: FakeApiServer,
) -> None:
    """A malformed line may have carried a change: the watch ends at once and a relist at the
    last good RV repairs the store (not minutes later, when the server ends the watch); the
    watch-error handler hears of it."""
    errors: list[BaseException] = []
    async with running_pipeline(
        server, watch_error_handler=lambda _r, error: errors.append(error)
    ) as pipeline:
        await next_watch(server, 0)
        last = await write(server, "a", v="1")
        await pipeline.converged()
        start = len(server.requests.records)
        server.faults.inject_malformed_line()
        relist = await next_list(server, start)
        await next_watch(server, start)
        await write(server, "b", v="1")
        await pipeline.converged()
        stats = pipeline.reflector.statistics()
    assert relist == {"resourceVersion": last}
    assert [type(e) for e in errors] == [MalformedWatchEventError]
    assert stats.malformed_events == 1 and stats.watch_restarts["malformed"] == 1


async def test_a_list_with_null_items_syncs_an_empty_store(server: FakeApiServer) -> None:
    """`"items": null` (how some servers say "none") is an empty list, not an error."""
    from aioinformer._listwatch import list_result_from_body

    result = list_result_from_body(
        {"kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": None}
    )
    assert result.items == [] and result.resource_version == "7"


async def test_a_large_initial_list_does_not_monopolise_the_event_loop(
    server: FakeApiServer,
) -> None:
    """While thousands of listed objects are processed, other tasks keep getting turns."""
    from aioinformer._informer._informer import SharedIndexInformer

    for i in range(5_000):
        server.objects.create("configmaps", configmap(f"cm-{i:05d}"))
    ticks = 0
    synced = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not synced.is_set():
            ticks += 1
            await anyio.lowlevel.checkpoint()

    async with kube_client(server) as client:
        informer = SharedIndexInformer(KubeListerWatcher(client, CONFIGMAPS), batch_size=500)
        async with informer, anyio.create_task_group() as tg:
            await next_list(server, 0)  # the list is on its way
            tg.start_soon(ticker)
            await asyncio.wait_for(informer.wait_for_cache_sync(), 30)
            synced.set()
    assert ticks >= 10  # 10 batches of 500: at least one turn between each
