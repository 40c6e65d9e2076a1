"""What the registry's strategies do to an object around a write.

Ports of the behaviour of kubernetes ``pkg/registry/*/*/strategy.go`` and of apiserver's
``rest.BeforeCreate``/``rest.BeforeUpdate``, ``rest.WipeObjectMetaSystemFields``/
``FillObjectMetaSystemFields`` and ``names.SimpleNameGenerator``, for every built-in kind the
fake serves and for custom resources:

* which kinds have a ``/status`` subresource (:func:`rules`);
* on create: system metadata, a generated name, ``status`` reset (a Pod gets ``Pending`` and
  its QoS class, a Namespace ``Active`` and the ``kubernetes`` finalizer), ``generation: 1``
  for the kinds that have one, a Job's generated selector, a DaemonSet's template generation;
* on an update of the main resource: ``generation`` and system metadata kept from the stored
  object, ``status`` kept for kinds with a status subresource, ``generation`` bumped when the
  spec changes (Deployments: also the annotations; custom resources: anything but metadata
  and status);
* on a status update: the spec (and, per kind, some metadata) kept from the stored object.

``dryRun=All`` runs every one of these steps; only storing and watch events are skipped.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._validation._meta import semantic
from ._defaults_pod import pod_qos

__all__ = [
    "KindRules",
    "begin_create",
    "begin_update",
    "generate_name",
    "is_dry_run",
    "prepare_create",
    "prepare_status_update",
    "prepare_update",
    "rules",
]

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


@dataclass(frozen=True, slots=True)
class KindRules:
    """How a kind's registry treats writes.

    :param status: the kind has a ``/status`` subresource (main writes keep ``status``).
    :param generation: ``metadata.generation`` is kept: 1 on create, bumped on spec changes.
    :param annotations_bump: annotation changes bump the generation too (Deployments).
    :param status_keeps: what a status write keeps from the stored object besides ``spec``:
        metadata keys (``labels``, ``ownerReferences``, …).
    :param custom: a custom resource (generation counts everything but metadata and status).
    """

    status: bool = False
    generation: bool = False
    annotations_bump: bool = False
    status_keeps: tuple[str, ...] = ()
    custom: bool = False


_NONE = KindRules()
_WORKLOAD = KindRules(status=True, generation=True)
_STATUS_ONLY = KindRules(status=True)
_RULES: dict[tuple[str, str], KindRules] = {
    ("", "Pod"): KindRules(status=True, generation=True, status_keeps=("ownerReferences",)),
    ("", "ReplicationController"): _WORKLOAD,
    ("", "Service"): _STATUS_ONLY,
    ("", "Namespace"): _STATUS_ONLY,
    ("", "Node"): _STATUS_ONLY,
    ("", "PersistentVolume"): _STATUS_ONLY,
    ("", "PersistentVolumeClaim"): _STATUS_ONLY,
    ("", "ResourceQuota"): _STATUS_ONLY,
    ("apps", "Deployment"): KindRules(
        status=True, generation=True, annotations_bump=True, status_keeps=("labels",)
    ),
    ("apps", "ReplicaSet"): _WORKLOAD,
    ("apps", "StatefulSet"): _WORKLOAD,
    ("apps", "DaemonSet"): _WORKLOAD,
    ("batch", "Job"): _WORKLOAD,
    ("batch", "CronJob"): _WORKLOAD,
    ("autoscaling", "HorizontalPodAutoscaler"): _STATUS_ONLY,
    ("policy", "PodDisruptionBudget"): _WORKLOAD,
    ("networking.k8s.io", "Ingress"): _WORKLOAD,
    ("networking.k8s.io", "NetworkPolicy"): KindRules(generation=True),
    ("networking.k8s.io", "IngressClass"): KindRules(generation=True),
    ("certificates.k8s.io", "CertificateSigningRequest"): _STATUS_ONLY,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _WORKLOAD,
    ("apiregistration.k8s.io", "APIService"): _STATUS_ONLY,
    ("storage.k8s.io", "VolumeAttachment"): _STATUS_ONLY,
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): _STATUS_ONLY,
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): _STATUS_ONLY,
}


def rules(group: str, kind: str, *, builtin: bool = True, status: bool = False) -> KindRules:
    """The write rules of a kind; for custom resources (``builtin=False``) ``status`` says
    whether their CRD enables the status subresource."""
    if not builtin:
        return KindRules(status=status, generation=True, custom=True)
    return _RULES.get((group, kind), _NONE)


def is_dry_run(values: list[str]) -> bool:
    """Whether a request's ``dryRun`` asks not to store (values are checked beforehand by
    :func:`~._validation._fieldvalidation.validate_options`: only ``All`` is accepted)."""
    return "All" in values


def generate_name(base: str, rng: random.Random | None = None) -> str:
    """``SimpleNameGenerator``: the prefix (cut to 58 characters) and 5 random characters."""
    pick = (rng or random).choice
    return base[:58] + "".join(pick(_NAME_ALPHABET) for _ in range(5))


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    return meta


def begin_create(
    obj: dict[str, Any], *, uid: str, now: str, name: Callable[[str], str] = generate_name
) -> None:
    """The handler's and the store's first steps: system fields wiped and set
    (``uid``, ``creationTimestamp``), a name generated from ``generateName`` when none is set.
    ``deletionTimestamp``, ``deletionGracePeriodSeconds`` and ``selfLink`` are dropped."""
    meta = _meta(obj)
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
        meta.pop(key, None)
    meta["uid"] = uid
    meta["creationTimestamp"] = now
    if meta.get("generateName") and not meta.get("name"):
        meta["name"] = name(str(meta["generateName"]))


def begin_update(new: dict[str, Any], old: dict[str, Any]) -> None:
    """``rest.BeforeUpdate``'s metadata steps: the stored generation, creation time, deletion
    time and grace period win; an empty ``uid`` takes the stored one. An update without a
    ``resourceVersion`` is unconditional (every built-in kind allows it): it takes the stored
    one, as ``Store.Update`` does."""
    meta, old_meta = _meta(new), old.get("metadata") or {}
    if not meta.get("resourceVersion") and old_meta.get("resourceVersion"):
        meta["resourceVersion"] = old_meta["resourceVersion"]
    for key in ("generation", "creationTimestamp", "deletionTimestamp"):
        if old_meta.get(key) is not None:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    if not meta.get("uid") and old_meta.get("uid"):
        meta["uid"] = old_meta["uid"]
    if meta.get("deletionGracePeriodSeconds") is None and "deletionGracePeriodSeconds" in old_meta:
        meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]


def _labels(obj: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node = obj
    for key in path:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    return node


def _job_selector(job: dict[str, Any]) -> None:
    """``generateSelectorIfNeeded``: unless ``manualSelector``, label the template with the
    job's name and uid and select ``batch.kubernetes.io/controller-uid``."""
    if _labels(job, ("spec",)).get("manualSelector") is True:
        return
    meta = _meta(job)
    name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
    labels = _labels(job, ("spec", "template", "metadata", "labels"))
    for key in ("job-name", "batch.kubernetes.io/job-name"):
        labels.setdefault(key, name)
    for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
        labels.setdefault(key, uid)
    match_labels = _labels(job, ("spec", "selector", "matchLabels"))
    match_labels.setdefault("batch.kubernetes.io/controller-uid", uid)


