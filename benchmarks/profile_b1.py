"""``make bench-profile``: where an event's time goes in B1 (watch ingest into a growing cache).

Runs the B1 subject (an informer, one ``events()`` consumer, ``--n`` ADDED events from the
benchmark server) three times, each in a fresh process:

1. plain, with a ``gc.callbacks`` hook timing every collection: total and GC seconds (exact);
2. under cProfile: self time per function, builtins charged to their caller (except the
   decoder, charged to decoding), grouped into the stages of the data path;
3. under py-spy (``--native``, so time inside the cyclic collector shows as such), grouped
   the same way from the leaf-most recognised frame of each sample.

Prints the per-event cost of each stage (µs per event) by both profilers and writes the raw
profiles to ``benchmarks/results/`` (``profile-b1.pstats``, ``profile-b1-pyspy.txt``,
``profile-b1.json``).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import json
import pstats
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

RESULTS = HERE / "results"

#: The stages of the data path, in order, and how to recognise their code: (a path, matched
#: at a path-segment boundary, and function names or None for every function of the file).
#: First match wins.
STAGES: list[tuple[str, list[tuple[str, set[str] | None]]]] = [
    (
        "decoding (metadata only: msgspec)",
        [
            ("orjson", None),
            ("msgspec", None),
            ("_slices.py", None),
            ("_framing.py", {"decode_event"}),
        ],
    ),
    (
        "framing",
        [
            ("_framing.py", None),
            ("_transport.py", None),
            ("aiohttp/streams.py", None),
            ("aiohttp/client_proto.py", None),
            ("aiohttp/http_parser.py", None),
            ("aiohttp/_http_parser", None),
            ("aiohttp/base_protocol.py", None),
        ],
    ),
    (
        "FIFO handoff (reflector → DeltaFIFO → pop)",
        [
            ("_reflector/", None),
            ("_delta_fifo.py", None),
            ("asyncio/locks.py", None),
        ],
    ),
    (
        "indexer (cache update)",
        [
            ("_compact.py", None),
            ("_store.py", None),
            ("_objects.py", None),
            ("_deltas.py", None),
            ("_field_index.py", None),
        ],
    ),
    (
        "distribution (listeners, events(), consumer)",
        [
            ("_informer.py", None),
            ("_dispatch.py", None),
            ("_listener.py", None),
            ("_event_stream.py", None),
            ("_variants.py", None),
        ],
    ),
    (
        "event loop, sockets, tasks",
        [
            ("asyncio/", None),
            ("anyio/", None),
            ("selectors.py", None),
            ("socketmodule.c", None),
            ("socket.py", None),
        ],
    ),
]
GC = "cyclic GC"
OTHER = "other"


_MATCHERS = [
    (stage, re.compile(r"(?:^|/)" + re.escape(part)), functions)
    for stage, patterns in STAGES
    for part, functions in patterns
]


def stage_of(path: str, function: str) -> str | None:
    """The stage a function belongs to (None: not recognised)."""
    for stage, pattern, functions in _MATCHERS:
        if pattern.search(path) and (functions is None or function in functions):
            return stage
    return None


# -- children ---------------------------------------------------------------------------------


#: The cache mode profiled (``--mode``; the library's default unless told).
MODE = "compact"


def _spec(url: str, n: int) -> dict[str, Any]:
    return {"variant": "aio_watch", "url": url, "scenario": f"watch-{n}", "n": n, "mode": MODE}


def child_gc(url: str, n: int) -> dict[str, Any]:
    import _worker

    started: list[float] = []
    spent = [0.0, 0.0, 0.0]
    counts = [0, 0, 0]

    def hook(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            generation = info["generation"]
            spent[generation] += time.perf_counter() - started.pop()
            counts[generation] += 1

    gc.callbacks.append(hook)
    result = _worker.run(_spec(url, n))
    gc.callbacks.remove(hook)
    return {
        "seconds": result["seconds"],
        "gc_seconds": sum(spent),
        "gc_seconds_by_generation": spent,
        "collections": counts,
    }


def child_cprofile(url: str, n: int) -> dict[str, Any]:
    import _worker

    profiler = cProfile.Profile()
    profiler.enable()
    result = _worker.run(_spec(url, n))
    profiler.disable()
    RESULTS.mkdir(exist_ok=True)
    profiler.dump_stats(RESULTS / "profile-b1.pstats")
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    by_stage: dict[str, float] = defaultdict(float)
    for (path, _line, function), (_cc, _nc, self_time, _ct, callers) in stats.items():
        stage = stage_of(path, function)
        if stage is None and path == "~":
            # A builtin: charge it to its callers' stages, edge by edge.
            for (caller_path, _l, caller_function), edge in callers.items():
                by_stage[stage_of(caller_path, caller_function) or OTHER] += edge[2]
            continue
        by_stage[stage or OTHER] += self_time
    return {"seconds": result["seconds"], "stages": dict(by_stage)}


def child_plain(url: str, n: int) -> dict[str, Any]:
    """Import everything, say ``ready``, wait for a line on stdin (py-spy attaches), run."""
    import _variants  # noqa: F401
    import _worker

    print("ready", flush=True)
    sys.stdin.readline()
    return _worker.run(_spec(url, n))


CHILDREN = {"gc": child_gc, "cprofile": child_cprofile, "plain": child_plain}


# -- py-spy ------------------------------------------------------------------------------------


def pyspy_stages(raw: Path) -> dict[str, float]:
    """Samples per stage from py-spy's raw (collapsed) output."""
    samples: dict[str, float] = defaultdict(float)
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        frames = stack.split(";")
        if any("Thread._bootstrap" in f for f in frames):
            continue  # another thread (an executor's idle worker): not the event loop's time
        if any(
            "gc_collect" in f or "collect_generations" in f or "gc_collect_main" in f
            for f in frames
        ):
            samples[GC] += float(count)
            continue
        stage = OTHER
        for frame in reversed(frames):
            function, _, where = frame.partition(" (")
            found = stage_of(where, function.strip())
            if found is not None:
                stage = found
                break
        samples[stage] += float(count)
    return dict(samples)


