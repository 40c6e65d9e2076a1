"""A CustomResourceDefinition's life: defaults, the registry's strategy, the controllers'
status, deletion, and what is served from it.

Ports of the behaviour of apiextensions-apiserver:

* ``apis/apiextensions/v1/defaults.go`` (:func:`default_crd`): ``singular`` is the lower-case
  kind, ``listKind`` the kind + ``List``, ``conversion`` ``{strategy: None}``, a webhook
  service's port 443, ``status.storedVersions`` the storage version;
* ``registry/customresourcedefinition/strategy.go``: on create a reset status holding the
  storage version, ``generation: 1`` (:func:`prepare_crd_create`); on update the stored
  status kept, ``generation`` bumped when the spec changes, a new storage version appended to
  ``storedVersions`` (:func:`prepare_crd_update`); a status update keeps the spec; the
  ``unrecognized format`` warnings;
* ``controller/status`` (naming), ``controller/establish`` and ``controller/apiapproval``
  (:func:`accepted_status`): ``acceptedNames`` (names another CRD of the group holds are not
  accepted), conditions ``NamesAccepted`` ``NoConflicts``, ``Established``
  ``InitialNamesAccepted`` and, for ``*.k8s.io`` groups, ``KubernetesAPIApprovalPolicyConformant``;
* ``registry/customresourcedefinition/etcd.go`` and ``controller/finalizer``
  (:func:`begin_crd_deletion`, :func:`finish_crd_deletion`): the
  ``customresourcecleanup.apiextensions.k8s.io`` finalizer and the ``Terminating`` condition;
* ``customresource_discovery_controller.go`` (:func:`discovery_resources`,
  :func:`group_versions`): the resources a served version lists, versions ordered as
  Kubernetes orders them (GA, then beta, then alpha, newest first).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .._validation._meta import semantic
from ._formats import unrecognized_format
from ._validation import approval_state, is_protected_group

__all__ = [
    "CLEANUP_FINALIZER",
    "accepted_status",
    "begin_crd_deletion",
    "crd_warnings",
    "default_crd",
    "discovery_resources",
    "finish_crd_deletion",
    "group_versions",
    "is_established",
    "prepare_crd_create",
    "prepare_crd_status_update",
    "prepare_crd_update",
    "storage_version",
]

#: The finalizer a deleted CRD holds until its objects are gone.
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_VERBS = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]
_TERMINATING_VERBS = ["delete", "deletecollection", "get", "list", "watch"]
_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def _dict(parent: dict[str, Any], key: str) -> dict[str, Any]:
    child = parent.get(key)
    if not isinstance(child, dict):
        child = parent[key] = {}
    return child


def _versions(crd: Mapping[str, Any]) -> list[dict[str, Any]]:
    versions = (crd.get("spec") or {}).get("versions")
    return [v for v in versions if isinstance(v, dict)] if isinstance(versions, list) else []


def storage_version(crd: Mapping[str, Any]) -> str | None:
    """The name of the version marked ``storage`` (the first one, if several)."""
    return next((str(v.get("name")) for v in _versions(crd) if v.get("storage") is True), None)


def default_crd(crd: dict[str, Any]) -> None:
    """``SetDefaults_CustomResourceDefinition``, in place (run on every decode)."""
    spec = _dict(crd, "spec")
    names = _dict(spec, "names")
    kind = names.get("kind")
    if not names.get("singular") and isinstance(kind, str):
        names["singular"] = kind.lower()
    if not names.get("listKind") and isinstance(kind, str) and kind:
        names["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    webhook = spec["conversion"].get("webhook") if isinstance(spec["conversion"], dict) else None
    service = ((webhook or {}).get("clientConfig") or {}).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443
    status = crd.get("status")
    if isinstance(status, dict) and not status.get("storedVersions"):
        stored = storage_version(crd)
        if stored is not None:
            status["storedVersions"] = [stored]


def _append_stored(crd: dict[str, Any]) -> None:
    stored = storage_version(crd)
    status = _dict(crd, "status")
    known = status.get("storedVersions")
    if not isinstance(known, list):
        known = status["storedVersions"] = []
    if stored is not None and stored not in known:
        known.append(stored)


def prepare_crd_create(crd: dict[str, Any]) -> None:
    """``PrepareForCreate``: a fresh status with the storage version, ``generation: 1``."""
    crd["status"] = {"acceptedNames": {"kind": "", "plural": ""}, "storedVersions": []}
    _dict(crd, "metadata")["generation"] = 1
    _append_stored(crd)


def prepare_crd_update(crd: dict[str, Any], old: Mapping[str, Any]) -> None:
    """``PrepareForUpdate``: the stored status, the generation bumped on a spec change."""
    crd["status"] = copy.deepcopy(old.get("status") or {})
    meta, old_meta = _dict(crd, "metadata"), old.get("metadata") or {}
    generation = int(old_meta.get("generation") or 0)
    if semantic(crd.get("spec")) != semantic(old.get("spec")):
        generation += 1
    meta["generation"] = generation
    _append_stored(crd)


def prepare_crd_status_update(crd: dict[str, Any], old: Mapping[str, Any]) -> None:
    """The status strategy's ``PrepareForUpdate``: the stored spec."""
    crd["spec"] = copy.deepcopy(old.get("spec") or {})


