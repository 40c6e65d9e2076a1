"""The disruption controller: the ``status`` of every PodDisruptionBudget.

A port of the behaviour of kube-controller-manager's ``pkg/controller/disruption/
disruption.go`` (``trySync``, ``getExpectedPodCount``, ``getExpectedScale`` and its controller
finders, ``buildDisruptedPodMap``, ``countHealthyPods``, ``updatePdbStatus``, ``failSafe``) and of
``pkg/apis/policy/helper`` (``UpdateDisruptionAllowedCondition``), run by the fake right after
each write that concerns a budget (a pod, a budget, or a workload's replicas in its namespace;
a real controller works from watches a moment later):

* the pods of a budget are those of its namespace its ``spec.selector`` matches (``{}`` all,
  none for a null selector);
* ``minAvailable`` as a number: ``desiredHealthy`` is that number and ``expectedPods`` the
  number of matching pods; ``maxUnavailable``, or ``minAvailable`` as a percentage:
  ``expectedPods`` is the sum of the replicas of the pods' controllers (a Deployment through its
  ReplicaSet, a ReplicaSet, a ReplicationController, a StatefulSet, or anything with a
  ``/scale``), percentages rounded up; pods without a controller do not count; a controller
  that cannot be found, or one without ``/scale``, fails the sync (``DisruptionAllowed=False``,
  reason ``SyncFailed``, ``disruptionsAllowed: 0``, ``observedGeneration`` unchanged);
* ``currentHealthy`` counts the pods that are ``Ready``, not being deleted, and not recently
  evicted (``disruptedPods``, entries older than two minutes are dropped);
* ``disruptionsAllowed`` is ``currentHealthy - desiredHealthy``, but 0 when that is negative or
  no pod is expected; condition ``DisruptionAllowed`` (``SufficientPods`` /
  ``InsufficientPods``), ``observedGeneration`` the budget's generation.

The status is written as a status update by ``kube-controller-manager``, only when it changes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo, ResourceRegistry
from .._validation._meta import label_selector_matches
from ._rest_types import Observer, ResourceStrategy, WriteOptions, Written
from ._storage import Storage

__all__ = [
    "DELETION_TIMEOUT",
    "DisruptionController",
    "DisruptionHost",
    "allowed_condition",
    "is_pod_ready",
    "pdb_status",
]

#: ``DeletionTimeout``: how long an eviction's pod is not counted healthy while it goes.
DELETION_TIMEOUT = timedelta(minutes=2)
_MANAGER = "kube-controller-manager"
_CONTROLLER_KINDS = {
    ("", "ReplicationController"),
    ("apps", "ReplicaSet"),
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
}


class DisruptionHost(Protocol):
    """What the controller needs of the REST layer (:class:`._rest.RestStorage`)."""

    @property
    def storage(self) -> Storage: ...

    @property
    def registry(self) -> ResourceRegistry: ...

    def strategy(self, info: ResourceInfo) -> ResourceStrategy: ...

    def update(
        self,
        info: ResourceInfo,
        body: Any,
        *,
        name: str = "",
        namespace: str = "",
        subresource: str = "",
        options: WriteOptions = ...,
    ) -> Written: ...


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(stamp: Any) -> datetime | None:
    try:
        return datetime.strptime(str(stamp), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    """``podutil.IsPodReady``: condition ``Ready`` is ``True``."""
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def _scaled(value: Any, total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)``."""
    if isinstance(value, str):
        return math.ceil(int(value.rstrip("%") or 0) * total / 100)
    return int(value)


def _controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in _meta(obj).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def _group_of(api_version: Any) -> str:
    text = str(api_version or "")
    return text.rpartition("/")[0] if "/" in text else ""


class _SyncFailed(Exception):
    """``trySync`` failed: the message becomes the ``SyncFailed`` condition's."""


@dataclass(frozen=True, slots=True)
class _Counts:
    expected: int
    desired: int


