"""Getters that leave without an item (cancelled) are dropped without searching the queue of
waiters (issue 20): wake-ups skip them, and they are pruned once they outnumber the live
ones, so a worker pool that is cancelled and restarted again and again holds no garbage."""

from __future__ import annotations

import anyio
import anyio.lowlevel

from aioinformer.workqueue import WorkQueue


async def test_cancelled_getters_are_skipped_and_pruned() -> None:
    queue: WorkQueue[str] = WorkQueue()
    got: list[str] = []

    async def worker() -> None:
        got.append(await queue.get())

    with anyio.fail_after(10):
        async with anyio.create_task_group() as live:
            for _ in range(3):
                live.start_soon(worker)
            for _round in range(20):  # 20 rounds of 5 getters cancelled while waiting
                async with anyio.create_task_group() as doomed:
                    for _ in range(5):
                        doomed.start_soon(worker)
                    await anyio.wait_all_tasks_blocked()
                    doomed.cancel_scope.cancel()
            # 100 dead futures left behind, pruned as they piled up: few remain.
            assert len(queue._getters) - 3 <= max(8, len(queue._getters) // 2)
            for item in "abc":
                queue.add(item)
        assert sorted(got) == ["a", "b", "c"]  # every live getter got one, none was lost
        for item in "abc":
            queue.done(item)
        assert len(queue) == 0
