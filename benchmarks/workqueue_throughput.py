"""Work queue throughput against a baseline, in one run.

N workers take items, "process" them (no work) and mark them done; producers add items with
25% duplicates. Variants:

* ``baseline-asyncio.Queue``: a plain ``asyncio.Queue`` (no deduplication, no in-flight
  tracking) — the floor of handing items between tasks;
* ``WorkQueue``: aioinformer's queue (dirty and processing sets: deduplicated, never two
  workers on one item);
* ``RateLimitingQueue``: the same behind the rate-limiting layer (items added with ``add``).

Run: ``python benchmarks/workqueue_throughput.py [--items N] [--workers N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from typing import Any

from aioinformer.errors import QueueShutDown
from aioinformer.workqueue import RateLimitingQueue, WorkQueue


async def run_asyncio_queue(items: list[int], workers: int) -> float:
    queue: asyncio.Queue[int] = asyncio.Queue()

    async def worker() -> None:
        while True:
            await queue.get()
            queue.task_done()

    start = time.perf_counter()
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(worker()) for _ in range(workers)]
        for item in items:
            queue.put_nowait(item)
            if item % 64 == 0:
                await asyncio.sleep(0)
        await queue.join()
        for task in tasks:
            task.cancel()
    return time.perf_counter() - start


async def run_workqueue(items: list[int], workers: int, factory: Callable[[], Any]) -> float:
    queue = factory()

    async def worker() -> None:
        with contextlib.suppress(QueueShutDown):
            while True:
                item = await queue.get()
                queue.done(item)

    start = time.perf_counter()
    async with asyncio.TaskGroup() as tg:
        for _ in range(workers):
            tg.create_task(worker())
        for item in items:
            queue.add(item)
            if item % 64 == 0:
                await asyncio.sleep(0)
        await queue.shutdown_with_drain()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    # 25% duplicates: item i is i, except every 4th repeats its predecessor.
    items = [i - 1 if i % 4 == 3 else i for i in range(args.items)]
    results = {
        "baseline-asyncio.Queue": asyncio.run(run_asyncio_queue(items, args.workers)),
        "WorkQueue": asyncio.run(run_workqueue(items, args.workers, WorkQueue)),
        "RateLimitingQueue": asyncio.run(run_workqueue(items, args.workers, RateLimitingQueue)),
    }
    base = results["baseline-asyncio.Queue"]
    print(f"work queue throughput: {args.items} adds (25% duplicates), {args.workers} workers")
    print(f"{'variant':<24}{'seconds':>9}{'adds/s':>12}{'x base':>8}")
    for name, seconds in results.items():
        print(f"{name:<24}{seconds:>9.2f}{args.items / seconds:>12,.0f}{base / seconds:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
