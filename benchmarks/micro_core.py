"""Micro-benchmarks of the hot path's parts (issue 13): cache modes, framing, FIFO handoff.

Every figure comes with a baseline measured in the same run and their ratio. Each variant
whose result depends on the heap (ingest, memory, the pipeline) runs in a fresh process with
the default garbage-collector settings; rounds interleave the variants; a figure is the median
of its rounds, a ratio the median of the per-round ratios.

    .venv/bin/python benchmarks/micro_core.py            # 3 rounds, 10k and 100k Pods (~15 min)
    .venv/bin/python benchmarks/micro_core.py --quick    # 1 round, 10k Pods (~1 min)

Inputs are ``podgen`` Pods (2.5 KB of JSON each) as watch lines
``{"type":"ADDED","object":{...}}``, built before any timer starts.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _micro_core_parts import (
    _TYPES,
    GcClock,
    fifo_costs,
    framing,
    lines_for,
    new_cache,
    reads,
    rss,
    stream_for,
)
from podgen import PodEncoder, watch_line

import aioinformer  # noqa: F401  (imported as an application would: its long-lived objects)
from aioinformer._cache._delta_fifo import DeltaFIFO
from aioinformer._wire._framing import WatchDecoder, decode_event

# -- variants (each in a fresh process) ------------------------------------------------------


def ingest(mode: str, lines: list[bytes]) -> dict[str, float]:
    """Decode ADDED lines of distinct Pods and cache them (or not): the store's ingest."""
    n = len(lines)
    cache = new_cache(mode)
    kept: dict[int, Any] = {}
    clock = GcClock()
    gc.collect()
    gc.callbacks.append(clock)
    start = time.perf_counter()
    if mode == "discard":
        for line in lines:
            decode_event(line)
    elif mode == "keep":
        for i, line in enumerate(lines):
            kept[i] = decode_event(line)[1]
    elif mode == "compact":
        for line in lines:
            _, obj, raw = decode_event(line)
            cache.upsert(obj, raw=raw)
    else:  # "dict", "compact-encode": the store encodes (or keeps) the decoded object
        for line in lines:
            cache.upsert(decode_event(line)[1])
    elapsed = time.perf_counter() - start
    gc.callbacks.remove(clock)
    return {
        "events_per_s": n / elapsed,
        "gc_s": sum(clock.seconds),
        "gc2_s": clock.seconds[2],
        "gc2_count": clock.count[2],
    }


def memory(mode: str, n: int, traced: bool) -> dict[str, float]:
    """Bytes per cached object (RSS or tracemalloc), filling the cache one line at a time."""
    encoder = PodEncoder()
    cache = new_cache(mode)
    gc.collect()
    if traced:
        tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0] if traced else rss()
    for i in range(n):
        _, obj, raw = decode_event(watch_line("ADDED", encoder.encode(i))[:-1])
        if mode == "compact-nomf":
            del obj["metadata"]["managedFields"]
            raw = None
        cache.upsert(obj, raw=raw if mode == "compact" else None)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0] if traced else rss()
    return {"bytes_per_object": (after - before) / n}


def update_old(mode: str, n: int) -> dict[str, float]:
    """MODIFIED events over a cache of n: the write, and the old object eager or lazy."""
    cache = new_cache(mode)
    for line in lines_for(n):
        _, obj, raw = decode_event(line)
        cache.upsert(obj, raw=raw)
    updates = [decode_event(line) for line in lines_for(n, event="MODIFIED", revision=1)]
    gc.collect()
    start = time.perf_counter()
    if mode == "compact-eager":
        for _, obj, raw in updates:
            old = cache.upsert(obj, raw=raw)
            old.decode()  # decoded at once
    else:
        for _, obj, raw in updates:
            cache.upsert(obj, raw=raw)
    return {"us_per_event": (time.perf_counter() - start) / n * 1e6}


async def _pipeline(mode: str, chunks: list[bytes], n: int) -> float:
    """Chunks → framing and decoding → FIFO (batch or single) → cache → a listener's deque."""
    decoder = WatchDecoder(max_event_size=64 << 20)
    cache = new_cache(mode)
    fifo = DeltaFIFO(known_objects=cache)
    backlog: deque[tuple[Any, ...]] = deque()
    done = asyncio.Event()

    def process(batch: list[list[Any]], initial: bool) -> None:
        for deltas in batch:
            for delta in deltas:
                old = cache.upsert(delta.object, raw=delta.raw)
                backlog.append((delta.type, delta.object, old))
        while backlog:
            backlog.popleft()
        if len(cache) == n:
            done.set()

    async def consume() -> None:
        while not done.is_set():
            await fifo.pop_batch(process)

    consumer = asyncio.ensure_future(consume())
    start = time.perf_counter()
    for chunk in chunks:
        events = decoder.feed(chunk)
        if mode.endswith("single"):
            for _, obj, raw in events:  # type: ignore[misc]
                await fifo.add(obj, raw=raw)
        else:
            await fifo.apply([(_TYPES[e[0]], e[1], e[2]) for e in events])  # type: ignore[index]
        await asyncio.sleep(0)  # a network read
    await done.wait()
    elapsed = time.perf_counter() - start
    await consumer
    return elapsed


def pipeline(mode: str, lines: list[bytes]) -> dict[str, float]:
    n = len(lines)
    chunks = stream_for(lines)
    clock = GcClock()
    gc.collect()
    gc.callbacks.append(clock)
    if mode == "discard":
        decoder = WatchDecoder(max_event_size=64 << 20)
        start = time.perf_counter()
        for chunk in chunks:
            decoder.feed(chunk)
        elapsed = time.perf_counter() - start
    else:
        elapsed = asyncio.run(_pipeline(mode, chunks, n))
    gc.callbacks.remove(clock)
    return {
        "events_per_s": n / elapsed,
        "us_per_event": elapsed / n * 1e6,
        "gc_us_per_event": sum(clock.seconds) / n * 1e6,
    }


