"""The demo explains itself to someone who has never seen client-go (issue 10, item 12)."""

from __future__ import annotations

import io
import re

import anyio
import pytest
from rich.console import Console

from examples.demo.command import build_parser
from examples.demo.run import Demo
from examples.demo.signals import Interrupts
from examples.demo.view import PANEL_WIDTH, Snapshot, live_panel, plain_line

HEADER = re.compile(
    r"^demo: a fake API server at http://127\.0\.0\.1:\d+, where 10 pods on 2 nodes churn at"
    r" 5 changes/s; informers on pods \(indexed by node\) and configmaps feed the node-summary"
    r" controller, which writes ConfigMaps demo/node-summary-<node> with each node's pod"
    r" counts; no faults$"
)


def snapshot(**changes: object) -> Snapshot:
    values: dict[str, object] = {
        "phase": "churning", "elapsed": 1.0, "duration": 20.0, "operations": 10,
        "ops_rate": 5.0, "events": 10, "events_rate": 5.0, "bookmarks": 1, "cache_size": 10,
        "server_size": 10, "lists": 1, "relists": 0, "watches": 1, "restarts": {},
        "list_watch_errors": 0,
        "listeners": [("pods -> node-summary controller", 0, 3)],
        "queue_depth": 0, "delayed": 0, "in_flight": 0, "reconciles": 4,
        "reconcile_errors": 2, "injected_failures": 2, "writes": 3, "faults_planned": 4,
        "faults_injected": 0, "faults_recovered": 0, "last_fault": "", "log_warnings": 0,
        "log_errors": 2, "header": "demo: what runs",
    }  # fmt: skip
    values.update(changes)
    return Snapshot(**values)  # type: ignore[arg-type]


def rendered_width(snap: Snapshot) -> set[int]:
    console = Console(record=True, width=200)
    console.print(live_panel(snap))
    return {len(line) for line in console.export_text().splitlines() if line.strip()}


def test_the_live_panel_keeps_its_width_whatever_it_shows() -> None:
    """Short and long figures, and a long fault description, all render at the same width."""
    short = snapshot()
    long = snapshot(
        operations=123_456_789,
        restarts={"disconnect": 12, "idle": 3, "too_many_requests": 4, "expired": 9},
        last_fault="t=12.3s history compacted + watch dropped (410 on resume): recovered in"
        " 0.41 s (expired 1, disconnect 1) and then some more words to make it long",
    )
    assert rendered_width(short) == rendered_width(long) == {PANEL_WIDTH}


def test_the_views_name_things_and_mark_injected_failures() -> None:
    """The panel shows what runs, readable backlog rows, and "injected" next to the failure
    and error counters; the plain line marks injected retries."""
    console = Console(record=True, width=200)
    console.print(live_panel(snapshot()))
    text = console.export_text()
    assert "what runs" in text and "demo: what runs" in text
    assert "pods -> node-summary controller: 0 waiting (peak 3)" in text
    assert "2 failed and retried (2 injected)" in text
    assert "2 errors (2 injected; -v shows them)" in text
    assert "retries=2 (2 injected)" in plain_line(snapshot())


def run_demo(
    *argv: str, stop_at_start: bool = False, abort_at_start: bool = False
) -> tuple[int, list[str]]:
    """Run the demo in-process with the given interrupts already delivered."""
    args = build_parser().parse_args(["--plain", *argv])
    out = io.StringIO()

    async def main() -> int:
        interrupts = Interrupts()
        the_demo = Demo(args, out, None)
        if stop_at_start:
            interrupts.request_stop()
        if abort_at_start:
            interrupts.abort.set()
        code = await the_demo.run(interrupts)
        out.write("\n".join(the_demo.summary(code)) + "\n")
        return code

    code = anyio.run(main)
    return code, out.getvalue().splitlines()


@pytest.mark.slow
def test_the_plain_demo_starts_with_what_runs() -> None:
    """The first line says what runs: the fake server, the informers, the controller and
    what it writes."""
    code, lines = run_demo("--duration", "0", "--objects", "10", "--rate", "5", "--no-faults")
    assert code == 0
    assert HEADER.match(lines[0]), lines[0]
    assert lines[-1].endswith(": OK")
    listeners = [line for line in lines if line.startswith("listener:")]
    assert [line.split(":")[1].strip() for line in listeners] == [
        "pods -> fault tracker (async for)",
        "pods -> node-summary controller",
        "configmaps -> node-summary controller",
    ]


@pytest.mark.slow
def test_a_second_ctrl_c_skips_the_checks_and_says_so() -> None:
    """When the wait for settling is aborted (the second Ctrl-C), the checks are skipped:
    "interrupted, checks skipped" and status 130, never a MISMATCH."""
    code, lines = run_demo("--duration", "0", "--objects", "10", "--no-faults", abort_at_start=True)
    assert code == 130
    assert lines[-1] == "check: interrupted, checks skipped"
    assert "settle:     skipped (interrupted twice)" in lines
    assert not any("MISMATCH" in line for line in lines)


@pytest.mark.slow
def test_ctrl_c_before_the_informer_synced_skips_the_checks_too() -> None:
    """Interrupted before the cache synced: the same, and the first Ctrl-C says what the
    second would do."""
    code, lines = run_demo("--objects", "10", "--no-faults", stop_at_start=True)
    assert code == 130
    assert lines[-1] == "check: interrupted, checks skipped"
    assert (
        "# stopping: the churn ends, then the demo settles and checks; Ctrl-C again skips the"
        " checks" in lines
    )
