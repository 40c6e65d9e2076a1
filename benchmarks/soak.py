"""Soak: one informer with three consumers against a misbehaving fake API server, for minutes.

``make soak`` (5 minutes; ``make soak SOAK_SECONDS=1800`` for 30, ``SOAK_RATE=N`` writes/s) or
``python benchmarks/soak.py --seconds 300 --rate 50``.

What runs, in one process and one event loop:

* the fake API server (:class:`aioinformer.testing.FakeApiServer`) on 127.0.0.1, holding a few
  thousand ConfigMaps in a few namespaces;
* a **writer** creating, updating and deleting them at a steady rate (``--rate``), keeping
  about ``--objects`` alive, through the server's in-process API (the load is not under test);
* **faults** every few seconds (``--fault-interval``, jittered): dropped, stalled and expired
  (stalled, then compacted: 410) watches, bursts of 500/503 and of 429 on lists and watches,
  ERROR events (410, 500), malformed lines, server restarts and refused connections;
* the subject, through the public API only: a ``SharedIndexInformer`` over HTTP (``connect``)
  with three consumers — an ``events()`` subscriber, an async handler, and a ``Controller``
  whose workers reconcile keys from its work queue, reading the cache through a lister.

Each ``--check-interval`` (a minute) the writer and the faults pause at a quiescent point;
the soak waits (on the consumers' notifications) until the informer has caught up, then
checks that the cache equals the server (keys and resource versions), that each consumer's
view built from what it received equals the server too (and that what it received was valid:
no ADDED of a present key, no UPDATED or DELETED of an absent one), and that the controller's
queue is drained. It prints one row per checkpoint: RSS, tasks, open file descriptors, the
consumers' backlogs and the work queue's depth. The first checkpoint is the warm-up; the run
passes when every check holds and RSS, tasks and descriptors stay flat: within 10% of the
warm-up checkpoint (for tasks and descriptors, at least 2 more are tolerated).

Why in one process: the fake's fault API (refusing connections, restarting, stalling,
compacting) is in-process, and quiescence (pause, catch up, compare) needs the server's state
at the same instant as the cache's. The price: the server's memory and tasks are in the
figures too; its watch history is capped (``--history``) so it is full before the warm-up
checkpoint, and the request log grows by a few records per fault (kilobytes per hour).

Exit status: 0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import random
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
from anyio import CancelScope

import aioinformer
from aioinformer import (
    BackoffPolicy,
    Controller,
    DeletedFinalStateUnknown,
    Event,
    EventStream,
    EventType,
    KubeObject,
    Resource,
    SharedIndexInformer,
    WatchConfig,
    meta_namespace_key,
)
from aioinformer.lowlevel import KubeListerWatcher
from aioinformer.testing import FakeApiServer

CONFIGMAPS = Resource.parse("v1/configmaps")
NAMESPACES = ("soak-a", "soak-b", "soak-c", "soak-d")
FAULTS = (
    "drop",
    "stall",
    "expire",
    "burst_5xx",
    "burst_429",
    "error_410",
    "error_500",
    "malformed",
    "restart",
    "refuse",
)
#: Flatness: a later checkpoint may exceed the warm-up one by this fraction at most ...
FLAT = 0.10
#: ... and, for tasks and descriptors, by at least this many.
FLAT_COUNT = 2


def _rv(obj: KubeObject) -> int:
    return int(obj["metadata"]["resourceVersion"])


class Changes:
    """A wake-up for whoever waits for the next change (consumers call :meth:`notify`)."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def notify(self) -> None:
        self._event.set()

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate()`` holds, re-checking after each change."""
        while not predicate():
            self._event = anyio.Event()
            await self._event.wait()


@dataclass
class View:
    """One consumer's picture of the world, from its notifications alone: key → RV."""

    name: str
    changes: Changes
    rvs: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    received: int = 0

    def _fail(self, message: str) -> None:
        if len(self.errors) < 20:
            self.errors.append(f"{self.name}: {message}")

    def added(self, obj: KubeObject) -> None:
        key = meta_namespace_key(obj)
        if key in self.rvs:
            self._fail(f"ADDED {key} while present")
        self.rvs[key] = _rv(obj)
        self._changed()

    def updated(self, obj: KubeObject) -> None:
        key = meta_namespace_key(obj)
        if key not in self.rvs:
            self._fail(f"UPDATED {key} while absent")
        self.rvs[key] = _rv(obj)
        self._changed()

    def deleted(self, obj: Any) -> None:
        key = obj.key if isinstance(obj, DeletedFinalStateUnknown) else meta_namespace_key(obj)
        if self.rvs.pop(key, None) is None:
            self._fail(f"DELETED {key} while absent")
        self._changed()

    def apply(self, event: Event) -> None:
        if event.type is EventType.ADDED:
            self.added(event.object)
        elif event.type is EventType.UPDATED:
            self.updated(event.object)
        else:
            self.deleted(event.object)

    def _changed(self) -> None:
        self.received += 1
        self.changes.notify()


