"""``POST pods/<name>/eviction``: a deletion that respects PodDisruptionBudgets.

A port of the behaviour of kubernetes ``pkg/registry/core/pod/storage/eviction.go``
(``EvictionREST.Create``, ``canIgnorePDB``, ``checkAndDecrement``,
``createTooManyRequestsError``, ``addConditionAndDeletePod``), in its order:

1. the Eviction's name must be the pod's (400); a ``dryRun`` in the URL and one in its
   ``deleteOptions`` must agree (400);
2. a pod that is ``Pending``, ``Succeeded`` or ``Failed``, or already being deleted, is deleted
   without looking at budgets;
3. the budgets of the pod's namespace whose selector matches it: more than one is a ``Failure``
   ``Status`` with code 500 (answered, not raised: the create handler writes it with HTTP 201);
   none: the pod is deleted;
4. with one budget, a pod that is not ``Ready`` is deleted when the budget has
   ``unhealthyPodEvictionPolicy: AlwaysAllow``, or when it is healthy enough
   (``currentHealthy >= desiredHealthy > 0``);
5. otherwise the budget must allow a disruption: a budget whose status is older than its spec
   answers 429 with ``retryAfterSeconds: 10`` ("still being processed"); a negative
   ``disruptionsAllowed`` or more than 2000 ``disruptedPods`` is 403; none allowed is **429**
   ``TooManyRequests`` "Cannot evict pod as it would violate the pod's disruption budget." with
   the cause ``DisruptionBudget``; else ``disruptionsAllowed`` goes down by one and the pod is
   recorded in ``disruptedPods`` (a status update by ``kube-apiserver``; not on a dry run);
6. the pod gets the condition ``DisruptionTarget`` (``EvictionByEvictionAPI``) and is deleted
   with the Eviction's ``deleteOptions`` (a scheduled pod gets its grace period). The answer is
   201 with a ``Success`` ``Status``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from .._api import _status as status
from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo
from .._validation._meta import label_selector_matches
from ._deletion import DeleteOptions
from ._disruption import allowed_condition, is_pod_ready
from ._rest import RestStorage
from ._rest_types import WriteOptions

__all__ = ["MAX_DISRUPTED_PODS", "evict"]

#: ``MaxDisruptedPodSize``.
MAX_DISRUPTED_PODS = 2000
_MANAGER = "kube-apiserver"
_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _can_ignore_budgets(pod: Mapping[str, Any]) -> bool:
    """``canIgnorePDB``."""
    if _meta(pod).get("deletionTimestamp"):
        return True
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending")


def _too_many(message: str, retry_after: int | None = None) -> StatusFailure:
    """``errors.NewTooManyRequests`` with a ``DisruptionBudget`` cause (``retryAfterSeconds``
    and the ``Retry-After`` header only when given)."""
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": message}]}
    return status.status_error(
        429, "TooManyRequests", _MESSAGE, details=details, retry_after=retry_after
    )


def _budget_forbidden(name: str, why: str) -> StatusFailure:
    """``errors.NewForbidden(policy.Resource("poddisruptionbudget"), name, …)``."""
    return status.status_error(
        403,
        "Forbidden",
        f'poddisruptionbudget.policy "{name}" is forbidden: {why}',
        details={"name": name, "group": "policy", "kind": "poddisruptionbudget"},
    )


def _dry_run(body: Mapping[str, Any], query: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """The eviction's dry run: the URL's and the body's must agree."""
    in_url = tuple(query.get("dryRun") or ())
    in_body = tuple((body.get("deleteOptions") or {}).get("dryRun") or ())
    if in_url and in_body and in_url != in_body:
        raise status.bad_request(
            "Non-matching dry-run options in request and content: "
            f"{list(in_url)} and {list(in_body)}"
        )
    return in_url or in_body


