"""Leader election on a Lease against the fake API server, alone and driving controllers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import anyio
import pytest

from aioinformer import KubeClient
from aioinformer._control._controller import Controller
from aioinformer._election._elector import LeaderElector, LeaseRecord
from aioinformer._informer._event_stream import Registration
from aioinformer._informer._factory import SharedInformerFactory
from aioinformer._objects import KubeObject
from aioinformer.errors import LifecycleError
from aioinformer.testing import FakeApiServer
from tests.support import configmap, kube_client, wait_until

LEASE = "demo-lock"
LEASE_DURATION = 1.0
RENEW_DEADLINE = 0.6
RETRY_PERIOD = 0.2
GUARD = 10.0


@dataclass
class Candidate:
    """One elector plus what its callbacks saw."""

    elector: LeaderElector
    started: asyncio.Event = field(default_factory=asyncio.Event)
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    leaders: list[str] = field(default_factory=list)
    new_leader: asyncio.Event = field(default_factory=asyncio.Event)


def candidate(
    server_client: KubeClient, identity: str, *, release_on_cancel: bool = True
) -> Candidate:
    """An elector with short test timings and recording callbacks."""
    holder: list[Candidate] = []

    def started() -> None:
        holder[0].started.set()

    elector = LeaderElector(
        client=server_client,
        lease_name=LEASE,
        namespace="default",
        identity=identity,
        lease_duration=LEASE_DURATION,
        renew_deadline=RENEW_DEADLINE,
        retry_period=RETRY_PERIOD,
        release_on_cancel=release_on_cancel,
        on_started_leading=started,
        on_stopped_leading=lambda: holder[0].stopped.set(),
        on_new_leader=lambda who: new_leader(holder[0], who),
    )
    holder.append(Candidate(elector))
    return holder[0]


def new_leader(c: Candidate, who: str) -> None:
    """Record a leader change."""
    c.leaders.append(who)
    c.new_leader.set()


def make_elector(client: KubeClient, **options: Any) -> LeaderElector:
    """An elector named "a" on the test lease, with the short test timings."""
    return LeaderElector(
        client=client,
        lease_name=LEASE,
        namespace="default",
        identity="a",
        lease_duration=LEASE_DURATION,
        renew_deadline=RENEW_DEADLINE,
        retry_period=RETRY_PERIOD,
        **options,
    )


async def lease(server: FakeApiServer) -> KubeObject:
    """The Lease object as stored by the server."""
    return server.objects.get("leases", LEASE, namespace="default")


def is_lease_update(record: object, status: int = 200) -> bool:
    """A successful PUT of the test lease."""
    return (
        getattr(record, "verb", None) == "update"
        and getattr(record, "resource", None) == "leases"
        and getattr(record, "status", None) == status
    )


async def test_first_candidate_creates_the_lease(fake_apiserver: FakeApiServer) -> None:
    """A lone candidate creates the Lease with its identity, durations and micro times."""
    async with kube_client(fake_apiserver) as client:
        a = candidate(client, "a")
        async with a.elector:
            term = await asyncio.wait_for(a.elector.wait_leading(), GUARD)
            assert term is not None and term.number == 1
            assert a.elector.is_leader and a.started.is_set()
            obj = await lease(fake_apiserver)
    spec = obj["spec"]
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == 0
    for name in ("acquireTime", "renewTime"):
        assert spec[name].endswith("Z") and len(spec[name].split(".")[1]) == 7  # 6 digits + Z
        datetime.fromisoformat(spec[name])
    assert a.leaders == ["a"]


async def test_leader_renews_and_the_follower_waits(fake_apiserver: FakeApiServer) -> None:
    """The leader moves renewTime (acquireTime and transitions kept); the follower never leads
    while renewals go on, and reports the leader."""
    async with kube_client(fake_apiserver) as client_a, kube_client(fake_apiserver) as client_b:
        a, b = candidate(client_a, "a"), candidate(client_b, "b")
        async with a.elector:
            await asyncio.wait_for(a.started.wait(), GUARD)
            first = LeaseRecord.from_lease(await lease(fake_apiserver))
            async with b.elector:
                # Renewals spanning more than a lease duration: the follower must not take over.
                start = len(fake_apiserver.requests.records)
                for _ in range(round((LEASE_DURATION + RETRY_PERIOD) / RETRY_PERIOD)):
                    with anyio.fail_after(10):
                        await fake_apiserver.requests.wait_for(is_lease_update, start=start)
                    start = len(fake_apiserver.requests.records)
                assert not b.elector.is_leader and not b.started.is_set()
                assert b.elector.leader == "a" and b.leaders == ["a"]
                later = LeaseRecord.from_lease(await lease(fake_apiserver))
    assert later.holder_identity == "a"
    assert later.acquire_time == first.acquire_time
    assert later.lease_transitions == 0
    assert first.renew_time is not None and later.renew_time is not None
    assert later.renew_time > first.renew_time


async def test_graceful_stop_releases_and_the_follower_takes_over_at_once(
    fake_apiserver: FakeApiServer,
) -> None:
    """Closing the leader clears holderIdentity; the follower takes over, incrementing
    leaseTransitions (the timing: tests/test_leaderelection_timing.py)."""
    async with kube_client(fake_apiserver) as client_a, kube_client(fake_apiserver) as client_b:
        a, b = candidate(client_a, "a"), candidate(client_b, "b")
        async with asyncio.TaskGroup() as group:
            group.create_task(a.elector.run())
            await asyncio.wait_for(a.started.wait(), GUARD)
            async with b.elector:
                await wait_until(b.new_leader, lambda: b.leaders == ["a"])
                assert not b.elector.is_leader
                await a.elector.aclose()
                await asyncio.wait_for(a.elector.wait_stopped(), GUARD)
                assert a.stopped.is_set() and not a.elector.is_leader
                await asyncio.wait_for(b.started.wait(), GUARD)
                spec = (await lease(fake_apiserver))["spec"]
                assert spec["holderIdentity"] == "b"
                assert spec["leaseTransitions"] == 1
        spec = (await lease(fake_apiserver))["spec"]
    assert spec["holderIdentity"] == ""  # b released it in turn
    assert spec["leaseTransitions"] == 1
    assert b.leaders == ["a", "b"]


async def test_racing_candidates_elect_exactly_one(fake_apiserver: FakeApiServer) -> None:
    """Three candidates starting together: one creates the lease, the others get 409 and
    follow."""
    async with (
        kube_client(fake_apiserver) as c1,
        kube_client(fake_apiserver) as c2,
        kube_client(fake_apiserver) as c3,
    ):
        candidates = [candidate(c, name) for c, name in ((c1, "a"), (c2, "b"), (c3, "c"))]
        async with candidates[0].elector, candidates[1].elector, candidates[2].elector:
            await asyncio.wait_for(
                fake_apiserver.requests.wait_for(
                    lambda r: r.verb == "create" and r.resource == "leases" and r.status == 201,
                    start=0,
                ),
                GUARD,
            )
            leader = (await lease(fake_apiserver))["spec"]["holderIdentity"]
            winner = next(c for c in candidates if c.elector.identity == leader)
            await asyncio.wait_for(winner.started.wait(), GUARD)
            # Every candidate has looked at the lease at least once since.
            start = len(fake_apiserver.requests.records)
            for other in candidates:
                if other is not winner:
                    await wait_for_poll(fake_apiserver, start)
            assert [c.elector.is_leader for c in candidates].count(True) == 1
    creates = [r.status for r in fake_apiserver.requests.records if r.verb == "create"]
    assert creates.count(201) == 1


async def wait_for_poll(server: FakeApiServer, start: int) -> None:
    """Wait for a GET of the lease after request index ``start`` (a leader renews without
    reading, so while one leads this is a follower's poll)."""
    with anyio.fail_after(10):
        await server.requests.wait_for(
            lambda r: r.verb == "get" and r.resource == "leases", start=start
        )


async def test_leader_that_cannot_renew_steps_down_then_leads_again(
    fake_apiserver: FakeApiServer,
) -> None:
    """Renewals failing end the term and cancel the on_started_leading task; once the server
    is back it leads again (the renew-deadline timing: tests/test_leaderelection_timing.py)."""
    cancelled = asyncio.Event()
    lost = asyncio.Event()

    def stopped_leading() -> None:
        lost.set()

    async def lead() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async with kube_client(fake_apiserver) as client:
        elector = make_elector(
            client,
            on_started_leading=lead,
            on_stopped_leading=stopped_leading,
        )
        async with elector:
            first = await asyncio.wait_for(elector.wait_leading(), GUARD)
            assert first is not None
            await fake_apiserver.faults.stop_listening()
            await asyncio.wait_for(lost.wait(), GUARD)
            assert first.ended and cancelled.is_set() and not elector.is_leader
            await fake_apiserver.faults.start_listening()
            second = await asyncio.wait_for(elector.wait_leading(), GUARD)
            assert second is not None and second.number == 2
        spec = (await lease(fake_apiserver))["spec"]
    assert spec["leaseTransitions"] == 0  # the same holder took its own lease back


async def test_wait_leading_returns_none_once_stopped(
    fake_apiserver: FakeApiServer,
) -> None:
    """A follower waiting for leadership is told None when its elector stops; it runs once."""
    async with kube_client(fake_apiserver) as client_a, kube_client(fake_apiserver) as client_b:
        a, b = candidate(client_a, "a"), candidate(client_b, "b")
        async with a.elector:
            await asyncio.wait_for(a.started.wait(), GUARD)
            async with asyncio.TaskGroup() as group:
                waiting = group.create_task(b.elector.wait_leading())
                async with b.elector:
                    await asyncio.wait_for(wait_for_poll(fake_apiserver, 0), GUARD)
                assert await asyncio.wait_for(waiting, GUARD) is None
            assert not b.stopped.is_set()  # never led, so on_stopped_leading was not called
        with pytest.raises(LifecycleError):
            await b.elector.run()


def test_invalid_timings_are_rejected() -> None:
    """renew_deadline must lie between retry_period and lease_duration; names are required."""
    base = {"client": object(), "lease_name": "l", "namespace": "ns", "identity": "me"}
    with pytest.raises(ValueError):
        LeaderElector(**base, lease_duration=5, renew_deadline=5, retry_period=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LeaderElector(**base, lease_duration=5, renew_deadline=1, retry_period=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LeaderElector(**base, retry_period=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LeaderElector(**{**base, "identity": ""})  # type: ignore[arg-type]


# -- controllers under leader election ---------------------------------------------------------


@dataclass
class Replica:
    """One 'process': its own client, informer factory, elector and controller."""

    name: str
    elector: LeaderElector
    controller: Controller[str]
    registration: Registration
    reconciled: list[str] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def keys(self) -> set[str]:
        """The keys this replica reconciled."""
        return set(self.reconciled)


@asynccontextmanager
async def replica(
    server: FakeApiServer, name: str, *, release_on_cancel: bool = True
) -> AsyncIterator[Replica]:
    """A replica whose controller the caller runs (``await replica.controller.run()``)."""
    async with kube_client(server) as client:
        elector = LeaderElector(
            client=client,
            lease_name=LEASE,
            namespace="default",
            identity=name,
            lease_duration=LEASE_DURATION,
            renew_deadline=RENEW_DEADLINE,
            retry_period=RETRY_PERIOD,
            release_on_cancel=release_on_cancel,
        )

        async def reconcile(key: str) -> None:
            rep.reconciled.append(key)
            rep.changed.set()

        controller: Controller[str] = Controller(
            name=name, reconcile=reconcile, leader_elector=elector
        )
        async with SharedInformerFactory(client) as factory:
            registration = controller.watch(factory.for_resource("v1/configmaps"))
            rep = Replica(name, elector, controller, registration)
            factory.start()
            yield rep


async def test_only_the_leader_reconciles_and_graceful_handover(
    fake_apiserver: FakeApiServer,
) -> None:
    """Two controllers on one lease: only the leader reconciles; when it stops (releasing the
    lease) the other takes over and reconciles everything."""
    for i in range(3):
        fake_apiserver.objects.create("configmaps", configmap(f"cm{i}"))
    keys = {f"default/cm{i}" for i in range(3)}
    async with (
        replica(fake_apiserver, "a") as a,
        replica(fake_apiserver, "b") as b,
        asyncio.TaskGroup() as group,
    ):
        run_a = group.create_task(a.controller.run())
        await wait_until(a.changed, lambda: a.keys() == keys)
        group.create_task(b.controller.run())
        await asyncio.wait_for(
            wait_for_poll(fake_apiserver, len(fake_apiserver.requests.records)), GUARD
        )
        await asyncio.wait_for(b.registration.wait_for_cache_sync(), GUARD)
        fake_apiserver.objects.create("configmaps", configmap("late"))
        keys.add("default/late")
        await wait_until(a.changed, lambda: a.keys() == keys)
        await asyncio.wait_for(
            wait_for_poll(fake_apiserver, len(fake_apiserver.requests.records)), GUARD
        )
        # The follower's informer queued the keys, but it reconciled nothing.
        assert b.reconciled == [] and len(b.controller.queue) >= 3
        assert a.controller.leading and not b.controller.leading
        assert b.elector.leader == "a"

        await a.controller.aclose()
        await asyncio.wait_for(run_a, GUARD)
        count_a = len(a.reconciled)
        await wait_until(b.changed, lambda: b.keys() == keys)
        assert len(a.reconciled) == count_a  # a never reconciled again
        spec = (await lease(fake_apiserver))["spec"]
        assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
        await b.controller.aclose()
    assert (await lease(fake_apiserver))["spec"]["holderIdentity"] == ""


async def test_killed_leader_controller_is_replaced_after_expiry(
    fake_apiserver: FakeApiServer,
) -> None:
    """A leader controller cancelled without releasing: the other takes over once the lease
    expired, and reconciles everything (the expiry timing:
    tests/test_leaderelection_timing.py)."""
    fake_apiserver.objects.create("configmaps", configmap("cm"))
    async with (
        replica(fake_apiserver, "a", release_on_cancel=False) as a,
        replica(fake_apiserver, "b") as b,
        asyncio.TaskGroup() as group,
    ):
        run_a = group.create_task(a.controller.run())
        await wait_until(a.changed, lambda: a.keys() == {"default/cm"})
        group.create_task(b.controller.run())
        await asyncio.wait_for(
            wait_for_poll(fake_apiserver, len(fake_apiserver.requests.records)), GUARD
        )
        run_a.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run_a
        assert (await lease(fake_apiserver))["spec"]["holderIdentity"] == "a"
        await wait_until(b.changed, lambda: b.keys() == {"default/cm"})
        spec = (await lease(fake_apiserver))["spec"]
        assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
        await b.controller.aclose()


async def test_lost_leadership_cancels_reconciles_until_reelected(
    fake_apiserver: FakeApiServer,
) -> None:
    """When the lease cannot be renewed the workers stop at once (the in-flight reconcile is
    cancelled and its key kept); once leading again the key is reconciled to completion."""
    fake_apiserver.objects.create("configmaps", configmap("slow"))
    attempts: list[str] = []
    first_started = asyncio.Event()
    cancelled = asyncio.Event()
    completed = asyncio.Event()

    async def reconcile(key: str) -> None:
        attempts.append(key)
        if len(attempts) == 1:
            first_started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
        completed.set()

    async with kube_client(fake_apiserver) as client:
        elector = LeaderElector(
            client=client,
            lease_name=LEASE,
            namespace="default",
            identity="solo",
            lease_duration=LEASE_DURATION,
            renew_deadline=RENEW_DEADLINE,
            retry_period=RETRY_PERIOD,
        )
        controller: Controller[str] = Controller(
            name="solo", reconcile=reconcile, leader_elector=elector
        )
        async with SharedInformerFactory(client) as factory:
            controller.watch(factory.for_resource("v1/configmaps"))
            factory.start()
            async with controller:
                await asyncio.wait_for(first_started.wait(), GUARD)
                term = elector.term
                assert term is not None
                await fake_apiserver.faults.stop_listening()
                await asyncio.wait_for(term.wait_ended(), GUARD)
                await asyncio.wait_for(cancelled.wait(), GUARD)
                assert not controller.leading
                assert controller.statistics().in_flight == 0
                assert attempts == ["default/slow"]
                await fake_apiserver.faults.start_listening()
                await asyncio.wait_for(completed.wait(), GUARD)
                assert attempts == ["default/slow", "default/slow"]
                assert elector.term is not None and elector.term.number == 2


async def test_stop_is_bounded_even_with_a_callback_that_never_returns(
    fake_apiserver: FakeApiServer,
) -> None:
    """An on_new_leader coroutine that never ends is cancelled when the elector stops."""
    hung = asyncio.Event()

    async def on_new_leader(identity: str) -> None:
        hung.set()
        await asyncio.Event().wait()

    async with kube_client(fake_apiserver) as client:
        elector = make_elector(
            client,
            on_new_leader=on_new_leader,
        )
        async with asyncio.timeout(GUARD):
            async with elector:
                await hung.wait()
    assert elector.leader is None or not elector.is_leader


async def test_unauthorized_lease_requests_reload_credentials(
    fake_apiserver: FakeApiServer,
) -> None:
    """A 401 on the lease reloads the client's credentials, and the campaign goes on."""
    refreshed = asyncio.Event()

    async def refresher() -> None:
        refreshed.set()

    fake_apiserver.faults.fail_next(1, 401, resource="leases")
    async with kube_client(fake_apiserver, credential_refresher=refresher) as client:
        elector = make_elector(client)
        async with asyncio.timeout(GUARD), elector:
            await refreshed.wait()
            term = await elector.wait_leading()
            assert term is not None