class AsyncHandler:
    """The async handler consumer."""

    def __init__(self, view: View) -> None:
        self.view = view

    async def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> None:
        await anyio.lowlevel.checkpoint()
        self.view.added(obj)

    async def on_update(self, old: KubeObject, new: KubeObject) -> None:
        await anyio.lowlevel.checkpoint()
        self.view.updated(new)

    async def on_delete(self, obj: Any) -> None:
        await anyio.lowlevel.checkpoint()
        self.view.deleted(obj)


@dataclass
class Writer:
    """Creates, updates and deletes ConfigMaps at a steady rate, about ``target`` alive."""

    server: FakeApiServer
    rng: random.Random
    rate: float
    target: int
    live: list[tuple[str, str]] = field(default_factory=list)
    serial: int = 0
    writes: int = 0

    def populate(self) -> None:
        while len(self.live) < self.target:
            self._create()

    def _create(self) -> None:
        self.serial += 1
        namespace, name = self.rng.choice(NAMESPACES), f"cm-{self.serial:07d}"
        body = {"metadata": {"name": name, "namespace": namespace}, "data": {"v": "0"}}
        self.server.objects.create("configmaps", body)
        self.live.append((namespace, name))

    def one(self) -> None:
        live, roll = self.live, self.rng.random()
        if len(live) < self.target * 0.95 or (roll < 0.2 and len(live) < self.target * 1.05):
            self._create()
        elif roll < 0.4 or len(live) > self.target * 1.05:
            index = self.rng.randrange(len(live))
            live[index], live[-1] = live[-1], live[index]
            namespace, name = live.pop()
            self.server.objects.delete("configmaps", name, namespace=namespace)
        else:
            namespace, name = self.rng.choice(live)
            patch = {"data": {"v": str(self.writes)}}
            self.server.objects.patch("configmaps", name, patch, namespace=namespace)
        self.writes += 1

    async def run(self) -> None:
        period, deadline = 1.0 / self.rate, time.monotonic()
        while True:
            self.one()
            deadline += period
            await anyio.sleep(max(0.0, deadline - time.monotonic()))  # pacing the load


