"""WorkQueue against a plain reference model (hypothesis stateful testing)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from aioinformer.errors import QueueShutDown
from aioinformer.testing import FakeClock
from aioinformer.workqueue import WorkQueue

from ._support import RecordingProvider

R = TypeVar("R")
ITEMS = st.sampled_from(["a", "b", "c", "d", "e"])


class WorkQueueModel:
    """client-go's documented queue semantics, written as plainly as possible."""

    def __init__(self) -> None:
        self.queue: list[str] = []
        self.dirty: set[str] = set()
        self.processing: set[str] = set()
        self.shutting_down = False

    def add(self, item: str) -> None:
        if self.shutting_down or item in self.dirty:
            return
        self.dirty.add(item)
        if item not in self.processing:
            self.queue.append(item)

    def get(self) -> str:
        item = self.queue.pop(0)
        self.dirty.discard(item)
        self.processing.add(item)
        return item

    def done(self, item: str) -> None:
        self.processing.discard(item)
        if item in self.dirty:
            self.queue.append(item)


class WorkQueueMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = FakeClock(1000.0)
        self.provider = RecordingProvider()
        self.q: WorkQueue[str] = WorkQueue(
            name="model", metrics_provider=self.provider, clock=self.clock
        )
        self.model = WorkQueueModel()

    def run(self, awaitable: Awaitable[R]) -> R:
        async def guarded() -> R:
            return await asyncio.wait_for(awaitable, 5.0)

        return self.loop.run_until_complete(guarded())

    @rule(item=ITEMS)
    def add(self, item: str) -> None:
        self.q.add(item)
        self.model.add(item)

    @precondition(lambda self: bool(self.model.queue))
    @rule()
    def get(self) -> None:
        assert self.run(self.q.get()) == self.model.get()

    @precondition(lambda self: not self.model.queue and self.model.shutting_down)
    @rule()
    def get_after_shutdown_raises(self) -> None:
        with pytest.raises(QueueShutDown):
            self.run(self.q.get())

    @precondition(lambda self: bool(self.model.processing))
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        item = data.draw(st.sampled_from(sorted(self.model.processing)))
        self.q.done(item)
        self.model.done(item)

    @rule()
    def shutdown(self) -> None:
        self.q.shutdown()
        self.model.shutting_down = True

    @rule(seconds=st.sampled_from([0.0, 0.25, 1.0]))
    def tick(self, seconds: float) -> None:
        self.clock.jump(seconds)

    @invariant()
    def same_length_and_state(self) -> None:
        assert len(self.q) == len(self.model.queue)
        assert self.q.shutting_down == self.model.shutting_down

    @invariant()
    def depth_metric_counts_dirty_items(self) -> None:
        # depth goes up on adds of non-dirty items and down on get: it equals the dirty set.
        assert self.provider.metrics[("model", "depth")].value == len(self.model.dirty)

    def teardown(self) -> None:
        self.q.shutdown()
        self.loop.close()


WorkQueueMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None
)
TestWorkQueueModel = WorkQueueMachine.TestCase
