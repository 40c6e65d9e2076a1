"""Acceptance run of issue 21: sharded replicas as processes, under kill, pause, cut-off, join
and graceful stop, with every side effect checked.

``make replicas-chaos`` (both gate settings, 2,000 objects, 50 updates/s, 8 s leases) or
``python benchmarks/replicas_chaos.py [--short] [--gate on|off|both] [--lease 8]``; ``--short``
is the version the ``slow``-marked test runs (300 objects, 20 updates/s, 2 s leases).

What runs, each in a process of its own, on this machine:

* the **standalone fake API server** (``aioinformer fake-apiserver``) holding ``--objects``
  ConfigMaps in namespace ``work``, with the KEP-5866 shard gate on or off (``POST
  /_fake/sharding``);
* a **writer** (in this process) patching random ConfigMaps of ``work`` at ``--rate``/s;
* **replicas** (``replicas_chaos.py replica ...``): each a :class:`~aioinformer.ShardedController`
  over the ConfigMaps of ``work``, group ``chaos``, reaching the server through a **TCP proxy of
  its own** that this harness can sever. Each reconcile reads its object from the cache, works
  for a while (``--work`` seconds on average, so reconciles are in flight when a fault hits),
  reads its *side-effect* ConfigMap ``effects/eff-<name>`` and writes it through the
  controller's fenced client with a resourceVersion precondition (``replace`` of the version
  read, or ``create``), recording the replica, the key, the object's resourceVersion, and the
  wall-clock times the reconcile started and the write was sent. Every replica prints its
  ranges and counters as JSON lines on stdout.

The faults, in order, each after the group settled (every live replica a member, nothing
draining, the active ranges an exact cover of the hash space, each cache listing its ranges):
``kill -9`` one replica; add a fourth; ``SIGSTOP`` one for ``--pause`` lease durations, then
``SIGCONT``; cut one off from the server (its proxy drops every connection and black-holes new
ones) for ``--cut`` lease durations, then heal; stop one gracefully (``SIGTERM``: it leaves the
group, handing its ranges over at once). Then the writer stops and the run waits until every
object's last write was reconciled.

**The oracle** reads the server's write log of the side effects (a watch on namespace
``effects`` from before the first replica started, so it sees every write in order) and the
replicas' range reports:

* *overlaps*: two side effects of one key by different replicas whose reconciles (start →
  write sent) intersect in time: 0 expected;
* *spanned a pause*: side effects of the paused replica from a reconcile that started before
  ``SIGSTOP`` and sent its write after it: 0 expected. Writes whose check and send came before
  ``SIGSTOP`` but whose bytes reached the server after ``SIGCONT`` (the one window the fence
  leaves: closed by the precondition) are counted apart;
* *unreconciled*: objects whose last version has no side effect recording it: 0 expected;
* *hand-over*: from each kill, pause and cut to the moment the other replicas' active ranges
  cover what the victim had: at most 1.5 lease durations expected;
* *moves on return*: ranges the others stop taking within one lease duration after the paused
  or cut-off replica came back (it rejoins as a new member, after one lease duration): 0
  expected.

Exit status 0 when every expectation holds (``--advisory-timing``: the hand-over bound is
reported, not enforced, as in the test on a loaded machine). ``--json PATH`` writes the results.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from aioinformer._sharding._ranges import EMPTY, FULL, HashRanges
from aioinformer.testing._doubles._proxy import Proxy

HERE = Path(__file__).resolve()
GROUP = "chaos"
WORK, EFFECTS = "work", "effects"


# ---- the replica process ----------------------------------------------------------------------


async def replica_main(args: argparse.Namespace) -> int:
    import anyio
    from kubernetes_asyncio.client import ApiClient, Configuration

    from aioinformer import KubeClient, Result, ShardedController, ShardTiming
    from aioinformer._sharding._selector import FIELD_UID
    from aioinformer.errors import ConflictError, NotFoundError

    rng = random.Random(args.identity)
    lease = args.lease
    timing = ShardTiming(
        lease_duration=lease, renew_deadline=lease * 2 / 3, retry_period=max(lease / 8, 0.1)
    )
    client = KubeClient(
        ApiClient(Configuration(host=args.server)),
        connect_timeout=min(5.0, lease),
        request_timeout=min(10.0, lease * 2),
    )
    holder: list[Any] = []
    counters = {"effects": 0, "conflicts": 0, "refused": 0}

    async def reconcile(key: str) -> Result | None:
        start = time.time()
        controller = holder[0]
        informer = controller.informer
        obj = informer.indexer.get_by_key(key) if informer is not None else None
        namespace, name = key.split("/", 1)
        if obj is None:
            try:
                obj = await client.get("v1/configmaps", name, namespace=namespace)
            except NotFoundError:
                return None
        rv = obj["metadata"]["resourceVersion"]
        effect_name = f"eff-{name}"
        try:
            effect = await client.get("v1/configmaps", effect_name, namespace=EFFECTS)
        except NotFoundError:
            effect = None
        # The work, between the read and the write: a pause here is the case (the
        # reconcile's own timer may run before anything else of the resumed process).
        await anyio.sleep(rng.uniform(0, 2 * args.work))
        fenced = getattr(controller, "client", client)  # the fenced client where it exists
        sent = time.time()
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": effect_name, "namespace": EFFECTS},
            "data": {
                "replica": args.identity,
                "key": key,
                "objectRV": rv,
                "start": repr(start),
                "sent": repr(sent),
            },
        }
        outcome = "sent"
        try:
            if effect is None:
                await fenced.create("v1/configmaps", body, namespace=EFFECTS)
            else:
                body["metadata"]["resourceVersion"] = effect["metadata"]["resourceVersion"]
                await fenced.replace("v1/configmaps", body, namespace=EFFECTS)
        except ConflictError:
            counters["conflicts"] += 1
            outcome = "conflict"
            return Result(requeue=True)
        except Exception as exc:
            outcome = type(exc).__name__
            raise
        finally:
            if outcome != "FencedWriteError":  # a refused write was not sent
                attempt = {"t": time.time(), "kind": "write", "id": args.identity, "key": key,
                           "start": start, "sent": sent, "outcome": outcome}  # fmt: skip
                sys.stdout.write(json.dumps(attempt) + "\n")
            else:
                counters["refused"] += 1
        counters["effects"] += 1
        return None

    controller = ShardedController(
        name="chaos",
        reconcile=reconcile,
        client=client,
        resource="v1/configmaps",
        namespace=WORK,
        group=GROUP,
        identity=args.identity,
        workers=args.workers,
        timing=timing,
        stop_timeout=lease,
    )
    holder.append(controller)

    def report(kind: str) -> None:
        s = controller.statistics()
        informer = controller.informer
        shard = informer.statistics().shard if informer is not None else None
        wanted = controller.member.state.serving.selector(FIELD_UID)
        cache_ok = (wanted is None and informer is None) or (
            shard is not None and wanted is not None and shard.selector == wanted.canonical
        )
        line = {
            "t": time.time(),
            "kind": kind,
            "id": args.identity,
            "phase": s.phase,
            "active": [list(r) for r in s.active],
            "draining": [list(r) for r in s.draining],
            "cache_ok": cache_ok,
            "stats": {
                "reconciles": s.reconciles,
                "errors": s.errors,
                "hand_overs_in": s.hand_overs_in,
                "hand_overs_out": s.hand_overs_out,
                "stop_alls": s.stop_alls,
                "lease_writes": s.lease_writes,
                "failed_lease_writes": s.failed_lease_writes,
                "fenced_writes": getattr(s, "fenced_writes", None),
                **counters,
            },
        }
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()

    async def ranges() -> None:
        while True:
            await controller.wait_ranges_changed()
            report("ranges")

    async def ticks() -> None:
        while True:
            await anyio.sleep(1.0)
            report("stats")

    async with client:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with anyio.create_task_group() as tg:
                await tg.start(controller.run)
                tg.start_soon(ranges)
                tg.start_soon(ticks)
                report("ranges")
                async for _ in signals:
                    break
                await controller.aclose()
                report("final")
                tg.cancel_scope.cancel()
    return 0


# ---- the harness: replicas, writer, oracle -------------------------------------------------


@dataclass
class Status:
    t: float
    id: str
    phase: str
    active: HashRanges
    draining: HashRanges
    cache_ok: bool
    stats: dict[str, Any]


@dataclass
class Replica:
    identity: str
    proxy: Proxy
    process: asyncio.subprocess.Process
    log: Path
    state: str = "running"  # running, paused, cut, dead, stopped
    last: Status | None = None
    final: Status | None = None
    history: list[Status] = field(default_factory=list)


@dataclass
class HandOver:
    fault: str
    victim: str
    at: float
    share: HashRanges
    done_at: float | None = None


@dataclass
class Effect:
    received: float
    rv: int
    replica: str
    key: str
    object_rv: int
    start: float
    sent: float


@dataclass
class Options:
    objects: int
    rate: float
    lease: float
    workers: int
    work: float
    pause: float
    cut: float
    settle_timeout: float
    python: str


class Run:
    """One scenario against one fake API server (one gate setting)."""

    def __init__(self, options: Options, gate: bool, workdir: Path) -> None:
        self.o = options
        self.gate = gate
        self.workdir = workdir
        self.url = ""
        self.server: asyncio.subprocess.Process | None = None
        self.session: aiohttp.ClientSession | None = None
        self.replicas: dict[str, Replica] = {}
        self.changed = asyncio.Event()
        self.hand_overs: list[HandOver] = []
        self.effects: list[Effect] = []
        self.attempts: list[dict[str, Any]] = []  # writes the replicas sent (not refused)
        self.expected: dict[str, int] = {}  # key -> the rv of the writer's last write
        self.writes = 0
        self.pauses: list[tuple[str, float, float]] = []  # (replica, stop, cont)
        self.returns: list[tuple[str, str, float]] = []  # (fault, replica, back at)
        self.failures: list[str] = []
        self.events: list[str] = []
        self._tasks: list[asyncio.Task[Any]] = []
        self._writing = True
        self._started = time.time()

    def note(self, text: str) -> None:
        line = f"[{time.time() - self._started:7.2f}s gate={'on' if self.gate else 'off'}] {text}"
        self.events.append(line)
        print(line, flush=True)

    # -- the server ---------------------------------------------------------------------------

    async def start_server(self) -> None:
        manifest = self.workdir / "objects.yaml"
        docs = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": WORK}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": EFFECTS}},
        ]
        docs += [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i:05d}", "namespace": WORK},
                "data": {"n": "0"},
            }
            for i in range(self.o.objects)
        ]
        manifest.write_text("\n---\n".join(json.dumps(d) for d in docs))
        self.server = await asyncio.create_subprocess_exec(
            self.o.python, "-m", "aioinformer", "fake-apiserver", "--port", "0",
            "--history-limit", "1000000", "--bookmark-interval", "5", "-f", str(manifest),
            # A bare store: the oracle counts the run's own ConfigMaps (no kube-root-ca.crt).
            "--no-system-objects",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert self.server.stderr is not None
        while True:
            line = (await self.server.stderr.readline()).decode()
            if not line:
                raise RuntimeError("the fake API server ended before listening")
            if "listening on " in line:
                self.url = line.rsplit("listening on ", 1)[1].strip()
                break
        self._tasks.append(asyncio.create_task(self._drain(self.server.stderr)))
        self.session = aiohttp.ClientSession()
        async with self.session.post(
            f"{self.url}/_fake/sharding", json={"enabled": self.gate}
        ) as answer:
            answer.raise_for_status()

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while await stream.readline():
            pass

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    async def get_json(self, path: str) -> Any:
        assert self.session is not None
        async with self.session.get(self.url + path) as answer:
            answer.raise_for_status()
            return await answer.json()

    # -- the writer and the write log ---------------------------------------------------------

    async def writer(self) -> None:
        assert self.session is not None
        rng = random.Random(1)
        interval, next_at = 1.0 / self.o.rate, time.monotonic()
        headers = {"Content-Type": "application/merge-patch+json"}
        while self._writing:
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            name = f"cm-{rng.randrange(self.o.objects):05d}"
            self.writes += 1
            body = json.dumps({"data": {"n": str(self.writes)}})
            path = f"/api/v1/namespaces/{WORK}/configmaps/{name}"
            async with self.session.patch(self.url + path, data=body, headers=headers) as a:
                obj = await a.json()
            self.expected[f"{WORK}/{name}"] = int(obj["metadata"]["resourceVersion"])

    async def write_log(self, rv: str) -> None:
        """Every write of a side effect, in the server's order (re-watches from the last rv)."""
        assert self.session is not None
        path = f"/api/v1/namespaces/{EFFECTS}/configmaps"
        while True:
            query = {"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "true"}
            try:
                async with self.session.get(self.url + path, params=query, timeout=None) as a:
                    async for line in a.content:
                        event = json.loads(line)
                        obj = event["object"]
                        rv = obj["metadata"]["resourceVersion"]
                        if event["type"] not in ("ADDED", "MODIFIED"):
                            continue
                        d = obj.get("data") or {}
                        self.effects.append(
                            Effect(time.time(), int(rv), d["replica"], d["key"],
                                   int(d["objectRV"]), float(d["start"]), float(d["sent"]))
                        )  # fmt: skip
                        self.changed.set()
            except (TimeoutError, aiohttp.ClientError):
                await asyncio.sleep(0.1)

    # -- replicas -------------------------------------------------------------------------------

    async def start_replica(self, identity: str) -> None:
        proxy = Proxy(self.port)
        await proxy.start()
        log = self.workdir / f"{identity}.log"
        process = await asyncio.create_subprocess_exec(
            self.o.python, str(HERE), "replica", "--server", f"http://127.0.0.1:{proxy.port}",
            "--identity", identity, "--lease", str(self.o.lease), "--workers",
            str(self.o.workers), "--work", str(self.o.work),
            stdout=asyncio.subprocess.PIPE, stderr=log.open("w"),
        )  # fmt: skip
        replica = Replica(identity, proxy, process, log)
        self.replicas[identity] = replica
        self._tasks.append(asyncio.create_task(self._read(replica)))
        self.note(f"started {identity} (pid {process.pid})")

    async def _read(self, r: Replica) -> None:
        assert r.process.stdout is not None
        while line := await r.process.stdout.readline():
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if d["kind"] == "write":
                self.attempts.append(d)
                continue
            status = Status(
                d["t"], d["id"], d["phase"], HashRanges(tuple(x) for x in d["active"]),
                HashRanges(tuple(x) for x in d["draining"]), d["cache_ok"], d["stats"],
            )  # fmt: skip
            if d["kind"] == "final":
                r.final = status
            if r.last is None or status.active != r.last.active or d["kind"] == "ranges":
                r.history.append(status)
            r.last = status
            self._check_hand_overs(status.t)
            self.changed.set()

    def _check_hand_overs(self, t: float) -> None:
        for h in self.hand_overs:
            if h.done_at is not None:
                continue
            covered = EMPTY
            for r in self.replicas.values():
                if r.identity != h.victim and r.last is not None:
                    covered |= r.last.active
            if h.share.issubset(covered):
                h.done_at = t
                self.note(f"hand-over after {h.fault} of {h.victim}: {t - h.at:.2f} s")

    def live(self) -> list[Replica]:
        return [r for r in self.replicas.values() if r.state == "running"]

    def settled(self, since: float) -> bool:
        covered = EMPTY
        for r in self.live():
            s = r.last
            if s is None or s.t < since or s.phase != "member" or s.draining or not s.cache_ok:
                return False
            if not s.active:
                return False  # not ready yet: every ready member has a share
            if not s.active.isdisjoint(covered):
                return False
            covered |= s.active
        return covered == FULL

    async def wait_for(self, what: str, predicate: Callable[[], bool], limit: float) -> bool:
        deadline = time.monotonic() + limit
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.failures.append(f"{what}: not within {limit:.0f} s")
                self.note(f"FAILED: {what} not within {limit:.0f} s")
                return False
            self.changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(remaining, 1.0))
        return True

    async def settle(self, label: str) -> None:
        since = time.time()
        started = time.monotonic()
        if await self.wait_for(f"settle after {label}", lambda: self.settled(since),
                               self.o.settle_timeout):  # fmt: skip
            self.note(f"settled after {label} in {time.monotonic() - started:.1f} s")

    def fault(self, kind: str, victim: str) -> float:
        r = self.replicas[victim]
        share = r.last.active if r.last is not None else EMPTY
        at = time.time()
        self.hand_overs.append(HandOver(kind, victim, at, share))
        return at

    async def kill(self, identity: str) -> None:
        self.fault("kill -9", identity)
        r = self.replicas[identity]
        r.process.send_signal(signal.SIGKILL)
        r.state = "dead"
        self.note(f"kill -9 {identity}")
        await r.process.wait()
        await r.proxy.close()

    async def pause(self, identity: str) -> None:
        r = self.replicas[identity]
        stop = self.fault("SIGSTOP", identity)
        r.process.send_signal(signal.SIGSTOP)
        r.state = "paused"
        self.note(f"SIGSTOP {identity} for {self.o.pause * self.o.lease:.1f} s")
        await asyncio.sleep(self.o.pause * self.o.lease)
        cont = time.time()
        r.process.send_signal(signal.SIGCONT)
        r.state = "running"
        self.pauses.append((identity, stop, cont))
        self.returns.append(("SIGCONT", identity, cont))
        self.note(f"SIGCONT {identity}")

    async def cut(self, identity: str) -> None:
        r = self.replicas[identity]
        self.fault("cut-off", identity)
        r.proxy.cut()
        r.state = "cut"
        self.note(f"cut {identity} off for {self.o.cut * self.o.lease:.1f} s")
        await asyncio.sleep(self.o.cut * self.o.lease)
        r.proxy.heal()
        r.state = "running"
        self.returns.append(("heal", identity, time.time()))
        self.note(f"healed {identity}")

    async def stop(self, identity: str) -> None:
        r = self.replicas[identity]
        started = time.monotonic()
        r.process.send_signal(signal.SIGTERM)
        r.state = "stopped"
        await r.process.wait()
        await r.proxy.close()
        self.note(f"stopped {identity} gracefully in {time.monotonic() - started:.1f} s")

    # -- the run ------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        await self.start_server()
        try:
            listed = await self.get_json(f"/api/v1/namespaces/{EFFECTS}/configmaps")
            self._tasks.append(
                asyncio.create_task(self.write_log(listed["metadata"]["resourceVersion"]))
            )
            self._tasks.append(asyncio.create_task(self.writer()))
            for name in ("r1", "r2", "r3"):
                await self.start_replica(name)
            await self.settle("start")
            await self.kill("r1")
            await self.settle("kill -9 r1")
            await self.start_replica("r4")
            await self.settle("join r4")
            await self.pause("r2")
            await self.settle("SIGSTOP/SIGCONT r2")
            await self.cut("r3")
            await self.settle("cut-off r3")
            await self.stop("r4")
            await self.settle("graceful stop r4")
            self._writing = False
            await asyncio.sleep(0.1)
            self.note(f"writer stopped after {self.writes} writes; waiting for the reconciles")
            await self.wait_for("every write reconciled", self.all_reconciled,
                                self.o.settle_timeout)  # fmt: skip
            for identity in [r.identity for r in self.live()]:
                await self.stop(identity)
            return self.oracle()
        finally:
            await self.shutdown()

    def latest_effects(self) -> dict[str, Effect]:
        latest: dict[str, Effect] = {}
        for e in self.effects:
            latest[e.key] = e
        return latest

    def all_reconciled(self) -> bool:
        latest = self.latest_effects()
        return all(
            (e := latest.get(f"{WORK}/cm-{i:05d}")) is not None
            and e.object_rv >= self.expected.get(f"{WORK}/cm-{i:05d}", 0)
            for i in range(self.o.objects)
        )

    async def shutdown(self) -> None:
        for r in self.replicas.values():
            if r.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    r.process.send_signal(signal.SIGCONT)
                    r.process.kill()
                await r.process.wait()
            await r.proxy.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.session is not None:
            await self.session.close()
        if self.server is not None and self.server.returncode is None:
            self.server.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(self.server.wait(), 10)
            except TimeoutError:
                self.server.kill()
                await self.server.wait()

    # -- the oracle -------------------------------------------------------------------------------

    def oracle(self) -> dict[str, Any]:
        overlaps: list[str] = []
        by_key: dict[str, list[Effect]] = {}
        for e in self.effects:
            by_key.setdefault(e.key, []).append(e)
        for key, effects in by_key.items():
            effects.sort(key=lambda e: e.start)
            for i, a in enumerate(effects):
                for b in effects[i + 1 :]:
                    if b.start >= a.sent:
                        break
                    if b.replica != a.replica:
                        overlaps.append(f"{key}: {a.replica} [{a.start:.3f}, {a.sent:.3f}] and "
                                        f"{b.replica} [{b.start:.3f}, {b.sent:.3f}]")  # fmt: skip
        spanned: list[str] = []
        spanned_sent: list[str] = []
        window: list[str] = []
        for identity, stop, cont in self.pauses:
            for e in self.effects:
                if e.replica != identity or e.start >= stop:
                    continue
                if e.sent >= stop:
                    spanned.append(
                        f"{e.key} by {identity}: started {stop - e.start:.2f} s "
                        f"before SIGSTOP, sent {e.sent - cont:.2f} s after SIGCONT"
                    )
                elif e.received >= cont:
                    window.append(f"{e.key} by {identity}: sent before SIGSTOP, landed after")
        for identity, stop, _cont in self.pauses:
            for attempt in self.attempts:
                if attempt["id"] == identity and attempt["start"] < stop <= attempt["sent"]:
                    spanned_sent.append(f"{attempt['key']} by {identity}: {attempt['outcome']}")
        latest = self.latest_effects()
        unreconciled = [
            key for key, rv in self.expected.items()
            if (last := latest.get(key)) is None or last.object_rv < rv
        ]  # fmt: skip
        bound = 1.5 * self.o.lease
        seconds = [None if h.done_at is None else round(h.done_at - h.at, 2)
                   for h in self.hand_overs]  # fmt: skip
        hand_overs = [
            {"fault": h.fault, "victim": h.victim, "seconds": took}
            for h, took in zip(self.hand_overs, seconds, strict=True)
        ]
        slow = [took for took in seconds if took is None or took > bound]
        moves = []
        for fault, identity, back in self.returns:
            count = 0
            for r in self.replicas.values():
                if r.identity == identity:
                    continue
                previous: HashRanges | None = None
                for s in r.history:
                    inside = previous is not None and back <= s.t < back + self.o.lease
                    if inside and previous is not None and previous - s.active:
                        count += 1
                    previous = s.active
            moves.append({"fault": fault, "replica": identity, "moves": count})
        finals: dict[str, dict[str, Any]] = {}
        for r in self.replicas.values():
            status = r.final or r.last
            finals[r.identity] = status.stats if status is not None else {}
        return {
            "gate": "on" if self.gate else "off",
            "writes": self.writes,
            "side_effects": len(self.effects),
            "keys_with_effects": len(by_key),
            "overlaps": overlaps[:20],
            "overlap_count": len(overlaps),
            "spanned_pause": spanned[:20],
            "spanned_pause_count": len(spanned),
            "window_writes": window[:20],
            "spanned_pause_sent": spanned_sent[:20],
            "spanned_pause_sent_count": len(spanned_sent),
            "unreconciled": len(unreconciled),
            "hand_overs": hand_overs,
            "hand_over_bound": bound,
            "slow_hand_overs": len(slow),
            "moves_on_return": moves,
            "replicas": finals,
            "failures": self.failures,
        }


