"""Membership that says why (issue 21.2): bad names refused at construction, failed Lease
requests said at WARNING with the API server's answer and what RBAC the replica needs, counted
by cause, and one ERROR when a replica has not joined after ``JOIN_PERIODS`` lease durations.

Before: an identity like ``R1`` or a replica without RBAC on Leases failed every Lease write
(422 / 403), logged only at DEBUG as ``lease write create: Outcome.FAILED``: three replicas,
no reconcile, nothing said.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from aioinformer._control._workers import Result
from aioinformer._election._elector import LeaderElector
from aioinformer._replicas._controller import ShardedController
from aioinformer._replicas._handover import ShardTiming
from aioinformer._replicas._member import JOIN_PERIODS, describe_failure, failure_cause
from aioinformer.errors import (
    ConnectionRefused,
    ForbiddenError,
    InvalidError,
    InvalidNameError,
    TransportTimeoutError,
)
from aioinformer.metrics import ShardedControllerCollector
from aioinformer.testing import FakeApiServer, FakeClock
from tests.support import CONFIGMAPS, FAST_WATCH, MemoryLease, kube_client

TIMING = ShardTiming(lease_duration=0.5, renew_deadline=0.3, retry_period=0.1)
GUARD = 30.0


async def _nothing(key: str) -> Result | None:
    return None


def controller(client: Any, **options: Any) -> ShardedController:
    settings: dict[str, Any] = {
        "name": "loud",
        "reconcile": _nothing,
        "client": client,
        "resource": CONFIGMAPS,
        "group": "loud",
        "identity": "replica-1",
        "timing": TIMING,
        "watch": FAST_WATCH,
    }
    settings.update(options)
    return ShardedController(**settings)


# ---- names ------------------------------------------------------------------------------------

BAD_NAMES = [
    ({"identity": "R1"}, "replica identity", "'R1'", "uppercase"),
    ({"identity": "replica_1"}, "replica identity", "DNS-1123 subdomain", "'_'"),
    ({"identity": "-r1"}, "replica identity", "'-r1'", "start and end"),
    ({"identity": ""}, "replica identity", "DNS-1123 subdomain", "empty"),
    ({"identity": "r" * 254}, "replica identity", "253", "254 characters"),
    ({"group": "my group"}, "replica group", "label value", "' '"),
    ({"group": ""}, "replica group", "label value", "empty"),
    ({"group": "g" * 64}, "replica group", "63", "64 characters"),
    ({"lease_namespace": "Default"}, "lease namespace", "DNS-1123 label", "uppercase"),
    ({"lease_namespace": "a.b"}, "lease namespace", "DNS-1123 label", "'.'"),
]


@pytest.mark.parametrize(("options", "what", "rule", "problem"), BAD_NAMES)
def test_a_name_the_api_server_would_refuse_is_refused_at_construction(
    options: dict[str, Any], what: str, rule: str, problem: str
) -> None:
    with pytest.raises(InvalidNameError) as caught:
        controller(object(), **options)
    message = str(caught.value)
    assert what in message and rule in message and problem in message
    assert isinstance(caught.value, ValueError)
    assert caught.value.value == next(iter(options.values()))


@pytest.mark.parametrize(
    "options",
    [{"identity": "web-0.shards"}, {"identity": "9"}, {"group": "My_Group-1.x"}, {}],
)
async def test_good_names_pass(fake_apiserver: FakeApiServer, options: dict[str, Any]) -> None:
    async with kube_client(fake_apiserver) as client:
        controller(client, **options)


@pytest.mark.parametrize(
    ("options", "problem"),
    [({"lease_name": "Demo_Lock"}, "lease name"), ({"namespace": "Kube"}, "lease namespace")],
)
def test_a_leader_elector_checks_its_lease_names(options: dict[str, Any], problem: str) -> None:
    lease = MemoryLease(FakeClock())
    settings: dict[str, Any] = {"lease_name": "lock", "namespace": "ns", "identity": "Me_1"}
    settings.update(options)
    with pytest.raises(InvalidNameError, match=problem):
        LeaderElector(lease_client=lease, **settings)
    LeaderElector(lease_client=lease, lease_name="lock", namespace="ns", identity="Me_1")


# ---- what a failure says -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "verb", "cause", "says"),
    [
        (ForbiddenError(code=403, reason="Forbidden", message='leases is forbidden: User "x"'),
         "create", "403", "403 Forbidden: leases is forbidden: User \"x\"; replica r1 needs create"
         " on leases.coordination.k8s.io in namespace ns (a sharded replica needs get, list,"
         " watch, create, update and delete there)"),
        (InvalidError(code=422, reason="Invalid", message="metadata.name: Invalid value"),
         "update", "422", "422 Invalid: metadata.name: Invalid value"),
        (ConnectionRefused("connection refused"), "update", "transport",
         "ConnectionRefused: connection refused"),
        (TransportTimeoutError("no answer within 10 s"), "update", "timeout",
         "TransportTimeoutError: no answer within 10 s"),
    ],
)  # fmt: skip
def test_a_failure_says_what_the_server_said_and_what_is_needed(
    error: BaseException, verb: str, cause: str, says: str
) -> None:
    text = describe_failure("r1: lease write", error, verb=verb, namespace="ns", identity="r1")
    assert text == f"r1: lease write: {says}"
    assert failure_cause(error) == cause


# ---- against the fake API server --------------------------------------------------------------


class Records(logging.Handler):
    """The records of one logger, with a wake-up for each."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.changed = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.changed.set()

    def at(self, level: int) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno == level]

    async def until(self, predicate: Callable[[], bool]) -> None:
        with anyio.fail_after(GUARD):
            while not predicate():
                self.changed.clear()
                await self.changed.wait()


