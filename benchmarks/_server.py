"""The benchmark server: LIST pages and WATCH streams served from pre-encoded bytes.

It runs in a process of its own (``python benchmarks/_server.py``; it prints
``{"url": ...}`` once listening and serves until killed) so that its work never counts
against a client, and it does as little as possible per request: every body and every watch
block is built once, when a scenario is prepared, and then only written.

A scenario is named by the namespace of the request path
(``/api/v1/namespaces/<scenario>/pods``), so every client library reaches it through its
ordinary namespaced calls:

``list-N``
    LIST: N Pods at RV ``N+2`` (paginated by ``limit``/``continue``, or whole). WATCH: opens
    and stays silent.
``watch-N``
    LIST: empty at RV 1. WATCH: N ``ADDED`` events for N distinct Pods (a growing cache), at
    full speed, then silence.
``steady-N-R-S``
    LIST: as ``list-N``. WATCH: waits for ``POST /bench/go/<scenario>``, then sends ``R*S``
    ``MODIFIED`` events over those N Pods at R events/s, recording when each was written
    (``GET /bench/sendlog/<scenario>``).
``fanout-N-M``
    LIST: as ``list-N``. WATCH: waits for the go, then M ``MODIFIED`` events at full speed.

``GET /bench/prepare/<scenario>`` builds a scenario (untimed) and returns its sizes. Query
parameters other than ``watch``, ``limit`` and ``continue`` are ignored: every watch of a
scenario replays the same bytes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))

from podgen import PodEncoder, list_body, watch_line

#: Watch bytes are written in blocks of about this size (lines cut across block boundaries,
#: as TCP would cut them).
BLOCK_SIZE = 256 * 1024
#: How often a steady stream writes the events that fell due (seconds).
STEADY_TICK = 0.001
DEFAULT_PAGE = 500


@dataclass
class Scenario:
    name: str
    kind: str
    objects: int
    list_rv: int
    #: Encoded list items (shared between scenarios over the same Pods).
    items: list[bytes]
    #: Watch lines (steady) or blocks (watch, fanout).
    lines: list[bytes] = field(default_factory=list)
    blocks: list[bytes] = field(default_factory=list)
    rate: float = 0.0
    first_rv: int = 0
    pages: dict[tuple[int, int], bytes] = field(default_factory=dict)
    full: bytes | None = None
    go: anyio.Event = field(default_factory=anyio.Event)
    sendlog: list[float] = field(default_factory=list)
    event_bytes: float = 0.0
    events: int = 0

    def page(self, offset: int, limit: int) -> bytes:
        body = self.pages.get((offset, limit))
        if body is None:
            end = min(offset + limit, len(self.items))
            token = str(end) if end < len(self.items) else None
            body = list_body(
                self.items[offset:end],
                self.list_rv,
                continue_token=token,
                remaining=len(self.items) - end,
            )
            self.pages[(offset, limit)] = body
        return body

    def whole(self) -> bytes:
        if self.full is None:
            self.full = list_body(self.items, self.list_rv)
        return self.full


def _blocks(lines: list[bytes]) -> list[bytes]:
    data = b"".join(lines)
    return [data[i : i + BLOCK_SIZE] for i in range(0, len(data), BLOCK_SIZE)]


class BenchServer:
    """Each scenario's Pods live in the namespace its path names (an informer of one namespace
    drops objects of any other, as it should)."""

    def __init__(self) -> None:
        self.scenarios: dict[str, Scenario] = {}

    def items(self, n: int, namespace: str) -> list[bytes]:
        encode = PodEncoder(list_item=True, namespace=namespace).encode
        return [encode(i) for i in range(n)]

    def prepare(self, name: str) -> Scenario:
        scenario = self.scenarios.get(name)
        if scenario is not None:
            return scenario
        kind, *numbers = name.split("-")
        args = [int(x) for x in numbers]
        encode = PodEncoder(namespace=name).encode
        if kind == "list":
            (n,) = args
            scenario = Scenario(name, kind, n, n + 2, self.items(n, name))
        elif kind == "watch":
            (n,) = args
            lines = [watch_line("ADDED", encode(i)) for i in range(n)]
            scenario = Scenario(name, kind, 0, 1, [], blocks=_blocks(lines))
            scenario.events = n
            scenario.event_bytes = statistics.fmean(map(len, lines))
        elif kind in ("steady", "fanout"):
            n, m = (args[0], args[1] * args[2]) if kind == "steady" else (args[0], args[1])
            first = n + 3
            lines = [
                watch_line(
                    "MODIFIED", encode(j % n, resource_version=first + j, revision=1 + j // n)
                )
                for j in range(m)
            ]
            scenario = Scenario(name, kind, n, n + 2, self.items(n, name), first_rv=first)
            scenario.event_bytes = statistics.fmean(map(len, lines))
            scenario.events = m
            if kind == "steady":
                scenario.lines = lines
                scenario.rate = float(args[1])
            else:
                scenario.blocks = _blocks(lines)
        else:
            raise web.HTTPNotFound(text=f"unknown scenario {name!r}")
        if scenario.items:
            for offset in range(0, len(scenario.items), DEFAULT_PAGE):
                scenario.page(offset, DEFAULT_PAGE)
            scenario.whole()
        self.scenarios[name] = scenario
        return scenario

    # -- HTTP ------------------------------------------------------------------------------

    async def handle_prepare(self, request: web.Request) -> web.Response:
        scenario = self.prepare(request.match_info["scenario"])
        items = scenario.items
        info: dict[str, Any] = {
            "objects": scenario.objects,
            "events": scenario.events,
            "list_rv": scenario.list_rv,
            "first_rv": scenario.first_rv,
            "item_bytes": statistics.fmean(map(len, items)) if items else 0.0,
            "event_bytes": scenario.event_bytes,
        }
        return web.json_response(info)

    async def handle_go(self, request: web.Request) -> web.Response:
        self.prepare(request.match_info["scenario"]).go.set()
        return web.json_response({})

    async def handle_sendlog(self, request: web.Request) -> web.Response:
        scenario = self.prepare(request.match_info["scenario"])
        return web.json_response({"first_rv": scenario.first_rv, "times": scenario.sendlog})

    async def handle_pods(self, request: web.Request) -> web.StreamResponse:
        scenario = self.prepare(request.match_info["scenario"])
        if request.query.get("watch", "").lower() in ("1", "true"):
            return await self._watch(request, scenario)
        limit = int(request.query.get("limit") or 0)
        if limit <= 0:
            body = scenario.whole() if scenario.items else list_body([], scenario.list_rv)
        else:
            body = scenario.page(int(request.query.get("continue") or 0), limit)
        return web.Response(body=body, content_type="application/json")

    async def _watch(self, request: web.Request, scenario: Scenario) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        if scenario.kind in ("steady", "fanout"):
            await scenario.go.wait()
            scenario.go = anyio.Event()  # the next run waits for its own go
        if scenario.kind == "steady":
            await self._steady(response, scenario)
        else:
            for block in scenario.blocks:
                await response.write(block)
        await anyio.sleep_forever()  # cancelled when the client disconnects
        return response

    async def _steady(self, response: web.StreamResponse, scenario: Scenario) -> None:
        lines, rate = scenario.lines, scenario.rate
        log: list[float] = []
        scenario.sendlog = log
        start = time.monotonic()
        sent = 0
        while sent < len(lines):
            now = time.monotonic()
            due = min(len(lines), int((now - start) * rate) + 1)
            if due > sent:
                log.extend([now] * (due - sent))
                await response.write(b"".join(lines[sent:due]))
                sent = due
            await anyio.sleep(max(0.0, min(STEADY_TICK, start + sent / rate - time.monotonic())))


async def serve(port: int) -> None:
    server = BenchServer()
    app = web.Application()
    app.router.add_get("/api/v1/namespaces/{scenario}/pods", server.handle_pods)
    app.router.add_get("/bench/prepare/{scenario}", server.handle_prepare)
    app.router.add_post("/bench/go/{scenario}", server.handle_go)
    app.router.add_get("/bench/sendlog/{scenario}", server.handle_sendlog)
    runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    host, bound = runner.addresses[0][:2]
    print(json.dumps({"url": f"http://{host}:{bound}"}), flush=True)
    try:
        await anyio.sleep_forever()
    finally:
        await runner.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    try:
        anyio.run(serve, args.port)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
