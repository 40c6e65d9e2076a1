"""``aioinformer demo``: informers and a controller against a churning, faulty fake API server.

::

    aioinformer demo                          # 20 s with a live view; Ctrl-C stops early
    aioinformer demo --plain --duration 10    # one status line a second (logs, CI)
    aioinformer demo --no-faults --rate 200 --objects 2000

Everything runs in one process and one event loop, over real HTTP:

* the embedded fake API server (:class:`~aioinformer.testing.FakeApiServer`);
* a churn generator creating, updating, moving (between nodes) and deleting pods at ``--rate``
  operations a second, around ``--objects`` pods;
* a :class:`~aioinformer.factory.SharedInformerFactory` with a pods informer (with a
  ``by_node`` index) and a ConfigMaps informer;
* a :class:`~aioinformer.controller.Controller` whose keys are node names: it keeps a
  ConfigMap ``node-summary-<node>`` in the ``demo`` namespace with the pod counts of the node
  (by phase), read from the ``by_node`` index; a few reconciles fail on purpose, to show retries;
* a fault schedule: a dropped watch, a stalled watch (recovered through the idle timeout), a
  compaction (410 on resume, recovered by a relist) and throttled watches (429).

At the end the churn stops, the demo waits until everything settled, shuts down and prints a
summary whose last line checks that the informer's cache equals the server (same keys, same
resource versions). The exit status is 0 when that check and the node summaries check pass.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

import anyio
import anyio.abc

from .._cli_support import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    RICH_HINT,
    Interrupts,
    have_rich,
    note,
    run_command,
)
from .._client import KubeClient
from .._config import BackoffPolicy, WatchConfig
from .._controller import Controller
from .._factory import SharedInformerFactory
from .._informer import SharedIndexInformer
from .._objects import KubeObject, meta_namespace_key, name_of, namespace_of
from ..errors import AlreadyExistsError
from ..testing import FakeApiServer
from ._demo_churn import DEMO_NAMESPACE, Churn, node_names
from ._demo_faults import FaultSchedule, Progress
from ._demo_view import PANEL_WIDTH, LogCounter, RateMeter, Snapshot, live_panel, plain_line

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "BY_NODE",
    "SUMMARY_PREFIX",
    "NodeSummaries",
    "add_parser",
    "run",
    "summary_of",
]

logger = logging.getLogger(__name__)

#: The pods index by node name.
BY_NODE = "by_node"
#: Node summaries are the ConfigMaps ``node-summary-<node>`` in the ``demo`` namespace.
SUMMARY_PREFIX = "node-summary-"
#: The share of reconciles that fail on purpose (unless ``--no-faults``).
RECONCILE_FAILURE_RATE = 0.05
#: The longest wait, after the churn stopped, for the cache and the controller to settle.
SETTLE_TIMEOUT = 30.0
#: The informers' settings: short enough for recovery to show within a run.
INFORMER_WATCH = WatchConfig(
    idle_timeout=2.5, min_watch_timeout=5.0, backoff=BackoffPolicy(initial=0.2, cap=2.0)
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` sub-command to the ``aioinformer`` parser."""
    parser = subparsers.add_parser(
        "demo",
        help="run informers and a controller against a churning, faulty fake API server",
        description=(
            "Run a pods informer and a node-summary controller against the embedded fake API "
            "server while pods churn and faults are injected; end with a check that the cache "
            "equals the server."
        ),
    )
    parser.add_argument(
        "--duration", type=_non_negative, default=20.0, help="seconds of churn (default 20)"
    )
    parser.add_argument(
        "--objects", type=_positive_int, default=200, help="pods to keep alive (default 200)"
    )
    parser.add_argument(
        "--rate", type=_non_negative, default=50.0, help="operations per second (default 50)"
    )
    parser.add_argument(
        "--no-faults",
        action="store_true",
        help="inject no faults (no server faults, no failing reconciles)",
    )
    parser.add_argument("--plain", action="store_true", help="status lines instead of a live view")
    parser.add_argument("--seed", type=int, help="random seed (default: a random one)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the log")


def _non_negative(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, not {text!r}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text!r}")
    return value


# -- the controller ------------------------------------------------------------------------


def node_of(pod: Mapping[str, Any]) -> str:
    """The node a pod is scheduled on (``""`` when none)."""
    spec = pod.get("spec")
    return str((spec or {}).get("nodeName") or "") if isinstance(spec, dict) else ""


def pods_by_node(pod: KubeObject) -> list[str]:
    """Index function (and the controller's ``map_func``): a pod's node, if it has one."""
    node = node_of(pod)
    return [node] if node else []


