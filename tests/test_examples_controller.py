"""The pod-nodes controller example: run as a script, and its reconcile logic in-process."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from aioinformer.testing import FakeApiServer

from ._examples import imported_example, run_example
from .support import kube_client

GUARD = 10.0


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    """The example imported as a module."""
    with imported_example("controller.py") as module:
        yield module


@pytest.mark.slow
def test_controller_example_runs_and_converges() -> None:
    """`python examples/controller.py` exits 0 and prints the ConfigMaps before and after."""
    result = run_example("controller.py")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "leader: demo-replica"
    after = lines.index("after moving web-2, deleting db-0, adding api-0, deleting team-c's:")
    assert lines[1:after] == [
        "initial:",
        "  team-a: nodes=node-1,node-2 pods=2",
        "  team-b: nodes=node-3 pods=1",
        "  team-c: nodes=node-1 pods=2",
    ]
    assert lines[after + 1 : after + 5] == [
        "  default: nodes=node-2 pods=1",
        "  team-a: nodes=node-1,node-3 pods=2",
        "  team-c: nodes=node-1 pods=2",
        "pods per node: node-1=2, node-2=1, node-3=1",
    ]
    assert lines[-2:] == ["lease after stop: holder=-", "OK"]
    assert result.stderr == ""


def test_desired_data_lists_distinct_nodes_and_counts_pending_pods(example: ModuleType) -> None:
    """Nodes are sorted and distinct, pending pods count but name no node; no pods → None."""
    pods = [example.pod("a", "ns", "n2"), example.pod("b", "ns", "n1"), example.pod("c", "ns")]
    pods.append(example.pod("d", "ns", "n2"))
    assert example.desired_data(pods) == {"nodes": "n1,n2", "pods": "4"}
    assert example.desired_data([]) is None


async def test_reconcile_keeps_configmaps_right(
    fake_apiserver: FakeApiServer, example: ModuleType
) -> None:
    """Against the fake server: ConfigMaps follow pod changes, a hand edit is reverted, and a
    namespace without pods loses its ConfigMap."""
    reconciled = example.Reconciled()
    fake_apiserver.objects.create("namespaces", {"metadata": {"name": "shop"}})
    fake_apiserver.objects.create("pods", example.pod("cart", "shop", "node-a"))
    fake_apiserver.objects.create("pods", example.pod("pay", "shop", "node-b"))
    async with (
        kube_client(fake_apiserver) as client,
        example.running_controller(
            client, leader_election=False, on_reconciled=reconciled
        ) as running,
    ):
        await example.wait_converged(fake_apiserver, reconciled, GUARD)
        stored = fake_apiserver.objects.get("configmaps", example.CONFIGMAP, namespace="shop")
        assert stored["data"] == {"nodes": "node-a,node-b", "pods": "2"}
        assert stored["metadata"]["labels"] == example.MANAGED_BY

        fake_apiserver.objects.patch(
            "configmaps", example.CONFIGMAP, {"data": {"nodes": "bogus"}}, namespace="shop"
        )
        await example.wait_converged(fake_apiserver, reconciled, GUARD)
        stored = fake_apiserver.objects.get("configmaps", example.CONFIGMAP, namespace="shop")
        assert stored["data"] == {"nodes": "node-a,node-b", "pods": "2"}

        fake_apiserver.objects.delete("pods", "cart", namespace="shop", grace_period_seconds=0)
        await example.wait_converged(fake_apiserver, reconciled, GUARD)
        assert await example.actual_configmaps(fake_apiserver) == {
            "shop": {"nodes": "node-b", "pods": "1"}
        }

        fake_apiserver.objects.delete("pods", "pay", namespace="shop", grace_period_seconds=0)
        await example.wait_converged(fake_apiserver, reconciled, GUARD)
        assert await example.actual_configmaps(fake_apiserver) == {}
        assert running.controller.statistics().errors == 0
        assert running.elector is None
