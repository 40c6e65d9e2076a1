"""``make bench``: every figure of issues 13 and 20 against its baseline, measured in the same run.

Prints one Markdown table (figure, measurement, value, baseline with its value, ratio, goal)
and writes it with every round's raw figures to ``benchmarks/results/`` as JSON.

How it measures (see ``benchmarks/README.md`` for what each row means):

* a server process (``_server.py``) serves LIST pages and WATCH streams from pre-encoded
  bytes of realistic ~2.5 KB Pods (``podgen.py``), at full speed or at a steady rate;
* every variant (the library, a baseline, another client) runs in a fresh interpreter (or
  ``node`` process), so memory and garbage-collector state never carry over;
* a figure is the median of ``--rounds`` rounds (3); within a round every variant of the
  figure runs once, one after the other, the order rotating from round to round; a ratio is
  the median of the per-round ratios (each round's subject against that round's baseline).

Modes: ``full`` (the issue's sizes, about 10 minutes on 2 cores), ``quick`` (a subset at small
sizes, about a minute) and ``smoke`` (tiny sizes, one round, variants run in this process:
only checks that everything runs).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.util
import json
import multiprocessing
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
JS = HERE / "js"
sys.path.insert(0, str(HERE))

import _aio  # noqa: E402

Metrics = dict[str, float]


# -- what to run ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    rounds: int
    #: B1: watch ingest sizes; the slow Python clients run at ``b1_slow`` only (None: never).
    b1: tuple[int, ...]
    b1_slow: int | None
    #: B1: the size with the parse-and-keep and GC-off reference rows (None: never).
    b1_references: int | None
    #: B2: initial sync sizes; the size with the fetch-and-parse-with-GC row (None: never).
    b2: tuple[int, ...]
    b2_gc_row: int | None
    #: B3: objects; with tracemalloc rows or not.
    b3: int
    b3_traced: bool
    #: B3: with the transform rows and the plain-dict-of-dicts reference, or not.
    b3_references: bool
    #: B4: adds (25% duplicates) and workers.
    b4_adds: int
    b4_workers: int
    #: B5: cache objects, events/s, seconds of steady stream.
    b5: tuple[int, int, int]
    #: B6: cache objects, events; consumer counts.
    b6: tuple[int, int]
    b6_consumers: tuple[int, ...]
    #: Reads: cache objects, timed gets per round, timed lists per round.
    reads: tuple[int, int, int]


PLANS: dict[str, Sizes] = {
    "full": Sizes(
        rounds=3,
        b1=(10_000, 100_000),
        b1_slow=10_000,
        b1_references=10_000,
        b2=(10_000, 100_000),
        b2_gc_row=10_000,
        b3=10_000,
        b3_traced=True,
        b3_references=True,
        b4_adds=200_000,
        b4_workers=8,
        b5=(50_000, 5_000, 5),
        b6=(1_000, 10_000),
        b6_consumers=(1, 10, 100),
        reads=(10_000, 20_000, 10),
    ),
    "quick": Sizes(
        rounds=3,
        b1=(5_000,),
        b1_slow=None,
        b1_references=None,
        b2=(5_000,),
        b2_gc_row=None,
        b3=5_000,
        b3_traced=False,
        b3_references=False,
        b4_adds=50_000,
        b4_workers=8,
        b5=(2_000, 5_000, 2),
        b6=(1_000, 3_000),
        b6_consumers=(1, 10, 100),
        reads=(5_000, 5_000, 5),
    ),
    "smoke": Sizes(
        rounds=1,
        b1=(200,),
        b1_slow=200,
        b1_references=200,
        b2=(1_200,),
        b2_gc_row=1_200,
        b3=300,
        b3_traced=True,
        b3_references=True,
        b4_adds=2_000,
        b4_workers=4,
        b5=(300, 2_000, 1),
        b6=(100, 500),
        b6_consumers=(1, 3),
        reads=(300, 200, 2),
    ),
}


@dataclass
class Variant:
    """One thing measured: a worker spec (Python) or a client-node mode (JavaScript)."""

    key: str
    spec: dict[str, Any]
    runtime: str = "python"  # or "node"
    timeout: float = 900.0


@dataclass
class Goal:
    text: str
    on: str  # "ratio" or "value"
    op: str  # ">=" or "<="
    threshold: float

    def met(self, value: float | None, ratio: float | None) -> bool | None:
        x = ratio if self.on == "ratio" else value
        if x is None:
            return None
        return x >= self.threshold if self.op == ">=" else x <= self.threshold


@dataclass
class RowSpec:
    """A table row: a subject's metric against a baseline's (or a constant), and a goal."""

    label: str
    subject: tuple[str, str]  # (variant key, metric)
    baseline: tuple[str, str] | None  # None: ``constant``
    baseline_label: str
    unit: str
    goal: Goal | None = None
    constant: float | None = None


@dataclass
class Group:
    """Variants measured together (interleaved) and the rows made from them."""

    figure: str
    case: str
    scenario: str | None
    variants: list[Variant]
    rows: list[RowSpec]
    #: Turns a worker's raw result into metrics (after the run; may ask the server).
    metrics: Callable[[Variant, dict[str, Any]], Metrics] = field(
        default=lambda variant, result: {"rate": result["items"] / result["seconds"]}
    )


def _k(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 and n >= 1000 else str(n)


def build_groups(sizes: Sizes, server: Server, *, node: bool, official: bool) -> list[Group]:
    """The plan of a run: groups of interleaved variants and the rows they make."""
    modes = list(_aio.CACHE_MODES)
    default = _aio.DEFAULT_CACHE_MODE
    groups: list[Group] = []

    def aio(key: str, mode: str) -> str:
        return f"{key}[{mode}]"

    def per_mode(
        variants: list[Variant],
        rows: list[RowSpec],
        spec: dict[str, Any],
        label: str,
        baseline: tuple[str, str, str],
        unit: str,
        goal: Goal,
    ) -> None:
        """One subject variant and row per cache mode; the goal judges the default mode."""
        key, metric, baseline_label = baseline
        for mode in modes:
            variants.append(Variant(aio("aio", mode), {**spec, "mode": mode}))
            rows.append(
                RowSpec(
                    f"{label} [{mode}]",
                    (aio("aio", mode), "rate"),
                    (key, metric),
                    baseline_label,
                    unit,
                    goal if mode == default else None,
                )
            )

    # B1: watch ingest into a growing cache.
    for n in sizes.b1:
        scenario = f"watch-{n}"
        base = {"scenario": scenario, "n": n}
        variants = [Variant("parse_discard", {"variant": "parse_discard", **base})]
        rows: list[RowSpec] = []
        per_mode(
            variants,
            rows,
            {"variant": "aio_watch", **base},
            "aioinformer informer",
            ("parse_discard", "rate", "parse-and-discard"),
            "ev/s",
            Goal("≥ 0.8x", "ratio", ">=", 0.8),
        )
        if n == sizes.b1_references:
            variants.append(
                Variant("aio_nogc", {"variant": "aio_watch", "mode": default, "gc": False, **base})
            )
            rows.append(
                RowSpec(
                    f"aioinformer [{default}], cyclic GC disabled",
                    ("aio_nogc", "rate"),
                    ("parse_discard", "rate"),
                    "parse-and-discard",
                    "ev/s",
                )
            )
            variants.append(Variant("parse_keep", {"variant": "parse_keep", **base}))
            rows.append(
                RowSpec(
                    "parse, keeping each object in a dict",
                    ("parse_keep", "rate"),
                    ("parse_discard", "rate"),
                    "parse-and-discard",
                    "ev/s",
                )
            )
        subject = aio("aio", default)
        if n == sizes.b1_slow:
            for key, label, models in (
                ("k8sa_models", "kubernetes_asyncio Watch, models", True),
                ("k8sa_raw", "kubernetes_asyncio Watch, raw dicts", False),
            ):
                variants.append(
                    Variant(key, {"variant": "k8s_asyncio_watch", "models": models, **base})
                )
                rows.append(
                    RowSpec(
                        label, (key, "rate"), ("parse_discard", "rate"), "parse-and-discard", "ev/s"
                    )
                )
            rows.append(
                RowSpec(
                    f"aioinformer [{default}] vs kubernetes_asyncio models",
                    (subject, "rate"),
                    ("k8sa_models", "rate"),
                    "kubernetes_asyncio models",
                    "ev/s",
                    Goal("≥ 25x", "ratio", ">=", 25.0),
                )
            )
            if official:
                variants.append(Variant("official", {"variant": "k8s_official_informer", **base}))
                rows.append(
                    RowSpec(
                        "kubernetes (official) SharedInformer",
                        ("official", "rate"),
                        ("parse_discard", "rate"),
                        "parse-and-discard",
                        "ev/s",
                    )
                )
        if node:
            variants.append(Variant("node", {"mode": "watch", **base}, runtime="node"))
            rows.append(
                RowSpec(
                    "client-node informer (Node.js)",
                    ("node", "rate"),
                    ("parse_discard", "rate"),
                    "parse-and-discard",
                    "ev/s",
                )
            )
            rows.append(
                RowSpec(
                    f"aioinformer [{default}] vs client-node",
                    (subject, "rate"),
                    ("node", "rate"),
                    "client-node",
                    "ev/s",
                    Goal("≥ 1.5x", "ratio", ">=", 1.5),
                )
            )
        groups.append(Group("B1", f"{_k(n)} watch", scenario, variants, rows))

    # B2: initial sync, with the RSS it adds (at its peak and after it) against wire size.
    for n in sizes.b2:
        scenario = f"list-{n}"
        wire = server.prepare(scenario)["item_bytes"]
        base = {"scenario": scenario, "n": n}
        variants = [Variant("fetch_nogc", {"variant": "fetch_parse", "gc": False, **base})]
        rows = []
        per_mode(
            variants,
            rows,
            {"variant": "aio_sync", **base},
            "aioinformer initial sync",
            ("fetch_nogc", "rate", "fetch-and-parse, GC off"),
            "obj/s",
            Goal("≥ 1.0x", "ratio", ">=", 1.0),
        )
        for mode in modes:
            for metric, what, goal in (
                ("rss_peak", "peak RSS during the sync", Goal("≤ 3x", "ratio", "<=", 3.0)),
                ("rss_after", "RSS after the sync", Goal("≤ 2x", "ratio", "<=", 2.0)),
            ):
                rows.append(
                    RowSpec(
                        f"[{mode}] {what}, per object",
                        (aio("aio", mode), metric),
                        None,
                        f"wire size {wire:,.0f} B",
                        "B",
                        goal if mode == default else None,
                        constant=wire,
                    )
                )
        if n == sizes.b2_gc_row:
            variants.append(Variant("fetch_gc", {"variant": "fetch_parse", "gc": True, **base}))
            rows.append(
                RowSpec(
                    "fetch-and-parse, GC on",
                    ("fetch_gc", "rate"),
                    ("fetch_nogc", "rate"),
                    "fetch-and-parse, GC off",
                    "obj/s",
                )
            )
        if node:
            variants.append(Variant("node", {"mode": "sync", **base}, runtime="node"))
            rows.append(
                RowSpec(
                    f"aioinformer [{default}] vs client-node",
                    (aio("aio", default), "rate"),
                    ("node", "rate"),
                    "client-node",
                    "obj/s",
                    Goal("≥ 2.0x", "ratio", ">=", 2.0),
                )
            )
        groups.append(
            Group(
                "B2",
                f"{_k(n)} sync",
                scenario,
                variants,
                rows,
                metrics=lambda variant, result: {
                    "rate": result["items"] / result["seconds"],
                    **{k: result[k] for k in ("rss_peak", "rss_after") if k in result},
                },
            )
        )

    # B3: bytes per cached object.
    n = sizes.b3
    scenario = f"list-{n}"
    wire = server.prepare(scenario)["item_bytes"]
    base = {"scenario": scenario, "n": n}
    methods = ["rss", "tracemalloc"] if sizes.b3_traced else ["rss"]
    variants = []
    rows = []
    for method in methods:
        for mode in modes:
            for transform in (False, True) if sizes.b3_references else (False,):
                key = f"mem_{mode}_{method}{'_t' if transform else ''}"
                variants.append(
                    Variant(
                        key,
                        {
                            "variant": "aio_memory",
                            "mode": mode,
                            "method": method,
                            "transform": transform,
                            **base,
                        },
                    )
                )
                goal = None
                if mode == default and method == "tracemalloc" and not transform:
                    goal = Goal("≤ 1.2x", "ratio", "<=", 1.2)
                rows.append(
                    RowSpec(
                        f"aioinformer [{mode}]{' - managedFields' if transform else ''}, {method}",
                        (key, "bytes"),
                        None,
                        f"wire size {wire:,.0f} B",
                        "B",
                        goal,
                        constant=wire,
                    )
                )
        for keep in ("dict", "bytes") if sizes.b3_references else ("bytes",):
            key = f"plain_{keep}_{method}"
            variants.append(
                Variant(key, {"variant": "plain_memory", "keep": keep, "method": method, **base})
            )
            rows.append(
                RowSpec(
                    f"plain dict of {'dicts' if keep == 'dict' else 'JSON bytes'}, {method}",
                    (key, "bytes"),
                    None,
                    f"wire size {wire:,.0f} B",
                    "B",
                    constant=wire,
                )
            )
    groups.append(
        Group(
            "B3",
            f"{_k(n)} objects",
            scenario,
            variants,
            rows,
            metrics=lambda variant, result: {"bytes": result["bytes"]},
        )
    )

    # B4: work queue cycles per processed item, with 25% duplicates and with unique items.
    spec = {"adds": sizes.b4_adds, "workers": sizes.b4_workers}
    b4_variants, b4_rows = [], []
    for unique, what in ((False, "25% duplicates"), (True, "unique items")):
        suffix = "_unique" if unique else ""
        b4_variants += [
            Variant(
                f"asyncio_queue{suffix}", {"variant": "asyncio_queue", "unique": unique, **spec}
            ),
            Variant(f"work_queue{suffix}", {"variant": "work_queue", "unique": unique, **spec}),
        ]
        b4_rows.append(
            RowSpec(
                f"WorkQueue, {sizes.b4_workers} workers, processed items, {what}",
                (f"work_queue{suffix}", "rate"),
                (f"asyncio_queue{suffix}", "rate"),
                "asyncio.Queue",
                "items/s",
                Goal("≥ 0.9x", "ratio", ">=", 0.9),
            )
        )
    groups.append(Group("B4", f"{_k(sizes.b4_adds)} adds", None, b4_variants, b4_rows))

    # B5: latency at a steady rate over a large cache.
    objects, rate, seconds = sizes.b5
    scenario = f"steady-{objects}-{rate}-{seconds}"
    info = server.prepare(scenario)
    base = {
        "scenario": scenario,
        "n": objects,
        "events": info["events"],
        "first_rv": info["first_rv"],
    }
    variants = [Variant("floor", {"variant": "floor_latency", **base})]
    rows = []
    subjects = [(aio("aio", mode), f"aioinformer [{mode}]", mode == default) for mode in modes]
    for mode in modes:
        variants.append(Variant(aio("aio", mode), {"variant": "aio_latency", "mode": mode, **base}))
    if node:
        variants.append(Variant("node", {"mode": "steady", **base}, runtime="node"))
        subjects.append(("node", "client-node informer", False))
    for key, label, judged in subjects:
        for metric, what, goal in (
            ("p50", "p50", None),
            ("p99", "p99", Goal("≤ 2x", "ratio", "<=", 2.0)),
            ("max", "max", None),
            ("stall", "longest loop stall", Goal("≤ 10 ms", "value", "<=", 0.010)),
        ):
            rows.append(
                RowSpec(
                    f"{label}: {what}",
                    (key, metric),
                    ("floor", metric),
                    "read-and-parse floor",
                    "s",
                    goal if judged else None,
                )
            )
    steady = scenario

    def latency(variant: Variant, result: dict[str, Any]) -> Metrics:
        return server.latency(steady, result)

    groups.append(
        Group("B5", f"{_k(rate)} ev/s, {_k(objects)} cache", scenario, variants, rows, latency)
    )

    # B6: fan-out.
    objects, events = sizes.b6
    scenario = f"fanout-{objects}-{events}"
    base = {"scenario": scenario, "n": objects, "events": events, "mode": default}
    variants = []
    rows = []
    one = sizes.b6_consumers[0]
    for consumers in sizes.b6_consumers:
        variants.append(
            Variant(f"c{consumers}", {"variant": "aio_fanout", "consumers": consumers, **base})
        )
        if consumers != one:
            rows.append(
                RowSpec(
                    f"{consumers} consumers",
                    (f"c{consumers}", "rate"),
                    (f"c{one}", "rate"),
                    f"{one} consumer",
                    "ev/s",
                    Goal("≥ 0.8x", "ratio", ">=", 0.8) if consumers >= 100 else None,
                )
            )
    many = sizes.b6_consumers[1] if len(sizes.b6_consumers) > 1 else one
    variants.append(
        Variant(
            "stalled",
            {"variant": "aio_fanout", "consumers": many, "stalled": True, **base},
        )
    )
    rows.append(
        RowSpec(
            f"{many} consumers + 1 stalled",
            ("stalled", "rate"),
            (f"c{many}", "rate"),
            f"{many} consumers",
            "ev/s",
            Goal("≥ 0.95x (< 5% cost)", "ratio", ">=", 0.95),
        )
    )
    groups.append(Group("B6", f"{_k(events)} ev, {_k(objects)} cache", scenario, variants, rows))

    # Reads, per cache mode, against the decode floor of the same bytes (orjson, GC off).
    objects, gets, lists = sizes.reads
    scenario = f"list-{objects}"
    base = {"scenario": scenario, "n": objects, "gets": gets, "lists": lists}
    variants = []
    rows = []
    floor = "decode floor (orjson.loads, GC off)"
    for mode in modes:
        key = aio("reads", mode)
        variants.append(Variant(key, {"variant": "aio_reads", "mode": mode, **base}))
        judged = mode == default
        for metric, what, goal in (
            ("get", "lister().get, p50", Goal("≤ 1.5x", "ratio", "<=", 1.5)),
            ("list", f"lister().list() of {_k(objects)}", Goal("≤ 1.5x", "ratio", "<=", 1.5)),
            ("tenth", f"index listing of {_k(objects // 10)} (a namespace's path)", None),
        ):
            rows.append(
                RowSpec(
                    f"[{mode}] {what}",
                    (key, metric),
                    (key, f"{metric}_floor"),
                    floor,
                    "s",
                    goal if judged else None,
                )
            )
    hot = aio("reads", f"{default}+read_cache")
    variants.append(
        Variant(hot, {"variant": "aio_reads", "mode": default, "read_cache": 512, **base})
    )
    rows.append(
        RowSpec(
            f"[{default}, read_cache=512] lister().get of 500 hot keys, p50",
            (hot, "get"),
            (hot, "get_dict"),
            "a dict lookup",
            "s",
            Goal("≤ 2x", "ratio", "<=", 2.0),
        )
    )
    groups.append(
        Group(
            "reads",
            f"{_k(objects)} cache",
            scenario,
            variants,
            rows,
            metrics=lambda variant, result: dict(result),
        )
    )
    return groups


# -- the server ---------------------------------------------------------------------------------


class Server:
    """The benchmark server process (``_server.py``)."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, str(HERE / "_server.py")],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError("the benchmark server did not start")
        self.url: str = json.loads(line)["url"]
        self._prepared: dict[str, dict[str, Any]] = {}

    def close(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=300) as response:
            return json.load(response)

    def prepare(self, scenario: str) -> dict[str, Any]:
        if scenario not in self._prepared:
            self._prepared[scenario] = self._get(f"/bench/prepare/{scenario}")
        return self._prepared[scenario]

    def latency(self, scenario: str, result: dict[str, Any]) -> Metrics:
        """Event-to-consumer latencies of the last steady run: receive - write times."""
        sent = self._get(f"/bench/sendlog/{scenario}")["times"]
        received = result["received"]
        if len(sent) != len(received) or not all(received):
            missing = sum(1 for r in received if not r)
            raise RuntimeError(
                f"the consumer did not receive every event of the steady stream "
                f"({len(sent)} sent, {len(received)} expected, {missing} missing)"
            )
        latencies = sorted(r - s for r, s in zip(received, sent, strict=True))
        cuts = statistics.quantiles(latencies, n=100)
        return {
            "p50": cuts[49],
            "p99": cuts[98],
            "max": latencies[-1],
            "stall": float(result["max_stall"]),
        }