@dataclass
class Faults:
    """Injects one fault every ``interval`` seconds (jittered ±50%)."""

    server: FakeApiServer
    rng: random.Random
    interval: float
    fired: dict[str, int] = field(default_factory=dict)

    async def run(self) -> None:
        order = list(FAULTS)
        self.rng.shuffle(order)
        while True:
            await anyio.sleep(self.interval * self.rng.uniform(0.5, 1.5))  # pacing the faults
            fault = order.pop() if order else self.rng.choice(FAULTS)
            self.fired[fault] = self.fired.get(fault, 0) + 1
            await self.fire(fault)

    async def fire(self, fault: str) -> None:
        faults, rng = self.server.faults, self.rng
        if fault == "drop":
            faults.drop_watches()
        elif fault == "stall":
            faults.stall_watches()
        elif fault == "expire":  # the client hears nothing while its resume point expires
            faults.stall_watches()
            await anyio.sleep(rng.uniform(0.5, 2.0))
            faults.compact()
        elif fault == "burst_5xx":
            for verb in ("list", "watch"):
                faults.fail_next(rng.randint(1, 4), rng.choice((500, 503)), verb=verb)
            faults.drop_watches()
        elif fault == "burst_429":
            faults.fail_next(rng.randint(1, 4), 429, retry_after=1, verb="watch")
            faults.fail_next(rng.randint(0, 2), 429, retry_after=1, verb="list")
            faults.drop_watches()
        elif fault == "error_410":
            faults.inject_watch_error(410, "Expired", "too old resource version")
        elif fault == "error_500":
            faults.inject_watch_error(500, "InternalError", "etcd hiccup")
        elif fault == "malformed":
            faults.inject_malformed_line()
        elif fault == "restart":
            faults.restart()
        elif fault == "refuse":
            await faults.stop_listening()
            try:
                await anyio.sleep(rng.uniform(0.3, 2.0))  # the outage's length
            finally:
                with CancelScope(shield=True):
                    await faults.start_listening()


def rss_mib() -> float:
    """The resident set size now (not the peak), in MiB."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # not Linux: the peak is the best there is
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return -1


@dataclass
class Row:
    minute: float
    writes: int
    faults: int
    catch_up: float
    objects: int
    rss: float
    tasks: int
    fds: int
    backlog_events: int
    backlog_handler: int
    queue_depth: int
    problems: list[str]

    HEADER = (
        "| t (min) | writes | faults | catch-up (s) | objects | RSS (MiB) | tasks | fds"
        " | RSS / tasks / fds vs warm-up | backlog events | backlog handlers | queue depth"
        " | checks |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|"
    )

    def ratios(self, base: Row) -> tuple[float, float, float]:
        """RSS, tasks and descriptors as multiples of the warm-up checkpoint's."""
        return (
            self.rss / base.rss,
            self.tasks / max(base.tasks, 1),
            self.fds / max(base.fds, 1),
        )

    def line(self, base: Row) -> str:
        verdict = "ok" if not self.problems else "FAILED: " + "; ".join(self.problems)
        rss, tasks, fds = self.ratios(base)
        return (
            f"| {self.minute:.1f} | {self.writes} | {self.faults} | {self.catch_up:.1f}"
            f" | {self.objects} | {self.rss:.1f} | {self.tasks} | {self.fds}"
            f" | {rss:.3f} / {tasks:.2f} / {fds:.2f}"
            f" | {self.backlog_events} | {self.backlog_handler} | {self.queue_depth}"
            f" | {verdict} |"
        )


def flatness(rows: list[Row]) -> list[str]:
    """What grew by more than the tolerance since the warm-up checkpoint."""
    if len(rows) < 2:
        return []
    base, problems = rows[0], []
    for row in rows[1:]:
        if row.rss > base.rss * (1 + FLAT):
            problems.append(f"t={row.minute:.1f}: RSS {row.rss:.1f} MiB > {base.rss:.1f} + 10%")
        for what, value, before in (("tasks", row.tasks, base.tasks), ("fds", row.fds, base.fds)):
            if value > max(before * (1 + FLAT), before + FLAT_COUNT):
                problems.append(f"t={row.minute:.1f}: {what} {value} > {before} + 10%")
    return problems


