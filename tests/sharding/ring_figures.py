"""Measure the consistent-hash ring: balance, movement on join/leave, selector length.

Run ``python -m tests.sharding.ring_figures [--trials N] [--vnodes V ...]`` for the table the
ring's docstring quotes; the tests call :func:`measure` with fewer trials.
"""

from __future__ import annotations

import argparse
import random
import statistics
import urllib.parse
from dataclasses import dataclass

from aioinformer._replicas._ring import DEFAULT_VNODES, HashRing
from aioinformer._sharding import FIELD_UID


@dataclass(frozen=True)
class Figures:
    members: int
    vnodes: int
    max_over_mean: float  # the largest share / the mean share (1/N), worst trial
    max_over_min_p50: float  # largest / smallest share, median over trials
    max_over_min: float  # largest / smallest share, worst trial
    join_moved_over_fair: float  # space moved to a joiner / (1/(N+1)), worst trial
    leave_moved_over_fair: float  # space moved off a leaver / (1/N), worst trial
    ranges: int  # the most ranges in one member's share
    selector_chars: int  # the longest canonical selector
    url_chars: int  # the same, percent-encoded as a query parameter value


def names(rng: random.Random, n: int) -> list[str]:
    """``n`` member names shaped like pod names with random suffixes."""
    return [f"controller-{rng.getrandbits(40):010x}" for _ in range(n)]


def measure(n: int, *, vnodes: int = DEFAULT_VNODES, trials: int = 50, seed: int = 0) -> Figures:
    rng = random.Random(seed)
    over_mean: list[float] = []
    over_min: list[float] = []
    joined: list[float] = []
    left: list[float] = []
    ranges = chars = url = 0
    for _ in range(trials):
        members = names(rng, n)
        ring = HashRing(members, vnodes=vnodes)
        fractions = [ring.share(m).fraction for m in members]
        over_mean.append(max(fractions) * n)
        over_min.append(max(fractions) / min(fractions))
        joiner = names(rng, 1)[0]
        joined.append(HashRing([*members, joiner], vnodes=vnodes).share(joiner).fraction * (n + 1))
        left.append(ring.share(members[0]).fraction * n)
        for member in members:
            selector = ring.share(member).selector(FIELD_UID)
            assert selector is not None
            ranges = max(ranges, len(selector.ranges))
            chars = max(chars, len(selector.canonical))
            url = max(url, len(urllib.parse.quote(selector.canonical, safe="")))
    return Figures(
        members=n,
        vnodes=vnodes,
        max_over_mean=max(over_mean),
        max_over_min_p50=statistics.median(over_min),
        max_over_min=max(over_min),
        join_moved_over_fair=max(joined),
        leave_moved_over_fair=max(left),
        ranges=ranges,
        selector_chars=chars,
        url_chars=url,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--vnodes", type=int, nargs="*", default=[32, DEFAULT_VNODES, 128])
    args = parser.parse_args()
    header = (
        "vnodes  N  max/mean  max/min(p50)  max/min  join/fair  leave/fair  ranges  chars   url"
    )
    for vnodes in args.vnodes:
        print(header)
        for n in range(2, 11):
            f = measure(n, vnodes=vnodes, trials=args.trials)
            print(
                f"{f.vnodes:6d} {f.members:2d} {f.max_over_mean:9.2f} {f.max_over_min_p50:13.2f}"
                f" {f.max_over_min:8.2f} {f.join_moved_over_fair:10.2f}"
                f" {f.leave_moved_over_fair:11.2f} {f.ranges:7d} {f.selector_chars:6d}"
                f" {f.url_chars:5d}"
            )


if __name__ == "__main__":
    main()