def prepare_create(
    group: str, kind: str, obj: dict[str, Any], *, builtin: bool = True, status: bool = False
) -> None:
    """``PrepareForCreate``: status reset, generation 1, and the kind's own additions (a
    Node keeps the status its kubelet registers with; a custom resource loses its status when
    its CRD has the status subresource, ``status``)."""
    kind_rules = rules(group, kind, builtin=builtin, status=status)
    meta = _meta(obj)
    if kind_rules.generation:
        meta["generation"] = 1
    if kind_rules.custom:
        if kind_rules.status:
            obj.pop("status", None)
    elif kind_rules.status and (group, kind) != ("", "Node"):
        obj["status"] = {}
    if (group, kind) == ("", "Pod"):
        obj["status"] = {"phase": "Pending", "qosClass": pod_qos(obj.get("spec"))}
    elif (group, kind) == ("", "Namespace"):
        obj["status"] = {"phase": "Active"}
        finalizers = _labels(obj, ("spec",)).setdefault("finalizers", [])
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")
    elif (group, kind) == ("batch", "Job"):
        _job_selector(obj)
    elif (group, kind) == ("apps", "DaemonSet"):
        _labels(obj, ("metadata", "annotations"))[_TEMPLATE_GENERATION] = "1"


def _changed(new: Any, old: Any) -> bool:
    return bool(semantic(new) != semantic(old))


