"""The membership's view is folded from the lease watch in watch order (issue 21.3).

Before, the view was fed by an informer: its DeltaFIFO hands a key's queued events over
together, so under load the events of two leases arrive grouped by lease (``a@11, a@13, b@12``)
instead of in watch order (``a@11, b@12, a@13``). The view took the event that went back for a
replay and relisted, and a relist starts a new horizon: nothing is claimed or started for a
lease duration, which is where hand-overs of 2-4 lease durations came from. Now a reflector
writes every list and event straight into the view, in order; a relist happens only after a
real list.
"""

from __future__ import annotations

from typing import Any

from aioinformer._config import WatchConfig
from aioinformer._replicas._handover import ShardTiming
from aioinformer._replicas._lease_view import GROUP_LABEL, SERVING_ANNOTATION
from aioinformer._replicas._member import Member, _ViewStore
from aioinformer._replicas._membership import ring_share
from aioinformer._sharding._ranges import EMPTY, HashRanges
from aioinformer.testing import FakeApiServer, FakeClock
from tests.support import kube_client

LOW = HashRanges([(0, 1 << 63)])


def lease(name: str, rv: int, serving: HashRanges = EMPTY) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "resourceVersion": str(rv),
            "labels": {GROUP_LABEL: "g"},
            "annotations": {SERVING_ANNOTATION: serving.encode()},
        },
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 15},
    }


async def test_events_are_applied_in_watch_order_without_a_relist(
    fake_apiserver: FakeApiServer,
) -> None:
    clock = FakeClock(100.0)
    async with kube_client(fake_apiserver) as client:
        member = Member(
            client, group="g", identity="me", namespace="default", on_action=lambda a: None,
            timing=ShardTiming(), assign=ring_share, watch=WatchConfig(), clock=clock,
        )  # fmt: skip
        store = _ViewStore(member)
        await store.replace([lease("a", 5, LOW), lease("b", 6)], "10")
        assert (member.view.rv, member.view.listed_at) == (10, 100.0)
        clock.jump(1.0)
        for obj in (lease("a", 11, LOW), lease("b", 12), lease("a", 13)):  # the watch's order
            await store.update(obj)
        assert member.view.rv == 13 and member.view.listed_at == 100.0  # no relist
        assert member.view.leases["a"].record.serving == EMPTY
        assert member.view.leases["a"].first_seen == 101.0
        await store.delete(lease("b", 14))
        assert "b" not in member.view.leases and member.view.rv == 14

        clock.jump(1.0)
        await store.update(lease("a", 12, LOW))  # goes back: start again from what is known
        assert member.view.listed_at == 102.0 and member.view.rv == 14
        assert member.view.leases["a"].record.rv == 12
