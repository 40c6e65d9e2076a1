"""The inputs of ``micro_core.py`` and the figures it measures in its own process (reads,
framing, the FIFO handoff); the variants that need a fresh process are in ``micro_core.py``."""

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

import orjson
from podgen import PodEncoder, watch_line

from aioinformer._cache._compact import CompactIndexer
from aioinformer._cache._delta_fifo import DeltaFIFO, DeltaType
from aioinformer._cache._store import Indexer
from aioinformer._wire._framing import LineFramer, WatchDecoder, decode_event

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


# -- variants in this process ----------------------------------------------------------------


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


def fifo_costs(n: int, rounds: int) -> dict[str, float]:
    """µs per event through the FIFO (producer to popped), chunks of 25 events."""
    objects = [{"metadata": {"name": f"p{i}", "namespace": "bench"}} for i in range(n)]
    old = _baseline_fifo()
    runs: dict[str, list[float]] = {"old single": [], "single": [], "batch": []}
    for _ in range(rounds * 3):
        if old is not None:
            runs["old single"].append(asyncio.run(_fifo_run(old(), objects, False)))
        runs["single"].append(asyncio.run(_fifo_run(DeltaFIFO(), objects, False)))
        runs["batch"].append(asyncio.run(_fifo_run(DeltaFIFO(), objects, True)))
    return {name: statistics.median(values) for name, values in runs.items() if values}


class _SplitBeforeWiring:
    """The line splitting (and decoding) ``KubeWatchStream`` did before it used
    :class:`WatchDecoder` (kept here as the framing baseline)."""

    def __init__(self, max_event_size: int) -> None:
        self._max = max_event_size
        self.pending: list[bytes | None] = []
        self._partial = bytearray()
        self._skipping = False

    def split(self, chunk: bytes) -> None:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                if not self._skipping:
                    self._partial += chunk[start:]
                    if len(self._partial) > self._max:
                        self._partial.clear()
                        self._skipping = True
                return
            if self._skipping:
                self._skipping = False
                self.pending.append(None)
            elif self._partial:
                self._partial += chunk[start:newline]
                too_large = len(self._partial) > self._max
                self.pending.append(None if too_large else bytes(self._partial))
                self._partial.clear()
            else:
                too_large = newline - start > self._max
                self.pending.append(None if too_large else chunk[start:newline])
            start = newline + 1

    @staticmethod
    def decode(line: bytes) -> tuple[str, Any]:
        event = orjson.loads(line)
        if not isinstance(event, dict):
            raise ValueError("not a JSON object")
        event_type, obj = event.get("type"), event.get("object")
        if not isinstance(event_type, str) or not isinstance(obj, dict):
            raise ValueError("missing 'type' or 'object'")
        return event_type, obj


def framing(n: int, rounds: int) -> dict[str, float]:
    """µs per MB of stream: the transport's split before the wiring (+ decode) vs LineFramer
    (+ decode)."""
    chunks = stream_for(lines_for(n))
    megabytes = sum(map(len, chunks)) / 1e6

    def today(decode: bool) -> None:
        stream = _SplitBeforeWiring(64 << 20)
        for chunk in chunks:
            stream.split(chunk)
            if decode:  # a chunk's events are held together (as the FIFO holds them)
                events = [stream.decode(line) for line in stream.pending if line is not None]
                del events
            stream.pending.clear()

    def framer() -> None:
        lines = LineFramer(max_line_size=64 << 20)
        for chunk in chunks:
            lines.feed(chunk)

    def decoder() -> None:
        events = WatchDecoder(max_event_size=64 << 20)
        for chunk in chunks:
            events.feed(chunk)

    cases = {
        "split before wiring": lambda: today(False),
        "framer": framer,
        "split+decode before wiring": lambda: today(True),
        "framer+decode": decoder,
    }
    runs: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds * 3):
        for name, case in cases.items():
            start = time.perf_counter()
            case()
            runs[name].append((time.perf_counter() - start) / megabytes * 1e6)
    return {name: statistics.median(values) for name, values in runs.items()}