def crd_warnings(crd: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[str]:
    """``WarningsOnCreate``/``WarningsOnUpdate``: formats the served version does not know
    (new ones only, on update) and sets of objects or lists."""
    found, sets = _formats_and_sets(crd)
    if old is not None:
        old_found, old_sets = _formats_and_sets(old)
        found = [f for f in found if f not in old_found]
        sets = [s for s in sets if s not in old_sets]
    return [f'unrecognized format "{f}"' for f in found] + sets


def _formats_and_sets(crd: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    formats: list[str] = []
    sets: set[str] = set()

    def walk(schema: Any) -> None:
        if not isinstance(schema, Mapping):
            return
        fmt = schema.get("format")
        if isinstance(fmt, str) and unrecognized_format(str(schema.get("type") or ""), fmt):
            formats.append(fmt)
        items = schema.get("items")
        item_type = items.get("type") if isinstance(items, Mapping) else None
        if schema.get("x-kubernetes-list-type") == "set" and item_type in ("object", "array"):
            sets.add(
                f'x-kubernetes-list-type: set for items of type "{item_type}" is not '
                "supported by server-side apply or CEL validation rules"
            )
        children: list[Any] = [items, schema.get("not"), schema.get("additionalProperties")]
        for key in ("allOf", "anyOf", "oneOf"):
            children += schema.get(key) or []
        children += list((schema.get("properties") or {}).values())
        for child in children:
            walk(child)

    for version in _versions(crd):
        walk((version.get("schema") or {}).get("openAPIV3Schema"))
    return formats, sorted(sets)


def _condition(kind: str, status: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def _set_condition(crd: dict[str, Any], condition: dict[str, Any]) -> None:
    """``SetCRDCondition``: replace the condition of that type, keeping its transition time
    when the status does not change."""
    conditions = _dict(crd, "status").setdefault("conditions", [])
    for existing in conditions:
        if existing.get("type") == condition["type"]:
            if existing.get("status") == condition["status"] and existing.get("lastTransitionTime"):
                condition = dict(condition, lastTransitionTime=existing["lastTransitionTime"])
            existing.clear()
            existing.update(condition)
            return
    conditions.append(condition)


def _names_in_use(others: Iterable[Mapping[str, Any]], group: str) -> tuple[set[str], set[str]]:
    resources: set[str] = set()
    kinds: set[str] = set()
    for other in others:
        if (other.get("spec") or {}).get("group") != group:
            continue
        accepted = (other.get("status") or {}).get("acceptedNames") or {}
        resources.update(str(accepted.get(k) or "") for k in ("plural", "singular"))
        resources.update(accepted.get("shortNames") or ())
        kinds.update(str(accepted.get(k) or "") for k in ("kind", "listKind"))
    return resources, kinds


def accepted_status(crd: dict[str, Any], others: Iterable[Mapping[str, Any]], *, now: str) -> None:
    """What the naming, establishing and API-approval controllers write, in place.

    :param others: the other CRDs (their accepted names claim names in their group).
    :param now: the conditions' ``lastTransitionTime`` (RFC 3339).
    """
    spec = crd.get("spec") or {}
    wanted = spec.get("names") or {}
    status = _dict(crd, "status")
    accepted = dict(status.get("acceptedNames") or {})
    resources, kinds = _names_in_use(others, str(spec.get("group") or ""))
    conflict: tuple[str, str] | None = None
    for key, used, reason in (
        ("plural", resources, "PluralConflict"),
        ("singular", resources, "SingularConflict"),
        ("kind", kinds, "KindConflict"),
        ("listKind", kinds, "ListKindConflict"),
    ):
        name = wanted.get(key)
        if name is None:
            continue
        if name != accepted.get(key) and name in used:
            conflict = (reason, f'"{name}" is already in use')
        else:
            accepted[key] = name
        if key == "singular":
            mine = set(accepted.get("shortNames") or ())
            taken = [s for s in wanted.get("shortNames") or () if s not in mine and s in resources]
            if taken:
                quoted = ", ".join(f'"{s}" is already in use' for s in taken)
                conflict = ("ShortNamesConflict", quoted if len(taken) == 1 else f"[{quoted}]")
            elif wanted.get("shortNames"):
                accepted["shortNames"] = list(wanted["shortNames"])
    if wanted.get("categories"):
        accepted["categories"] = list(wanted["categories"])
    status["acceptedNames"] = accepted
    if conflict is None:
        _set_condition(
            crd, _condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now)
        )
        established = ("True", "InitialNamesAccepted", "the initial names have been accepted")
    else:
        _set_condition(crd, _condition("NamesAccepted", "False", *conflict, now))
        established = ("False", "NotAccepted", "not all names are accepted")
    if not is_established(crd):
        _set_condition(crd, _condition("Established", *established, now))
    group = str(spec.get("group") or "")
    if is_protected_group(group):
        state, reason = approval_state((crd.get("metadata") or {}).get("annotations") or {})
        outcome = {
            "Approved": ("True", "ApprovedAnnotation"),
            "Bypassed": ("False", "UnapprovedAnnotation"),
            "Missing": ("False", "MissingAnnotation"),
        }.get(state, ("False", "InvalidAnnotation"))
        condition = _condition("KubernetesAPIApprovalPolicyConformant", *outcome, reason, now)
        _set_condition(crd, condition)


def is_established(crd: Mapping[str, Any]) -> bool:
    """Whether the ``Established`` condition is ``True`` (its resource is served)."""
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def begin_crd_deletion(crd: dict[str, Any], *, now: str) -> None:
    """The first DELETE of a CRD, in place: ``deletionTimestamp``, the cleanup finalizer and
    ``Terminating`` (``InstanceDeletionPending``); the objects are to be deleted next."""
    meta = _dict(crd, "metadata")
    meta.setdefault("deletionTimestamp", now)
    finalizers = meta.setdefault("finalizers", [])
    if CLEANUP_FINALIZER not in finalizers:
        finalizers.append(CLEANUP_FINALIZER)
    message = (
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
    )
    _set_condition(crd, _condition("Terminating", "True", "InstanceDeletionPending", message, now))


def finish_crd_deletion(crd: dict[str, Any], *, now: str) -> None:
    """The finalizer controller once every object is gone, in place: ``Terminating``
    ``InstanceDeletionCompleted`` and the finalizer removed."""
    message = "removed all instances"
    _set_condition(
        crd, _condition("Terminating", "False", "InstanceDeletionCompleted", message, now)
    )
    meta = _dict(crd, "metadata")
    meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != CLEANUP_FINALIZER]
    if not meta["finalizers"]:
        del meta["finalizers"]


def _version_key(name: str) -> tuple[int, int, int, str]:
    """``CompareKubeAwareVersionStrings`` as a sort key."""
    match = _KUBE_VERSION.match(name)
    if match is None:
        return (3, 0, 0, name)
    major, stage, minor = int(match[1]), match[2], int(match[3] or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor, "")


def group_versions(crd: Mapping[str, Any]) -> list[str]:
    """The served versions, the preferred one first."""
    served = [str(v.get("name")) for v in _versions(crd) if v.get("served") is True]
    return sorted(served, key=_version_key)


def _hash(group: str, version: str, kind: str) -> str:
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def discovery_resources(crd: Mapping[str, Any], version: str) -> list[dict[str, Any]]:
    """The ``APIResource`` entries of an established CRD in ``/apis/<group>/<version>``
    (empty when the version is not served)."""
    spec = crd.get("spec") or {}
    versions = {str(v.get("name")): v for v in _versions(crd)}
    entry = versions.get(version)
    if entry is None or entry.get("served") is not True or not is_established(crd):
        return []
    group, names = (
        str(spec.get("group") or ""),
        (crd.get("status") or {}).get("acceptedNames") or {},
    )
    namespaced = spec.get("scope") == "Namespaced"
    terminating = any(
        c.get("type") == "Terminating" and c.get("status") == "True"
        for c in (crd.get("status") or {}).get("conditions") or []
    )
    main: dict[str, Any] = {
        "name": names.get("plural", ""),
        "singularName": names.get("singular", ""),
        "namespaced": namespaced,
        "kind": names.get("kind", ""),
        "verbs": list(_TERMINATING_VERBS if terminating else _VERBS),
    }
    for key in ("shortNames", "categories"):
        if names.get(key):
            main[key] = list(names[key])
    stored = storage_version(crd)
    if stored is not None:
        main["storageVersionHash"] = _hash(group, stored, str(spec.get("names", {}).get("kind")))
    found = [main]
    subresources = entry.get("subresources") or {}
    sub_verbs = ["get", "patch", "update"]
    if subresources.get("status") is not None:
        found.append(
            {"name": f"{main['name']}/status", "singularName": "", "namespaced": namespaced,
             "kind": main["kind"], "verbs": sub_verbs}
        )  # fmt: skip
    if subresources.get("scale") is not None:
        found.append(
            {"name": f"{main['name']}/scale", "singularName": "", "namespaced": namespaced,
             "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": sub_verbs}
        )  # fmt: skip
    return found