def _custom_changed(new: dict[str, Any], old: dict[str, Any], status: bool) -> bool:
    skip = {"metadata", "status"} if status else {"metadata"}
    return _changed(
        {k: v for k, v in new.items() if k not in skip},
        {k: v for k, v in old.items() if k not in skip},
    )


def prepare_update(
    group: str,
    kind: str,
    new: dict[str, Any],
    old: dict[str, Any],
    *,
    builtin: bool = True,
    status: bool = False,
) -> None:
    """``PrepareForUpdate`` of the main resource (after :func:`begin_update`)."""
    kind_rules = rules(group, kind, builtin=builtin, status=status)
    if kind_rules.status:
        if "status" in old:
            new["status"] = copy.deepcopy(old["status"])
        else:
            new.pop("status", None)
    if (group, kind) == ("", "Namespace"):
        new["spec"] = copy.deepcopy(old.get("spec") or {})
    meta, old_meta = _meta(new), old.get("metadata") or {}
    if (group, kind) == ("apps", "DaemonSet"):
        template = (old.get("spec") or {}).get("template")
        generation = str((old_meta.get("annotations") or {}).get(_TEMPLATE_GENERATION) or "1")
        if _changed((new.get("spec") or {}).get("template"), template):
            generation = str(int(generation) + 1 if generation.isdigit() else 1)
        _labels(new, ("metadata", "annotations"))[_TEMPLATE_GENERATION] = generation
    if not kind_rules.generation:
        return
    if kind_rules.custom:
        bump = _custom_changed(new, old, kind_rules.status)
    else:
        bump = _changed(new.get("spec"), old.get("spec"))
    if kind_rules.annotations_bump and _changed(
        meta.get("annotations"), old_meta.get("annotations")
    ):
        bump = True
    if bump:
        meta["generation"] = int(old_meta.get("generation") or 0) + 1


def prepare_status_update(
    group: str, kind: str, new: dict[str, Any], old: dict[str, Any], *, builtin: bool = True
) -> None:
    """``PrepareForUpdate`` of a status strategy: everything but ``status`` comes from the
    stored object; built-in kinds take the update's metadata except the keys the kind keeps,
    custom resources keep all stored metadata but ``managedFields``."""
    kind_rules = rules(group, kind)
    if not builtin:
        managed = _meta(new).get("managedFields")
        new["metadata"] = copy.deepcopy(old.get("metadata") or {})
        if managed is not None:
            new["metadata"]["managedFields"] = managed
    for key in list(new):
        if key not in ("metadata", "status", "apiVersion", "kind"):
            del new[key]
    for key, value in old.items():
        if key not in ("metadata", "status", "apiVersion", "kind"):
            new[key] = copy.deepcopy(value)
    meta, old_meta = _meta(new), old.get("metadata") or {}
    for key in kind_rules.status_keeps:
        if key in old_meta:
            meta[key] = copy.deepcopy(old_meta[key])
        else:
            meta.pop(key, None)
    if (group, kind) == ("", "Pod"):
        status = new.get("status")
        old_status = old.get("status") or {}
        if isinstance(status, dict):
            if not status.get("qosClass") and old_status.get("qosClass"):
                status["qosClass"] = old_status["qosClass"]
            if not status.get("observedGeneration") and old_status.get("observedGeneration"):
                status["observedGeneration"] = old_status["observedGeneration"]
