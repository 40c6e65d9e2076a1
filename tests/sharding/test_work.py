"""The sharded controller's work layer (``_sharding._work``) as tables, without I/O."""

from __future__ import annotations

import anyio
import pytest

from aioinformer._replicas._handover import Resume, Start, StopAll, StopTaking
from aioinformer._replicas._work import ShardWork
from aioinformer._sharding._ranges import EMPTY, HashRanges
from aioinformer._sharding._selector import FIELD_UID, hash_field

LOW = HashRanges([(0, 1 << 63)])
HIGH = HashRanges([(1 << 63, 1 << 64)])
# SOTA §1.7: "ab" hashes into the lower half, "a" into the upper one.
OBJ_LOW = {"metadata": {"name": "low", "namespace": "ns", "uid": "ab"}}
OBJ_HIGH = {"metadata": {"name": "high", "namespace": "ns", "uid": "a"}}


class Harness:
    def __init__(self) -> None:
        self.queued: list[str] = []
        self.drained: list[HashRanges] = []
        self.work = ShardWork(
            name="t",
            field=FIELD_UID,
            enqueue=self.queued.append,
            report_drained=self.drained.append,
        )

    def act(self, action: object) -> None:
        self.work.on_action(action, lambda ranges: None)  # type: ignore[arg-type]


def test_only_keys_of_taken_ranges_are_queued_and_admitted() -> None:
    h = Harness()
    assert hash_field("ab") in LOW and hash_field("a") in HIGH
    h.work.offer(OBJ_LOW)
    h.work.offer(OBJ_HIGH)
    assert h.queued == []
    h.act(Start(LOW))
    h.work.offer(OBJ_LOW)
    h.work.offer(OBJ_HIGH)
    assert h.queued == ["ns/low"]
    assert h.work.admit("ns/low") is not None
    assert h.work.admit("ns/high") is None and h.work.admit("ns/x") is None
    assert h.work.skipped == 2
    h.work.finish("ns/low")


@pytest.mark.parametrize("running", [False, True])
def test_stopping_reports_drained_once_no_reconcile_runs(running: bool) -> None:
    """A stopped range is reported drained at once when idle, else when its last reconcile
    ends; a resumed one is taken again and not reported."""
    h = Harness()
    h.act(Start(LOW | HIGH))
    h.work.offer(OBJ_LOW)
    if running:
        assert h.work.admit("ns/low") is not None
    h.act(StopTaking(LOW))
    assert h.work.taking == HIGH
    assert h.drained == ([] if running else [LOW])
    if running:
        assert h.work.admit("ns/low") is None  # no new reconcile on a stopping range
        h.work.finish("ns/low")
        assert h.drained == [LOW]


def test_a_resumed_range_is_taken_again_and_never_reported() -> None:
    h = Harness()
    h.act(Start(LOW))
    h.work.offer(OBJ_LOW)
    assert h.work.admit("ns/low") is not None
    h.act(StopTaking(LOW))
    h.act(Resume(LOW))
    h.work.finish("ns/low")
    assert (h.work.taking, h.work.stopping, h.drained) == (LOW, EMPTY, [])


async def test_stop_all_cancels_running_reconciles_at_once() -> None:
    h = Harness()
    h.act(Start(LOW))
    h.work.offer(OBJ_LOW)
    assert h.work.admit("ns/low") is not None
    reached = anyio.Event()
    cancelled: list[bool] = []

    async def reconcile() -> None:
        with h.work.cancel_group.scope() as scope:
            reached.set()
            await anyio.sleep_forever()
        cancelled.append(scope.cancelled_caught)

    async with anyio.create_task_group() as tg:
        tg.start_soon(reconcile)
        await reached.wait()
        h.act(StopAll())
    assert cancelled == [True]
    assert h.work.taking == EMPTY and h.work.stop_alls == 1
    assert h.work.admit("ns/low") is None


def test_objects_of_ranges_not_kept_exit_the_cache() -> None:
    h = Harness()
    h.work.offer(OBJ_LOW)
    h.work.offer(OBJ_HIGH)
    exits = h.work.exits([OBJ_LOW, OBJ_HIGH], LOW)
    assert [(e.key, e.obj) for e in exits] == [("ns/high", OBJ_HIGH)]