def evict(
    rest: RestStorage,
    pods: ResourceInfo,
    pod: KubeObject,
    body: Any,
    query: Mapping[str, Sequence[str]],
) -> dict[str, Any]:
    """Answer an eviction of ``pod``: the ``Status`` to write with HTTP 201.

    :raises StatusFailure: 400, 403, 404, 409 (a precondition), 429 (a budget forbids it).
    """
    meta = _meta(pod)
    name, namespace = str(meta.get("name")), str(meta.get("namespace"))
    eviction = body if isinstance(body, dict) else {}
    if str((eviction.get("metadata") or {}).get("name") or "") != name:
        raise status.bad_request("name in URL does not match name in Eviction object")
    dry_run = _dry_run(eviction, query)
    options = DeleteOptions.parse(
        {**(eviction.get("deleteOptions") or {}), "dryRun": list(dry_run)}, {}
    )
    options.check()
    if not _can_ignore_budgets(pod):
        refusal = _check_budgets(rest, pod, namespace, dry=options.dry)
        if refusal is not None:
            return refusal
    _delete(rest, pods, pod, options)
    done = status.success_status()
    done["code"] = 201
    return done


def _check_budgets(
    rest: RestStorage, pod: KubeObject, namespace: str, *, dry: bool
) -> dict[str, Any] | None:
    """The budget steps (3 to 5); a ``Status`` to answer instead of deleting, or None."""
    info = rest.registry.lookup("policy", "v1", "poddisruptionbudgets")
    if info is None:
        return None
    labels = _meta(pod).get("labels") or {}
    prefix = f"{namespace}/"
    budgets = [
        pdb
        for key, pdb in sorted(rest.storage.objects(info).items())
        if key.startswith(prefix)
        and label_selector_matches((pdb.get("spec") or {}).get("selector"), labels)
    ]
    if len(budgets) > 1:
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "This pod has more than one PodDisruptionBudget, which the eviction "
            "subresource does not support.",
            "code": 500,
        }
    if not budgets:
        return None
    pdb = budgets[0]
    spec, current = pdb.get("spec") or {}, pdb.get("status") or {}
    if not is_pod_ready(pod):
        if spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
            return None
        desired = int(current.get("desiredHealthy") or 0)
        if int(current.get("currentHealthy") or 0) >= desired > 0:
            return None
    _decrement(rest, info, pdb, str(_meta(pod).get("name")), dry=dry)
    return None


def _decrement(
    rest: RestStorage, info: ResourceInfo, pdb: KubeObject, pod_name: str, *, dry: bool
) -> None:
    """``checkAndDecrement``."""
    meta, current = _meta(pdb), dict(pdb.get("status") or {})
    name = str(meta.get("name"))
    if int(current.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        raise _too_many(f"The disruption budget {name} is still being processed by the server.", 10)
    allowed = int(current.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise _budget_forbidden(name, "pdb disruptions allowed is negative")
    disrupted = dict(current.get("disruptedPods") or {})
    if len(disrupted) > MAX_DISRUPTED_PODS:
        raise _budget_forbidden(
            name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller"
        )
    if allowed == 0:
        desired, healthy = current.get("desiredHealthy") or 0, current.get("currentHealthy") or 0
        raise _too_many(
            f"The disruption budget {name} needs {desired} healthy pods and has {healthy} currently"
        )
    if dry:
        return
    current["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        current["conditions"] = allowed_condition(
            current.get("conditions"),
            allowed=False,
            reason="InsufficientPods",
            message="",
            generation=int(current.get("observedGeneration") or 0),
            now=_now(),
        )
    disrupted[pod_name] = _now()
    current["disruptedPods"] = disrupted
    rest.update(
        info,
        {**pdb, "status": current},
        name=name,
        namespace=str(meta.get("namespace")),
        subresource="status",
        options=WriteOptions(field_manager=_MANAGER),
    )


def _delete(rest: RestStorage, pods: ResourceInfo, pod: KubeObject, options: DeleteOptions) -> None:
    """``addConditionAndDeletePod``: the ``DisruptionTarget`` condition, then the delete."""
    meta = _meta(pod)
    name, namespace = str(meta.get("name")), str(meta.get("namespace"))
    phase = (pod.get("status") or {}).get("phase")
    if (
        not options.dry
        and phase not in ("Succeeded", "Failed")
        and not meta.get("deletionTimestamp")
    ):
        conditions = [
            c
            for c in (pod.get("status") or {}).get("conditions") or ()
            if c.get("type") != "DisruptionTarget"
        ]
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": _now(),
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
            }
        )
        rest.update(
            pods,
            {**pod, "status": {**(pod.get("status") or {}), "conditions": conditions}},
            name=name,
            namespace=namespace,
            subresource="status",
            options=WriteOptions(field_manager=_MANAGER),
        )
    rest.delete(pods, name=name, namespace=namespace, options=options)
