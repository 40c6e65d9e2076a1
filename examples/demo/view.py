"""The demo's views: a live rich panel, or one plain status line at a time.

Both render a :class:`Snapshot`, which the demo builds from its parts on every refresh.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["PANEL_WIDTH", "LogCounter", "RateMeter", "Snapshot", "live_panel", "plain_line"]


class RateMeter:
    """The rate of a growing counter over the last ``window`` seconds.

    :param window: seconds of history used.
    """

    def __init__(self, window: float = 2.0) -> None:
        self._window = window
        self._samples: deque[tuple[float, int]] = deque()

    def rate(self, now: float, value: int) -> float:
        """Record ``value`` at ``now``; returns the rate per second over the window."""
        samples = self._samples
        samples.append((now, value))
        while len(samples) > 2 and now - samples[1][0] >= self._window:
            samples.popleft()
        then, old = samples[0]
        return (value - old) / (now - then) if now > then else 0.0


class LogCounter(logging.Handler):
    """Counts log records of level WARNING and above; shows none of them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.warnings = 0
        self.errors = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self.errors += 1
        else:
            self.warnings += 1


@dataclass
class Snapshot:
    """What the views show at one moment."""

    phase: str
    elapsed: float
    duration: float
    operations: int
    ops_rate: float
    events: int
    events_rate: float
    bookmarks: int
    cache_size: int
    server_size: int
    lists: int
    relists: int
    watches: int
    restarts: dict[str, int]
    list_watch_errors: int
    #: (listener name, backlog now, peak backlog)
    listeners: list[tuple[str, int, int]]
    queue_depth: int
    delayed: int
    in_flight: int
    reconciles: int
    reconcile_errors: int
    #: Reconciles failed on purpose (part of ``reconcile_errors`` and of the logged errors).
    injected_failures: int
    writes: int
    faults_planned: int
    faults_injected: int
    faults_recovered: int
    last_fault: str
    log_warnings: int
    log_errors: int
    #: What runs, in one line.
    header: str = ""
    notes: list[str] = field(default_factory=list)


def _restarts(restarts: dict[str, int]) -> str:
    return ", ".join(f"{cause} {n}" for cause, n in sorted(restarts.items())) or "none"


def plain_line(snap: Snapshot) -> str:
    """One status line (for ``--plain``)."""
    backlog = sum(b for _, b, _ in snap.listeners)
    peak = max((p for _, _, p in snap.listeners), default=0)
    restarts = ",".join(f"{c}:{n}" for c, n in sorted(snap.restarts.items())) or "0"
    line = (
        f"[{snap.elapsed:6.1f}s {snap.phase}] ops={snap.operations} ({snap.ops_rate:.0f}/s)"
        f" events={snap.events} ({snap.events_rate:.0f}/s) cache={snap.cache_size}"
        f"/{snap.server_size} relists={snap.relists} restarts={restarts}"
        f" backlog={backlog} (peak {peak}) queue={snap.queue_depth}+{snap.delayed}"
        f" reconciles={snap.reconciles} retries={snap.reconcile_errors}"
        f" ({snap.injected_failures} injected)"
    )
    if snap.last_fault:
        line += f" | {snap.last_fault}"
    return line


#: The live panel's width (narrower terminals get their own width): a fixed width keeps the
#: panel from growing and shrinking as the figures change.
PANEL_WIDTH = 110


def live_panel(snap: Snapshot, *, width: int = PANEL_WIDTH) -> RenderableType:
    """The live view (rich), ``width`` columns wide whatever it shows."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    table = Table.grid(padding=(0, 2), expand=True)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(overflow="fold", ratio=1)
    if snap.header:
        table.add_row("what runs", Text(snap.header, style="dim"))
    table.add_row(
        "churn",
        f"{snap.operations} operations ({snap.ops_rate:.1f}/s) on {snap.server_size} pods",
    )
    table.add_row(
        "watch events",
        f"{snap.events} ({snap.events_rate:.1f}/s), {snap.bookmarks} bookmarks",
    )
    in_step = snap.cache_size == snap.server_size
    table.add_row(
        "cache",
        Text(
            f"{snap.cache_size} objects (server {snap.server_size})",
            style="green" if in_step else "yellow",
        ),
    )
    table.add_row(
        "lists",
        f"{snap.lists} ({snap.relists} relist{'' if snap.relists == 1 else 's'}),"
        f" {snap.watches} watches, {snap.list_watch_errors} list/watch errors",
    )
    table.add_row("watch restarts", _restarts(snap.restarts))
    for name, backlog, peak in snap.listeners:
        table.add_row("backlog", f"{name}: {backlog} waiting (peak {peak})")
    table.add_row(
        "queue",
        f"depth {snap.queue_depth}, delayed {snap.delayed}, in flight {snap.in_flight}",
    )
    table.add_row(
        "reconciles",
        f"{snap.reconciles} ({snap.writes} writes), {snap.reconcile_errors} failed and retried"
        f" ({snap.injected_failures} injected)",
    )
    table.add_row(
        "faults",
        f"{snap.faults_injected}/{snap.faults_planned} injected, {snap.faults_recovered} recovered",
    )
    if snap.last_fault:
        table.add_row("last fault", snap.last_fault)
    table.add_row(
        "log",
        f"{snap.log_warnings} warnings, {snap.log_errors} errors"
        f" ({snap.injected_failures} injected; -v shows them)",
    )
    for note in snap.notes:
        table.add_row("", Text(note, style="dim"))
    remaining = max(0.0, snap.duration - snap.elapsed)
    title = (
        f"aioinformer demo - {snap.phase} - {snap.elapsed:.1f} s"
        f" ({remaining:.1f} s left, Ctrl-C stops)"
    )
    return Panel(table, title=title, title_align="left", width=width)
