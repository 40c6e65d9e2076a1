"""`make bench` keeps working: the harness runs every figure end to end and writes its JSON.

Tiny sizes, one round, variants in one process (``--mode smoke``): this checks that the
server, every variant and the report still fit together with the library as it is — never
how fast anything is.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

#: Whole programs: left out of `make test-lowest` (-m "not slow").
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench.py"
STARTUP = BENCH.parent / "import_time.py"


def test_the_benchmark_harness_runs_every_figure_and_writes_json(tmp_path: Path) -> None:
    """Every figure yields rows with values, nothing fails, and the table is printed."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--mode", "smoke", "--no-node", "--results", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "| figure | measurement |" in done.stdout
    document = json.loads((tmp_path / "latest-smoke.json").read_text())
    assert document["failures"] == []
    rows = document["rows"]
    assert {row["figure"] for row in rows} == {"B1", "B2", "B3", "B4", "B5", "B6", "reads"}
    # Values, not their size: at smoke sizes a memory delta (RSS after minus before) can be
    # below zero when the allocator hands pages back mid-run.
    assert [row for row in rows if not isinstance(row["value"], int | float)] == []
    assert all(math.isfinite(row["value"]) for row in rows)
    assert document["machine"]["python"]
    assert document["machine"]["cache_modes"]


def test_the_startup_benchmark_measures_every_group(tmp_path: Path) -> None:
    """``make bench-startup`` (one round): every group measured against its baselines, the
    standalone fake started and stopped, the earlier implementations extracted from git."""
    done = subprocess.run(
        [sys.executable, str(STARTUP), "--rounds", "1", "--results", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "| figure | subject (median) |" in done.stdout
    groups = json.loads((tmp_path / "latest-startup.json").read_text())["groups"]
    assert len(groups) == 5
    for group in groups.values():
        assert len(group["times"]) >= 2
        assert all(len(times) == 1 and times[0] > 0 for times in group["times"].values())