# -- running variants ---------------------------------------------------------------------------


@contextmanager
def _restored_process_state() -> Iterator[None]:
    """For in-process runs (smoke mode): undo what a variant changes process-wide."""
    enabled = gc.isenabled()
    try:
        yield
    finally:
        if tracemalloc.is_tracing():
            tracemalloc.stop()
        if enabled:
            gc.enable()


_FORKSERVER: Any = None


def _forkserver() -> Any:
    """The process every Python variant is forked from (libraries already imported)."""
    global _FORKSERVER
    if _FORKSERVER is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["__main__", "_variants"])
        _FORKSERVER = context
    return _FORKSERVER


def _run_forked(variant: Variant, spec: dict[str, Any]) -> dict[str, Any]:
    import _worker

    context = _forkserver()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_worker.child, args=(spec, sender), daemon=True)
    process.start()
    sender.close()
    try:
        if not receiver.poll(variant.timeout):
            raise TimeoutError(f"{variant.key} took longer than {variant.timeout:.0f} s")
        try:
            status, payload = receiver.recv()
        except EOFError:
            process.join(5)
            raise RuntimeError(f"{variant.key} died (exit code {process.exitcode})") from None
    finally:
        receiver.close()
        if process.is_alive():
            process.join(5)
        if process.is_alive():
            process.kill()
            process.join()
    if status != "ok":
        raise RuntimeError(f"{variant.key} failed:\n{payload}")
    result: dict[str, Any] = payload
    return result


