"""A small controller: one ConfigMap per namespace listing the nodes its pods run on.

Runs on its own against the built-in fake API server (no cluster needed)::

    python examples/controller.py [--verbose]

What it shows:

* a :class:`~aioinformer.SharedInformerFactory` with a Pod informer (plus a
  ``by_node`` index) and a ConfigMap informer;
* a :class:`~aioinformer.Controller` whose keys are namespaces: Pod events map to
  their namespace (``map_func``), and events of the ConfigMaps it manages map back to theirs
  (``filter`` + ``map_func``), so a ConfigMap edited or deleted by hand is repaired;
* a level-triggered ``reconcile(namespace)`` that reads only the informers' caches and writes
  through the :class:`~aioinformer.KubeClient` (a stale cache shows up as a 409 Conflict, and
  the key is simply retried);
* leader election on a Lease, so several replicas could run and only one would act.

The demo creates namespaces, nodes and pods, waits until every ConfigMap is right, then moves
and deletes pods (and deletes a ConfigMap behind the controller's back), waits again, and
prints a summary. Against a real cluster, take the client of
``async with aioinformer.connect() as client:`` (kubeconfig or in-cluster) and run
:func:`running_controller`. ``examples/widget_controller.py`` shows the other writes:
server-side apply, patches and status.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio

import aioinformer
from aioinformer import (
    NAMESPACE_INDEX,
    Controller,
    KubeClient,
    KubeObject,
    LeaderElector,
    SharedIndexInformer,
    SharedInformerFactory,
)
from aioinformer.errors import NotFoundError
from aioinformer.testing import FakeApiServer

#: The ConfigMap the controller keeps in every namespace that has pods.
CONFIGMAP = "pod-nodes"
#: Marks the ConfigMaps this controller owns.
MANAGED_BY = {"app.kubernetes.io/managed-by": "pod-nodes-controller"}
#: The index of pods by the node they run on.
BY_NODE = "by_node"
LEASE = "pod-nodes-controller"

logger = logging.getLogger("pod-nodes")


# -- the desired state ---------------------------------------------------------------------------


def node_of(pod: Mapping[str, Any]) -> str:
    """The node a pod is scheduled on (``""`` while pending)."""
    spec = pod.get("spec") or {}
    return str(spec.get("nodeName") or "")


def pods_by_node(pod: KubeObject) -> list[str]:
    """Index function: a scheduled pod is indexed under its node."""
    node = node_of(pod)
    return [node] if node else []


def desired_data(pods: Iterable[Mapping[str, Any]]) -> dict[str, str] | None:
    """The ConfigMap data for a namespace's pods; None when it has none (no ConfigMap)."""
    pods = list(pods)
    if not pods:
        return None
    nodes = sorted({node for node in map(node_of, pods) if node})
    return {"nodes": ",".join(nodes), "pods": str(len(pods))}


def namespace_of(obj: Mapping[str, Any]) -> str:
    """``metadata.namespace`` ("" for cluster-scoped objects)."""
    return str(obj["metadata"].get("namespace") or "")