@dataclass
class Subject:
    """The informer, its three consumers' views, and how to compare them with the server."""

    server: FakeApiServer
    informer: SharedIndexInformer
    controller: Controller[str]
    stream_name: str
    changes: Changes
    events: View
    handler: View
    reconciled: dict[str, int]

    def server_rvs(self) -> dict[str, int]:
        return {meta_namespace_key(o): _rv(o) for o in self.server.objects.list("configmaps")}

    def cache_rvs(self) -> dict[str, int]:
        return {meta_namespace_key(o): _rv(o) for o in self.informer.lister().list()}

    def caught_up(self, expected: dict[str, int]) -> bool:
        """Every consumer drained and equal to ``expected`` (cheapest tests first: this runs
        at each wake-up while catching up)."""
        return (
            all(listener.backlog == 0 for listener in self.informer.statistics().listeners)
            and len(self.controller.queue) == 0
            and self.controller.statistics().in_flight == 0
            and self.events.rvs == expected
            and self.handler.rvs == expected
            and self.reconciled == expected
            and self.cache_rvs() == expected
        )

    def differences(self, expected: dict[str, int]) -> list[str]:
        out = []
        for name, seen in (
            ("cache", self.cache_rvs()),
            ("events", self.events.rvs),
            ("handler", self.handler.rvs),
            ("controller", self.reconciled),
        ):
            if seen != expected:
                missing = len(expected.keys() - seen.keys())
                extra = len(seen.keys() - expected.keys())
                stale = sum(1 for k, v in seen.items() if k in expected and expected[k] != v)
                out.append(f"{name} != server ({missing} missing, {extra} extra, {stale} stale)")
        return out

    async def checkpoint(
        self, started: float, writer: Writer, faults: Faults, catch_up: float
    ) -> Row:
        """At a quiescent point: wait until caught up, check, measure."""
        expected = self.server_rvs()
        paused = time.monotonic()
        problems: list[str] = []
        with anyio.move_on_after(catch_up) as scope:
            await self.changes.until(lambda: self.caught_up(expected))
        took = time.monotonic() - paused
        if scope.cancelled_caught:
            problems += self.differences(expected)
        for view in (self.events, self.handler):
            problems += view.errors
            view.errors.clear()
        gc.collect()
        listeners = self.informer.statistics().listeners
        backlogs = {listener.name: listener.backlog for listener in listeners}
        return Row(
            minute=(time.monotonic() - started) / 60,
            writes=writer.writes,
            faults=sum(faults.fired.values()),
            catch_up=took,
            objects=len(expected),
            rss=rss_mib(),
            tasks=len(asyncio.all_tasks()),
            fds=open_fds(),
            backlog_events=backlogs.get(self.stream_name, -1),
            backlog_handler=sum(v for k, v in backlogs.items() if "/handler-" in k),
            queue_depth=len(self.controller.queue),
            problems=problems,
        )


def subject(server: FakeApiServer, client: aioinformer.KubeClient) -> tuple[Subject, EventStream]:
    """The informer (over HTTP, through ``client``) and its three consumers."""
    changes = Changes()
    watch = WatchConfig(
        backoff=BackoffPolicy(initial=0.2, cap=2.0), min_watch_timeout=30.0, idle_timeout=3.0
    )
    informer = SharedIndexInformer(
        KubeListerWatcher(client, CONFIGMAPS), name="soak", resync_period=0.0, watch=watch
    )
    lister = informer.lister()
    reconciled: dict[str, int] = {}

    async def reconcile(key: str) -> None:
        namespace, _, name = key.partition("/")
        obj = lister.get(name, namespace=namespace)
        if obj is None:
            reconciled.pop(key, None)
        else:
            reconciled[key] = _rv(obj)
        changes.notify()

    controller: Controller[str] = Controller(
        name="soak", reconcile=reconcile, workers=4, stop_timeout=5.0
    )
    controller.watch(informer)
    handler = View("handler", changes)
    informer.add_event_handler(AsyncHandler(handler))
    stream = informer.events()
    found = Subject(
        server, informer, controller, stream.name, changes, View("events", changes), handler,
        reconciled,
    )  # fmt: skip
    return found, stream


