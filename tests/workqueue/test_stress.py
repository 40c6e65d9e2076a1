"""Stress: 16 workers and random concurrent adds; never two workers on one key, none lost."""

from __future__ import annotations

import asyncio
import random

import anyio.lowlevel

from aioinformer.errors import QueueShutDown
from aioinformer.workqueue import WorkQueue

WORKERS = 16
PRODUCERS = 8
ADDS_PER_PRODUCER = 600
KEYS = [f"ns/obj-{i}" for i in range(40)]


async def test_sixteen_workers_never_share_a_key_and_see_every_last_add() -> None:
    """No key is processed by two workers at once; each key is processed after its last add."""
    rng = random.Random(20240601)
    q: WorkQueue[str] = WorkQueue(name="stress")
    generation = dict.fromkeys(KEYS, 0)  # bumped on every add
    seen = dict.fromkeys(KEYS, 0)  # highest generation a processing started with
    active: set[str] = set()
    overlaps: list[str] = []
    max_parallel = 0
    processed = 0

    async def producer(seed: int) -> None:
        local = random.Random(seed)
        for _ in range(ADDS_PER_PRODUCER):
            key = local.choice(KEYS)
            generation[key] += 1
            q.add(key)
            for _ in range(local.randrange(3)):
                await anyio.lowlevel.checkpoint()  # interleave with workers and other producers

    async def worker(seed: int) -> None:
        nonlocal max_parallel, processed
        local = random.Random(seed)
        while True:
            try:
                key = await q.get()
            except QueueShutDown:
                return
            try:
                if key in active:
                    overlaps.append(key)
                active.add(key)
                max_parallel = max(max_parallel, len(active))
                seen[key] = max(seen[key], generation[key])
                for _ in range(local.randrange(4)):
                    await anyio.lowlevel.checkpoint()  # hold the key across other tasks' steps
                active.discard(key)
                processed += 1
            finally:
                q.done(key)

    async with asyncio.TaskGroup() as group:
        workers = [group.create_task(worker(rng.randrange(2**32))) for _ in range(WORKERS)]
        async with asyncio.TaskGroup() as producers:
            for _ in range(PRODUCERS):
                producers.create_task(producer(rng.randrange(2**32)))
        await asyncio.wait_for(q.shutdown_with_drain(), 30.0)
        await asyncio.wait_for(asyncio.gather(*workers), 30.0)

    assert overlaps == []
    assert seen == generation
    assert max_parallel > 1  # the workers really ran concurrently
    assert processed < PRODUCERS * ADDS_PER_PRODUCER  # duplicates collapsed
    assert len(q) == 0