def expected_configmaps(pods: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """Namespace → the data its ConfigMap must hold, for a list of pods."""
    by_namespace: dict[str, list[Mapping[str, Any]]] = {}
    for pod in pods:
        by_namespace.setdefault(namespace_of(pod), []).append(pod)
    result = {}
    for namespace, members in by_namespace.items():
        data = desired_data(members)
        if data is not None:
            result[namespace] = data
    return result


# -- the reconciler --------------------------------------------------------------------------


class PodNodesReconciler:
    """Makes the ConfigMap of one namespace match the pods the cache holds.

    :param client: writes go through it.
    :param pods: the Pod informer (reads go to its cache).
    :param configmaps: the ConfigMap informer (reads go to its cache).
    :param on_reconciled: called after each successful reconcile (the demo waits on it).
    """

    def __init__(
        self,
        client: KubeClient,
        *,
        pods: SharedIndexInformer,
        configmaps: SharedIndexInformer,
        on_reconciled: Callable[[str], None] | None = None,
    ) -> None:
        self._client = client
        self._pods = pods
        self._configmaps = configmaps
        self._on_reconciled = on_reconciled

    async def reconcile(self, namespace: str) -> None:
        """Create, update or delete ``namespace``'s ConfigMap; raising means retry later."""
        desired = desired_data(self._pods.cache.by_index(NAMESPACE_INDEX, namespace))
        current = self._configmaps.lister().get(CONFIGMAP, namespace=namespace)
        if desired is None:
            if current is not None:
                try:
                    await self._client.delete("configmaps", CONFIGMAP, namespace=namespace)
                except NotFoundError:
                    pass  # gone already
                logger.info("%s: deleted ConfigMap %s", namespace, CONFIGMAP)
        elif current is None:
            body = {"metadata": {"name": CONFIGMAP, "labels": MANAGED_BY}, "data": desired}
            await self._client.create("configmaps", body, namespace=namespace)
            logger.info("%s: created ConfigMap %s", namespace, CONFIGMAP)
        elif current.get("data") != desired:
            # Keep the cached resourceVersion: if the cache is stale the update fails with
            # 409 Conflict and the key is retried once the informer has caught up.
            await self._client.replace("configmaps", {**current, "data": desired})
            logger.info("%s: updated ConfigMap %s", namespace, CONFIGMAP)
        if self._on_reconciled is not None:
            self._on_reconciled(namespace)


@dataclass
class PodNodes:
    """The running parts, for callers of :func:`running_controller`."""

    factory: SharedInformerFactory
    pods: SharedIndexInformer
    configmaps: SharedIndexInformer
    controller: Controller[str]
    elector: LeaderElector | None


def is_managed_configmap(configmap: KubeObject) -> bool:
    """The ConfigMaps this controller writes."""
    return bool(configmap["metadata"].get("name") == CONFIGMAP)


@asynccontextmanager
async def running_controller(
    client: KubeClient,
    *,
    identity: str | None = None,
    leader_election: bool = True,
    on_reconciled: Callable[[str], None] | None = None,
) -> AsyncIterator[PodNodes]:
    """Run the informers and the controller for the duration of the block.

    :param identity: this replica's identity for leader election (default: host name + pid).
    :param leader_election: reconcile only while holding the Lease ``pod-nodes-controller``
        in ``default``. Default True.
    :param on_reconciled: see :class:`PodNodesReconciler`.
    """
    factory = SharedInformerFactory(client)
    pods = factory.for_resource("v1/pods", indexers={BY_NODE: pods_by_node})
    configmaps = factory.for_resource("v1/configmaps")
    reconciler = PodNodesReconciler(
        client, pods=pods, configmaps=configmaps, on_reconciled=on_reconciled
    )
    elector = None
    if leader_election:
        elector = LeaderElector(
            client=client,
            lease_name=LEASE,
            namespace="default",
            identity=identity or f"{socket.gethostname()}-{os.getpid()}",
        )
    controller: Controller[str] = Controller(
        name="pod-nodes", reconcile=reconciler.reconcile, workers=2, leader_elector=elector
    )
    controller.watch(pods, map_func=lambda pod: [namespace_of(pod)])
    controller.watch(
        configmaps,
        filter=is_managed_configmap,
        map_func=lambda configmap: [namespace_of(configmap)],
    )
    # Entering the factory starts its informers; the controller's workers start once the
    # caches synced. Leaving stops the controller first (gracefully), then the informers.
    async with factory, controller:
        yield PodNodes(factory, pods, configmaps, controller, elector)


# -- the demo --------------------------------------------------------------------------------


async def actual_configmaps(server: FakeApiServer) -> dict[str, dict[str, str]]:
    """Namespace → data of every ``pod-nodes`` ConfigMap on the server."""
    found = server.objects.list("configmaps", field_selector=f"metadata.name={CONFIGMAP}")
    return {namespace_of(cm): dict(cm.get("data") or {}) for cm in found}


async def converged(server: FakeApiServer) -> bool:
    """Whether the ConfigMaps on the server match the pods on the server."""
    expected = expected_configmaps(server.objects.list("pods"))
    return await actual_configmaps(server) == expected


def pod(name: str, namespace: str, node: str = "") -> KubeObject:
    """A pod body, scheduled on ``node`` (pending when empty)."""
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec}