def verdict(result: dict[str, Any], *, advisory_timing: bool) -> list[str]:
    problems = list(result["failures"])
    if result["overlap_count"]:
        problems.append(f"{result['overlap_count']} keys reconciled by two replicas at once")
    if result["spanned_pause_count"]:
        problems.append(f"{result['spanned_pause_count']} side effects spanned a pause")
    if result["spanned_pause_sent_count"]:
        problems.append(
            f"{result['spanned_pause_sent_count']} writes sent by reconciles that spanned a pause"
        )
    if result["unreconciled"]:
        problems.append(f"{result['unreconciled']} writes not reconciled")
    if result["slow_hand_overs"] and not advisory_timing:
        problems.append(f"{result['slow_hand_overs']} hand-overs slower than the bound")
    if any(m["moves"] for m in result["moves_on_return"]) and not advisory_timing:
        problems.append("ranges moved again when a replica came back")
    return problems


async def harness(args: argparse.Namespace) -> tuple[Options, list[dict[str, Any]]]:
    if args.short:
        options = Options(objects=300, rate=20, lease=2.0, workers=4, work=0.02, pause=2.0,
                          cut=2.0, settle_timeout=60, python=sys.executable)  # fmt: skip
    else:
        options = Options(objects=args.objects, rate=args.rate, lease=args.lease, workers=4,
                          work=0.05, pause=args.pause, cut=args.cut, settle_timeout=120,
                          python=sys.executable)  # fmt: skip
    gates = {"on": [True], "off": [False], "both": [True, False]}[args.gate]
    results = []
    for gate in gates:
        with tempfile.TemporaryDirectory(prefix="replicas-chaos-") as tmp:
            run = Run(options, gate, Path(tmp))
            result = await run.run()
            if args.keep_logs:
                keep(run, Path(args.keep_logs), result["gate"])
        result["events"] = run.events
        result["problems"] = verdict(result, advisory_timing=args.advisory_timing)
        results.append(result)
        print_result(result)
    return options, results