def _pyspy(pyspy: str, raw: Path, url: str, n: int) -> dict[str, float]:
    """Run the plain child with py-spy attached once its imports are done."""
    child = subprocess.Popen(
        _child_command("plain", url, n), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        if child.stdout.readline().strip() != "ready":
            raise OSError("the profiled child did not start")
        recorder = subprocess.Popen(
            [
                pyspy,
                "record",
                "--native",
                "--rate",
                "200",
                "--format",
                "raw",
                "--output",
                str(raw),
                "--pid",
                str(child.pid),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)  # py-spy has no "attached" signal; give it a moment
        child.stdin.write("go\n")
        child.stdin.flush()
        child.wait()
        _, errors = recorder.communicate(timeout=60)
        if recorder.returncode != 0:
            raise subprocess.CalledProcessError(recorder.returncode, "py-spy", stderr=errors)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        with contextlib.suppress(OSError):
            child.stdin.close()
    return pyspy_stages(raw)


# -- orchestration -----------------------------------------------------------------------------


def _child_command(role: str, url: str, n: int) -> list[str]:
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        role,
        "--url",
        url,
        "--n",
        str(n),
        "--mode",
        MODE,
    ]


def _run_child(role: str, url: str, n: int) -> dict[str, Any]:
    done = subprocess.run(_child_command(role, url, n), capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    global MODE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000, help="watch events (= cached objects)")
    parser.add_argument("--child", choices=sorted(CHILDREN))
    parser.add_argument("--url")
    parser.add_argument("--mode", default="compact", help="cache mode (default: %(default)s)")
    args = parser.parse_args()
    MODE = args.mode
    if args.child:
        print(json.dumps(CHILDREN[args.child](args.url, args.n)), flush=True)
        return 0

    from bench import Server

    n = args.n
    server = Server()
    try:
        server.prepare(f"watch-{n}")
        timed = _run_child("gc", server.url, n)
        profiled = _run_child("cprofile", server.url, n)
        pyspy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        spy: dict[str, float] | None = None
        raw = RESULTS / "profile-b1-pyspy.txt"
        try:
            spy = _pyspy(pyspy, raw, server.url, n)
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"py-spy failed: {exc}", file=sys.stderr)
    finally:
        server.close()

    seconds, gc_seconds = timed["seconds"], timed["gc_seconds"]
    per_event = seconds / n * 1e6
    # cProfile cannot see the collector: take GC from the hooked run and split the rest of
    # that run's time by cProfile's shares.
    rest = seconds - gc_seconds
    cp_total = sum(profiled["stages"].values())
    stages = [name for name, _ in STAGES] + [OTHER]
    lines = [
        f"B1 profile: {n:,} ADDED events into a growing {MODE} cache, one events() consumer",
        f"plain run: {seconds:.2f} s = {n / seconds:,.0f} events/s = {per_event:.1f} µs/event; "
        f"cyclic GC {gc_seconds:.2f} s ({gc_seconds / seconds:.0%}) in "
        f"{'/'.join(map(str, timed['collections']))} collections of generations 0/1/2 "
        f"({'/'.join(f'{s:.2f}' for s in timed['gc_seconds_by_generation'])} s)",
        "",
        "| stage | cProfile µs/event | py-spy µs/event | py-spy share |",
        "|---|---:|---:|---:|",
    ]
    spy_total = sum(spy.values()) if spy else 0.0
    for stage in [GC, *stages]:
        if stage == GC:
            cp = gc_seconds / n * 1e6
        else:
            cp = profiled["stages"].get(stage, 0.0) / cp_total * rest / n * 1e6 if cp_total else 0
        if spy:
            share = spy.get(stage, 0.0) / spy_total
            spy_text = f"{share * per_event:.1f}"
            share_text = f"{share:.0%}"
        else:
            spy_text = share_text = "—"
        lines.append(f"| {stage} | {cp:.1f} | {spy_text} | {share_text} |")
    lines.append(f"| total | {per_event:.1f} | {per_event:.1f} | 100% |")
    report = "\n".join(lines)
    print(report)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "profile-b1.json").write_text(
        json.dumps({"timed": timed, "cprofile": profiled, "pyspy": spy, "report": report}, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
