"""The acceptance run of issue 21, short: sharded replicas as processes under real faults.

``benchmarks/replicas_chaos.py --short`` (see its docstring): three (then four) replica processes
against the standalone fake API server, each through a TCP proxy the harness can sever;
``kill -9``, ``SIGSTOP`` past the lease then ``SIGCONT``, a cut-off past the lease, a join and a
graceful stop, with the shard gate on and off. The oracle reads the server's write log of the
side effects. Safety is asserted (no key reconciled by two replicas at once, no side effect
and no write sent from a reconcile that spanned the pause, every write reconciled); the
hand-over times are reported, not asserted (a loaded machine is not a timer:
``make replicas-chaos`` runs the full size and checks the bound).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CHAOS = Path(__file__).resolve().parents[2] / "benchmarks" / "replicas_chaos.py"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_replicas_under_kill_pause_cut_join_and_stop(tmp_path: Path) -> None:
    out = tmp_path / "chaos.json"
    done = subprocess.run(
        [sys.executable, str(CHAOS), "--short", "--gate", "both", "--advisory-timing",
         "--json", str(out)],
        capture_output=True, text=True, timeout=840, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    runs = json.loads(out.read_text())["runs"]
    assert [r["gate"] for r in runs] == ["on", "off"]
    for r in runs:
        assert r["problems"] == []
        assert r["overlap_count"] == 0
        assert r["spanned_pause_count"] == 0 and r["spanned_pause_sent_count"] == 0
        assert r["unreconciled"] == 0
        assert r["side_effects"] > 0 and r["keys_with_effects"] == 300
        assert [h["fault"] for h in r["hand_overs"]] == ["kill -9", "SIGSTOP", "cut-off"]
        assert all(h["seconds"] is not None for h in r["hand_overs"])
