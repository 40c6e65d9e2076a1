"""The reflector's waits on virtual time: backoff, Retry-After, idle watches, very short
watches, the resync ticker and the streaming-list deadline.

An in-memory lister-watcher answers at once and records the virtual time of every request,
so each assertion is an exact time (client-go ``reflector.go`` for the rules).
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import pytest

from aioinformer import BackoffPolicy, WatchConfig
from aioinformer.errors import (
    InternalServerError,
    TooManyRequestsError,
    UnauthorizedError,
    WatchIdleTimeoutError,
)
from aioinformer.lowlevel import Reflector, ReflectorStore
from aioinformer.testing import FakeClock, ScriptedListerWatcher, ScriptedWatchStream

from .support import RecordingStore, event

#: A fail-safe against a hang, in real seconds (never reached when a test passes).
GUARD = 10.0


@asynccontextmanager
async def running(
    lw: ScriptedListerWatcher,
    store: ReflectorStore,
    *,
    config: WatchConfig = WatchConfig(),
    resync_period: float = 0.0,
    should_resync: Callable[[], bool] | None = None,
    errors: list[BaseException] | None = None,
) -> AsyncIterator[Reflector]:
    """A reflector without jitter (``rand`` 0: watch timeouts at the minimum, delays exact)
    on the lister-watcher's clock, running until the block ends (within :data:`GUARD`
    seconds of real time: the block's waits for requests take no timeout of their own)."""
    reflector = Reflector(
        lw,
        store,
        config=config,
        resync_period=resync_period,
        should_resync=should_resync,
        watch_error_handler=(lambda r, e: errors.append(e)) if errors is not None else None,
        clock=lw.clock,
        rand=lambda: 0.0,
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(reflector.run)
        with anyio.fail_after(GUARD):
            yield reflector
        tg.cancel_scope.cancel()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def lw(clock: FakeClock) -> ScriptedListerWatcher:
    return ScriptedListerWatcher(clock=clock)


@pytest.fixture
def store(clock: FakeClock) -> RecordingStore:
    return RecordingStore(clock)


def boom() -> InternalServerError:
    return InternalServerError(code=500, reason="InternalError", message="boom")


async def test_failing_lists_back_off_exponentially(
    clock: FakeClock, lw: ScriptedListerWatcher, store: RecordingStore
) -> None:
    """Each failed ListAndWatch is followed by one backoff delay: 0.8 s doubling."""
    lw.list_script.extend([boom() for _ in range(5)])
    async with running(lw, store):
        await clock.advance(60)
    assert [r.at for r in lw.made("list")] == pytest.approx([0, 0.8, 2.4, 5.6, 12.0, 24.8])
    assert [r.at for r in lw.made("watch")] == pytest.approx([24.8])


async def test_the_backoff_policy_is_the_configured_one(
    clock: FakeClock, lw: ScriptedListerWatcher, store: RecordingStore
) -> None:
    """WatchConfig.backoff sets the delays (here 2 s tripling, capped at 5 s)."""
    lw.list_script.extend([boom() for _ in range(4)])
    config = WatchConfig(backoff=BackoffPolicy(initial=2.0, factor=3.0, cap=5.0))
    async with running(lw, store, config=config):
        await clock.advance(60)
    assert [r.at for r in lw.made("list")] == pytest.approx([0, 2, 7, 12, 17])


@pytest.mark.parametrize(
    ("retry_after", "waited"),
    [(2.0, 2.0), (0.4, 0.5), (0.0, 0.5), (600.0, 60.0), (None, 0.8)],
)
async def test_a_throttled_watch_waits_retry_after_then_rewatches_without_relist(
    clock: FakeClock,
    lw: ScriptedListerWatcher,
    store: RecordingStore,
    retry_after: float | None,
    waited: float,
) -> None:
    """429 on a watch waits Retry-After (clamped to [0.5, 60] s; the backoff without one) and
    re-watches from the last RV, without a list."""
    lw.watch_script.append(
        TooManyRequestsError(code=429, reason="TooManyRequests", retry_after=retry_after)
    )
    async with running(lw, store) as reflector:
        assert await clock.wait_for_timers() == pytest.approx((waited,))
        await clock.advance(waited)
        await lw.wait_for_request("watch", 2)
        statistics = reflector.statistics()
    watches = lw.made("watch")
    assert [w.at for w in watches] == pytest.approx([0, waited])
    assert [w.options.resource_version for w in watches] == ["10", "10"]
    assert len(lw.made("list")) == 1
    assert statistics.watch_restarts == {"too_many_requests": 1}


async def test_an_unauthorized_watch_reloads_credentials_and_backs_off(
    clock: FakeClock, lw: ScriptedListerWatcher, store: RecordingStore
) -> None:
    """401 on a watch reloads credentials, backs off and re-watches (no relist)."""
    lw.watch_script.append(UnauthorizedError(code=401, reason="Unauthorized"))
    async with running(lw, store):
        await clock.advance(0.8)
        await lw.wait_for_request("watch", 2)
    assert lw.refreshes == 1
    assert [w.at for w in lw.made("watch")] == pytest.approx([0, 0.8])
    assert len(lw.made("list")) == 1


async def test_an_idle_watch_backs_off_and_resumes_from_the_last_rv(
    clock: FakeClock, lw: ScriptedListerWatcher, store: RecordingStore
) -> None:
    """A watch abandoned for silence waits one backoff delay, then resumes at the last RV
    without a relist."""
    errors: list[BaseException] = []
    async with running(lw, store, errors=errors) as reflector:
        await lw.wait_for_request("watch", 1)
        stream = lw.streams[0]
        await clock.advance(30)
        stream.push(event("ADDED", "a", "11"))
        stream.fail(WatchIdleTimeoutError("no bytes for 120 s"))
        await clock.advance(0.8)
        await lw.wait_for_request("watch", 2)
        statistics = reflector.statistics()
    rewatch = lw.made("watch")[1]
    assert rewatch.at == pytest.approx(30.8)
    assert rewatch.options.resource_version == "11"
    assert len(lw.made("list")) == 1
    assert statistics.watch_restarts == {"idle": 1}
    assert [type(e) for e in errors] == [WatchIdleTimeoutError]
    assert stream.closed


@pytest.mark.parametrize(("lasted", "relisted"), [(0.999, True), (1.0, False)])
async def test_a_watch_ending_within_a_second_without_events_relists(
    clock: FakeClock,
    lw: ScriptedListerWatcher,
    store: RecordingStore,
    lasted: float,
    relisted: bool,
) -> None:
    """A watch that ends in under 1 s with no event is an error (backoff, relist); one that
    lasted 1 s is a clean end (re-watch at once)."""
    async with running(lw, store) as reflector:
        await lw.wait_for_request("watch", 1)
        await clock.advance(lasted)
        lw.streams[0].end()
        await clock.advance(0.8)
        await lw.wait_for_request("watch", 2)
        statistics = reflector.statistics()
    second = lw.made("watch")[1]
    if relisted:
        assert [r.at for r in lw.made("list")] == pytest.approx([0, lasted + 0.8])
        assert second.at == pytest.approx(lasted + 0.8)
        assert statistics.watch_restarts == {"very_short": 1}
    else:
        assert len(lw.made("list")) == 1
        assert second.at == pytest.approx(lasted)
        assert statistics.watch_restarts == {"timeout": 1}


async def test_the_resync_ticker_runs_on_the_clock_when_should_resync(
    clock: FakeClock, lw: ScriptedListerWatcher, store: RecordingStore
) -> None:
    """Every resync_period while watching, store.resync() runs if should_resync() says so."""
    due = False
    async with running(lw, store, resync_period=1.0, should_resync=lambda: due):
        await lw.wait_for_request("watch", 1)
        await clock.advance(2.5)
        assert store.times("resync") == []
        due = True
        await clock.advance(2.0)
    assert store.times("resync") == pytest.approx([3.0, 4.0])


class RefusingResync(RecordingStore):
    async def resync(self) -> None:
        await super().resync()
        raise RuntimeError("resync refused")


async def test_a_failed_resync_ends_the_watch_and_relists_after_a_backoff(
    clock: FakeClock, lw: ScriptedListerWatcher
) -> None:
    """A store.resync() error closes the watch, is reported, and a relist follows the
    backoff."""
    store = RefusingResync(clock)
    errors: list[BaseException] = []
    async with running(lw, store, resync_period=1.0, errors=errors):
        await lw.wait_for_request("watch", 1)
        await clock.advance(1.8)
        await lw.wait_for_request("watch", 2)
    assert [r.at for r in lw.made("list")] == pytest.approx([0, 1.8])
    assert [type(e) for e in errors] == [RuntimeError]
    assert lw.streams[0].closed


async def test_a_late_initial_events_bookmark_falls_back_to_a_list_at_the_deadline(
    clock: FakeClock, lw: ScriptedListerWatcher, store: RecordingStore
) -> None:
    """A streaming list whose end bookmark has not come within streaming_list_deadline falls
    back to a LIST at once (client-go would wait forever)."""
    config = WatchConfig(streaming_list=True, streaming_list_deadline=5.0)
    errors: list[BaseException] = []
    streaming = ScriptedWatchStream()
    lw.watch_script.append(streaming)
    async with running(lw, store, config=config, errors=errors) as reflector:
        streaming.push(event("ADDED", "a", "5"))
        assert await clock.wait_for_timers() == (5.0,)
        await clock.advance(5.0)
        await lw.wait_for_request("watch", 2)
        statistics = reflector.statistics()
    assert [r.at for r in lw.made("list")] == [5.0]
    assert [(w.at, w.options.send_initial_events) for w in lw.made("watch")] == [
        (0.0, True),
        (5.0, None),
    ]
    assert statistics.streaming_list_fallbacks == 1
    assert [type(e) for e in errors] == [TimeoutError]
    assert streaming.closed


async def test_a_failing_list_retry_at_rv_empty_is_immediate(
    clock: FakeClock, lw: ScriptedListerWatcher, store: RecordingStore
) -> None:
    """410 on the first list retries at RV "" with no wait and no error reported."""
    from aioinformer.errors import ExpiredError

    lw.list_script.append(ExpiredError(code=410, reason="Expired"))
    errors: list[BaseException] = []
    async with running(lw, store, errors=errors):
        await lw.wait_for_request("watch", 1)
    lists = lw.made("list")
    assert [(r.at, r.options.resource_version) for r in lists] == [(0.0, "0"), (0.0, "")]
    assert errors == []


async def test_the_watch_timeout_is_drawn_between_min_and_twice_min(
    clock: FakeClock, lw: ScriptedListerWatcher
) -> None:
    """timeoutSeconds is min_watch_timeout * (1 + rand()), at least 1."""
    draws = deque([0.0, 0.999])
    reflector = Reflector(
        lw,
        RecordingStore(clock),
        config=WatchConfig(min_watch_timeout=300),
        clock=clock,
        rand=draws.popleft,
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(reflector.run)
        with anyio.fail_after(GUARD):
            await lw.wait_for_request("watch", 1)
            lw.streams[0].push(event("ADDED", "a", "11"))
            lw.streams[0].end()  # a clean end after an event: re-watch at once
            await lw.wait_for_request("watch", 2)
        tg.cancel_scope.cancel()
    assert [w.options.timeout_seconds for w in lw.made("watch")] == [300, 599]
