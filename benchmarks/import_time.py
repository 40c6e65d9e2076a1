"""Start-up costs of issue 19 ("first contact"), each against a baseline measured in the same run.

* **import** -- ``import aioinformer`` against ``import aiohttp`` (goal: at most 2x). Each
  import runs in a fresh interpreter under ``python -X importtime``; the figure is the
  cumulative time of the top-level module's line (the interpreter's own start-up excluded).
  The wall time of the whole ``python -c 'import X'`` is reported too, with ``python -c pass``
  subtracted.
* **pytest** -- ``pytest --co -q`` of an unrelated one-test project in a temporary directory,
  with aioinformer installed (its ``pytest11`` plugin loads), against the same with
  ``-p no:aioinformer`` (goal: at most 1.1x). Wall time of the whole pytest process.
* **connect** -- a fresh interpreter imports aioinformer, enters ``connect(kubeconfig=...)``
  for the standalone fake API server over ``http://`` and GETs one namespace; against (a) the
  same code with kubernetes_asyncio imported before the timer starts (its import cost left
  out) and (b) the implementations of the commits ``--previous`` names (default f2bbf6d, main
  with the perf work, which this branch merged: the same modules without issue 19's lazy
  loading; and 5107688, main before the perf work), each extracted with ``git archive`` and
  put first on ``PYTHONPATH``.
* **first use** -- ``from aioinformer import SharedIndexInformer`` (every public name loads,
  aiohttp and anyio with them) against ``import aiohttp``, wall time: what a program using
  aioinformer pays once.

Every figure is the median of ``--rounds`` rounds; within a round the variants run back to
back in a rotating order, and a ratio is the median of the per-round ratios (a slow minute on
the shared machine hits both sides of a ratio alike). The machine's load average is printed
with the table::

    .venv/bin/python benchmarks/import_time.py            # or: make bench-startup
    .venv/bin/python benchmarks/import_time.py --rounds 5 --only import,pytest
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
RESULTS = ROOT / "benchmarks" / "results"

#: One run of a variant: its time in seconds.
Run = Callable[[], float]


@dataclass
class Group:
    """A subject and its baselines, run back to back each round."""

    name: str
    goal: float | None
    variants: dict[str, Run]
    subject: str
    times: dict[str, list[float]] = field(default_factory=dict)

    def run(self, rounds: int) -> None:
        names = list(self.variants)
        self.times = {name: [] for name in names}
        for index in range(rounds):
            shift = index % len(names)
            for name in names[shift:] + names[:shift]:
                self.times[name].append(self.variants[name]())

    def ratio(self, baseline: str) -> tuple[float, float, float]:
        """The median of the per-round ratios subject/baseline, and their range."""
        ratios = [
            s / b for s, b in zip(self.times[self.subject], self.times[baseline], strict=True)
        ]
        return statistics.median(ratios), min(ratios), max(ratios)


def _python(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """Run this interpreter; its stderr (where -X importtime writes)."""
    done = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=cwd,
    )
    return done.stderr + done.stdout


def importtime(module: str) -> Run:
    """The cumulative import time of ``module`` (-X importtime, microseconds -> seconds)."""
    pattern = re.compile(rf"import time:\s+\d+ \|\s+(\d+) \|\s?{re.escape(module)}$", re.M)

    def run() -> float:
        out = _python("-X", "importtime", "-c", f"import {module}")
        match = pattern.search(out)
        if match is None:
            raise RuntimeError(f"no -X importtime line for {module}:\n{out[-2000:]}")
        return int(match.group(1)) / 1e6

    return run


def wall(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Run:
    """The wall time of one process of this interpreter."""

    def run() -> float:
        start = time.perf_counter()
        _python(*args, env=env, cwd=cwd)
        return time.perf_counter() - start

    return run


def import_group() -> list[Group]:
    cumulative = Group(
        "import: cumulative import time (-X importtime)",
        2.0,
        {"import aioinformer": importtime("aioinformer"), "import aiohttp": importtime("aiohttp")},
        "import aioinformer",
    )
    process = Group(
        "import: wall time of python -c 'import X'",
        2.0,
        {
            "import aioinformer": wall("-c", "import aioinformer"),
            "import aiohttp": wall("-c", "import aiohttp"),
            "python -c pass": wall("-c", "pass"),
        },
        "import aioinformer",
    )
    first_use = Group(
        "first use: wall time of python -c 'from aioinformer import SharedIndexInformer'",
        None,
        {
            "first public name": wall("-c", "from aioinformer import SharedIndexInformer"),
            "import aiohttp": wall("-c", "import aiohttp"),
        },
        "first public name",
    )
    return [cumulative, process, first_use]


def pytest_group(directory: Path) -> list[Group]:
    (directory / "test_trivial.py").write_text("def test_one() -> None:\n    assert 1 + 1 == 2\n")
    (directory / "pytest.ini").write_text("[pytest]\n")  # the project's own rootdir and config
    base = ("-m", "pytest", "--co", "-q", "-p", "no:cacheprovider")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return [
        Group(
            "pytest --co -q of a one-test project",
            1.1,
            {
                "with the aioinformer plugin": wall(*base, env=env, cwd=directory),
                "-p no:aioinformer": wall(*base, "-p", "no:aioinformer", env=env, cwd=directory),
            },
            "with the aioinformer plugin",
        )
    ]


CONNECT = """
import time
start = time.perf_counter()
import asyncio
import aioinformer

