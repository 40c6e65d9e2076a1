"""One run of the demo: the fake API server, the churn, the informers, the controller, the
faults, the view, and the wait for everything to settle before the checks."""

from __future__ import annotations

import argparse
import logging
import random
from typing import TYPE_CHECKING, TextIO

import anyio
import anyio.abc

from aioinformer import (
    BackoffPolicy,
    Controller,
    KubeClient,
    SharedIndexInformer,
    SharedInformerFactory,
    WatchConfig,
)
from aioinformer.testing import FakeApiServer

from .churn import Churn, node_names
from .controller import (
    BY_NODE,
    RECONCILE_FAILURE_RATE,
    NodeSummaries,
    cache_matches,
    compare_cache,
    compare_summaries,
    is_summary,
    pods_by_node,
    summary_node,
)
from .faults import FaultSchedule, Progress
from .signals import EXIT_FAILURE, EXIT_INTERRUPTED, Interrupts
from .summary import SETTLE_TIMEOUT, describe, summary_lines
from .view import PANEL_WIDTH, LogCounter, RateMeter, Snapshot, live_panel, plain_line

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["INFORMER_WATCH", "Demo"]

logger = logging.getLogger(__name__)

#: The informers' settings: short enough for recovery to show within a run.
INFORMER_WATCH = WatchConfig(
    idle_timeout=2.5, min_watch_timeout=5.0, backoff=BackoffPolicy(initial=0.2, cap=2.0)
)


async def _wait(event: anyio.Event, seconds: float) -> None:
    """Until ``event`` is set or ``seconds`` have passed."""
    with anyio.move_on_after(seconds):
        await event.wait()