@asynccontextmanager
async def recorded() -> AsyncIterator[Records]:
    handler = Records()
    loggers = [logging.getLogger("aioinformer._replicas._member")]
    for log in loggers:
        log.addHandler(handler)
        previous = log.level
        log.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        for log in loggers:
            log.removeHandler(handler)
            log.setLevel(previous)


def samples(c: ShardedController) -> dict[tuple[str, str], float]:
    return {
        (sample.name, sample.labels.get("cause", "")): sample.value
        for family in ShardedControllerCollector(c).collect()
        for sample in family.samples
    }


async def test_no_rbac_for_lease_writes_is_said_counted_and_an_error_once(
    fake_apiserver: FakeApiServer,
) -> None:
    """Every create of the replica's Lease is refused 403: the first refusal is one WARNING
    with the Status and the RBAC it needs, the repeats are DEBUG; the failures are counted by
    cause in statistics() and the metrics; after JOIN_PERIODS lease durations one ERROR."""
    fake_apiserver.faults.fail_next(10_000, 403, verb="create", resource="leases")
    async with recorded() as log, kube_client(fake_apiserver) as client:
        c = controller(client)
        async with anyio.create_task_group() as tg:
            await tg.start(c.run)
            await log.until(lambda: bool(log.at(logging.ERROR)))
            failures = c.statistics().failed_lease_writes
            await log.until(lambda: c.statistics().failed_lease_writes >= failures + 3)
            tg.cancel_scope.cancel()
    warnings = [m for m in log.at(logging.WARNING) if "lease write" in m]
    assert len(warnings) == 1
    assert "403 Forbidden" in warnings[0]
    assert "needs create on leases.coordination.k8s.io in namespace default" in warnings[0]
    [error] = log.at(logging.ERROR)
    assert f"not a member of group loud after {JOIN_PERIODS * TIMING.lease_duration:g} s" in error
    assert "could not create or take its lease" in error and "403 Forbidden" in error
    stats = c.statistics()
    assert stats.lease_write_failures == {"403": stats.failed_lease_writes}
    assert stats.last_lease_error is not None and "403" in stats.last_lease_error
    assert not stats.joined
    assert samples(c)[("aioinformer_shard_lease_write_failures_total", "403")] >= 4
    assert samples(c)[("aioinformer_shard_joined", "")] == 0.0


async def test_no_rbac_to_list_leases_is_said_and_an_error_once(
    fake_apiserver: FakeApiServer,
) -> None:
    """The group's Leases cannot be listed (403): the replica says what it needs, and after
    JOIN_PERIODS lease durations that its view never synced."""
    fake_apiserver.faults.fail_next(10_000, 403, verb="list", resource="leases")
    async with recorded() as log, kube_client(fake_apiserver) as client:
        c = controller(client)
        async with anyio.create_task_group() as tg:
            await tg.start(c.run)
            await log.until(lambda: bool(log.at(logging.ERROR)))
            tg.cancel_scope.cancel()
    warnings = [m for m in log.at(logging.WARNING) if "list/watch" in m]
    assert len(warnings) == 1
    assert "needs list and watch on leases.coordination.k8s.io in namespace default" in warnings[0]
    [error] = log.at(logging.ERROR)
    assert "never synced" in error and "403" in error


async def test_a_replica_that_joins_says_so_and_no_error(fake_apiserver: FakeApiServer) -> None:
    """The lease writes fail twice (503), then succeed: one WARNING, one INFO when they work
    again, joined, no ERROR."""
    fake_apiserver.faults.fail_next(2, 503, verb="create", resource="leases")
    async with recorded() as log, kube_client(fake_apiserver) as client:
        c = controller(client)
        async with anyio.create_task_group() as tg:
            await tg.start(c.run)
            await log.until(lambda: c.statistics().joined)
            tg.cancel_scope.cancel()
    assert len([m for m in log.at(logging.WARNING) if "503" in m]) == 1
    infos = log.at(logging.INFO)
    assert any("succeed again (after 2 failed)" in m for m in infos)
    assert any("joined group loud" in m for m in infos)
    assert not log.at(logging.ERROR)
    stats = c.statistics()
    assert stats.lease_write_failures == {"503": 2} and stats.last_lease_error is None