def paired(kind: str, mode: str, n: int) -> dict[str, float]:
    """``kind`` (ingest or pipeline) of ``mode`` between two runs of its parse-and-discard
    baseline on the same input in the same process: a ratio from moments apart."""
    function = ingest if kind == "ingest" else pipeline
    lines = lines_for(n)
    before = function("discard", lines)
    result = function(mode, lines)
    gc.collect()
    after = function("discard", lines)
    result["baseline_events_per_s"] = (before["events_per_s"] + after["events_per_s"]) / 2
    result["baseline_us_per_event"] = 1e6 / result["baseline_events_per_s"]
    result["ratio"] = result["events_per_s"] / result["baseline_events_per_s"]
    return result


VARIANTS: dict[str, Callable[..., dict[str, float]]] = {
    "paired": paired,
    "memory": memory,
    "update_old": update_old,
}


IN_PROCESS = False  # --smoke: run every variant here (checks that it runs, measures nothing)


def in_child(variant: str, *args: Any) -> dict[str, float]:
    if IN_PROCESS:
        return VARIANTS[variant](*args)
    command = [sys.executable, __file__, "--child", json.dumps([variant, *args])]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


# -- orchestration ---------------------------------------------------------------------------

Row = tuple[str, str, float, str, float, str]


def _median(runs: list[dict[str, float]], field: str) -> float:
    return statistics.median(run[field] for run in runs)


def measure(sizes: list[int], rounds: int) -> list[Row]:
    rows: list[Row] = []

    def add(figure: str, what: str, value: float, base: str, base_value: float, unit: str) -> None:
        rows.append((figure, what, value, base, base_value, unit))
        print(f"{figure}: {what}: {value:,.4g} {unit} vs {base} {base_value:,.4g}", flush=True)

    for n in sizes:
        size = f"{n // 1000}k"
        for kind, modes in (
            ("ingest", ["keep", "dict", "compact", "compact-encode"]),
            ("pipeline", ["dict", "compact", "compact-single"]),
        ):
            done: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
            for r in range(rounds):
                for m in modes[r:] + modes[:r]:
                    done[m].append(in_child("paired", kind, m, n))
            for m, runs in done.items():
                base = _median(runs, "baseline_events_per_s")
                if kind == "ingest":
                    note = (
                        f"GC {_median(runs, 'gc_s'):.2f} s, of which gen-2 "
                        f"{_median(runs, 'gc2_s'):.2f} s in {_median(runs, 'gc2_count'):.0f}"
                    )
                else:
                    note = f"GC {_median(runs, 'gc_us_per_event'):.1f} µs/ev"
                add(f"{kind} {size}", f"{m} ({note}; ratio {_median(runs, 'ratio'):.2f}x)",
                    _median(runs, "events_per_s"), "parse-and-discard", base, "ev/s")  # fmt: skip
    n = sizes[0]
    size = f"{n // 1000}k"
    wire = len(PodEncoder(list_item=True).encode(0))
    for traced in (False, True):
        kind = "tracemalloc" if traced else "RSS"
        for m in ("dict", "compact", "compact-encode", "compact-nomf"):
            value = statistics.median(
                in_child("memory", m, n, traced)["bytes_per_object"] for _ in range(rounds)
            )
            add(f"memory {size}", f"{m}, {kind}", value, "wire size", wire, "B")
    updates: dict[str, list[dict[str, float]]] = {"dict": [], "lazy": [], "eager": []}
    for _ in range(rounds):
        for m, runs in updates.items():
            runs.append(in_child("update_old", "compact-" + m if m != "dict" else m, n))
    for m in ("eager", "dict"):
        add(f"old object {size}", f"MODIFIED into {m}", _median(updates[m], "us_per_event"),
            "compact, lazy old", _median(updates["lazy"], "us_per_event"), "µs/ev")  # fmt: skip
    read = reads(n)
    for m in ("dict", "compact"):
        for k in ("get p50", "get p99", "list()", "list(), GC paused"):
            add(f"reads {size}", f"{m} {k}", read[m][k], "plain dict", read["plain"][k], "µs")
    frames = framing(n, rounds)
    for name, base_name in (
        ("framer", "split before wiring"),
        ("framer+decode", "split+decode before wiring"),
    ):
        add("framing", name, frames[name], base_name, frames[base_name], "µs/MB")
    costs = fifo_costs(n, rounds)
    for name in ("single", "batch"):
        add("FIFO", name, costs[name], "old single", costs.get("old single", costs[name]), "µs/ev")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round, 10k Pods")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one process")
    parser.add_argument("--child")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.child:
        variant, *rest = json.loads(args.child)
        print(json.dumps(VARIANTS[variant](*rest)))
        return
    sizes, rounds = ([10_000], 1) if args.quick else ([10_000, 100_000], 3)
    if args.smoke:
        global IN_PROCESS
        IN_PROCESS = True
        sizes, rounds = [200], 1
    rows = measure(sizes, rounds)
    print(
        "\n| figure | measurement | value | baseline (same run) | ratio |\n|---|---|---:|---|---:|"
    )
    for figure, what, value, base, base_value, unit in rows:
        ratio = value / base_value if base_value else float("nan")
        print(
            f"| {figure} | {what} | {value:,.4g} {unit} | {base} {base_value:,.4g} | {ratio:.2f}x |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