class Demo:
    """One run of the demo: its parts, its view and its summary."""

    def __init__(self, args: argparse.Namespace, out: TextIO, console: Console | None) -> None:
        self.args = args
        self.out = out
        self.console = console
        self.seed = args.seed if args.seed is not None else random.randrange(2**31)
        self.faults_enabled = not args.no_faults
        self.log = LogCounter()
        self._pulse = anyio.Event()  # set on every notification and reconcile: "re-check"
        self.phase = "starting"
        self.started = 0.0
        self.churn_seconds = 0.0
        self.settle_seconds: float | None = None
        self.interrupted = False
        self.aborted = False
        #: One line saying what runs (set once the fake API server listens).
        self.header = ""
        #: Readable names of the listeners, by listener name.
        self.labels: dict[str, str] = {}
        self.checks: list[tuple[str, bool, str]] = []
        #: (name, peak backlog, handler errors) of every listener, taken before shutdown.
        self.listener_stats: list[tuple[str, int, int]] = []
        self._ops_meter = RateMeter()
        self._events_meter = RateMeter()
        self._faults_done = anyio.Event()
        # Set by run():
        self.churn: Churn | None = None
        self.pods: SharedIndexInformer | None = None
        self.configmaps: SharedIndexInformer | None = None
        self.controller: Controller[str] | None = None
        self.reconciler: NodeSummaries | None = None
        self.progress: Progress | None = None
        self.faults: FaultSchedule | None = None

    def pulse(self) -> None:
        """Something changed: wake the settling check."""
        self._pulse.set()

    # -- running ---------------------------------------------------------------------------

    async def run(self, interrupts: Interrupts) -> int:
        args = self.args
        rng = random.Random(self.seed)
        nodes = node_names(args.objects)
        async with FakeApiServer(bookmark_interval=1.0) as server:
            self.header = describe(server.url, args, len(nodes))
            if self.console is None:
                self.out.write(self.header + "\n")
                self.out.flush()
            churn = Churn(
                server,
                objects=args.objects,
                rate=args.rate,
                nodes=nodes,
                rng=random.Random(rng.random()),
            )
            self.churn = churn
            await churn.populate()
            async with (
                KubeClient(server.api_client()) as client,
                SharedInformerFactory(client, watch=INFORMER_WATCH) as factory,
            ):
                pods = factory.for_resource("v1/pods", indexers={BY_NODE: pods_by_node})
                configmaps = factory.for_resource("v1/configmaps")
                self.pods, self.configmaps = pods, configmaps
                self.progress = progress = Progress(pods, on_event=self.pulse)
                if self.faults_enabled:
                    self.faults = FaultSchedule(server, pods, progress, duration=args.duration)
                    await self.faults.setup()
                self.reconciler = NodeSummaries(
                    client,
                    pods=pods,
                    configmaps=configmaps,
                    failure_rate=RECONCILE_FAILURE_RATE if self.faults_enabled else 0.0,
                    rng=random.Random(rng.random()),
                    on_done=self.pulse,
                )
                controller: Controller[str] = Controller(
                    name="node-summary",
                    reconcile=self.reconciler.reconcile,
                    workers=4,
                    stop_timeout=5.0,
                )
                self.controller = controller
                pods_watch = controller.watch(pods, map_func=pods_by_node)
                summaries_watch = controller.watch(
                    configmaps, filter=is_summary, map_func=summary_node
                )
                self.labels = {
                    progress.stream.name: "pods -> fault tracker (async for)",
                    pods_watch.name: "pods -> node-summary controller",
                    summaries_watch.name: "configmaps -> node-summary controller",
                }
                for node in nodes:  # every node gets a summary, even one without pods
                    controller.enqueue(node)
                factory.start()
                async with controller, anyio.create_task_group() as tg:
                    tg.start_soon(progress.run, name="demo progress")
                    tg.start_soon(self._on_interrupts, interrupts, name="demo interrupts")
                    view_done, view_ended = anyio.Event(), anyio.Event()
                    tg.start_soon(self._view, view_done, view_ended, name="demo view")
                    try:
                        code = await self._drive(server, nodes, tg, interrupts)
                    finally:
                        self.phase = "stopping"
                        view_done.set()
                        await view_ended.wait()
                        progress.close()
                        tg.cancel_scope.cancel()  # the interrupt watcher
            self.phase = "done"
        return code

    async def _on_interrupts(self, interrupts: Interrupts) -> None:
        await interrupts.stop.wait()
        self.on_first_interrupt()
        await interrupts.abort.wait()
        self.pulse()

    async def _run_faults(self, scope: anyio.CancelScope, stop: anyio.Event, start: float) -> None:
        assert self.faults is not None
        try:
            with scope:
                await self.faults.run(stop, start=start)
        finally:
            self._faults_done.set()
            self.pulse()

    async def _drive(
        self,
        server: FakeApiServer,
        nodes: list[str],
        tg: anyio.abc.TaskGroup,
        interrupts: Interrupts,
    ) -> int:
        assert self.churn is not None and self.pods is not None and self.configmaps is not None
        self.phase = "syncing"
        with interrupts.cancellable(), anyio.move_on_after(30.0):
            await self.pods.wait_for_cache_sync()
        if interrupts.stop.is_set():
            self.interrupted = True
            return EXIT_INTERRUPTED
        if not self.pods.has_synced():
            self.out.write("error: the pods informer did not sync within 30 s\n")
            return EXIT_FAILURE
        self.phase = "churning"
        self.started = start = anyio.current_time()
        churn_stop = anyio.Event()
        faults_scope = anyio.CancelScope()
        if self.faults is not None:
            tg.start_soon(self._run_faults, faults_scope, churn_stop, start, name="demo faults")
        else:
            self._faults_done.set()
        async with anyio.create_task_group() as churning:
            churning.start_soon(self.churn.run, churn_stop, name="demo churn")
            with anyio.move_on_after(self.args.duration):
                await interrupts.stop.wait()
            self.interrupted = interrupts.stop.is_set()
            churn_stop.set()
        self.churn_seconds = anyio.current_time() - start
        self.phase = "settling"
        settled = await self._settle(server, interrupts.abort)
        faults_scope.cancel()
        if settled:
            self.settle_seconds = anyio.current_time() - start - self.churn_seconds
        self.listener_stats = [
            (self._label(listener.name), listener.peak_backlog, listener.handler_errors)
            for informer in (self.pods, self.configmaps)
            for listener in informer.statistics().listeners
        ]
        if self.aborted:
            return EXIT_INTERRUPTED  # a second Ctrl-C: the checks are skipped
        ok_summaries, detail = await compare_summaries(server, nodes)
        self.checks.append(("node summaries == server", ok_summaries, detail))
        ok_cache, detail = await compare_cache(server, self.pods)
        self.checks.append(("cache == server", ok_cache, detail))
        return 0 if ok_summaries and ok_cache else 1

    def _quiet(self) -> bool:
        assert self.controller is not None and self.pods and self.configmaps
        if not self._faults_done.is_set():
            return False
        queue = self.controller.queue
        if len(queue) or queue.waiting_count or self.controller.statistics().in_flight:
            return False
        return not any(
            listener.backlog
            for informer in (self.pods, self.configmaps)
            for listener in informer.statistics().listeners
        )

    async def _settle(self, server: FakeApiServer, abort: anyio.Event) -> bool:
        """Until the caches equal the server and the controller has nothing left to do.

        Re-checks on every notification and every reconcile (and at least once a second).
        Returns False after :data:`SETTLE_TIMEOUT` seconds or on a second Ctrl-C.
        """
        assert self.pods is not None and self.configmaps is not None
        deadline = anyio.current_time() + SETTLE_TIMEOUT
        while not abort.is_set():
            pulse = self._pulse = anyio.Event()  # before checking: a change re-wakes us
            if (
                self._quiet()
                and await cache_matches(server, self.pods, "pods")
                and await cache_matches(server, self.configmaps, "configmaps")
            ):
                return True
            remaining = deadline - anyio.current_time()
            if remaining <= 0:
                logger.warning("not settled after %.0f s", SETTLE_TIMEOUT)
                return False
            await _wait(pulse, min(1.0, remaining))
        self.aborted = True
        return False

    # -- the view --------------------------------------------------------------------------

    async def _view(self, done: anyio.Event, ended: anyio.Event) -> None:
        try:
            await self._show(done)
        finally:
            ended.set()

    async def _show(self, done: anyio.Event) -> None:
        if self.console is not None:
            from rich.live import Live

            width = min(PANEL_WIDTH, self.console.width)
            with Live(
                live_panel(self.snapshot(), width=width),
                console=self.console,
                auto_refresh=False,
                transient=False,
            ) as live:
                while True:
                    live.update(live_panel(self.snapshot(), width=width), refresh=True)
                    if done.is_set():
                        return
                    await _wait(done, 0.25)
        else:
            while not done.is_set():
                await _wait(done, 1.0)
                if self.phase in ("churning", "settling", "stopping"):
                    self.out.write(plain_line(self.snapshot()) + "\n")
                    self.out.flush()

    def snapshot(self) -> Snapshot:
        """The current figures, for the views."""
        now = anyio.current_time()
        churn, pods, controller = self.churn, self.pods, self.controller
        stats = pods.statistics().reflector if pods is not None else None
        events = bookmarks = 0
        if stats is not None:
            for kind, n in stats.events.items():
                if kind == "BOOKMARK":
                    bookmarks += n
                else:
                    events += n
        operations = churn.total if churn is not None else 0
        listeners = [
            (self._label(listener.name), listener.backlog, listener.peak_backlog)
            for informer in (self.pods, self.configmaps)
            if informer is not None
            for listener in informer.statistics().listeners
        ]
        statistics = controller.statistics() if controller is not None else None
        records = self.faults.records if self.faults is not None else []
        last = ""
        if records:
            record = records[-1]
            last = f"t={record.at:.1f}s {record.description}: {record.outcome()}"
        elapsed = now - self.started if self.started else 0.0
        return Snapshot(
            phase=self.phase,
            elapsed=elapsed,
            duration=self.args.duration,
            operations=operations,
            ops_rate=self._ops_meter.rate(now, operations),
            events=events,
            events_rate=self._events_meter.rate(now, events),
            bookmarks=bookmarks,
            cache_size=len(pods.cache) if pods is not None else 0,
            server_size=self._server_size(),
            lists=stats.lists if stats else 0,
            relists=stats.relists if stats else 0,
            watches=stats.watches if stats else 0,
            restarts=dict(stats.watch_restarts) if stats else {},
            list_watch_errors=stats.errors if stats else 0,
            listeners=listeners,
            queue_depth=len(controller.queue) if controller is not None else 0,
            delayed=controller.queue.waiting_count if controller is not None else 0,
            in_flight=statistics.in_flight if statistics else 0,
            reconciles=statistics.reconciles if statistics else 0,
            reconcile_errors=statistics.errors if statistics else 0,
            injected_failures=(
                self.reconciler.injected_failures if self.reconciler is not None else 0
            ),
            writes=self.reconciler.writes if self.reconciler is not None else 0,
            faults_planned=self.faults.planned if self.faults is not None else 0,
            faults_injected=len(records),
            faults_recovered=sum(r.recovered for r in records),
            last_fault=last,
            log_warnings=self.log.warnings,
            log_errors=self.log.errors,
            header=self.header,
            notes=self.notes(),
        )

    def _label(self, name: str) -> str:
        return self.labels.get(name, name)

    def notes(self) -> list[str]:
        """Hints for the live view."""
        if self.interrupted:
            return [
                "stopping: the churn ends, then the demo settles and checks; Ctrl-C again"
                " skips the checks"
            ]
        return []

    def on_first_interrupt(self) -> None:
        """The first Ctrl-C: say what happens next (the live view shows it as a note)."""
        self.interrupted = True
        if self.console is None:
            self.out.write(
                "# stopping: the churn ends, then the demo settles and checks;"
                " Ctrl-C again skips the checks\n"
            )
            self.out.flush()

    def _server_size(self) -> int:
        """Pods on the server: the churn is the only pod writer (plus the fault marker)."""
        live = self.churn.live if self.churn is not None else 0
        return live + (1 if self.faults is not None else 0)

    # -- the summary -----------------------------------------------------------------------

    def summary(self, code: int) -> list[str]:
        """The final report; its last line is the cache check."""
        return summary_lines(self)