def keep(run: Run, directory: Path, gate: str) -> None:
    """Copy the replicas' logs (blocking; a few files at the end of a run)."""
    directory.mkdir(parents=True, exist_ok=True)
    for r in run.replicas.values():
        (directory / f"gate-{gate}-{r.identity}.log").write_text(r.log.read_text())


def print_result(r: dict[str, Any]) -> None:
    print(f"\n## gate {r['gate']}: {r['writes']} writes, {r['side_effects']} side effects on "
          f"{r['keys_with_effects']} keys")  # fmt: skip
    print(f"- keys reconciled by two replicas at once: {r['overlap_count']}")
    print(f"- side effects from a reconcile that spanned a pause: {r['spanned_pause_count']}")
    print(f"- writes sent by a reconcile that spanned a pause (landed or not): "
          f"{r['spanned_pause_sent_count']}")  # fmt: skip
    print(f"- writes in the check-to-wire window (closed by the precondition): "
          f"{len(r['window_writes'])}")  # fmt: skip
    print(f"- writes not reconciled: {r['unreconciled']}")
    for h in r["hand_overs"]:
        print(f"- hand-over after {h['fault']} of {h['victim']}: {h['seconds']} s "
              f"(bound {r['hand_over_bound']:.1f} s)")  # fmt: skip
    for m in r["moves_on_return"]:
        print(f"- ranges moved within a lease after {m['fault']} of {m['replica']}: {m['moves']}")
    for identity, stats in r["replicas"].items():
        print(f"- {identity}: {stats}")
    for line in r["overlaps"] + r["spanned_pause"] + r["spanned_pause_sent"]:
        print(f"  ! {line}")
    print("PASS" if not r["problems"] else "FAIL: " + "; ".join(r["problems"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    rep = sub.add_parser("replica", help="(internal) run one replica")
    rep.add_argument("--server", required=True)
    rep.add_argument("--identity", required=True)
    rep.add_argument("--lease", type=float, default=8.0)
    rep.add_argument("--workers", type=int, default=4)
    rep.add_argument("--work", type=float, default=0.05)
    parser.add_argument("--short", action="store_true", help="the short version (the test's)")
    parser.add_argument("--gate", choices=("on", "off", "both"), default="both")
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--lease", type=float, default=8.0, help="lease duration, seconds")
    parser.add_argument("--pause", type=float, default=2.0, help="SIGSTOP, in lease durations")
    parser.add_argument("--cut", type=float, default=2.0, help="cut-off, in lease durations")
    parser.add_argument("--advisory-timing", action="store_true")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--keep-logs", help="copy the replicas' logs to this directory")
    args = parser.parse_args()
    if args.command == "replica":
        import logging

        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        import anyio

        raise SystemExit(anyio.run(replica_main, args))
    options, results = asyncio.run(harness(args))
    if args.json:
        document = {"options": vars(options), "runs": results}
        Path(args.json).write_text(json.dumps(document, indent=2))
    raise SystemExit(1 if any(r["problems"] for r in results) else 0)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