class LogCounter(logging.Handler):
    """Counts the library's log records by level (printing them only with --verbose)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.counts: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        self.counts[record.levelname] = self.counts.get(record.levelname, 0) + 1


async def soak(args: argparse.Namespace) -> int:
    rows: list[Row] = []
    counter = LogCounter()
    library = logging.getLogger("aioinformer")
    library.addHandler(counter)
    library.setLevel(logging.INFO)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    else:
        library.propagate = False
    async with (
        FakeApiServer(
            auto_create_namespaces=True, bookmark_interval=1.0, history_limit=args.history
        ) as server,
        aioinformer.connect(server=server.url) as client,
    ):
        writer = Writer(server, random.Random(args.seed), args.rate, args.objects)
        writer.populate()
        faults = Faults(server, random.Random(f"{args.seed}-faults"), args.fault_interval)
        it, stream = subject(server, client)

        async def subscribe() -> None:
            async for event in stream:
                it.events.apply(event)

        started = time.monotonic()
        print(f"soak: {args.seconds:g} s, {args.rate:g} writes/s over ~{args.objects} objects,")
        print(f"      a fault every ~{args.fault_interval:g} s,", end=" ")
        print(f"a check every ~{args.check_interval:g} s")
        print(Row.HEADER, flush=True)
        async with anyio.create_task_group() as tg, it.informer, it.controller:
            tg.start_soon(subscribe)
            with anyio.fail_after(120):
                await it.informer.wait_for_cache_sync()
            end = started + args.seconds
            while (now := time.monotonic()) < end - 1.0:
                with anyio.move_on_after(min(args.check_interval, end - now)):
                    async with anyio.create_task_group() as load:
                        load.start_soon(writer.run)
                        load.start_soon(faults.run)
                # Quiescent: no writes, no faults (an outage just ended): catch up, check.
                row = await it.checkpoint(started, writer, faults, args.catch_up)
                rows.append(row)
                print(row.line(rows[0]), flush=True)
            tg.cancel_scope.cancel()
        stats = it.informer.statistics().reflector
    failures = [p for row in rows for p in row.problems] + flatness(rows)
    print()
    print(f"faults fired: {dict(sorted(faults.fired.items()))}")
    print(
        f"reflector: {stats.lists} lists, {stats.watches} watches, {stats.errors} errors,"
        f" restarts { {str(k): v for k, v in sorted(stats.watch_restarts.items())} }"
    )
    print(f"log records: {dict(sorted(counter.counts.items()))} (--verbose prints them)")
    print(f"notifications: events {it.events.received}, handler {it.handler.received}")
    if len(rows) > 1:
        peaks = [max(row.ratios(rows[0])[i] for row in rows[1:]) for i in range(3)]
        print(
            "largest after warm-up, as multiples of the warm-up checkpoint (t="
            f"{rows[0].minute:.1f} min): RSS {peaks[0]:.3f}, tasks {peaks[1]:.2f},"
            f" descriptors {peaks[2]:.2f} (flat: at most {1 + FLAT:.2f})"
        )
    if not rows:
        failures.append("no checkpoint: the run was shorter than one check interval")
    if failures:
        print(f"soak FAILED ({len(failures)} problems):")
        for failure in failures[:40]:
            print(f"  - {failure}")
        return 1
    print(f"soak passed: {len(rows)} checkpoints; memory, tasks and descriptors flat")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="duration (300)")
    parser.add_argument("--rate", type=float, default=50.0, help="writes per second (50)")
    parser.add_argument("--objects", type=int, default=3000, help="objects kept alive (3000)")
    parser.add_argument(
        "--fault-interval", type=float, default=3.0, help="seconds between faults (3)"
    )
    parser.add_argument(
        "--check-interval", type=float, default=60.0, help="seconds between checks (60)"
    )
    parser.add_argument(
        "--catch-up", type=float, default=120.0, help="most seconds to catch up at a check (120)"
    )
    parser.add_argument(
        "--history", type=int, default=2000, help="the server's watch history (2000 events)"
    )
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--verbose", action="store_true", help="print the library's log")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rate <= 0 or args.objects < 1:
        parser.error("--seconds, --rate and --objects must be positive")
    return anyio.run(soak, args)


if __name__ == "__main__":
    sys.exit(main())
