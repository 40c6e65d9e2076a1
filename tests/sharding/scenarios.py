"""Fault scenarios for the simulator: any list of abstract steps becomes valid operations.

A step is ``(gap, kind, target, option)``: wait ``gap`` seconds, then apply ``KINDS[kind]`` to
the ``target``-th replica it can apply to (a join when there is none). Every stall and delay is
healed at the end, as an informer's idle deadline and a request timeout would end them.
Hypothesis draws steps directly (and shrinks them); :func:`random_scenario` draws them from a
seed for the sweeps.
"""

from __future__ import annotations

import random

from .sim import Op, OpKind

Step = tuple[float, int, int, bool]
KINDS: tuple[OpKind, ...] = (
    "join",
    "leave",
    "kill",
    "partition",
    "stall",
    "delay",
    "heal",
    "slow",
    "delete",
    "pause",
)
MAX_REPLICAS = 6


def scenario(initial: int, steps: list[Step]) -> list[Op]:
    """``initial`` replicas join at 0, then the steps, then heals for stalls and delays."""
    ops = [Op(0.0, "join", f"r{i}") for i in range(initial)]
    running = [f"r{i}" for i in range(initial)]
    impaired: dict[str, set[OpKind]] = {}  # replica -> its partition, stall, delay
    left: set[str] = set()
    named, t = initial, 0.0
    for gap, kind_index, target, option in steps:
        t += gap
        kind = KINDS[kind_index % len(KINDS)]
        pools = {
            "join": [],
            "leave": [n for n in running if n not in left],
            "kill": running,
            "heal": [n for n in running if n in impaired],
            "slow": running,
            "delete": [n for n in running if n not in left],
        }
        pool = pools.get(kind, [n for n in running if kind not in impaired.get(n, ())])
        if not pool:
            kind = "join"
        if kind == "join":
            if len(running) >= MAX_REPLICAS:
                continue
            name = f"r{named}"
            named += 1
            running.append(name)
        else:
            name = pool[target % len(pool)]
        ops.append(Op(t, kind, name, option))
        if kind == "leave":
            left.add(name)
        elif kind == "kill":
            running.remove(name)
            impaired.pop(name, None)
        elif kind in ("partition", "stall", "delay", "pause"):
            impaired.setdefault(name, set()).add(kind)
        elif kind == "heal":
            del impaired[name]
    for name, kinds in impaired.items():
        if kinds - {"partition", "pause"}:
            t += 5.0
            ops.append(Op(t, "heal", name))
    return ops


def random_gap(rng: random.Random, lease_duration: float, renew_deadline: float) -> float:
    """At once, soon, later, or near a lease duration or renew deadline (where races are)."""
    return rng.choice(
        [
            0.0,
            rng.uniform(0, 3),
            rng.uniform(3, 40),
            max(0.0, lease_duration + rng.uniform(-2, 2)),
            max(0.0, renew_deadline + rng.uniform(-2, 2)),
        ]
    )


def random_scenario(
    rng: random.Random,
    *,
    max_steps: int = 8,
    lease_duration: float = 15.0,
    renew_deadline: float = 10.0,
) -> list[Op]:
    steps: list[Step] = [
        (
            random_gap(rng, lease_duration, renew_deadline),
            rng.randrange(len(KINDS)),
            rng.randrange(MAX_REPLICAS),
            rng.random() < 0.5,
        )
        for _ in range(rng.randint(1, max_steps))
    ]
    return scenario(rng.randint(1, 4), steps)
