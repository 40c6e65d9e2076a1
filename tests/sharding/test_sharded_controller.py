"""Sharded controllers (issue 14.4-14.6): replicas in one process against the fake API server.

Three replicas split the ConfigMaps; one is killed without releasing (its Lease expires and is
fenced), one stops gracefully (it releases), one joins; and (issue 21) one is paused past its
lease: cut off from the server through its own proxy, its reconciles frozen just before their
side-effect write, then resumed with those reconciles first in line. Their writes are refused by
the fenced client; the replicas that took the ranges over reconcile the same objects. After
each change the test waits (on the replicas' range changes and reconciles, never on time)
until the group settled: every hash is taken by exactly one live replica, every object is in
exactly one live replica's cache and was reconciled there. Throughout, every reconcile is
recorded as an interval of one global sequence, and no two intervals of one object on
different replicas may intersect (a reconcile whose write was refused had no effect and is
left out). The same
runs with the fake server's feature gate off (KEP-5866 ``ShardedListAndWatch``; an old server
ignores ``shardSelector``, SOTA §1.6), where each replica filters on its side.

ShardTiming: leases of one second (renew deadline 0.6 s, retry 0.2 s), as in the leader election
tests; the replicas share the system clock, so the protocol's clock-rate assumption holds
exactly (``_membership`` module docs).
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc
import pytest

from aioinformer import KubeClient
from aioinformer._control._workers import Result
from aioinformer._replicas._controller import ShardedController
from aioinformer._replicas._handover import RangeExit, ShardTiming
from aioinformer._sharding._ranges import FULL, HashRanges
from aioinformer._sharding._selector import FIELD_UID
from aioinformer.errors import FencedWriteError
from aioinformer.metrics import ShardedControllerCollector
from aioinformer.testing import FakeApiServer
from tests.support import CONFIGMAPS, FAST_WATCH, kube_client

from .proxy import Proxy, proxied_client

TIMING = ShardTiming(lease_duration=1.0, renew_deadline=0.6, retry_period=0.2)
GUARD = 30.0  # a fail-safe per step, not a timing
SEEDS = range(5)


@dataclass
class Interval:
    replica: str
    key: str
    start: int
    end: int | None = None
    refused: bool = False  # its side-effect write was refused: it had no effect


@dataclass
class Group:
    """The replicas of one test and what their reconciles did."""

    server: FakeApiServer
    client: KubeClient
    tg: anyio.abc.TaskGroup
    rng: random.Random
    replicas: dict[str, ShardedController] = field(default_factory=dict)
    scopes: dict[str, anyio.CancelScope] = field(default_factory=dict)
    intervals: list[Interval] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    exits: list[tuple[str, str]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    sequence: itertools.count[int] = field(default_factory=itertools.count)
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    proxies: dict[str, Proxy] = field(default_factory=dict)
    side_effects: bool = False  # each reconcile patches effects/eff-<name> (fenced)
    frozen: dict[str, asyncio.Event] = field(default_factory=dict)  # paused: wait for it
    held: dict[str, int] = field(default_factory=dict)  # reconciles frozen per replica

    def reconciler(self, name: str) -> Callable[[str], object]:
        async def reconcile(key: str) -> Result:
            controller = self.replicas[name]
            informer = controller.informer
            obj = informer.indexer.get_by_key(key) if informer is not None else None
            if obj is not None and not controller.serves(obj):
                self.outside.append(f"{name} reconciled {key} outside its ranges")
            interval = Interval(name, key, next(self.sequence))
            self.intervals.append(interval)
            try:
                # The work itself: a few milliseconds, so that overlaps would show.
                await anyio.sleep(self.rng.uniform(0, 0.005))
                if self.side_effects:
                    await self.write(name, controller, key, interval)
            finally:
                interval.end = next(self.sequence)
                self.changed.set()
            # Again soon: every replica keeps working on all it holds, so that two replicas
            # serving one range at once would show as overlapping intervals.
            return Result(requeue_after=self.rng.uniform(0.1, 0.3))

        return reconcile

    async def write(
        self, name: str, controller: ShardedController, key: str, interval: Interval
    ) -> None:
        frozen = self.frozen.get(name)
        if frozen is not None and not frozen.is_set():
            # A paused process: the reconcile stops right before its write (shielded: nothing
            # of the process runs, its stop-everything included) and goes on first on resume.
            self.held[name] = self.held.get(name, 0) + 1
            self.changed.set()
            with anyio.CancelScope(shield=True):
                await frozen.wait()
        try:
            await controller.client.patch(
                "v1/secrets", f"eff-{key.split('/')[1]}",
                {"metadata": {"annotations": {"by": name}}}, namespace="default",
            )  # fmt: skip
        except FencedWriteError:
            interval.refused = True
            raise

    async def start_proxied(self, name: str) -> None:
        """Start ``name`` with its own way to the server (a proxy that :meth:`pause` cuts)."""
        proxy, client = await self.stack.enter_async_context(
            proxied_client(self.server.port, connect_timeout=1.0, request_timeout=2.0)
        )
        self.proxies[name] = proxy
        self.start(name, client)

    def pause(self, name: str) -> None:
        """SIGSTOP, as far as one process can: cut off, its reconciles frozen before writing."""
        self.frozen[name] = asyncio.Event()
        self.proxies[name].cut()

    def resume(self, name: str) -> None:
        """SIGCONT: back on the network, the frozen reconciles go on first."""
        self.proxies[name].heal()
        self.frozen.pop(name).set()

    def start(self, name: str, client: KubeClient | None = None) -> None:
        controller = ShardedController(
            name="cm",
            reconcile=self.reconciler(name),  # type: ignore[arg-type]
            client=client if client is not None else self.client,
            resource=CONFIGMAPS,
            group="cm-shards",
            identity=name,
            workers=2,
            timing=TIMING,
            vnodes=8,
            watch=FAST_WATCH,
            stop_timeout=5.0,
            on_range_exit=lambda e: self.exit(name, e),
        )
        self.replicas[name] = controller
        scope = self.scopes[name] = anyio.CancelScope()
        self.tg.start_soon(self._run, controller, scope)

    def exit(self, name: str, exit_: RangeExit) -> None:
        self.exits.append((name, exit_.key))

    async def _run(self, controller: ShardedController, scope: anyio.CancelScope) -> None:
        with scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._relay, controller)
                await controller.run()
                tg.cancel_scope.cancel()

    async def _relay(self, controller: ShardedController) -> None:
        while True:
            await controller.wait_ranges_changed()
            self.changed.set()

    def kill(self, name: str) -> None:
        """Stop at once: nothing released (the reconciles in flight are cancelled)."""
        self.scopes.pop(name).cancel()
        del self.replicas[name]

    async def stop(self, name: str) -> None:
        """Stop gracefully: drain, release and delete the lease."""
        controller = self.replicas.pop(name)
        await controller.aclose()
        self.scopes.pop(name)

    # -- the settled group --------------------------------------------------------------------

    def keys(self) -> set[str]:
        return {f"default/{o['metadata']['name']}" for o in self.server.objects.list("configmaps")}

    def live(self) -> list[ShardedController]:
        return [c for name, c in self.replicas.items() if name not in self.frozen]

    def settled(self) -> bool:
        covered = HashRanges()
        for controller in self.live():
            stats = controller.statistics()
            active = HashRanges(stats.active)
            if stats.phase != "member" or stats.draining or not active.isdisjoint(covered):
                return False
            covered |= active
        if covered != FULL:
            return False
        cached: list[str] = []
        for controller in self.live():
            informer = controller.informer
            shard = informer.statistics().shard if informer is not None else None
            wanted = controller.member.state.serving.selector(FIELD_UID)
            if informer is None or shard is None or wanted is None:
                return False
            if shard.selector != wanted.canonical:
                return False  # the cache still lists or watches old ranges
            cached.extend(informer.indexer.list_keys())
        if sorted(cached) != sorted(self.keys()):
            return False  # some object in no cache, or in two
        return all(self.reconciled_by_owner(key) for key in cached)

    def reconciled_by_owner(self, key: str) -> bool:
        for name, controller in self.replicas.items():
            informer = controller.informer
            if informer is not None and informer.indexer.get_by_key(key) is not None:
                return any(i.key == key and i.replica == name and i.end for i in self.intervals)
        return False

    async def wait_settled(self) -> None:
        with anyio.fail_after(GUARD):
            while not self.settled():
                self.changed.clear()
                await self.changed.wait()

    def check_intervals(self) -> None:
        """No two reconciles of one object on different replicas intersect."""
        by_key: dict[str, list[Interval]] = {}
        for interval in self.intervals:
            by_key.setdefault(interval.key, []).append(interval)
        for key, intervals in by_key.items():
            intervals = [i for i in intervals if not i.refused]  # no effect: not counted
            intervals.sort(key=lambda i: i.start)
            for i, a in enumerate(intervals):
                a_end = a.end if a.end is not None else 1 << 62
                for b in intervals[i + 1 :]:
                    if b.start >= a_end:
                        break
                    assert b.replica == a.replica, f"{key}: {a} and {b} overlap"
        assert not self.outside


@asynccontextmanager
async def group(server: FakeApiServer, seed: int) -> AsyncIterator[Group]:
    async with (
        kube_client(server) as client,
        AsyncExitStack() as stack,
        anyio.create_task_group() as tg,
    ):
        g = Group(server, client, tg, random.Random(seed), stack=stack)
        try:
            yield g
        finally:
            for name in list(g.frozen):
                g.resume(name)
            for name in list(g.replicas):
                await g.stop(name)
            tg.cancel_scope.cancel()


def _fill(server: FakeApiServer, start: int, n: int) -> None:
    for i in range(start, start + n):
        server.objects.create("configmaps", {"metadata": {"name": f"cm-{i:03d}"}, "data": {}})


@pytest.mark.parametrize("gate", [True, False], ids=["server-side", "client-side"])
@pytest.mark.parametrize("seed", SEEDS)
async def test_three_replicas_kill_stop_and_join(
    fake_apiserver: FakeApiServer, seed: int, gate: bool
) -> None:
    """Issue 14 acceptance: objects spread, no object in two caches, every object reconciled;
    a kill, a graceful stop and a join move the ranges with no overlapping reconcile and
    nothing unowned at the end."""
    fake_apiserver.faults.set_sharded_list_and_watch(gate)
    rng = random.Random(seed)
    _fill(fake_apiserver, 0, 30)
    async with group(fake_apiserver, seed) as g:
        for name in ("a", "b", "c"):
            g.start(name)
        await g.wait_settled()
        spread = [len(c.informer.indexer) for c in g.replicas.values() if c.informer]
        assert len(spread) == 3 and all(spread) and sum(spread) == 30
        filtering = {c.statistics().filtering for c in g.replicas.values()}
        assert filtering == {"server-side" if gate else "client-side"}

        victim = rng.choice(sorted(g.replicas))
        g.kill(victim)
        await g.wait_settled()
        assert len(g.replicas) == 2
        _fill(fake_apiserver, 100, 5)
        fake_apiserver.objects.delete(
            "configmaps", f"cm-{rng.randrange(30):03d}", namespace="default"
        )
        await g.wait_settled()

        leaving = rng.choice(sorted(g.replicas))
        await g.stop(leaving)
        await g.wait_settled()
        leases = {
            lease["metadata"]["name"]: lease["spec"].get("holderIdentity")
            for lease in fake_apiserver.objects.list("leases", namespace="default")
        }
        # The victim's lease was fenced (not released by it); the leaver deleted its own.
        assert leases[victim] == "" and leaving not in leases

        g.start("d")
        await g.wait_settled()
        assert len(g.replicas) == 2
        stats = [c.statistics() for c in g.replicas.values()]
        assert sum(s.hand_overs_in for s in stats) >= 2
        samples = {
            (sample.name, sample.labels.get("identity"), sample.labels.get("phase")): sample.value
            for family in ShardedControllerCollector(*g.replicas.values()).collect()
            for sample in family.samples
        }
        shares = [v for (name, _, _), v in samples.items() if name == "aioinformer_shard_share"]
        assert sum(shares) == pytest.approx(1.0)
        assert samples[("aioinformer_shard_phase", "d", "member")] == 1.0
        g.check_intervals()
    g.check_intervals()


@pytest.mark.parametrize("gate", [True, False], ids=["server-side", "client-side"])
@pytest.mark.parametrize("seed", range(3))
async def test_three_replicas_one_paused_past_its_lease(
    fake_apiserver: FakeApiServer, seed: int, gate: bool
) -> None:
    """Issue 21: a replica paused (cut off, its reconciles frozen before their writes) for
    longer than its lease: the others take its ranges over and reconcile its objects; when it
    resumes, its frozen reconciles' writes are refused (no side effect from a reconcile that
    spanned the pause), it rejoins, and no two effective reconciles of one object overlap."""
    fake_apiserver.faults.set_sharded_list_and_watch(gate)
    rng = random.Random(seed)
    _fill(fake_apiserver, 0, 30)
    for i in range(30):  # the side effects: an annotation on a Secret per object
        fake_apiserver.objects.create("secrets", {"metadata": {"name": f"eff-cm-{i:03d}"}})
    async with group(fake_apiserver, seed) as g:
        g.side_effects = True
        for name in ("a", "b", "c"):
            await g.start_proxied(name)
        await g.wait_settled()
        victim = rng.choice(sorted(g.replicas))
        g.pause(victim)
        with anyio.fail_after(GUARD):  # reconciles in flight when it froze
            while not g.held.get(victim):
                g.changed.clear()
                await g.changed.wait()
        await g.wait_settled()  # the others took its ranges over
        taken_over = {i.key for i in g.intervals if i.replica != victim and i.end is not None}
        g.resume(victim)
        await g.wait_settled()  # it rejoined
        refused = [i for i in g.intervals if i.replica == victim and i.refused]
        assert len(refused) >= g.held[victim]
        assert {i.key for i in refused} <= taken_over  # the others reconciled those keys
        assert g.replicas[victim].statistics().fenced_writes >= len(refused)
        assert len(g.live()) == 3
        g.check_intervals()
    g.check_intervals()
