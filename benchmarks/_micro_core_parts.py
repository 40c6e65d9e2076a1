"""The inputs of ``micro_core.py`` and the figures it measures in its own process: reads and
the FIFO runs (the variants that need a fresh process, and the framing figure, are in
``micro_core.py``)."""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from podgen import PodEncoder, watch_line

from aioinformer._compact import CompactIndexer
from aioinformer._delta_fifo import DeltaType
from aioinformer._framing import decode_event
from aioinformer._store import Indexer

__all__ = [
    "BASELINE_COMMIT",
    "CHUNK",
    "ROOT",
    "GcClock",
    "lines_for",
    "new_cache",
    "reads",
    "rss",
    "stream_for",
]

ROOT = Path(__file__).resolve().parent.parent
#: The last commit of main before this work: its DeltaFIFO is the FIFO baseline.
BASELINE_COMMIT = "f78bac0"
CHUNK = 64 * 1024  # what aiohttp's readany() typically hands over
_TYPES = {"ADDED": DeltaType.ADDED, "MODIFIED": DeltaType.UPDATED, "DELETED": DeltaType.DELETED}


def lines_for(n: int, *, event: str = "ADDED", revision: int = 0) -> list[bytes]:
    encoder = PodEncoder()
    return [watch_line(event, encoder.encode(i, revision=revision))[:-1] for i in range(n)]


def stream_for(lines: list[bytes]) -> list[bytes]:
    data = b"\n".join(lines) + b"\n"
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class GcClock:
    """Times every collection per generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self.count = [0, 0, 0]
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            generation = info["generation"]
            self.seconds[generation] += time.perf_counter() - self._start
            self.count[generation] += 1


def new_cache(mode: str) -> Any:
    return CompactIndexer() if mode.startswith("compact") else Indexer()


def reads(n: int) -> dict[str, dict[str, float]]:
    """get p50/p99 (each call timed) and list() of n, per mode, against a plain dict."""
    lines = lines_for(n)
    out: dict[str, dict[str, float]] = {}
    for mode in ("dict", "compact", "plain"):
        cache = new_cache(mode)
        plain: dict[str, Any] = {}
        for line in lines:
            _, obj, raw = decode_event(line)
            if mode == "plain":
                plain[f"bench/{obj['metadata']['name']}"] = obj
            else:
                cache.upsert(obj, raw=raw)
        if mode == "plain":
            keys, get, listing = list(plain), plain.get, plain.values
        else:
            keys, get, listing = cache.list_keys(), cache.get_by_key, cache.list
        timer = time.perf_counter_ns
        samples = []
        for key in keys * 3:
            t0 = timer()
            get(key)
            samples.append(timer() - t0)
        samples.sort()
        lists, quiet = [], []
        for _ in range(10):
            t0 = timer()
            list(listing())
            lists.append(timer() - t0)
        gc.disable()  # the benchmark's choice, to show what the collector adds to list()
        for _ in range(5):
            t0 = timer()
            list(listing())
            quiet.append(timer() - t0)
        gc.enable()
        out[mode] = {
            "get p50": samples[len(samples) // 2] / 1e3,
            "get p99": samples[len(samples) * 99 // 100] / 1e3,
            "list()": statistics.median(lists) / 1e3,
            "list(), GC paused": statistics.median(quiet) / 1e3,
        }
        del cache, plain
        gc.collect()
    return out


def _baseline_fifo() -> Any | None:
    """main's DeltaFIFO before this work (the Condition-based one), loaded from git."""
    shown = subprocess.run(
        ["git", "show", f"{BASELINE_COMMIT}:aioinformer/delta_fifo.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if shown.returncode:
        return None
    spec = importlib.util.spec_from_loader("aioinformer._baseline_delta_fifo", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "aioinformer"
    # The modules it imports were renamed private since (issue 11).
    source = shown.stdout.replace("from .objects import", "from ._objects import")
    exec(compile(source, "baseline delta_fifo.py", "exec"), module.__dict__)
    return module.DeltaFIFO


async def _fifo_run(fifo: Any, objects: list[dict[str, Any]], use_apply: bool) -> float:
    consumed = 0
    total = len(objects)
    finished = asyncio.Event()

    def process(popped: list[list[Any]], initial: bool) -> None:
        nonlocal consumed
        consumed += len(popped)
        if consumed == total:
            finished.set()

    async def consume() -> None:
        while not finished.is_set():
            await fifo.pop_batch(process)

    consumer = asyncio.ensure_future(consume())
    start = time.perf_counter()
    for i in range(0, total, 25):  # a 64 KB chunk holds about 25 Pods
        part = objects[i : i + 25]
        if use_apply:
            await fifo.apply([(DeltaType.ADDED, obj, None) for obj in part])
        else:
            for obj in part:
                await fifo.add(obj)
        await asyncio.sleep(0)  # the reflector waits for the network between chunks
    await finished.wait()
    elapsed = time.perf_counter() - start
    await consumer
    return elapsed / total * 1e6