def run_variant(variant: Variant, url: str, *, in_process: bool) -> dict[str, Any]:
    """Run one variant: forked (Python), in this process (smoke tests) or under node."""
    spec = {**variant.spec, "url": url}
    if variant.runtime == "python":
        if not in_process:
            return _run_forked(variant, spec)
        import _worker

        with _restored_process_state():
            return _worker.run(spec)
    command = ["node", "--max-old-space-size=8192", str(JS / "informer.mjs"), json.dumps(spec)]
    done = subprocess.run(
        command, cwd=JS, capture_output=True, text=True, timeout=variant.timeout, check=False
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"{variant.key} exited {done.returncode}: {done.stderr.strip()[-1500:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@dataclass
class Row:
    figure: str
    case: str
    label: str
    unit: str
    value: float | None
    baseline_label: str
    baseline_value: float | None
    ratio: float | None
    goal: str | None
    met: bool | None
    rounds: list[float | None]
    baseline_rounds: list[float | None]
    #: The per-round ratios (``ratio`` is their median).
    ratios: list[float] = field(default_factory=list)


def _round_ratios(subject: list[float | None], baseline: list[float | None]) -> list[float]:
    return [s / b for s, b in zip(subject, baseline, strict=True) if s is not None and b]


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def run_group(
    group: Group, url: str, rounds: int, *, in_process: bool, failures: list[str]
) -> tuple[list[Row], dict[str, list[Metrics | None]]]:
    measured: dict[str, list[Metrics | None]] = {v.key: [None] * rounds for v in group.variants}
    for r in range(rounds):
        shift = r % len(group.variants)
        for variant in group.variants[shift:] + group.variants[:shift]:
            started = time.perf_counter()
            try:
                result = run_variant(variant, url, in_process=in_process)
                metrics = group.metrics(variant, result)
            except Exception as exc:
                failures.append(f"{group.figure} {group.case} {variant.key}: {exc}")
                _progress(f"  !! {variant.key} failed: {exc}")
                continue
            measured[variant.key][r] = metrics
            shown = ", ".join(f"{k}={_short(v)}" for k, v in metrics.items())
            _progress(
                f"  {group.figure} {group.case} round {r + 1}/{rounds} {variant.key}: {shown}"
                f" ({time.perf_counter() - started:.1f} s)"
            )
    rows = []
    for spec in group.rows:
        subject_key, subject_metric = spec.subject
        subject = [m[subject_metric] if m else None for m in measured[subject_key]]
        if spec.baseline is None:
            baseline: list[float | None] = [spec.constant] * rounds
        else:
            base_key, base_metric = spec.baseline
            baseline = [m[base_metric] if m else None for m in measured[base_key]]
        ratios = _round_ratios(subject, baseline)
        value, base_value = _median(subject), _median(baseline)
        ratio = statistics.median(ratios) if ratios else None
        rows.append(
            Row(
                group.figure,
                group.case,
                spec.label,
                spec.unit,
                value,
                spec.baseline_label,
                base_value,
                ratio,
                spec.goal.text if spec.goal else None,
                spec.goal.met(value, ratio) if spec.goal else None,
                subject,
                baseline,
                ratios,
            )
        )
    return rows, measured


def _short(value: float) -> str:
    return f"{value:.4g}"


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- the report ---------------------------------------------------------------------------------


def _format(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "s":
        if value >= 1:
            return f"{value:.2f} s"
        if value >= 0.001:
            return f"{value * 1e3:.3g} ms"
        return f"{value * 1e6:.3g} µs"
    if unit == "B":
        return f"{value / 1024:.1f} KB" if value >= 10240 else f"{value:,.0f} B"
    return f"{value:,.0f} {unit}"


def _number(ratio: float) -> str:
    digits = 3 if ratio < 0.1 else 2 if ratio < 10 else 1 if ratio < 100 else 0
    return f"{ratio:.{digits}f}"


def _ratio(ratio: float | None) -> str:
    return "—" if ratio is None else f"{_number(ratio)}x"


def _spread(ratios: list[float]) -> str:
    """The range of the per-round ratios, to judge the noise of a median."""
    if len(ratios) < 2:
        return ""
    return f" ({_number(min(ratios))}-{_number(max(ratios))})"


def table(rows: list[Row]) -> str:
    lines = [
        "| figure | measurement | value | baseline (same run) | ratio (range) | goal |",
        "|---|---|---:|---|---:|---|",
    ]
    for row in rows:
        baseline = row.baseline_label
        if row.baseline_value is not None and not baseline.startswith("wire size"):
            baseline += f" {_format(row.baseline_value, row.unit)}"
        goal = ""
        if row.goal:
            verdict = {True: "met", False: "**missed**", None: "not measured"}[row.met]
            goal = f"{row.goal} {verdict}"
        lines.append(
            f"| {row.figure} {row.case} | {row.label} | {_format(row.value, row.unit)} "
            f"| {baseline} | {_ratio(row.ratio)}{_spread(row.ratios)} | {goal} |"
        )
    return "\n".join(lines)


def _git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "aioinformer"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine(node_version: str | None) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    def package(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {
        "started": f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "node": node_version,
        "aioinformer": package("aioinformer"),
        "aioinformer_commit": _git_commit(),
        "kubernetes_asyncio": package("kubernetes_asyncio"),
        "kubernetes": package("kubernetes"),
        "orjson": package("orjson"),
        "aiohttp": package("aiohttp"),
        "client_node": _client_node_version(),
        "cache_modes": list(_aio.CACHE_MODES),
    }


def _client_node_version() -> str | None:
    installed = JS / "node_modules" / "@kubernetes" / "client-node" / "package.json"
    try:
        return str(json.loads(installed.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def header(info: dict[str, Any], mode: str) -> str:
    return (
        f"aioinformer benchmarks ({mode}), {info.get('started', '?')}\n"
        f"machine: {info['cpu']}, {info['cores']} cores, {info['memory_gb']} GB; {info['os']}\n"
        f"Python {info['python']}; node {info['node'] or '(none)'}; aioinformer "
        f"{info['aioinformer']} ({info['aioinformer_commit'] or 'no git'}); kubernetes_asyncio "
        f"{info['kubernetes_asyncio']}; kubernetes {info['kubernetes'] or '(none)'}; "
        f"client-node {info['client_node'] or '(none)'}; cache modes: "
        f"{', '.join(info['cache_modes'])}"
    )


# -- optional clients -----------------------------------------------------------------------------


def prepare_node(notes: list[str]) -> str | None:
    """client-node installed under benchmarks/js (``npm ci``); its node version, or None."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        notes.append("client-node rows skipped: node/npm not found on PATH.")
        return None
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    marker = JS / "node_modules" / ".package-lock.json"
    lock = JS / "package-lock.json"
    if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
        _progress("installing @kubernetes/client-node (npm ci in benchmarks/js) ...")
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=JS,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            notes.append(f"client-node rows skipped: npm ci failed ({done.stderr.strip()[-300:]}).")
            return None
    return version


def official_available(notes: list[str]) -> bool:
    if importlib.util.find_spec("kubernetes") is None:
        notes.append(
            "official-client rows skipped: the `kubernetes` package is not installed "
            "(`pip install -e '.[bench]'`)."
        )
        return False
    if importlib.util.find_spec("kubernetes.informer") is None:
        notes.append("official-client rows skipped: this `kubernetes` has no `informer` module.")
        return False
    return True


def render(document: dict[str, Any]) -> str:
    """The report of a run (also from a saved JSON document: ``--report FILE``)."""
    rows = []
    for data in document["rows"]:
        row = Row(**data)
        if not row.ratios:
            row.ratios = _round_ratios(row.rounds, row.baseline_rounds)
        rows.append(row)
    info = document["machine"]
    load = info.get("load_average") or [float("nan"), float("nan")]
    return "\n".join(
        [
            header(info, document["mode"]),
            "",
            f"Every value is the median of {document['rounds']} interleaved rounds, each variant "
            "in a fresh process; a ratio is the median of the per-round ratios (subject ÷ "
            "baseline), with their range.",
            "",
            table(rows),
            "",
            *(f"note: {note}" for note in document["notes"]),
            *(f"FAILED: {failure}" for failure in document["failures"]),
            f"({len(rows)} rows in {document['seconds']:.0f} s; load average {load[0]:.1f} at "
            f"the start, {load[1]:.1f} at the end, on {info['cores']} cores)",
        ]
    )


# -- main -----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(PLANS), default="full")
    parser.add_argument("--rounds", type=int, help="rounds per figure (default: the mode's)")
    parser.add_argument(
        "--only", help="comma-separated figures to run (B1,B2,B3,B4,B5,B6,reads); default all"
    )
    parser.add_argument("--no-node", action="store_true", help="skip client-node")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run Python variants in this process (smoke tests; figures are then not isolated)",
    )
    parser.add_argument("--results", type=Path, default=HERE / "results")
    parser.add_argument("--report", type=Path, help="print the report of a saved JSON run; exit")
    args = parser.parse_args(argv)
    if args.report:
        print(render(json.loads(args.report.read_text())))
        return 0
    sizes = PLANS[args.mode]
    rounds = args.rounds or sizes.rounds
    in_process = args.in_process or args.mode == "smoke"
    notes: list[str] = []
    node_version = None if args.no_node else prepare_node(notes)
    if args.no_node:
        notes.append("client-node rows skipped (--no-node).")
    official = official_available(notes)
    if official and in_process:
        official = False
        notes.append(
            "official-client rows skipped: its informer thread cannot be stopped in-process."
        )
    info = machine(node_version)
    title = header(info, args.mode)
    _progress(title)
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    failures: list[str] = []
    rows: list[Row] = []
    raw: dict[str, Any] = {}
    server = Server()
    try:
        groups = build_groups(sizes, server, node=node_version is not None, official=official)
        only = {s.strip().lower() for s in args.only.split(",")} if args.only else None
        for group in groups:
            if only and group.figure.lower() not in only:
                continue
            if group.scenario:
                server.prepare(group.scenario)
            _progress(f"{group.figure} {group.case}: {len(group.variants)} variants x {rounds}")
            group_rows, measured = run_group(
                group, server.url, rounds, in_process=in_process, failures=failures
            )
            rows += group_rows
            raw[f"{group.figure} {group.case}"] = measured
    finally:
        server.close()
    elapsed = time.perf_counter() - started
    info["load_average"] = [load_before, os.getloadavg()[0]]
    document = {
        "mode": args.mode,
        "rounds": rounds,
        "seconds": elapsed,
        "machine": info,
        "rows": [asdict(row) for row in rows],
        "raw": raw,
        "notes": notes,
        "failures": failures,
    }
    document["report"] = render(document)
    print(document["report"], flush=True)
    args.results.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    for name in (f"bench-{args.mode}-{stamp}.json", f"latest-{args.mode}.json"):
        (args.results / name).write_text(json.dumps(document, indent=1) + "\n")
    _progress(f"(saved to {args.results / f'latest-{args.mode}.json'})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