class Reconciled:
    """``on_reconciled`` for the demo: wakes the waiter of :meth:`next` after a reconcile."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def __call__(self, namespace: str) -> None:
        self._event.set()

    def next(self) -> anyio.Event:
        """An event the next reconcile sets."""
        self._event = anyio.Event()
        return self._event


async def wait_converged(server: FakeApiServer, reconciled: Reconciled, within: float) -> None:
    """Wait until the ConfigMaps are right, re-checking after every reconcile."""
    with anyio.fail_after(within):
        while True:
            changed = reconciled.next()  # before checking, so a reconcile during it counts
            if await converged(server):
                return
            await changed.wait()


def describe(configmaps: Mapping[str, Mapping[str, str]]) -> list[str]:
    """One line per namespace."""
    return [
        f"  {namespace}: nodes={data['nodes'] or '-'} pods={data['pods']}"
        for namespace, data in sorted(configmaps.items())
    ]


async def demo(*, within: float = 20.0) -> list[str]:
    """Run the whole demo on a fresh fake API server; returns the summary lines."""
    lines: list[str] = []
    reconciled = Reconciled()
    async with FakeApiServer(bookmark_interval=1.0) as server:
        for namespace in ("team-a", "team-b", "team-c"):
            server.objects.create("namespaces", {"metadata": {"name": namespace}})
        for node in ("node-1", "node-2", "node-3"):
            server.objects.create("nodes", {"metadata": {"name": node}})
        for body in (
            pod("web-1", "team-a", "node-1"),
            pod("web-2", "team-a", "node-2"),
            pod("db-0", "team-b", "node-3"),
            pod("job-1", "team-c", "node-1"),
            pod("job-2", "team-c"),  # pending: counted, on no node
        ):
            server.objects.create("pods", body)

        async with (
            aioinformer.connect(server=server.url) as client,
            running_controller(
                client, identity="demo-replica", on_reconciled=reconciled
            ) as running,
        ):
            await wait_converged(server, reconciled, within)
            lines.append(f"leader: {running.elector.leader if running.elector else '-'}")
            lines.append("initial:")
            lines.extend(describe(await actual_configmaps(server)))

            # Pods cannot change nodes: "moving" one means deleting and recreating it. A
            # scheduled pod waits out its grace period for its kubelet; 0 removes it at once.
            server.objects.delete("pods", "web-2", namespace="team-a", grace_period_seconds=0)
            server.objects.create("pods", pod("web-2", "team-a", "node-3"))
            server.objects.delete("pods", "db-0", namespace="team-b", grace_period_seconds=0)
            server.objects.create("pods", pod("api-0", "default", "node-2"))
            server.objects.delete("configmaps", CONFIGMAP, namespace="team-c")  # by hand
            await wait_converged(server, reconciled, within)
            lines.append("after moving web-2, deleting db-0, adding api-0, deleting team-c's:")
            lines.extend(describe(await actual_configmaps(server)))

            per_node = {
                node: len(running.pods.cache.by_index(BY_NODE, node))
                for node in ("node-1", "node-2", "node-3")
            }
            lines.append("pods per node: " + ", ".join(f"{n}={c}" for n, c in per_node.items()))
            stats = running.controller.statistics()
            lines.append(f"reconciles: {stats.reconciles} (errors {stats.errors})")
        lease = server.objects.get("leases", LEASE, namespace="default")
        holder = lease["spec"].get("holderIdentity") or "-"
        lines.append(f"lease after stop: holder={holder}")
    lines.append("OK")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the demo and print its summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--verbose", action="store_true", help="log what the controller does")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    for line in anyio.run(demo):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
