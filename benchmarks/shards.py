"""``make bench`` (issue 14.7): what one replica ingests and holds with 1, 2 and 4 shards.

One workload: ``objects`` ConfigMaps of about 1 KB, then ``updates`` updates spread over them,
in the fake API server (in process). For each shard count N, N replicas each run one sharded
informer (``equal_shards(N)[i]``), one after the other: list, watch the updates, settle. Per
replica it reports what crossed the wire (objects listed + watch events received, before the
client-side filter), what it kept, its cache size and the memory the client side still holds
once settled (tracemalloc, allocations of the fake server's modules excluded; one unreported
replica runs first, so imports and one-time caches are not counted). Twice: with the server
filtering (feature gate on, ``shardInfo`` seen) and as an old server (gate off: everything
arrives, the client filters).

Each replica should ingest and hold about 1/N of the objects with the gate on; with it off it
still holds 1/N but ingests everything.

Run: ``python benchmarks/shards.py [--mode full|quick|smoke]``; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tracemalloc
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel

from aioinformer import EventType, KubeClient, SharedIndexInformer, equal_shards
from aioinformer._config import WatchConfig
from aioinformer._listwatch import Resource
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.testing import FakeApiServer

CONFIGMAPS = Resource.parse("v1/configmaps")
SIZES = {"full": (10_000, 5_000), "quick": (4_000, 2_000), "smoke": (200, 100)}
SHARD_COUNTS = (1, 2, 4)


@dataclass
class Replica:
    shards: int
    index: int
    gate: bool
    received: int
    kept: int
    cached: int
    kib: float


def _body(i: int, generation: int = 0) -> dict[str, Any]:
    return {
        "metadata": {"name": f"cm-{i:06d}", "labels": {"app": "bench", "gen": str(generation)}},
        "data": {"payload": f"{i:06d}-" + "x" * 1000},
    }


async def _replica(
    server: FakeApiServer, shards: int, index: int, gate: bool, updates: int, generation: int
) -> Replica:
    selector = equal_shards(shards)[index]
    current = server.objects.list("configmaps")
    updated = [i % len(current) for i in range(updates)]
    expected = sum(1 for i in updated if selector.matches(current[i]))
    del current
    gc.collect()
    before = _client_memory()
    async with KubeClient(server.api_client()) as client:
        informer = SharedIndexInformer(
            KubeListerWatcher(client, CONFIGMAPS),
            shard_selector=selector,
            watch=WatchConfig(page_size=0),
        )
        async with informer:
            await informer.wait_for_cache_sync()
            async with anyio.create_task_group() as tg:
                seen = anyio.Event()
                tg.start_soon(_count_updates, informer, expected, seen)
                await anyio.lowlevel.checkpoint()
                for i in updated:
                    server.objects.update("configmaps", _body(i, generation), namespace="default")
                await seen.wait()
            gc.collect()
            held = _client_memory() - before
            stats = informer.statistics()
            shard = stats.shard
            assert shard is not None
            return Replica(
                shards,
                index,
                gate,
                received=shard.kept + shard.dropped,
                kept=shard.kept,
                cached=stats.objects,
                kib=held / 1024,
            )


def _client_memory() -> int:
    """Bytes traced, except those allocated by the fake API server's own modules."""
    stats = tracemalloc.take_snapshot().statistics("filename")
    return sum(
        stat.size
        for stat in stats
        if "/aioinformer/testing/" not in stat.traceback[0].filename.replace("\\", "/")
    )


async def _count_updates(informer: SharedIndexInformer, expected: int, seen: anyio.Event) -> None:
    """Set ``seen`` once ``expected`` updates reached a consumer of the informer."""
    count = 0
    if expected:
        async for event in informer.events():
            if event.type is EventType.UPDATED:
                count += 1
                if count >= expected:
                    break
    seen.set()


async def _run(objects: int, updates: int) -> list[Replica]:
    rows: list[Replica] = []
    generation = 0
    for gate in (True, False):
        async with FakeApiServer(system_objects=False) as server:  # its own ConfigMaps only
            server.faults.set_sharded_list_and_watch(gate)
            for i in range(objects):
                server.objects.create("configmaps", _body(i), namespace="default")
            # A first replica, not reported: imports and one-time caches are not counted.
            await _replica(server, 1, 0, gate, 0, generation)
            for shards in SHARD_COUNTS:
                for index in range(shards):
                    generation += 1
                    rows.append(await _replica(server, shards, index, gate, updates, generation))
    return rows


def table(rows: list[Replica], objects: int, updates: int) -> str:
    lines = [
        f"Sharded informers: {objects} ConfigMaps (~1 KB), {updates} updates while watching",
        "",
        "| server | shards | replica | received | kept | cached | held (KiB) | held / 1 shard |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for gate in (True, False):
        whole = next(r.kib for r in rows if r.gate is gate and r.shards == 1)
        for r in (r for r in rows if r.gate is gate):
            server = "filters (gate on)" if gate else "old (gate off)"
            share = f"{r.kib / whole:.2f}" if whole > 0 else "-"
            lines.append(
                f"| {server} | {r.shards} | {r.index} | {r.received} | {r.kept} | {r.cached}"
                f" | {r.kib:,.0f} | {share} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(SIZES), default="full")
    args = parser.parse_args(argv)
    objects, updates = SIZES[args.mode]
    tracemalloc.start()
    rows = asyncio.run(_run(objects, updates))
    tracemalloc.stop()
    print(table(rows, objects, updates))
    return 0


if __name__ == "__main__":
    sys.exit(main())
