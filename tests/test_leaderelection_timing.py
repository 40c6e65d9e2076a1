"""Leader-election timing on virtual time, against an in-memory Lease.

The timing rules are client-go's ``tools/leaderelection`` (see the module docstring of
:mod:`aioinformer._election._elector`): the leader renews every retry period and steps down once
no renewal succeeded for the renew deadline; a follower takes over a released lease at its
next poll, and an abandoned one a lease duration after it last saw it change.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import pytest

from aioinformer._election._elector import LeaderElector
from aioinformer.testing import FakeClock

from .support import MemoryLease

LEASE_DURATION = 15.0
RENEW_DEADLINE = 10.0
RETRY_PERIOD = 2.0


@dataclass
class Candidate:
    """An elector and the virtual times its callbacks ran."""

    elector: LeaderElector
    started: list[float] = field(default_factory=list)
    stopped: list[float] = field(default_factory=list)


def candidate(
    api: MemoryLease, identity: str, *, release_on_cancel: bool = True, rand: float = 0.0
) -> Candidate:
    holder: list[Candidate] = []
    elector = LeaderElector(
        lease_client=api,
        lease_name="lock",
        namespace="ns",
        identity=identity,
        lease_duration=LEASE_DURATION,
        renew_deadline=RENEW_DEADLINE,
        retry_period=RETRY_PERIOD,
        release_on_cancel=release_on_cancel,
        on_started_leading=lambda: holder[0].started.append(api.clock.now()),
        on_stopped_leading=lambda: holder[0].stopped.append(api.clock.now()),
        clock=api.clock,
        rand=lambda: rand,
    )
    holder.append(Candidate(elector))
    return holder[0]


@asynccontextmanager
async def campaigning(*candidates: Candidate) -> AsyncIterator[anyio.abc.TaskGroup]:
    """Run the candidates until the block ends (then stop them)."""
    async with anyio.create_task_group() as tg:
        for c in candidates:
            tg.start_soon(c.elector.run)
        yield tg
        for c in candidates:
            tg.start_soon(c.elector.aclose)


@pytest.fixture
def api() -> MemoryLease:
    return MemoryLease(FakeClock())


def renewals(api: MemoryLease, holder: str) -> list[float]:
    return [at for at, verb, who in api.writes if verb == "replace" and who == holder]


async def test_the_leader_renews_every_retry_period(api: MemoryLease) -> None:
    """A lone candidate creates the lease at once, then renews every retry period."""
    a = candidate(api, "a")
    async with campaigning(a):
        await api.clock.advance(7.0)
        assert a.elector.last_renewal == 6.0
    assert api.writes[0] == (0.0, "create", "a")
    assert renewals(api, "a")[:3] == [2.0, 4.0, 6.0]
    assert a.started == [0.0]


async def test_a_follower_polls_without_taking_over_a_renewed_lease(api: MemoryLease) -> None:
    """While the leader renews, a follower (retry jitter drawn downward within 20 %) polls
    and never leads, however long it waits."""
    a, b = candidate(api, "a"), candidate(api, "b", rand=1.0)
    async with campaigning(a):
        await api.clock.advance(1.0)
        async with campaigning(b):
            await api.clock.advance(3 * LEASE_DURATION)
            assert b.started == [] and b.elector.leader == "a"
    assert api.holder() == ""  # a released it when stopped
    assert b.started == []


async def test_a_released_lease_is_taken_at_the_next_poll(api: MemoryLease) -> None:
    """When the leader stops it releases the lease; the follower takes it over at its next
    poll (within one retry period), counting a transition."""
    a, b = candidate(api, "a"), candidate(api, "b")
    async with campaigning(a) as tg:
        await api.clock.advance(1.0)
        async with campaigning(b):
            await api.clock.advance(3.5)  # b polled at 1 and 3; a renewed at 2 and 4
            tg.start_soon(a.elector.aclose)
            await api.clock.advance(0.0)
            assert a.stopped == [4.5] and api.holder() == ""
            await api.clock.advance(1.0)
            assert b.started == [5.0]
            assert api.lease is not None
            assert api.lease["spec"]["holderIdentity"] == "b"
            assert api.lease["spec"]["leaseTransitions"] == 1


async def test_an_abandoned_lease_is_taken_a_lease_duration_after_it_last_changed(
    api: MemoryLease,
) -> None:
    """A leader that vanished without releasing: the follower takes over once a lease duration
    passed since it saw the last renewal (its own clock, not renewTime)."""
    a, b = candidate(api, "a", release_on_cancel=False), candidate(api, "b")
    a_scope = anyio.CancelScope()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_run_in, a_scope, a)
        await api.clock.advance(1.0)
        async with campaigning(b):
            await api.clock.advance(5.5)  # a renewed at 2, 4 and 6; b polled at 1, 3, 5
            a_scope.cancel()  # a dies at 6.5: no release
            await api.clock.advance(30.0)
            # b saw the 6 s renewal at its poll at 7: it expires at 7 + 15 = 22; b polls at
            # 21, then exactly when it expires.
            assert b.started == [pytest.approx(22.0 + 0.001)]
            assert renewals(api, "a")[-1] == 6.0
    assert a.stopped == [6.5]  # its term ended when it was cancelled


async def _run_in(scope: anyio.CancelScope, c: Candidate) -> None:
    with scope:
        await c.elector.run()


async def test_a_leader_that_cannot_renew_steps_down_at_the_renew_deadline(
    api: MemoryLease,
) -> None:
    """With the API server unreachable, the leader keeps retrying every retry period and
    steps down exactly renew_deadline after its last successful renewal, before the lease
    could expire for anybody else; once the server is back it leads again."""
    a = candidate(api, "a")
    async with campaigning(a):
        await api.clock.advance(4.5)
        assert a.elector.last_renewal == 4.0
        api.down = True
        await api.clock.advance(20.0)
        assert a.stopped == [4.0 + RENEW_DEADLINE]
        assert a.stopped[0] < 4.0 + LEASE_DURATION
        api.down = False
        await api.clock.advance(2.0)
        assert a.started == [0.0, 26.0]
        term = a.elector.term
        assert term is not None and term.number == 2
