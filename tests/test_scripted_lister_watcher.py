"""The public scripted lister-watcher (:class:`aioinformer.testing.ScriptedListerWatcher`):
answers in script order, records every request at its virtual time, and drives a reflector
and an informer (the suite's reflector timing tests run on it too)."""

from __future__ import annotations

import anyio
import pytest

from aioinformer import ListOptions, SharedIndexInformer
from aioinformer.errors import ExpiredError, InternalServerError, MalformedWatchEventError
from aioinformer.lowlevel import ListResult, WatchEvent
from aioinformer.testing import FakeClock, ScriptedListerWatcher, ScriptedWatchStream

GUARD = 10.0  # a fail-safe, never reached when a test passes


def pod(name: str, rv: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "default", "resourceVersion": rv}}


async def test_lists_answer_the_script_in_order_then_the_default() -> None:
    clock = FakeClock()
    lw = ScriptedListerWatcher(clock=clock, default_list=ListResult([pod("a", "1")], "7"))
    page = ListResult([], "3", continue_token="next")
    lw.list_script.extend([page, ExpiredError(code=410, reason="Expired")])
    assert await lw.list(ListOptions(limit=1)) == page
    await clock.advance(2.5)
    with pytest.raises(ExpiredError):
        await lw.list(ListOptions(continue_token="next"))
    assert await lw.list(ListOptions()) == lw.default_list
    assert [(r.verb, r.at, r.options.limit) for r in lw.requests] == [
        ("list", 0.0, 1),
        ("list", 2.5, None),
        ("list", 2.5, None),
    ]
    assert lw.made("watch") == []


async def test_watches_answer_the_script_then_fresh_streams() -> None:
    lw = ScriptedListerWatcher()
    scripted = ScriptedWatchStream([WatchEvent("ADDED", pod("a", "2"))])
    lw.watch_script.extend([InternalServerError(code=500, reason="InternalError"), scripted])
    with pytest.raises(InternalServerError):
        await lw.watch(ListOptions(resource_version="1"))
    assert await lw.watch(ListOptions(resource_version="1")) is scripted
    fresh = await lw.watch(ListOptions(resource_version="2"), idle_timeout=5)
    assert fresh is not scripted
    assert lw.streams == [scripted, fresh]  # the answered watches' streams, not the failure
    assert [r.options.resource_version for r in lw.made("watch")] == ["1", "1", "2"]
    await lw.refresh_credentials()
    assert lw.refreshes == 1


async def test_a_stream_hands_out_what_was_pushed_in_order() -> None:
    stream = ScriptedWatchStream()
    a, b = WatchEvent("ADDED", pod("a", "1")), WatchEvent("MODIFIED", pod("a", "2"))
    received: list[WatchEvent] = []
    malformed = MalformedWatchEventError("not JSON")

    async def read() -> None:
        while True:
            try:
                async for event in stream:
                    received.append(event)
                return
            except MalformedWatchEventError as exc:
                assert exc is malformed  # a real stream stays usable after one too

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            await anyio.wait_all_tasks_blocked()  # the reader waits for the first item
            stream.push(a)
            stream.fail(malformed)
            stream.push(b)
            stream.end()
    assert received == [a, b]
    assert not stream.closed
    await stream.aclose()
    assert stream.closed


async def test_wait_for_request_returns_the_nth_request_once_made() -> None:
    lw = ScriptedListerWatcher()
    await lw.list(ListOptions())
    with anyio.fail_after(GUARD):
        assert (await lw.wait_for_request("list")).verb == "list"  # made already: at once
        async with anyio.create_task_group() as tg:
            waited: list[str | None] = []

            async def wait() -> None:
                request = await lw.wait_for_request("watch", 2)
                waited.append(request.options.resource_version)

            tg.start_soon(wait)
            await lw.watch(ListOptions(resource_version="1"))
            await anyio.wait_all_tasks_blocked()
            assert waited == []  # one watch is not two
            await lw.watch(ListOptions(resource_version="5"))
    assert waited == ["5"]


async def test_an_informer_runs_on_it_in_virtual_time() -> None:
    """A failed list backs off on the clock; the next answers the default list, the watch
    starts from its resource version, and pushed events reach the cache."""
    clock = FakeClock()
    lw = ScriptedListerWatcher(
        clock=clock, default_list=ListResult([pod("a", "10")], "10"), resource="v1/pods"
    )
    lw.list_script.append(InternalServerError(code=500, reason="InternalError"))
    with anyio.fail_after(GUARD):
        async with SharedIndexInformer(lw, clock=clock) as informer:
            (backoff_ends,) = await clock.wait_for_timers()
            await clock.advance(backoff_ends - clock.now())
            assert await informer.wait_for_cache_sync()
            watch = await lw.wait_for_request("watch")
            assert watch.options.resource_version == "10"
            async with informer.events() as events:
                lw.streams[0].push(WatchEvent("ADDED", pod("b", "11")))
                async for event in events:
                    if event.object["metadata"]["name"] == "b":
                        break
            lister = informer.lister()
            assert sorted(p["metadata"]["name"] for p in lister.list()) == ["a", "b"]
            with pytest.raises(ValueError, match="namespaced"):  # the resource's scope
                lister.get("a")
    assert [r.at for r in lw.made("list")] == [0.0, backoff_ends]