async def main() -> None:
    async with aioinformer.connect(kubeconfig={kubeconfig!r}) as client:
        await client.get("namespaces", "default")

asyncio.run(main())
print("elapsed", time.perf_counter() - start)
"""


def connect_run(kubeconfig: Path, *, preload: str = "", pythonpath: Path | None = None) -> Run:
    code = preload + CONNECT.format(kubeconfig=str(kubeconfig))
    env = {**os.environ}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)

    def run() -> float:
        out = _python("-c", code, env=env)
        match = re.search(r"^elapsed (\S+)$", out, re.M)
        if match is None:
            raise RuntimeError(f"no timing:\n{out[-2000:]}")
        return float(match.group(1))

    return run


def start_fake(directory: Path) -> tuple[subprocess.Popen[str], Path]:
    """The standalone fake API server on a free port, and the kubeconfig it wrote."""
    kubeconfig = directory / "fake.kubeconfig"
    server = subprocess.Popen(
        [
            str(BIN / "aioinformer"),
            "fake-apiserver",
            "--port",
            "0",
            "--no-kubelet",
            "--kubeconfig",
            str(kubeconfig),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()  # printed once it listens and the file is written
    if not line.startswith("export KUBECONFIG="):
        server.kill()
        raise RuntimeError(f"the fake API server did not start: {line!r}")
    return server, kubeconfig


def previous_tree(commit: str, directory: Path) -> Path:
    """The ``aioinformer`` package of ``commit``, extracted under ``directory``."""
    archive = directory / f"{commit}.tar"
    with archive.open("wb") as file:
        subprocess.run(["git", "archive", commit, "aioinformer"], cwd=ROOT, stdout=file, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(directory / commit, filter="data")
    return directory / commit


def connect_group(kubeconfig: Path, previous: dict[str, Path]) -> list[Group]:
    preload = "import kubernetes_asyncio.client, kubernetes_asyncio.config\n"
    variants = {
        "this branch": connect_run(kubeconfig),
        "kubernetes_asyncio imported before the timer": connect_run(kubeconfig, preload=preload),
    }
    for commit, tree in previous.items():
        variants[f"the implementation of {commit}"] = connect_run(kubeconfig, pythonpath=tree)
    return [
        Group(
            "connect() over http:// and one GET, in a fresh interpreter (import included)",
            None,
            variants,
            "this branch",
        )
    ]


def report(groups: Sequence[Group], rounds: int, load: tuple[float, float]) -> str:
    lines = [
        f"rounds: {rounds}; load average {load[0]:.2f} at the start, {os.getloadavg()[0]:.2f}"
        f" at the end; python {sys.version.split()[0]}",
        "",
        "| figure | subject (median) | baseline (median) | ratio (range) | goal |",
        "|---|---|---|---|---|",
    ]
    for group in groups:
        subject = statistics.median(group.times[group.subject])
        for baseline in group.variants:
            if baseline == group.subject:
                continue
            ratio, low, high = group.ratio(baseline)
            base = statistics.median(group.times[baseline])
            goal = "-"
            if group.goal is not None and "pass" not in baseline:  # python -c pass: context
                goal = f"<= {group.goal}x " + ("met" if ratio <= group.goal else "MISSED")
            lines.append(
                f"| {group.name} | {group.subject}: {subject * 1000:.1f} ms |"
                f" {baseline}: {base * 1000:.1f} ms |"
                f" {ratio:.2f}x ({low:.2f}-{high:.2f}) | {goal} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="rounds per figure (9)")
    parser.add_argument("--only", default="import,pytest,connect", help="groups to run")
    parser.add_argument(
        "--previous",
        default="f2bbf6d,5107688",
        help="the commits (comma-separated) whose connect() this branch's is compared with",
    )
    parser.add_argument(
        "--results", type=Path, default=RESULTS, help="where latest-startup.json goes"
    )
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    load = os.getloadavg()
    groups: list[Group] = []
    with tempfile.TemporaryDirectory(prefix="aioinformer-startup-") as temporary:
        directory = Path(temporary)
        if "import" in only:
            groups += import_group()
        if "pytest" in only:
            project = directory / "project"
            project.mkdir()
            groups += pytest_group(project)
        server = None
        try:
            if "connect" in only:
                server, kubeconfig = start_fake(directory)
                trees = {c: previous_tree(c, directory) for c in args.previous.split(",") if c}
                groups += connect_group(kubeconfig, trees)
            for group in groups:
                print(f"measuring: {group.name}", file=sys.stderr, flush=True)
                group.run(args.rounds)
        finally:
            if server is not None:
                server.send_signal(signal.SIGINT)
                server.wait(timeout=30)
    table = report(groups, args.rounds, (load[0], load[1]))
    print(table)
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "latest-startup.json").write_text(
        json.dumps(
            {
                "rounds": args.rounds,
                "load": [load[0], os.getloadavg()[0]],
                "groups": {g.name: {"subject": g.subject, "times": g.times} for g in groups},
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