def summary_of(pods: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """A node summary: how many pods, and how many in each phase (always every key)."""
    counts = {"pods": 0, "pending": 0, "running": 0, "succeeded": 0, "failed": 0}
    for pod in pods:
        counts["pods"] += 1
        phase = str((pod.get("status") or {}).get("phase") or "").lower()
        if phase in counts and phase != "pods":
            counts[phase] += 1
    return {key: str(value) for key, value in counts.items()}


def _is_summary(configmap: KubeObject) -> bool:
    return namespace_of(configmap) == DEMO_NAMESPACE and name_of(configmap).startswith(
        SUMMARY_PREFIX
    )


def _summary_node(configmap: KubeObject) -> list[str]:
    return [name_of(configmap).removeprefix(SUMMARY_PREFIX)]


class InjectedFailure(Exception):
    """A reconcile failure made on purpose (the controller retries the key)."""


class NodeSummaries:
    """The reconciler: makes ``node-summary-<node>`` match the pods the cache has on the node.

    It reads only the informers' caches and writes through the API (a merge patch, or a
    create when the ConfigMap does not exist yet).

    :param client: writes go through it.
    :param pods: the pods informer (with the :data:`BY_NODE` index).
    :param configmaps: the ConfigMaps informer.
    :param failure_rate: the share of reconciles that raise :class:`InjectedFailure`.
    :param rng: the random source of those failures.
    :param on_done: called after every reconcile, whatever its outcome.
    """

    def __init__(
        self,
        client: KubeClient,
        *,
        pods: SharedIndexInformer,
        configmaps: SharedIndexInformer,
        failure_rate: float = 0.0,
        rng: random.Random | None = None,
        on_done: Callable[[], None] | None = None,
    ) -> None:
        self._client = client
        self._pods = pods
        self._configmaps = configmaps
        self._failure_rate = failure_rate
        self._rng = rng or random.Random()
        self._on_done = on_done
        #: ConfigMaps created or patched.
        self.writes = 0
        #: Reconciles failed on purpose.
        self.injected_failures = 0

    async def reconcile(self, node: str) -> None:
        """Bring one node's summary up to date; raising means "retry later"."""
        try:
            if self._failure_rate and self._rng.random() < self._failure_rate:
                self.injected_failures += 1
                raise InjectedFailure("injected failure (the key is retried)")
            desired = summary_of(self._pods.cache.by_index(BY_NODE, node))
            name = SUMMARY_PREFIX + node
            current = self._configmaps.cache.get_by_key(f"{DEMO_NAMESPACE}/{name}")
            if current is not None and current.get("data") == desired:
                return
            if current is None:
                body = {"metadata": {"name": name, "labels": {"app": "demo"}}, "data": desired}
                try:
                    await self._client.create("configmaps", body, namespace=DEMO_NAMESPACE)
                except AlreadyExistsError:  # the cache is behind: patch it
                    await self._patch(name, desired)
            else:
                await self._patch(name, desired)
            self.writes += 1
        finally:
            if self._on_done is not None:
                self._on_done()

    async def _patch(self, name: str, data: dict[str, str]) -> None:
        await self._client.patch("configmaps", name, {"data": data}, namespace=DEMO_NAMESPACE)


# -- the checks ----------------------------------------------------------------------------


def _versions(objects: Iterable[KubeObject]) -> dict[str, str]:
    return {
        meta_namespace_key(obj): str((obj.get("metadata") or {}).get("resourceVersion") or "")
        for obj in objects
    }


async def _cache_matches(
    server: FakeApiServer, informer: SharedIndexInformer, resource: str
) -> bool:
    return _versions(informer.cache.list()) == _versions(server.objects.list(resource))


async def _compare_cache(server: FakeApiServer, informer: SharedIndexInformer) -> tuple[bool, str]:
    """Whether the pods cache equals the server's pods (keys and resource versions)."""
    on_server = _versions(server.objects.list("pods"))
    cached = _versions(informer.cache.list())
    if cached == on_server:
        return True, f"{len(on_server)} objects, same resource versions"
    missing = len(on_server.keys() - cached.keys())
    extra = len(cached.keys() - on_server.keys())
    stale = sum(1 for key in on_server.keys() & cached.keys() if on_server[key] != cached[key])
    return False, (
        f"server {len(on_server)}, cache {len(cached)}: {missing} missing, {extra} extra,"
        f" {stale} at another resource version"
    )


async def _compare_summaries(server: FakeApiServer, nodes: list[str]) -> tuple[bool, str]:
    """Whether every node summary on the server matches the server's pods."""
    pods = server.objects.list("pods", namespace=DEMO_NAMESPACE)
    expected = {node: summary_of(p for p in pods if node_of(p) == node) for node in nodes}
    actual = {
        _summary_node(cm)[0]: dict(cm.get("data") or {})
        for cm in server.objects.list("configmaps", namespace=DEMO_NAMESPACE)
        if _is_summary(cm)
    }
    wrong = sorted(node for node in nodes if actual.get(node) != expected[node])
    if not wrong:
        return True, f"{len(nodes)} nodes"
    return False, f"{len(wrong)} of {len(nodes)} nodes wrong: {', '.join(wrong)}"


# -- the run -------------------------------------------------------------------------------


async def _wait(event: anyio.Event, seconds: float) -> None:
    """Until ``event`` is set or ``seconds`` have passed."""
    with anyio.move_on_after(seconds):
        await event.wait()


class _Demo:
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
                    shutdown_timeout=5.0,
                )
                self.controller = controller
                pods_watch = controller.watch(pods, map_func=pods_by_node)
                summaries_watch = controller.watch(
                    configmaps, filter=_is_summary, map_func=_summary_node
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
        ok_summaries, detail = await _compare_summaries(server, nodes)
        self.checks.append(("node summaries == server", ok_summaries, detail))
        ok_cache, detail = await _compare_cache(server, self.pods)
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
                and await _cache_matches(server, self.pods, "pods")
                and await _cache_matches(server, self.configmaps, "configmaps")
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
        args = self.args
        lines = ["", "== aioinformer demo summary =="]
        how = "stopped early by a signal" if self.interrupted else "as planned"
        lines.append(
            f"run:        {self.churn_seconds:.1f} s of churn ({how}); seed {self.seed};"
            f" {'faults on' if self.faults_enabled else 'no faults'}"
        )
        churn = self.churn
        if churn is not None:
            kinds = ", ".join(f"{n} {kind}s" for kind, n in sorted(churn.operations.items()))
            rate = churn.total / self.churn_seconds if self.churn_seconds > 0 else 0.0
            lines.append(
                f"churn:      {args.objects} pods on {len(churn.nodes)} nodes; {churn.total}"
                f" operations ({rate:.1f}/s){': ' + kinds if kinds else ''}"
            )
        stats = self.pods.statistics().reflector if self.pods is not None else None
        if stats is not None:
            restarts = ", ".join(f"{c} {n}" for c, n in sorted(stats.watch_restarts.items()))
            events = ", ".join(f"{t} {n}" for t, n in sorted(stats.events.items()))
            lines.append(
                f"informer:   {_plural(stats.lists, 'list')} ({_plural(stats.relists, 'relist')}),"
                f" {_plural(stats.watches, 'watch')},"
                f" {_plural(sum(stats.watch_restarts.values()), 'watch restart')}"
                f"{' (' + restarts + ')' if restarts else ''}"
            )
            lines.append(
                f"            watch events: {events or 'none'}; list/watch errors {stats.errors},"
                f" malformed {stats.malformed_events}"
            )
        for name, peak, errors in self.listener_stats:
            lines.append(f"listener:   {name}: peak backlog {peak}, handler errors {errors}")
        if self.controller is not None and self.reconciler is not None:
            st = self.controller.statistics()
            lines.append(
                f"controller: {st.reconciles} reconciles, {self.reconciler.writes} writes,"
                f" {st.errors} failed and retried ({self.reconciler.injected_failures} injected)"
            )
        faults = self.faults
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
        if self.settle_seconds is not None:
            lines.append(
                f"settle:     caught up {self.settle_seconds:.2f} s after the churn stopped"
            )
        elif self.aborted:
            lines.append("settle:     skipped (interrupted twice)")
        elif self.started:
            lines.append(f"settle:     not settled within {SETTLE_TIMEOUT:.0f} s")
        injected = self.reconciler.injected_failures if self.reconciler is not None else 0
        note = f", {injected} of them injected reconcile failures" if injected else ""
        lines.append(
            f"log:        {self.log.warnings} warnings, {self.log.errors} errors"
            f" (-v shows them{note})"
        )
        for name, ok, detail in self.checks:
            lines.append(f"check: {name} ({detail}): {'OK' if ok else 'MISMATCH'}")
        if not self.checks:
            if self.interrupted or self.aborted:
                lines.append("check: interrupted, checks skipped")
            else:
                lines.append("check: not run (the pods informer never synced): FAILED")
        return lines


# -- the command ---------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
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


def run(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``aioinformer demo``; returns the exit status (0: the final checks passed).

    The first SIGINT/SIGTERM ends the churn early (the demo still settles, checks and prints
    its summary); a second one skips the wait for settling and the checks (exit status 130).
    """
    out = out or sys.stdout
    console: Console | None = None
    if not args.plain and not have_rich():
        note(RICH_HINT)
    if not args.plain and out.isatty() and have_rich():
        from rich.console import Console

        console = Console(file=out)

    async def main(interrupts: Interrupts) -> int:
        demo = _Demo(args, out, console)
        root = logging.getLogger()
        handlers: list[logging.Handler] = [demo.log]
        if args.verbose:
            shown: logging.Handler
            if console is not None:
                from rich.logging import RichHandler

                shown = RichHandler(console=console, show_path=False)
            else:
                shown = logging.StreamHandler(sys.stderr)
                shown.setFormatter(
                    logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
                )
            handlers.append(shown)
        level = root.level
        root.setLevel(logging.INFO if args.verbose else logging.WARNING)
        for handler in handlers:
            root.addHandler(handler)
        try:
            code = await demo.run(interrupts)
        finally:
            for handler in handlers:
                root.removeHandler(handler)
            root.setLevel(level)
        for line in demo.summary(code):
            out.write(line + "\n")
        out.flush()
        return code

    return run_command(main)
