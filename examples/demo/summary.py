"""What the demo says: the header line (what runs) and the final report."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .churn import DEMO_NAMESPACE
from .controller import RECONCILE_FAILURE_RATE, SUMMARY_PREFIX

if TYPE_CHECKING:
    from .run import Demo

__all__ = ["SETTLE_TIMEOUT", "describe", "plural", "summary_lines"]

#: The longest wait, after the churn stopped, for the cache and the controller to settle.
SETTLE_TIMEOUT = 30.0


def plural(n: int, word: str) -> str:
    """``n word`` with the word in the plural unless ``n`` is 1."""
    return f"{n} {word}{'' if n == 1 else 'es' if word.endswith('ch') else 's'}"


def describe(url: str, args: argparse.Namespace, nodes: int) -> str:
    """The header line: what runs."""
    faults = (
        "faults: dropped, stalled, compacted (410) and throttled (429) watches,"
        f" {RECONCILE_FAILURE_RATE:.0%} of reconciles fail on purpose"
        if not args.no_faults
        else "no faults"
    )
    return (
        f"demo: a fake API server at {url}, where {args.objects} pods on {nodes} nodes churn"
        f" at {args.rate:g} changes/s; informers on pods (indexed by node) and configmaps feed"
        f" the node-summary controller, which writes ConfigMaps {DEMO_NAMESPACE}/"
        f"{SUMMARY_PREFIX}<node> with each node's pod counts; {faults}"
    )


def summary_lines(demo: Demo) -> list[str]:
    """The final report; its last line is the cache check."""
    args = demo.args
    lines = ["", "== aioinformer demo summary =="]
    how = "stopped early by a signal" if demo.interrupted else "as planned"
    lines.append(
        f"run:        {demo.churn_seconds:.1f} s of churn ({how}); seed {demo.seed};"
        f" {'faults on' if demo.faults_enabled else 'no faults'}"
    )
    churn = demo.churn
    if churn is not None:
        kinds = ", ".join(f"{n} {kind}s" for kind, n in sorted(churn.operations.items()))
        rate = churn.total / demo.churn_seconds if demo.churn_seconds > 0 else 0.0
        lines.append(
            f"churn:      {args.objects} pods on {len(churn.nodes)} nodes; {churn.total}"
            f" operations ({rate:.1f}/s){': ' + kinds if kinds else ''}"
        )
    stats = demo.pods.statistics().reflector if demo.pods is not None else None
    if stats is not None:
        restarts = ", ".join(f"{c} {n}" for c, n in sorted(stats.watch_restarts.items()))
        events = ", ".join(f"{t} {n}" for t, n in sorted(stats.events.items()))
        lines.append(
            f"informer:   {plural(stats.lists, 'list')} ({plural(stats.relists, 'relist')}),"
            f" {plural(stats.watches, 'watch')},"
            f" {plural(sum(stats.watch_restarts.values()), 'watch restart')}"
            f"{' (' + restarts + ')' if restarts else ''}"
        )
        lines.append(
            f"            watch events: {events or 'none'}; list/watch errors {stats.errors},"
            f" malformed {stats.malformed_events}"
        )
    for name, peak, errors in demo.listener_stats:
        lines.append(f"listener:   {name}: peak backlog {peak}, handler errors {errors}")
    if demo.controller is not None and demo.reconciler is not None:
        st = demo.controller.statistics()
        lines.append(
            f"controller: {st.reconciles} reconciles, {demo.reconciler.writes} writes,"
            f" {st.errors} failed and retried ({demo.reconciler.injected_failures} injected)"
        )
    faults = demo.faults
    if faults is None:
        lines.append("faults:     0 injected (--no-faults)")
    else:
        lines.append(
            f"faults:     {len(faults.records)} injected, {faults.recovered} recovered"
            f" (of {faults.planned} planned)"
        )
        for record in faults.records:
            lines.append(
                f"  t={record.at:5.1f}s {record.description} [{record.affected} watch"
                f"{'es' if record.affected != 1 else ''}]: {record.outcome()}"
            )
    if demo.settle_seconds is not None:
        lines.append(f"settle:     caught up {demo.settle_seconds:.2f} s after the churn stopped")
    elif demo.aborted:
        lines.append("settle:     skipped (interrupted twice)")
    elif demo.started:
        lines.append(f"settle:     not settled within {SETTLE_TIMEOUT:.0f} s")
    injected = demo.reconciler.injected_failures if demo.reconciler is not None else 0
    note = f", {injected} of them injected reconcile failures" if injected else ""
    lines.append(
        f"log:        {demo.log.warnings} warnings, {demo.log.errors} errors (-v shows them{note})"
    )
    for name, ok, detail in demo.checks:
        lines.append(f"check: {name} ({detail}): {'OK' if ok else 'MISMATCH'}")
    if not demo.checks:
        if demo.interrupted or demo.aborted:
            lines.append("check: interrupted, checks skipped")
        else:
            lines.append("check: not run (the pods informer never synced): FAILED")
    return lines
