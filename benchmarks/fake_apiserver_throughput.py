"""Watch throughput of the fake API server: events/s to one watcher, deliveries/s to ten.

Writes go through the in-process API (``server.objects.create``: the same path as an HTTP write,
minus the HTTP request); watchers are real HTTP clients (aiohttp) reading and counting
lines, in the same process and event loop as the server, so the figures are for the
whole pipeline sharing one core: write → encode once → fan out → HTTP chunks → client
line reader.

The baseline, measured in the same run, is a bare aiohttp server streaming the very same
pre-encoded lines in batches of the same size (no storage, no encoding, no fan-out): the
ceiling of HTTP line delivery in this process. The fake's figures are also given as a
fraction of it.

Run: ``python benchmarks/fake_apiserver_throughput.py [--events N] [--watchers N]``.
It prints the figures and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time

import aiohttp
import anyio
from aiohttp import web

from aioinformer.testing import FakeApiServer
from aioinformer.testing._apiserver._registry._history import encode_event

WRITE_BATCH = 64


async def _count_lines(
    session: aiohttp.ClientSession, url: str, expected: int, ready: asyncio.Event
) -> float:
    """Open a watch, then read until ``expected`` lines arrived; returns the arrival time."""
    async with session.get(url) as response:
        response.raise_for_status()
        ready.set()
        seen = 0
        async for _line in response.content:
            seen += 1
            if seen >= expected:
                return time.perf_counter()
    raise RuntimeError(f"watch ended after {seen} of {expected} lines")


async def measure(events: int, watchers: int) -> tuple[float, float, list[bytes]]:
    """Stream ``events`` creates to ``watchers`` HTTP watchers.

    :returns: events/s per watcher, deliveries/s across all watchers, and the lines sent.
    """
    async with FakeApiServer() as server:
        rv = server.objects.resource_version
        url = f"{server.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}"
        connector = aiohttp.TCPConnector(limit=watchers + 1)
        async with aiohttp.ClientSession(connector=connector, read_bufsize=2**20) as session:
            readies = [asyncio.Event() for _ in range(watchers)]
            async with asyncio.TaskGroup() as tg:
                readers = [
                    tg.create_task(_count_lines(session, url, events, ready)) for ready in readies
                ]
                for ready in readies:
                    await ready.wait()
                with anyio.fail_after(10):
                    await server.requests.wait_for_watches(watchers)
                start = time.perf_counter()
                for i in range(events):
                    server.objects.create(
                        "configmaps",
                        {
                            "metadata": {"name": f"cm-{i}", "labels": {"app": "bench"}},
                            "data": {"key": "value" * 8, "index": str(i)},
                        },
                    )
                    if i % WRITE_BATCH == WRITE_BATCH - 1:
                        await asyncio.sleep(0)
            finish = max(reader.result() for reader in readers)
        lines = [encode_event("ADDED", obj) for obj in server.objects.list("configmaps")]
    elapsed = finish - start
    return events / elapsed, events * watchers / elapsed, lines


async def measure_baseline(lines: list[bytes], watchers: int) -> float:
    """Deliveries/s of a bare aiohttp server streaming ``lines`` to ``watchers`` clients."""
    go = asyncio.Event()

    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        await go.wait()
        for i in range(0, len(lines), WRITE_BATCH):
            await response.write(b"".join(lines[i : i + WRITE_BATCH]))
            await asyncio.sleep(0)
        return response

    app = web.Application()
    app.router.add_get("/", stream)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        connector = aiohttp.TCPConnector(limit=watchers + 1)
        async with aiohttp.ClientSession(connector=connector, read_bufsize=2**20) as session:
            readies = [asyncio.Event() for _ in range(watchers)]
            url = f"http://127.0.0.1:{port}/"
            async with asyncio.TaskGroup() as tg:
                readers = [
                    tg.create_task(_count_lines(session, url, len(lines), ready))
                    for ready in readies
                ]
                for ready in readies:
                    await ready.wait()
                start = time.perf_counter()
                go.set()
            finish = max(reader.result() for reader in readers)
    finally:
        await runner.cleanup()
    return len(lines) * watchers / (finish - start)


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--watchers", type=int, default=10)
    args = parser.parse_args(argv)
    gc.collect()
    one, _, lines = await measure(args.events, 1)
    bare_one = await measure_baseline(lines, 1)
    per_watcher, deliveries, _ = await measure(args.events, args.watchers)
    bare_many = await measure_baseline(lines, args.watchers)
    size = sum(map(len, lines)) / len(lines)
    print(f"{args.events} events of {size:.0f} bytes each")
    print(
        f"1 watcher:   {one:10,.0f} events/s      "
        f"(bare aiohttp stream: {bare_one:10,.0f} lines/s; fake at {one / bare_one:.0%})"
    )
    print(
        f"{args.watchers} watchers: {deliveries:10,.0f} deliveries/s  "
        f"(bare aiohttp stream: {bare_many:10,.0f} lines/s; fake at {deliveries / bare_many:.0%}; "
        f"{per_watcher:,.0f} events/s each)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
