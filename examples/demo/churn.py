"""The demo's churn generator: pods created, relabelled, annotated, moved through phases and
deleted.

Writes go straight into the fake API server's storage (its in-process object API), at a
steady rate paced by the event loop's clock, so every change reaches the informer through the
real LIST/WATCH path.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from typing import Any

import anyio

from aioinformer import KubeObject
from aioinformer.testing import FakeApiServer

__all__ = ["DEMO_NAMESPACE", "PHASES", "Churn", "node_names", "pod_body"]

logger = logging.getLogger(__name__)

#: The namespace of the demo's pods and summaries.
DEMO_NAMESPACE = "demo"
#: The phases the generator moves pods through.
PHASES = ("Pending", "Running", "Succeeded", "Failed")
#: The most operations done in one go when the generator falls behind its rate.
_MAX_BURST = 1000


def node_names(objects: int) -> list[str]:
    """The demo's nodes: about one per 40 pods, between 2 and 8."""
    return [f"node-{i}" for i in range(1, max(2, min(8, objects // 40)) + 1)]


def pod_body(name: str, node: str, phase: str = "Pending") -> KubeObject:
    """A pod scheduled on ``node``."""
    return {
        "metadata": {"name": name, "namespace": DEMO_NAMESPACE, "labels": {"app": "demo"}},
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "busybox"}]},
        "status": {"phase": phase},
    }


class Churn:
    """Keeps about ``objects`` pods alive on ``nodes`` and changes them ``rate`` times a second.

    Of the operations, about half update a pod (a label or its status phase), a fifth annotate
    one (a merge patch of ``metadata.annotations``; a pod's ``spec.nodeName`` is immutable once
    set, so pods change nodes only by being deleted and created), and the rest delete a pod or
    create a new one, whichever brings the population back towards ``objects``.

    :param server: where the pods live.
    :param objects: the population to keep.
    :param rate: operations per second (0: none after :meth:`populate`).
    :param nodes: the node names.
    :param rng: the random source.
    """

    def __init__(
        self,
        server: FakeApiServer,
        *,
        objects: int,
        rate: float,
        nodes: list[str],
        rng: random.Random,
    ) -> None:
        self._server = server
        self.objects = objects
        self.rate = rate
        self.nodes = nodes
        self._rng = rng
        self._pods: dict[str, str] = {}  # name -> node
        self._names: list[str] = []  # the same names, for O(1) random choice
        self._slot: dict[str, int] = {}  # name -> index in _names
        self._serial = 0
        #: Operations done, by kind: ``update``, ``annotate``, ``delete``, ``create``.
        self.operations: Counter[str] = Counter()
        #: Operations the server refused (logged; the generator goes on).
        self.failures = 0

    @property
    def total(self) -> int:
        """Operations done since :meth:`populate`."""
        return sum(self.operations.values())

    @property
    def live(self) -> int:
        """Pods that exist now (as far as the generator knows: it is the only pod writer)."""
        return len(self._pods)

    async def populate(self) -> None:
        """Create the namespace, the nodes and the initial pods."""
        server = self._server
        server.objects.create("namespaces", {"metadata": {"name": DEMO_NAMESPACE}})
        for node in self.nodes:
            server.objects.create("nodes", {"metadata": {"name": node}})
        for _ in range(self.objects):
            await self._create(initial=True)

    async def run(self, stop: anyio.Event) -> None:
        """Change pods at ``rate`` operations a second until ``stop`` is set."""
        if self.rate <= 0:
            await stop.wait()
            return
        start = anyio.current_time()
        done = 0
        while not stop.is_set():
            due = int((anyio.current_time() - start) * self.rate) - done
            for _ in range(min(due, _MAX_BURST)):
                await self.step()
                done += 1
            if due > _MAX_BURST:
                done += due - _MAX_BURST  # too far behind: skip rather than burst forever
            # Pacing, not waiting for a condition: sleep until the next operation is due.
            with anyio.move_on_after(start + (done + 1) / self.rate - anyio.current_time()):
                await stop.wait()

    async def step(self) -> None:
        """Do one random operation."""
        roll = self._rng.random()
        try:
            if not self._pods or (roll >= 0.7 and self.live < self.objects):
                await self._create()
            elif roll >= 0.7:
                await self._delete()
            elif roll >= 0.5:
                await self._annotate()
            else:
                await self._update()
        except Exception as exc:
            self.failures += 1
            logger.warning("churn: an operation failed: %s: %s", type(exc).__name__, exc)

    async def _create(self, *, initial: bool = False) -> None:
        self._serial += 1
        name = f"pod-{self._serial:05d}"
        node = self._rng.choice(self.nodes)
        self._server.objects.create("pods", pod_body(name, node), namespace=DEMO_NAMESPACE)
        self._pods[name] = node
        self._slot[name] = len(self._names)
        self._names.append(name)
        if not initial:
            self.operations["create"] += 1

    def _pick(self) -> str:
        return self._rng.choice(self._names)

    async def _delete(self) -> None:
        name = self._pick()
        self._server.objects.delete("pods", name, namespace=DEMO_NAMESPACE)
        del self._pods[name]
        # Swap-remove keeps removal and random choice O(1).
        index = self._slot.pop(name)
        last = self._names.pop()
        if last != name:
            self._names[index] = last
            self._slot[last] = index
        self.operations["delete"] += 1

    async def _annotate(self) -> None:
        name = self._pick()
        patch = {"metadata": {"annotations": {"demo/touched": str(self.total)}}}
        self._server.objects.patch("pods", name, patch, namespace=DEMO_NAMESPACE)
        self.operations["annotate"] += 1

    async def _update(self) -> None:
        name = self._pick()
        patch: dict[str, Any]
        if self._rng.random() < 0.5:
            patch = {"metadata": {"labels": {"revision": str(self.total)}}}
            self._server.objects.patch("pods", name, patch, namespace=DEMO_NAMESPACE)
        else:
            patch = {"status": {"phase": self._rng.choice(PHASES)}}
            self._server.objects.patch(
                "pods", name, patch, namespace=DEMO_NAMESPACE, subresource="status"
            )
        self.operations["update"] += 1
