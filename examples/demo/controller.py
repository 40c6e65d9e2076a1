"""The demo's controller: one ConfigMap ``node-summary-<node>`` per node with the pod
counts of the node, read from the pods informer's ``by_node`` index; and the final checks
that compare the caches and the summaries with the server."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aioinformer import KubeClient, KubeObject, SharedIndexInformer, meta_namespace_key
from aioinformer.errors import AlreadyExistsError
from aioinformer.testing import FakeApiServer

from .churn import DEMO_NAMESPACE

__all__ = [
    "BY_NODE",
    "RECONCILE_FAILURE_RATE",
    "SUMMARY_PREFIX",
    "InjectedFailure",
    "NodeSummaries",
    "cache_matches",
    "compare_cache",
    "compare_summaries",
    "is_summary",
    "node_of",
    "pods_by_node",
    "summary_node",
    "summary_of",
]

#: The pods index by node name.
BY_NODE = "by_node"
#: Node summaries are the ConfigMaps ``node-summary-<node>`` in the ``demo`` namespace.
SUMMARY_PREFIX = "node-summary-"
#: The share of reconciles that fail on purpose (unless ``--no-faults``).
RECONCILE_FAILURE_RATE = 0.05


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _namespace(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def node_of(pod: Mapping[str, Any]) -> str:
    """The node a pod is scheduled on (``""`` when none)."""
    spec = pod.get("spec")
    return str((spec or {}).get("nodeName") or "") if isinstance(spec, dict) else ""


def pods_by_node(pod: KubeObject) -> list[str]:
    """Index function (and the controller's ``map_func``): a pod's node, if it has one."""
    node = node_of(pod)
    return [node] if node else []


def summary_of(pods: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """A node summary: how many pods, and how many in each phase (always every key)."""
    counts = {"pods": 0, "pending": 0, "running": 0, "succeeded": 0, "failed": 0}
    for pod in pods:
        counts["pods"] += 1
        phase = str((pod.get("status") or {}).get("phase") or "").lower()
        if phase in counts and phase != "pods":
            counts[phase] += 1
    return {key: str(value) for key, value in counts.items()}


def is_summary(configmap: KubeObject) -> bool:
    return _namespace(configmap) == DEMO_NAMESPACE and _name(configmap).startswith(SUMMARY_PREFIX)


def summary_node(configmap: KubeObject) -> list[str]:
    return [_name(configmap).removeprefix(SUMMARY_PREFIX)]


class InjectedFailure(Exception):
    """A reconcile failure made on purpose (the controller retries the key)."""


class NodeSummaries:
    """The reconciler: makes ``node-summary-<node>`` match the pods the cache has on the node.

    It reads only the informers' caches and writes through the API (a merge patch, or a
    create when the ConfigMap does not exist yet).

    :param client: writes go through it.
    :param pods: the pods informer (with the :data:`BY_NODE` index).
    :param configmaps: the ConfigMaps informer.
    :param failure_rate: the share of reconciles that raise :class:`InjectedFailure`.
    :param rng: the random source of those failures.
    :param on_done: called after every reconcile, whatever its outcome.
    """

    def __init__(
        self,
        client: KubeClient,
        *,
        pods: SharedIndexInformer,
        configmaps: SharedIndexInformer,
        failure_rate: float = 0.0,
        rng: random.Random | None = None,
        on_done: Callable[[], None] | None = None,
    ) -> None:
        self._client = client
        self._pods = pods
        self._configmaps = configmaps
        self._failure_rate = failure_rate
        self._rng = rng or random.Random()
        self._on_done = on_done
        #: ConfigMaps created or patched.
        self.writes = 0
        #: Reconciles failed on purpose.
        self.injected_failures = 0

    async def reconcile(self, node: str) -> None:
        """Bring one node's summary up to date; raising means "retry later"."""
        try:
            if self._failure_rate and self._rng.random() < self._failure_rate:
                self.injected_failures += 1
                raise InjectedFailure("injected failure (the key is retried)")
            desired = summary_of(self._pods.cache.by_index(BY_NODE, node))
            name = SUMMARY_PREFIX + node
            current = self._configmaps.cache.get_by_key(f"{DEMO_NAMESPACE}/{name}")
            if current is not None and current.get("data") == desired:
                return
            if current is None:
                body = {"metadata": {"name": name, "labels": {"app": "demo"}}, "data": desired}
                try:
                    await self._client.create("configmaps", body, namespace=DEMO_NAMESPACE)
                except AlreadyExistsError:  # the cache is behind: patch it
                    await self._patch(name, desired)
            else:
                await self._patch(name, desired)
            self.writes += 1
        finally:
            if self._on_done is not None:
                self._on_done()

    async def _patch(self, name: str, data: dict[str, str]) -> None:
        await self._client.patch("configmaps", name, {"data": data}, namespace=DEMO_NAMESPACE)


# -- the checks ----------------------------------------------------------------------------


def _versions(objects: Iterable[KubeObject]) -> dict[str, str]:
    return {
        meta_namespace_key(obj): str((obj.get("metadata") or {}).get("resourceVersion") or "")
        for obj in objects
    }


async def cache_matches(
    server: FakeApiServer, informer: SharedIndexInformer, resource: str
) -> bool:
    return _versions(informer.cache.list()) == _versions(server.objects.list(resource))


async def compare_cache(server: FakeApiServer, informer: SharedIndexInformer) -> tuple[bool, str]:
    """Whether the pods cache equals the server's pods (keys and resource versions)."""
    on_server = _versions(server.objects.list("pods"))
    cached = _versions(informer.cache.list())
    if cached == on_server:
        return True, f"{len(on_server)} objects, same resource versions"
    missing = len(on_server.keys() - cached.keys())
    extra = len(cached.keys() - on_server.keys())
    stale = sum(1 for key in on_server.keys() & cached.keys() if on_server[key] != cached[key])
    return False, (
        f"server {len(on_server)}, cache {len(cached)}: {missing} missing, {extra} extra,"
        f" {stale} at another resource version"
    )


async def compare_summaries(server: FakeApiServer, nodes: list[str]) -> tuple[bool, str]:
    """Whether every node summary on the server matches the server's pods."""
    pods = server.objects.list("pods", namespace=DEMO_NAMESPACE)
    expected = {node: summary_of(p for p in pods if node_of(p) == node) for node in nodes}
    actual = {
        summary_node(cm)[0]: dict(cm.get("data") or {})
        for cm in server.objects.list("configmaps", namespace=DEMO_NAMESPACE)
        if is_summary(cm)
    }
    wrong = sorted(node for node in nodes if actual.get(node) != expected[node])
    if not wrong:
        return True, f"{len(nodes)} nodes"
    return False, f"{len(wrong)} of {len(nodes)} nodes wrong: {', '.join(wrong)}"