class _Finder:
    """The controller finders of ``getExpectedScale``, over the fake's storage."""

    def __init__(self, host: DisruptionHost, namespace: str) -> None:
        self._host = host
        self._namespace = namespace

    def _get(self, group: str, plural: str, name: str) -> KubeObject | None:
        info = self._host.registry.lookup(group, "v1", plural)
        if info is None:
            return None
        return self._host.storage.objects(info).get(f"{self._namespace}/{name}")

    def _replicas(self, obj: Mapping[str, Any]) -> int:
        value = (obj.get("spec") or {}).get("replicas")
        return value if isinstance(value, int) else 1

    def scale(self, ref: Mapping[str, Any]) -> tuple[str, int] | None:
        """``(uid, replicas)`` of the controller a pod's reference names, or None.

        :raises _SyncFailed: for a kind the server does not serve or that has no ``/scale``.
        """
        kind, group, name = str(ref.get("kind")), _group_of(ref.get("apiVersion")), ref.get("name")
        uid = str(ref.get("uid") or "")
        if (group, kind) == ("", "ReplicationController"):
            found = self._get("", "replicationcontrollers", str(name))
            if found is not None and _meta(found).get("uid") == uid:
                return uid, self._replicas(found)
        if (group, kind) in (("apps", "ReplicaSet"), ("extensions", "ReplicaSet")):
            replica_set = self._get("apps", "replicasets", str(name))
            if replica_set is not None and _meta(replica_set).get("uid") == uid:
                owner = _controller_of(replica_set)
                if owner is not None and owner.get("kind") == "Deployment":
                    deployment = self._get("apps", "deployments", str(owner.get("name")))
                    if (
                        deployment is not None
                        and _group_of(owner.get("apiVersion")) in ("apps", "extensions")
                        and _meta(deployment).get("uid") == owner.get("uid")
                    ):
                        return str(owner.get("uid")), self._replicas(deployment)
                else:
                    return uid, self._replicas(replica_set)
        if (group, kind) == ("apps", "StatefulSet"):
            found = self._get("apps", "statefulsets", str(name))
            if found is not None and _meta(found).get("uid") == uid:
                return uid, self._replicas(found)
        return self._generic(ref, group, kind, str(name), uid)

    def _generic(
        self, ref: Mapping[str, Any], group: str, kind: str, name: str, uid: str
    ) -> tuple[str, int] | None:
        """``getScaleController``: any resource with a ``/scale`` subresource."""
        info = self._host.registry.by_kind(str(ref.get("apiVersion") or ""), kind)
        if info is None:
            raise _SyncFailed(f'no matches for kind "{kind}" in version "{ref.get("apiVersion")}"')
        if "scale" not in info.subresources:
            raise _SyncFailed(f"{info.group_resource} does not implement the scale subresource")
        key = f"{self._namespace}/{name}" if info.namespaced else name
        found = self._host.storage.objects(info).get(key)
        if found is None:
            return None
        view = self._host.strategy(info).view(info, found)
        scale = self._host.strategy(info).scale(info, view, for_update=False)
        if (scale.get("metadata") or {}).get("uid") != uid:
            return None
        replicas = (scale.get("spec") or {}).get("replicas")
        return uid, replicas if isinstance(replicas, int) else 0


def _expected(finder: _Finder, pods: list[KubeObject]) -> int:
    """``getExpectedScale``: the replicas of the pods' controllers, each counted once."""
    scales: dict[str, int] = {}
    for pod in pods:
        ref = _controller_of(pod)
        if ref is None:
            continue  # an unmanaged pod
        if str(ref.get("uid")) in scales:
            continue
        found = finder.scale(ref)
        if found is None:
            raise _SyncFailed(f'found no controllers for pod "{_meta(pod).get("name")}"')
        scales[found[0]] = found[1]
    return sum(scales.values())


def _counts(spec: Mapping[str, Any], finder: _Finder, pods: list[KubeObject]) -> _Counts:
    """``getExpectedPodCount``."""
    high, low = spec.get("maxUnavailable"), spec.get("minAvailable")
    if high is not None:
        expected = _expected(finder, pods)
        return _Counts(expected, max(0, expected - _scaled(high, expected)))
    if isinstance(low, int) and not isinstance(low, bool):
        return _Counts(len(pods), low)
    if isinstance(low, str):
        expected = _expected(finder, pods)
        return _Counts(expected, _scaled(low, expected))
    return _Counts(0, 0)


def _disrupted(
    pods: list[KubeObject], recorded: Mapping[str, Any], now: datetime
) -> dict[str, str]:
    """``buildDisruptedPodMap``: evicted pods not yet being deleted, for two minutes."""
    out: dict[str, str] = {}
    for pod in pods:
        name = str(_meta(pod).get("name"))
        if _meta(pod).get("deletionTimestamp") or name not in recorded:
            continue
        when = _parse(recorded[name])
        if when is not None and when + DELETION_TIMEOUT >= now:
            out[name] = str(recorded[name])
    return out


def _healthy(pods: list[KubeObject], disrupted: Mapping[str, str]) -> int:
    """``countHealthyPods``."""
    return sum(
        1
        for pod in pods
        if not _meta(pod).get("deletionTimestamp")
        and str(_meta(pod).get("name")) not in disrupted
        and is_pod_ready(pod)
    )


def allowed_condition(
    conditions: Any, *, allowed: bool, reason: str, message: str, generation: int, now: str
) -> list[dict[str, Any]]:
    """``meta.SetStatusCondition`` of ``DisruptionAllowed``: the transition time changes only
    when the status does."""
    out = [dict(c) for c in conditions or () if isinstance(c, Mapping)]
    wanted = "True" if allowed else "False"
    for condition in out:
        if condition.get("type") == "DisruptionAllowed":
            if condition.get("status") != wanted:
                condition["lastTransitionTime"] = now
            condition.update(
                status=wanted, reason=reason, message=message, observedGeneration=generation
            )
            return out
    out.append(
        {
            "type": "DisruptionAllowed",
            "status": wanted,
            "observedGeneration": generation,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        }
    )
    return out


