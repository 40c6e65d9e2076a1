"""The demo (``examples/demo``, ``make demo``): churn, faults, a controller, and a final
cache == server check."""

from __future__ import annotations

import asyncio
import io
import re
import signal
import sys
from typing import Any

import pytest

from examples.demo import controller
from examples.demo.command import build_parser, run

from ._examples import ROOT

#: Whole programs: left out of `make test-lowest` (-m "not slow").
pytestmark = pytest.mark.slow

CHECK = re.compile(r"^check: cache == server \((\d+) objects, same resource versions\): OK$")


async def _start(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "examples.demo", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip


def _number(pattern: str, text: str) -> int:
    match = re.search(pattern, text, re.MULTILINE)
    assert match is not None, f"{pattern!r} not in:\n{text}"
    return int(match.group(1))


def test_demo_options_and_defaults() -> None:
    """The demo's command line has the documented options and defaults."""
    args = build_parser().parse_args([])
    assert (args.duration, args.objects, args.rate) == (20.0, 200, 50.0)
    assert not args.no_faults and not args.plain
    args = build_parser().parse_args(
        ["--duration", "3", "--objects", "10", "--rate", "5", "--no-faults", "--plain"]
    )
    assert (args.duration, args.objects, args.rate, args.no_faults, args.plain) == (
        3.0, 10, 5.0, True, True,
    )  # fmt: skip


def test_summary_counts_pods_by_phase() -> None:
    """A node summary counts its pods, and each phase, with every key always present."""
    pods: list[dict[str, Any]] = [
        {"status": {"phase": "Running"}},
        {"status": {"phase": "Running"}},
        {"spec": {}},
    ]
    assert controller.summary_of(pods) == {
        "pods": "3", "pending": "0", "running": "2", "succeeded": "0", "failed": "0",
    }  # fmt: skip


async def test_demo_with_faults_recovers_and_ends_with_cache_equal_to_server() -> None:
    """A 10 s run injects faults, recovers from each, and ends with cache == server (exit 0)."""
    process = await _start("--plain", "--duration", "10")
    async with asyncio.timeout(60):
        stdout, stderr = await process.communicate()
    out = stdout.decode()
    assert process.returncode == 0, out + stderr.decode()
    lines = out.rstrip().splitlines()
    assert CHECK.match(lines[-1]), lines[-1]
    assert "check: node summaries == server (5 nodes): OK" in out
    # Status lines while churning (their times depend on how long the initial sync took).
    assert _number(r"^\[\s*\d+\.\ds churning\] ops=(\d+)", out) > 0
    injected = _number(r"^faults: +(\d+) injected", out)
    recovered = _number(r"^faults: +\d+ injected, (\d+) recovered", out)
    assert injected >= 3 and recovered == injected
    relists = _number(r"^informer: .*\((\d+) relists?\)", out)
    restarts = _number(r"^informer: .*, (\d+) watch restarts?", out)
    assert relists >= 1 or restarts >= 1
    assert (
        len(re.findall(r"^  t= *[\d.]+s .*: recovered in [\d.]+ s", out, re.MULTILINE)) == recovered
    )
    assert _number(r"^controller: .* (\d+) failed and retried", out) > 0


def test_demo_without_faults_in_process() -> None:
    """`--no-faults` injects nothing, fails no reconcile, and still ends with cache == server."""
    args = build_parser().parse_args(["--no-faults", "--plain", "--duration", "3"])
    out = io.StringIO()
    assert run(args, out=out) == 0
    text = out.getvalue()
    assert "faults:     0 injected" in text
    assert _number(r"^controller: .* (\d+) failed and retried", text) == 0
    assert _number(r"^informer: .*\((\d+) relists?\)", text) == 0
    assert CHECK.match(text.rstrip().splitlines()[-1])


async def test_demo_interrupted_shuts_down_cleanly_with_a_summary() -> None:
    """SIGINT stops the churn early; the demo still settles, prints its summary and exits 0."""
    process = await _start("--plain", "--duration", "60")
    assert process.stdout is not None
    async with asyncio.timeout(30):
        while "churning]" not in (line := (await process.stdout.readline()).decode()):
            assert line, "the demo ended before churning"
        process.send_signal(signal.SIGINT)
        stdout, stderr = await process.communicate()
    out = stdout.decode()
    assert process.returncode == 0, out + stderr.decode()
    assert "(stopped early by a signal)" in out
    assert CHECK.match(out.rstrip().splitlines()[-1])
    assert stderr.decode() == ""
