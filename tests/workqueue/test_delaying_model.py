"""DelayingQueue against a reference model on a fake clock (hypothesis stateful testing)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from aioinformer.testing import FakeClock
from aioinformer.workqueue import DelayingQueue

from ._support import RecordingProvider
from .test_queue_model import ITEMS, WorkQueueModel

R = TypeVar("R")
DELAYS = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 3.5])


class DelayingQueueModel(WorkQueueModel):
    """Waiting items keep their earliest deadline; due items are added in deadline order."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting: dict[str, tuple[float, int]] = {}
        self.sequence = 0
        self.retries = 0

    def add_after(self, item: str, delay: float, now: float) -> None:
        if self.shutting_down:
            return
        self.retries += 1
        if delay <= 0:
            self.add(item)
            return
        deadline = now + delay
        if item in self.waiting and self.waiting[item][0] <= deadline:
            return
        self.sequence += 1
        self.waiting[item] = (deadline, self.sequence)

    def add_ready(self, now: float) -> None:
        due = sorted((v, k) for k, v in self.waiting.items() if v[0] <= now)
        for _, item in due:
            del self.waiting[item]
            self.add(item)

    def shutdown(self) -> None:
        self.shutting_down = True
        self.waiting.clear()


class DelayingQueueMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = FakeClock(1000.0)
        self.provider = RecordingProvider()
        self.q: DelayingQueue[str] = DelayingQueue(
            name="delaying", metrics_provider=self.provider, clock=self.clock
        )
        self.model = DelayingQueueModel()

    def run(self, awaitable: Awaitable[R]) -> R:
        async def guarded() -> R:
            return await asyncio.wait_for(awaitable, 5.0)

        return self.loop.run_until_complete(guarded())

    @rule(item=ITEMS)
    def add(self, item: str) -> None:
        self.q.add(item)
        self.model.add(item)

    @rule(item=ITEMS, delay=DELAYS)
    def add_after(self, item: str, delay: float) -> None:
        self.q.add_after(item, delay)
        self.model.add_after(item, delay, self.clock.now())

    @rule(seconds=st.sampled_from([0.0, 0.5, 1.0, 1.5, 4.0]))
    def advance_clock(self, seconds: float) -> None:
        """The clock moves: due items join the queue (at the queue's next operation)."""
        self.clock.jump(seconds)
        self.model.add_ready(self.clock.now())

    @precondition(lambda self: bool(self.model.queue))
    @rule()
    def get(self) -> None:
        assert self.run(self.q.get()) == self.model.get()

    @precondition(lambda self: bool(self.model.processing))
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        item = data.draw(st.sampled_from(sorted(self.model.processing)))
        self.q.done(item)
        self.model.done(item)

    @rule()
    def shutdown(self) -> None:
        self.q.shutdown()
        self.model.shutdown()

    @invariant()
    def same_queue_and_waiting_set(self) -> None:
        assert len(self.q) == len(self.model.queue)
        assert self.q.waiting_count == len(self.model.waiting)
        assert self.q.shutting_down == self.model.shutting_down

    @invariant()
    def next_ready_at_is_the_earliest_deadline(self) -> None:
        earliest = min((v[0] for v in self.model.waiting.values()), default=None)
        assert self.q.next_ready_at == earliest

    @invariant()
    def retries_metric_counts_every_add_after(self) -> None:
        assert self.provider.metrics[("delaying", "retries")].value == self.model.retries

    def teardown(self) -> None:
        self.q.shutdown()
        assert self.q.next_ready_at is None
        self.loop.close()


DelayingQueueMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None
)
TestDelayingQueueModel = DelayingQueueMachine.TestCase