def pdb_status(
    host: DisruptionHost, pdb: Mapping[str, Any], pods: list[KubeObject], now: datetime
) -> dict[str, Any]:
    """The status the disruption controller writes for ``pdb`` (``trySync`` or, when it
    fails, ``failSafe``)."""
    spec, old = pdb.get("spec") or {}, dict(pdb.get("status") or {})
    selector = spec.get("selector")
    matching = [p for p in pods if label_selector_matches(selector, _meta(p).get("labels") or {})]
    namespace = str(_meta(pdb).get("namespace") or "")
    generation = int(_meta(pdb).get("generation") or 0)
    stamp = _stamp(now)
    try:
        counts = _counts(spec, _Finder(host, namespace), matching)
    except _SyncFailed as failure:
        observed = int(old.get("observedGeneration") or 0)
        failed = {**old, "disruptionsAllowed": 0}
        failed["conditions"] = allowed_condition(
            old.get("conditions"),
            allowed=False,
            reason="SyncFailed",
            message=str(failure),
            generation=observed,
            now=stamp,
        )
        for key in ("currentHealthy", "desiredHealthy", "expectedPods"):
            failed.setdefault(key, 0)
        return failed
    disrupted = _disrupted(matching, old.get("disruptedPods") or {}, now)
    healthy = _healthy(matching, disrupted)
    allowed = healthy - counts.desired
    if counts.expected <= 0 or allowed <= 0:
        allowed = 0
    status: dict[str, Any] = {}
    if generation:
        status["observedGeneration"] = generation
    if disrupted:
        status["disruptedPods"] = disrupted
    status.update(
        disruptionsAllowed=allowed,
        currentHealthy=healthy,
        desiredHealthy=counts.desired,
        expectedPods=counts.expected,
    )
    status["conditions"] = allowed_condition(
        old.get("conditions"),
        allowed=allowed > 0,
        reason="SufficientPods" if allowed > 0 else "InsufficientPods",
        message="",
        generation=generation,
        now=stamp,
    )
    return status


def _same(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Whether a computed status says what the stored one does (``updatePdbStatus`` writes
    only then): transition times aside."""

    def key(status: Mapping[str, Any]) -> Any:
        conditions = [
            {k: v for k, v in c.items() if k != "lastTransitionTime"}
            for c in status.get("conditions") or ()
            if isinstance(c, Mapping)
        ]
        return {**status, "conditions": conditions}

    return bool(key(new) == key(old))


class DisruptionController(Observer):
    """Keeps the ``status`` of the PodDisruptionBudgets of one fake server (a registry
    delegate that only listens: :class:`._rest_types.Observer`)."""

    def __init__(self, host: DisruptionHost) -> None:
        self._host = host
        self._pending: dict[str, None] = {}
        self._busy = False

    def _budgets(self) -> ResourceInfo | None:
        return self._host.registry.lookup("policy", "v1", "poddisruptionbudgets")

    def written(self, info: ResourceInfo, obj: Mapping[str, Any], *, gone: bool) -> None:
        """A pod, a budget or a workload changed: the budgets of its namespace are synced."""
        kind = (info.group, info.kind)
        relevant = (
            kind in (("", "Pod"), ("policy", "PodDisruptionBudget"))
            or kind in _CONTROLLER_KINDS
            or (info.custom is not None and "scale" in info.subresources)
        )
        namespace = str(_meta(obj).get("namespace") or "")
        budgets = self._budgets()
        if not relevant or not namespace or budgets is None:
            return
        prefix = f"{namespace}/"
        if not any(key.startswith(prefix) for key in self._host.storage.objects(budgets)):
            return
        self._pending[namespace] = None
        if self._busy:
            return
        self._busy = True
        try:
            while self._pending:
                done = next(iter(self._pending))
                del self._pending[done]
                self.sync_namespace(done)
        finally:
            self._busy = False

    def sync_namespace(self, namespace: str) -> None:
        """Sync every budget of ``namespace``."""
        budgets = self._budgets()
        pods_info = self._host.registry.lookup("", "v1", "pods")
        if budgets is None or pods_info is None:
            return
        prefix = f"{namespace}/"
        pods = [p for k, p in self._host.storage.objects(pods_info).items() if k.startswith(prefix)]
        now = datetime.now(UTC).replace(microsecond=0)
        for key, pdb in list(self._host.storage.objects(budgets).items()):
            if key.startswith(prefix):
                self._sync(budgets, pdb, pods, now)

    def _sync(
        self, info: ResourceInfo, pdb: KubeObject, pods: list[KubeObject], now: datetime
    ) -> None:
        status = pdb_status(self._host, pdb, pods, now)
        if _same(status, pdb.get("status") or {}):
            return
        meta = _meta(pdb)
        try:
            self._host.update(
                info,
                {**pdb, "status": status},
                name=str(meta.get("name")),
                namespace=str(meta.get("namespace")),
                subresource="status",
                options=WriteOptions(field_manager=_MANAGER),
            )
        except StatusFailure:
            pass  # changed meanwhile: the next write syncs it again
