"""``benchmarks/micro_core.py`` keeps running: every figure at tiny sizes, in one process.

This checks that the micro-benchmarks still fit the library as it is — never how fast
anything is.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

#: Whole programs: left out of `make test-lowest` (-m "not slow").
pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "micro_core.py"


def test_the_micro_benchmarks_run_and_print_their_table() -> None:
    """Every figure yields a row against its baseline."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    figures = {line.split(" | ")[0].strip("| ").split(" ")[0] for line in table[1:]}
    assert figures == {"ingest", "pipeline", "memory", "old", "reads", "framing", "FIFO"}
