"""The membership protocol in the simulator: never two servers of a hash, then one owner each.

Every run checks, after each of its (thousands of) events, that no two running replicas serve
a common hash and that every running reconcile is inside its replica's ranges; at the end
that no two reconciles of one object on different replicas overlapped, and that from
``Config.bound()`` after the last fault on every hash is served by exactly one live replica,
its ring owner (``tests/sharding/sim.py``).

The default run is short. A longer sweep: ``AIOINFORMER_SIM_SEEDS=500
AIOINFORMER_SIM_EXAMPLES=500 pytest tests/sharding/test_sim.py``, or
``python -m tests.sharding.sweep --seeds 5000`` (also ``--lag``, ``--write``).

The second half shows that the checks have teeth: with one rule of the protocol broken, the
same kind of scenario ends in a violation.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aioinformer._replicas import _lease_view, _membership
from aioinformer._replicas._handover import ShardTiming, StopAll
from aioinformer._replicas._membership import Phase, Plan, ReplicaState, plan
from aioinformer._sharding._ranges import EMPTY, FULL

from .scenarios import KINDS, MAX_REPLICAS, random_scenario, scenario
from .sim import Config, Op, Planner, Sim, Violation

SEEDS = int(os.environ.get("AIOINFORMER_SIM_SEEDS", "8"))
EXAMPLES = int(os.environ.get("AIOINFORMER_SIM_EXAMPLES", "8"))


def run(ops: list[Op], seed: int, *, config: Config | None = None, planner: Planner = plan) -> Sim:
    sim = Sim(config or Config(), seed, planner=planner)
    sim.run(ops)
    return sim


def joins(*names: str) -> list[Op]:
    return [Op(0.0, "join", name) for name in names]


NAMED: dict[str, list[Op]] = {
    "three start together": joins("r0", "r1", "r2"),
    "one of three is killed": [*joins("r0", "r1", "r2"), Op(30, "kill", "r1")],
    "one of three leaves": [*joins("r0", "r1", "r2"), Op(30, "leave", "r1")],
    "all leave": [*joins("r0", "r1"), Op(30, "leave", "r0"), Op(30, "leave", "r1")],
    "a fourth joins": [*joins("r0", "r1", "r2"), Op(30, "join", "r3")],
    "join and leave at once": [*joins("r0", "r1"), Op(30, "leave", "r0"), Op(30, "join", "r2")],
    "partition past the lease, resume": [
        *joins("r0", "r1"),
        Op(30, "partition", "r1", True),
        Op(60, "heal", "r1"),
    ],
    "partition past the lease, relist": [
        *joins("r0", "r1"),
        Op(30, "partition", "r1", True),
        Op(60, "heal", "r1", True),
    ],
    "partition shorter than the renew deadline": [
        *joins("r0", "r1"),
        Op(30, "partition", "r1"),
        Op(36, "heal", "r1"),
    ],
    "the owner's cache stalls": [*joins("r0", "r1"), Op(30, "stall", "r0"), Op(55, "heal", "r0")],
    "writes land late": [*joins("r0", "r1"), Op(30, "delay", "r1"), Op(60, "heal", "r1")],
    "someone deletes a lease": [*joins("r0", "r1", "r2"), Op(30, "delete", "r1")],
    "slow cache, then a kill": [*joins("r0", "r1"), Op(1, "slow", "r0"), Op(30, "kill", "r1")],
    "one of three is paused past its lease, then resumes": [
        *joins("r0", "r1", "r2"),
        Op(30, "pause", "r1"),
        Op(60, "heal", "r1"),
    ],
    "a pause between the renew deadline and the lease": [
        *joins("r0", "r1"),
        Op(30, "pause", "r1"),
        Op(42, "heal", "r1"),
    ],
    "a pause shorter than the renew deadline": [
        *joins("r0", "r1"),
        Op(30, "pause", "r1"),
        Op(35, "heal", "r1"),
    ],
    "one of three is paused for good": [*joins("r0", "r1", "r2"), Op(30, "pause", "r1")],
}


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("name", list(NAMED))
def test_named_scenarios(name: str, seed: int) -> None:
    sim = run(NAMED[name], seed)
    assert sim.converged_at is not None
    assert sim.converged_at - sim.last_fault <= sim.bound


@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_scenarios(seed: int) -> None:
    run(random_scenario(random.Random(seed)), seed)


_steps = st.lists(
    st.tuples(
        st.one_of(st.sampled_from([0.0, 1.0, 10.0, 15.0]), st.floats(0, 40)),
        st.integers(0, len(KINDS) - 1),
        st.integers(0, MAX_REPLICAS - 1),
        st.booleans(),
    ),
    max_size=7,
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(1, 4), _steps, st.integers(0, 2**32 - 1))
def test_hypothesis_scenarios(
    initial: int, steps: list[tuple[float, int, int, bool]], seed: int
) -> None:
    run(scenario(initial, steps), seed)


def test_everything_is_served_once_at_the_end() -> None:
    sim = run(NAMED["one of three is killed"], 0)
    live = sim.live()
    assert sorted(r.name for r in live) == ["r0", "r2"]
    assert live[0].state.active | live[1].state.active == FULL
    assert live[0].state.active.isdisjoint(live[1].state.active)
    assert sim.replicas["r1"].state.phase is Phase.MEMBER  # killed: its last state
    assert sim.server.leases["r1"].holder == ""  # fenced
    assert len(sim.intervals) > 100


# ---- the checks catch broken rules ------------------------------------------------------------


def _no_catch_up(state: ReplicaState, view: Any, now: float, **kwargs: Any) -> Plan:
    return plan(state, replace(view, rv=2**62), now, **kwargs)  # checks claims at once


def _no_horizon(state: ReplicaState, view: Any, now: float, **kwargs: Any) -> Plan:
    return plan(state, replace(view, listed_at=float("-inf")), now, **kwargs)


def _stop_keeping_claims(
    s: ReplicaState, actions: list[Any], *, rejoin_at: float | None = None
) -> ReplicaState:
    if s.serving:
        actions.append(StopAll())
    keep = s.phase is Phase.MEMBER
    rest = (s.serving | s.published) - s.claimed
    claims = (*s.claims, (rest, None)) if keep and rest else (s.claims if keep else ())
    s = replace(s, active=EMPTY, draining=EMPTY, claims=claims, renewed_at=None, lost=False)
    return s if rejoin_at is None else replace(s, ready=False, watched_from=rejoin_at)


@contextmanager
def broken(rule: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    options: dict[str, Any] = {}
    if rule == "no renew deadline":
        timing = ShardTiming()
        object.__setattr__(timing, "renew_deadline", 1e9)
        options["config"] = Config(timing=timing)
    elif rule == "release before drained":
        monkeypatch.setattr(ReplicaState, "publishing", property(lambda s: s.active | s.claimed))
    elif rule == "tombstones do not count":
        monkeypatch.setattr(
            _lease_view.ObservedLease, "counts", lambda s, now, d: s.record.held and not s.deleted
        )
    elif rule == "no horizon after a list":
        options["planner"] = _no_horizon
    elif rule == "conflicts ignored":
        monkeypatch.setattr(_lease_view.LeaseView, "conflicts", lambda *args: EMPTY)
    elif rule == "checks before the cache caught up":
        options["planner"] = _no_catch_up
    elif rule == "claims keep their rv across a stop":
        monkeypatch.setattr(_membership, "_stop_all", _stop_keeping_claims)
    yield options


BROKEN: dict[str, list[Op]] = {
    "no renew deadline": [
        *joins("r0", "r1"),
        Op(30, "partition", "r1", True),
        Op(60, "heal", "r1"),
    ],
    "release before drained": [*joins("r0", "r1"), Op(30, "join", "r2")],
    "tombstones do not count": [*joins("r0", "r1"), Op(30, "delete", "r1")],
    "no horizon after a list": [*joins("r0", "r1"), Op(30, "delete", "r1"), Op(30, "join", "r2")],
    "conflicts ignored": [
        *joins("r0", "r1"),
        Op(30, "partition", "r1", True),
        Op(60, "heal", "r1"),
    ],
    "checks before the cache caught up": [
        *joins("r0", "r1", "r2"),
        *(Op(10, "stall", n) for n in ("r0", "r1")),
        *(Op(60, "heal", n) for n in ("r0", "r1")),
    ],
    "claims keep their rv across a stop": [
        *joins("r0", "r1"),
        Op(14.5, "stall", "r1"),
        Op(16, "partition", "r1"),
        Op(50, "heal", "r1"),
    ],
}


@pytest.mark.parametrize("rule", list(BROKEN))
def test_a_broken_rule_is_caught(rule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run(BROKEN[rule], 0)  # the protocol as it is: safe
    with broken(rule, monkeypatch) as options:
        for seed in range(4):
            try:
                run(BROKEN[rule], seed, **options)
            except Violation as exc:
                assert "converged" not in str(exc)
                return
    pytest.fail(f"breaking {rule!r} went unnoticed")


# ---- issue 21: pauses, hand-over time, no second move -------------------------------------------

FAULTS: dict[str, list[Op]] = {
    "kill": [*joins("r0", "r1", "r2"), Op(30, "kill", "r1")],
    "pause": [*joins("r0", "r1", "r2"), Op(30, "pause", "r1"), Op(60, "heal", "r1")],
    "partition": [*joins("r0", "r1", "r2"), Op(30, "partition", "r1", True), Op(60, "heal", "r1")],
}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_hand_over_takes_at_most_one_and_a_half_lease_durations(fault: str, seed: int) -> None:
    """Virtual time: after a replica dies, pauses or is cut off, the others serve its ranges
    within 1.5 lease durations (the lease must look expired first: one lease duration after
    its last renewal was seen; then a fence, a claim and the cache catching up)."""
    sim = run(FAULTS[fault], seed)
    [(op, seconds)] = sim.hand_overs
    assert op.kind == fault
    assert seconds is not None
    assert seconds <= 1.5 * sim.config.timing.lease_duration


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fault", ["pause", "partition"])
def test_a_replica_that_comes_back_moves_nothing_for_a_lease_duration(
    fault: str, seed: int
) -> None:
    """A replica paused or cut off past its lease comes back to find its lease fenced: it
    rejoins not ready, so the ranges the others took over stay put (no second move right after
    the hand-over); it takes its share back as a joiner, a lease duration later."""
    sim = run(FAULTS[fault], seed)
    assert sim.returns == []
    assert sim.replicas["r1"].state.ready  # rejoined in the end, with its share
    assert sim.replicas["r1"].state.active


def test_a_reconcile_that_spans_a_pause_does_not_write() -> None:
    """Virtual time: r1 is paused (SIGSTOP) with reconciles in flight; its clock goes on past
    its deadline; on resume their own timers run first, before anything else of r1. Their
    writes are refused by the fence (the deadline is read from the clock at the write), while
    r0 and r2, which took the ranges over, reconciled the same objects and wrote."""
    sim = run(FAULTS["pause"], 0, config=Config(max_reconcile=8.0, work_gap=0.1))
    frozen = [i for i in sim.intervals if i.replica == "r1" and i.paused]
    assert frozen and all(i.refused and not i.wrote for i in frozen)
    pause, resume = 30.0, 60.0
    taken_over = {
        i.obj for i in sim.intervals if i.replica != "r1" and i.wrote and pause < i.start < resume
    }
    assert {i.obj for i in frozen} & taken_over
    assert sim.refused >= len(frozen)
