"""A long seed sweep of the simulator, outside ``make test``.

``python -m tests.sharding.sweep --seeds 2000 [--start 0] [--max-steps 8]`` runs one random
scenario per seed (``sim.random_scenario``), stops at the first violation with the seed and
the scenario, and prints the slowest convergence against the bound.
"""

from __future__ import annotations

import argparse
import random
import time

from .scenarios import random_scenario
from .sim import Config, Sim, Violation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=500)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--lag", type=float, default=1.0, help="max cache lag L (default 1)")
    parser.add_argument("--write", type=float, default=0.4, help="max write time W (default 0.4)")
    args = parser.parse_args()
    config = Config(max_lag=args.lag, max_write=args.write)
    worst, worst_seed, ratio, started = 0.0, -1, 0.0, time.monotonic()
    steps = checks = intervals = 0
    for seed in range(args.start, args.start + args.seeds):
        ops = random_scenario(random.Random(seed), max_steps=args.max_steps)
        sim = Sim(config, seed)
        try:
            sim.run(ops)
        except Violation as exc:
            print(f"seed {seed}: {exc}")
            for op in ops:
                print(f"  {op}")
            raise SystemExit(1) from None
        steps += sim.steps
        checks += sim.checks
        intervals += len(sim.intervals)
        took = (sim.converged_at or sim.last_fault) - sim.last_fault
        ratio = max(ratio, took / sim.bound)
        if took > worst:
            worst, worst_seed = took, seed
    elapsed = time.monotonic() - started
    print(
        f"{args.seeds} seeds, {steps} events, {checks} invariant checks, {intervals} reconciles"
        f" in {elapsed:.1f}s: no violation; slowest convergence"
        f" {worst:.1f}s after the last fault (seed {worst_seed}); at most {ratio:.0%} of the"
        f" bound ({config.bound():.1f}s with one lease to fence)"
    )


if __name__ == "__main__":
    main()
