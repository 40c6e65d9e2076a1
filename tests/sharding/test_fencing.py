"""Fenced side effects (issue 21.1): a reconcile writes only while its replica owns the key.

Three levels: the pure rules as tables (``write_refusal``, ``deadline_refusal``); the fenced
client and the ticket of a reconcile (``KubeClient.fenced``, ``WriteFence``, ``run_fenced``);
and the controllers over real HTTP against the fake API server, where a replica's clock jumps
past its deadline while a reconcile is mid-flight (the pause: the reconcile resumes before
anything else of the replica and its write is refused), a replica is cut off from the server
while another takes its range over, and a leader-elected controller's lease lapses mid-reconcile
on virtual time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio import CancelScope

from aioinformer import KubeClient
from aioinformer._control._controller import Controller
from aioinformer._control._fence import Ticket, WriteFence, run_fenced
from aioinformer._control._workers import Result
from aioinformer._election._elector import LeaderElector
from aioinformer._election._lease import deadline_refusal
from aioinformer._replicas._controller import ShardedController
from aioinformer._replicas._handover import ShardTiming
from aioinformer._replicas._lease_view import ObservedLease
from aioinformer._replicas._membership import Phase, ReplicaState, write_refusal
from aioinformer._sharding._ranges import EMPTY, FULL, HashRanges
from aioinformer._sharding._selector import FIELD_UID
from aioinformer.errors import FencedWriteError, LifecycleError
from aioinformer.testing import FakeApiServer, FakeClock
from tests.support import CONFIGMAPS, FAST_WATCH, MemoryLease, configmap, kube_client

from .proxy import Proxy, proxied_client
from .test_membership import HALF, HIGH, LOW, NOW, lease, member, own, view

TIMING = ShardTiming()  # 15 / 10 / 2: the deadline is 10 s after the last renewal's issue
IN_LOW, IN_HIGH = 5, HALF + 5

# ---- the pure rules ----------------------------------------------------------------------------

# (situation, state, other leases or None for the own lease only, hash, refused because)
FenceRow = tuple[str, ReplicaState, list[ObservedLease] | None, int | None, str | None]
FENCE_ROWS: list[FenceRow] = [
    ("a member within its deadline, its range", member(active=LOW), None, IN_LOW, None),
    ("outside a reconcile: the lease alone", member(active=LOW), None, None, None),
    ("draining: a running reconcile may still write", member(active=LOW, draining=HIGH),
     None, IN_HIGH, None),
    ("leaving: its draining reconciles may still write",
     member(phase=Phase.LEAVING, draining=LOW), None, IN_LOW, None),
    ("its deadline passed (paused, or cut off)", member(active=LOW, renewed_at=85.0), None,
     IN_LOW, "deadline passed 5.0 s ago"),
    ("exactly at its deadline", member(active=LOW, renewed_at=90.0), None, IN_LOW,
     "deadline passed 0.0 s ago"),
    ("no renewal since it stopped everything", member(renewed_at=None), None, None,
     "lease is not held"),
    ("its lease was taken over (a 409 told it)", member(active=LOW, lost=True), None, IN_LOW,
     "taken over"),
    ("its view shows its lease fenced", member(active=LOW), [lease("a", 15, holder="")],
     IN_LOW, "taken over"),
    ("its view shows its lease deleted", member(active=LOW),
     [lease("a", 10, LOW, deleted=True)], IN_LOW, "taken over or deleted"),
    ("the key's range moved away", member(active=LOW), None, IN_HIGH, "hash range"),
    ("joining", ReplicaState(identity="a"), [], None, "not a member"),
    ("released", member(phase=Phase.RELEASED), None, None, "not a member"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("state", "others", "hash_value", "because"),
    [row[1:] for row in FENCE_ROWS],
    ids=[row[0] for row in FENCE_ROWS],
)
def test_write_refusal(
    state: ReplicaState,
    others: list[ObservedLease] | None,
    hash_value: int | None,
    because: str | None,
) -> None:
    leases = [own(state)] if others is None else others
    reason = write_refusal(state, view(*leases), NOW, timing=TIMING, hash_value=hash_value)
    if because is None:
        assert reason is None
    else:
        assert reason is not None and because in reason


@pytest.mark.parametrize(
    ("renewed_at", "now", "because"),
    [
        (None, 0.0, "not held"),
        (90.0, 99.9, None),
        (90.0, 100.0, "passed 0.0 s ago (last renewal 10.0 s ago, deadline 10 s)"),
        (90.0, 103.5, "passed 3.5 s ago"),
    ],
)
def test_deadline_refusal(renewed_at: float | None, now: float, because: str | None) -> None:
    reason = deadline_refusal(renewed_at, deadline=10.0, now=now)
    assert reason is None if because is None else (reason is not None and because in reason)


# ---- the fenced client and the tickets ---------------------------------------------------------


async def test_a_fenced_client_asks_before_every_write_and_sends_nothing_refused(
    fake_apiserver: FakeApiServer,
) -> None:
    """Reads pass; every write verb asks the fence (with what it is) right before it is sent;
    a refusal raises and nothing reaches the server; the view shares the connection."""
    asked: list[str] = []
    refusing = False

    def fence(what: str) -> None:
        asked.append(what)
        if refusing:
            raise FencedWriteError(what=what, key=None, reason="test", owner="test")

    async with kube_client(fake_apiserver) as client:
        fenced = client.fenced(fence)
        assert "fenced" in repr(fenced)
        await fenced.create(CONFIGMAPS, configmap("a"), namespace="default")
        cm = await fenced.get(CONFIGMAPS, "a", namespace="default")
        await fenced.list(CONFIGMAPS, namespace="default")
        await fenced.replace(CONFIGMAPS, cm, namespace="default")
        await fenced.patch(CONFIGMAPS, "a", {"data": {"k": "v"}}, namespace="default")
        await fenced.apply(CONFIGMAPS, configmap("a", k="w"), field_manager="t", force=True)
        await fenced.delete(CONFIGMAPS, "a", namespace="default")
        assert asked == [
            "create of v1/configmaps 'a'",
            "replace of v1/configmaps 'a'",
            "patch of v1/configmaps 'a'",
            "apply of v1/configmaps 'a'",
            "delete of v1/configmaps 'a'",
        ]
        await client.create(CONFIGMAPS, configmap("b"), namespace="default")
        before = len(fake_apiserver.requests.records)
        refusing = True
        writes: list[Callable[[], Any]] = [
            lambda: fenced.create(CONFIGMAPS, configmap("c"), namespace="default"),
            lambda: fenced.patch(CONFIGMAPS, "b", {"data": {"k": "v"}}, namespace="default"),
            lambda: fenced.patch_status(CONFIGMAPS, "b", {"x": 1}, namespace="default"),
            lambda: fenced.delete(CONFIGMAPS, "b", namespace="default"),
            lambda: fenced.delete_collection(CONFIGMAPS, namespace="default"),
        ]
        for write in writes:
            with pytest.raises(FencedWriteError):
                await write()
        assert len(fake_apiserver.requests.records) == before  # nothing was sent
        assert not (await fenced.get(CONFIGMAPS, "b", namespace="default")).get("data")
        await fenced.aclose()  # a view: closes nothing
        assert not client.closed
        await client.get(CONFIGMAPS, "b", namespace="default")


async def test_a_refused_reconcile_is_done_whatever_it_does_after() -> None:
    """Once the fence refused a write of a reconcile, the reconcile counts as done (None: not
    retried here), whether it let the error out, swallowed it, or raised something else."""
    owner = object()
    fence = WriteFence(owner=owner, name="c", refusal=lambda ticket: "not yours")

    async def let_out() -> Result:
        fence("patch of x")
        return Result(requeue=True)

    async def swallow() -> Result:
        try:
            fence("patch of x")
        except FencedWriteError:
            pass
        return Result(requeue=True)

    async def wrap() -> Result:
        try:
            fence("patch of x")
        except FencedWriteError as exc:
            raise RuntimeError("wrapped") from exc
        return Result()

    for reconcile in (let_out, swallow, wrap):
        ticket = Ticket(owner=owner, key="ns/a")
        assert await run_fenced(ticket, reconcile) is None
        assert ticket.refused is not None and "not yours" in str(ticket.refused)
    assert fence.refused == 3

    async def fails() -> Result:
        raise RuntimeError("its own failure")

    with pytest.raises(RuntimeError, match="its own failure"):
        await run_fenced(Ticket(owner=owner, key="ns/a"), fails)


async def test_the_fence_sees_its_own_reconciles_only() -> None:
    """A write outside any reconcile, or inside another controller's, is checked without a
    ticket (the replica's lease alone)."""
    seen: list[Ticket | None] = []
    mine, other = object(), object()

    def refusal(ticket: Ticket | None) -> str | None:
        seen.append(ticket)
        return None

    fence = WriteFence(owner=mine, name="c", refusal=refusal)
    fence("create of x")
    ticket = Ticket(owner=mine, key="ns/a", epoch=3, hash=7)

    async def write() -> None:
        fence("patch of x")
        async with anyio.create_task_group() as tg:  # tasks the reconcile starts inherit it
            tg.start_soon(lambda: _call(fence))

    await run_fenced(ticket, write)
    await run_fenced(Ticket(owner=other, key="ns/b"), write)
    assert seen == [None, ticket, ticket, None, None]


async def _call(fence: WriteFence) -> None:
    fence("delete of x")


# ---- the sharded controller over HTTP ----------------------------------------------------------

SHORT = ShardTiming(lease_duration=1.0, renew_deadline=0.6, retry_period=0.2)
GUARD = 30.0


class JumpClock:
    """The system clock plus an offset that a test can move at once: a process that was
    stopped (SIGSTOP) and resumed sees its monotonic clock jump like this."""

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.monotonic() + self.offset

    def jump(self, seconds: float) -> None:
        self.offset += seconds

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(max(0.0, seconds))

    def move_on_after(self, seconds: float | None) -> AbstractContextManager[CancelScope, bool]:
        return anyio.move_on_after(seconds)

    def fail_after(self, seconds: float | None) -> AbstractContextManager[CancelScope]:
        return anyio.fail_after(seconds)


@dataclass
class Replica:
    """A sharded controller whose reconciles annotate a side-effect ConfigMap per key, and
    can be held mid-flight (before the write) for one key."""

    name: str
    controller: ShardedController = field(init=False)
    hold: str | None = None  # the key whose next reconcile waits for `release`
    shielded: bool = False  # the held reconcile ignores cancellation (a late stop)
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    outcome: BaseException | str | None = None
    stop_alls_then: int | None = None  # its stop-everything count when the write was refused
    done: asyncio.Event = field(default_factory=asyncio.Event)
    wrote: list[str] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def reconcile(self, key: str) -> Result | None:
        name = key.split("/", 1)[1]
        held = key == self.hold
        if held:
            self.hold = None
            self.entered.set()
            with CancelScope(shield=self.shielded):
                await self.release.wait()
        try:
            await self.controller.client.patch(
                CONFIGMAPS, f"eff-{name}", {"data": {"by": self.name}}, namespace="effects"
            )
        except FencedWriteError as exc:
            if held:
                self.outcome = exc
                self.stop_alls_then = self.controller.statistics().stop_alls
                self.done.set()
            raise
        self.wrote.append(key)
        self.changed.set()
        if held:
            self.outcome = "written"
            self.done.set()
        return None


@asynccontextmanager
async def replicas(
    server: FakeApiServer, *names: str, clock: JumpClock | None = None, cut: str | None = None
) -> AsyncIterator[tuple[dict[str, Replica], dict[str, Proxy]]]:
    """Run sharded controllers ``names`` (``cut`` through a proxy, ``clock`` for the first)."""
    found: dict[str, Replica] = {}
    proxies: dict[str, Proxy] = {}
    async with AsyncExitStack() as stack:
        direct = await stack.enter_async_context(kube_client(server))
        async with anyio.create_task_group() as tg:
            for index, name in enumerate(names):
                r = found[name] = Replica(name)
                client: KubeClient = direct
                if name == cut:
                    proxies[name], client = await stack.enter_async_context(
                        proxied_client(server.port, connect_timeout=1.0, request_timeout=2.0)
                    )
                r.controller = ShardedController(
                    name="fx",
                    reconcile=r.reconcile,
                    client=client,
                    resource=CONFIGMAPS,
                    namespace="default",
                    group="fx",
                    identity=name,
                    timing=SHORT,
                    vnodes=4,
                    watch=FAST_WATCH,
                    stop_timeout=2.0,
                    clock=clock if clock is not None and index == 0 else JumpClock(),
                )
                await tg.start(r.controller.run)
            try:
                yield found, proxies
            finally:
                for r in found.values():
                    r.release.set()
                tg.cancel_scope.cancel()


def fill(server: FakeApiServer, n: int) -> None:
    server.objects.create("namespaces", {"metadata": {"name": "effects"}})
    for i in range(n):
        server.objects.create("configmaps", configmap(f"cm-{i}"))
        server.objects.create("configmaps", configmap(f"eff-cm-{i}", "effects"))


def owner_of(group: dict[str, Replica], server: FakeApiServer, name: str) -> str | None:
    for r in group.values():
        if r.controller.serves(server.objects.get("configmaps", name, namespace="default")):
            return r.name
    return None


def is_settled(group: dict[str, Replica], server: FakeApiServer, n: int) -> bool:
    """Every replica joined, its ranges final (an exact cover, nothing draining) and cached."""
    covered = EMPTY
    for r in group.values():
        c = r.controller
        stats = c.statistics()
        active = HashRanges(stats.active)
        if not stats.joined or not active or stats.draining or not active.isdisjoint(covered):
            return False
        covered |= active
        informer = c.informer
        shard = informer.statistics().shard if informer is not None else None
        wanted = c.member.state.serving.selector(FIELD_UID)
        if shard is None or wanted is None or shard.selector != wanted.canonical:
            return False
    return covered == FULL and all(owner_of(group, server, f"cm-{i}") for i in range(n))


async def settled(group: dict[str, Replica], server: FakeApiServer, n: int) -> None:
    """Until :func:`is_settled` (re-checked at every range change of a replica)."""
    with anyio.fail_after(GUARD):
        while not is_settled(group, server, n):
            async with anyio.create_task_group() as tg:
                for r in group.values():
                    tg.start_soon(_first_change, r.controller, tg.cancel_scope)


async def _first_change(controller: ShardedController, scope: CancelScope) -> None:
    await controller.wait_ranges_changed()
    scope.cancel()


async def test_a_write_after_the_clock_jumped_past_the_deadline_is_refused(
    fake_apiserver: FakeApiServer,
) -> None:
    """The pause: replica a is mid-reconcile when its clock jumps past its renew deadline
    (SIGSTOP, then SIGCONT); the reconcile resumes before anything else of a runs, and its write
    is refused at the write itself: a's membership loop has not run yet (no StopAll), nobody
    told it. The reconcile is not retried for that reason; the side effect was never written."""
    fill(fake_apiserver, 12)
    clock = JumpClock()
    async with replicas(fake_apiserver, "a", "b", clock=clock) as (group, _):
        await settled(group, fake_apiserver, 12)
        a = group["a"]
        mine = next(i for i in range(12) if owner_of(group, fake_apiserver, f"cm-{i}") == "a")
        a.hold = f"default/cm-{mine}"
        a.controller.queue.add(a.hold)
        with anyio.fail_after(GUARD):
            await a.entered.wait()
        a.release.set()  # the reconcile's own wake-up is first in line ...
        clock.jump(SHORT.lease_duration * 2)  # ... when the process resumes, its clock jumped
        with anyio.fail_after(GUARD):
            await a.done.wait()
        assert isinstance(a.outcome, FencedWriteError)
        assert "deadline passed" in a.outcome.reason
        assert a.outcome.key == f"default/cm-{mine}"
        assert a.controller.statistics().fenced_writes >= 1  # others in flight may be refused
        assert a.stop_alls_then == 0  # refused before the membership loop stopped anything
        assert a.controller.queue.num_requeues(f"default/cm-{mine}") == 0  # not retried


async def test_a_replica_cut_off_refuses_its_late_write_and_another_reconciles(
    fake_apiserver: FakeApiServer,
) -> None:
    """Replica a is cut off from the server with a reconcile in flight that ignores its
    cancellation (the stop came too late for it); b fences a's lease, takes the range over
    and reconciles the key; when a's reconcile goes on, its write is refused, so the side
    effect is b's alone."""
    fill(fake_apiserver, 12)
    async with replicas(fake_apiserver, "a", "b", cut="a") as (group, proxies):
        await settled(group, fake_apiserver, 12)
        a, b = group["a"], group["b"]
        mine = next(i for i in range(12) if owner_of(group, fake_apiserver, f"cm-{i}") == "a")
        key = f"default/cm-{mine}"
        a.hold, a.shielded = key, True
        a.controller.queue.add(key)
        with anyio.fail_after(GUARD):
            await a.entered.wait()
        proxies["a"].cut()
        with anyio.fail_after(GUARD):  # b takes the range over and reconciles the key
            while key not in b.wrote:
                b.changed.clear()
                await b.changed.wait()
        proxies["a"].heal()
        a.release.set()
        with anyio.fail_after(GUARD):
            await a.done.wait()
        assert isinstance(a.outcome, FencedWriteError)
        assert a.controller.statistics().fenced_writes >= 1
        effect = fake_apiserver.objects.get("configmaps", f"eff-cm-{mine}", namespace="effects")
        assert effect["data"] == {"by": "b"}


# ---- the leader-elected controller on virtual time ---------------------------------------------


async def test_a_leader_elected_controller_refuses_a_write_once_its_lease_lapsed(
    fake_apiserver: FakeApiServer,
) -> None:
    """Virtual time: the leader's reconcile is mid-flight when its clock jumps past the renew
    deadline; the reconcile's write through ``controller.client`` is refused before the elector
    noticed (its term has not ended yet), counted, and the key is not retried."""
    fake_apiserver.objects.create("configmaps", configmap("target"))
    clock = FakeClock()
    lease = MemoryLease(clock)
    entered, release, done = anyio.Event(), anyio.Event(), anyio.Event()
    outcome: list[BaseException | str] = []
    leading_then: list[bool] = []
    holder: list[Controller[str]] = []

    async def reconcile(key: str) -> Result | None:
        entered.set()
        await release.wait()
        try:
            await holder[0].client.patch(CONFIGMAPS, "target", {"data": {"by": "leader"}})
        except FencedWriteError as exc:
            outcome.append(exc)
            leading_then.append(holder[0].leader_elector.is_leader)  # type: ignore[union-attr]
            raise
        finally:
            done.set()
        outcome.append("written")
        return None

    async with kube_client(fake_apiserver) as client:
        elector = LeaderElector(
            lease_client=lease, lease_name="lock", namespace="ns", identity="me", clock=clock
        )
        controller: Controller[str] = Controller(
            name="elected", reconcile=reconcile, leader_elector=elector, client=client,
            clock=clock,
        )  # fmt: skip
        holder.append(controller)
        async with anyio.create_task_group() as tg:
            await tg.start(controller.run)
            await clock.advance(0.1)
            assert elector.is_leader
            controller.enqueue("k")
            with anyio.fail_after(GUARD):
                await entered.wait()
            release.set()  # first in line when the process resumes ...
            clock.jump(elector.renew_deadline + 1)  # ... with its clock past the deadline
            with anyio.fail_after(GUARD):
                await done.wait()
            assert leading_then == [True]  # the elector had not noticed yet
            assert isinstance(outcome[0], FencedWriteError)
            assert "deadline passed" in outcome[0].reason
            stats = controller.statistics()
            assert stats.fenced_writes == 1 and stats.errors == 0
            assert controller.queue.num_requeues("k") == 0
            tg.cancel_scope.cancel()
    target = fake_apiserver.objects.get("configmaps", "target", namespace="default")
    assert target.get("data") in ({}, None)


async def test_a_controller_without_an_elector_hands_out_its_client(
    fake_apiserver: FakeApiServer,
) -> None:
    async def reconcile(key: str) -> None:
        return None

    async with kube_client(fake_apiserver) as client:
        plain: Controller[str] = Controller(name="p", reconcile=reconcile, client=client)
        assert plain.client is client
    with pytest.raises(LifecycleError, match="no client"):
        _ = Controller(name="p", reconcile=reconcile).client
