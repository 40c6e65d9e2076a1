"""Owned objects: from an owned object to its controller owner's key, and setting the controller
owner reference on objects a reconcile creates.

The rules are Kubernetes' (``metav1.OwnerReference``, the garbage collector) as
controller-runtime applies them:

* an owner reference names its owner by ``apiVersion`` (of which only the group counts: a
  Deployment owned through ``apps/v1beta1`` is owned by the ``apps`` Deployment), ``kind``,
  ``name`` and ``uid``; at most one reference of an object has ``controller: true``;
* owner references are namespace-local: a namespaced owner lives in its dependent's namespace
  (so a cluster-scoped object cannot have a namespaced owner), a cluster-scoped owner has no
  namespace (``handler.EnqueueRequestForOwner``, ``controllerutil.SetControllerReference``).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from .._listwatch import Resource, as_resource
from .._objects import KubeObject
from ..errors import AlreadyOwnedError, OwnerReferenceError

__all__ = ["OwnerKeys", "owner_keys", "set_controller_reference"]

#: The kind a metadata-only list or watch gives every object: not the kind of the object.
_PARTIAL_KINDS = frozenset({"PartialObjectMetadata", "PartialObjectMetadataList"})


def _group_of(api_version: object) -> str | None:
    """The group of an ``apiVersion`` (``""`` for ``v1``), or None if it is malformed (as
    ``schema.ParseGroupVersion`` refuses it)."""
    if not isinstance(api_version, str) or not api_version:
        return None
    parts = api_version.split("/")
    if len(parts) == 1:
        return ""
    if len(parts) == 2 and parts[0] and parts[1]:
        return parts[0]
    return None


class OwnerKeys:
    """The ``map_func`` that maps an owned object to the keys of its owners of one kind (see
    :func:`owner_keys`)."""

    __slots__ = ("controller_only", "group", "kind", "namespaced")

    def __init__(self, *, kind: str, group: str, namespaced: bool, controller_only: bool) -> None:
        self.kind = kind
        self.group = group
        self.namespaced = namespaced
        self.controller_only = controller_only

    def __repr__(self) -> str:
        which = "controller owner" if self.controller_only else "owners"
        return f"owner_keys({self.kind}.{self.group or 'core'}: {which})"

    def __call__(self, obj: KubeObject) -> list[str]:
        metadata = obj.get("metadata")
        if not isinstance(metadata, Mapping):
            return []
        references = metadata.get("ownerReferences")
        if not isinstance(references, list):
            return []
        namespace = metadata.get("namespace") or ""
        if self.namespaced and not namespace:
            return []  # a cluster-scoped object cannot have a namespaced owner
        keys: list[str] = []
        for ref in references:
            if not isinstance(ref, Mapping):
                continue
            if self.controller_only and ref.get("controller") is not True:
                continue
            if ref.get("kind") != self.kind or _group_of(ref.get("apiVersion")) != self.group:
                continue
            name = ref.get("name")
            if not name or not isinstance(name, str):
                continue
            key = f"{namespace}/{name}" if self.namespaced else name
            if key not in keys:
                keys.append(key)
        return keys


def owner_keys(owner: Resource | str, *, controller_only: bool = True) -> OwnerKeys:
    """A ``map_func`` for :meth:`~aioinformer.Controller.watch` and
    :func:`~aioinformer.enqueue_keys`: an owned object maps to the key of its controller owner
    of ``owner``'s kind and group (controller-runtime's ``EnqueueRequestForOwner`` with
    ``OnlyControllerOwner``, kube-rs's ``Controller::owns``)::

        controller.watch(configmaps, map_func=owner_keys(WIDGETS))
        controller.watch(configmaps, owner=WIDGETS)  # the same

    A reference matches when its ``kind`` is the owner's and the group of its ``apiVersion`` is
    the owner's (the version does not matter). A namespaced owner's key is
    ``"<the owned object's namespace>/<owner name>"``; a cluster-scoped owner's key its name.
    An object without a matching reference maps to no key. On update the old and the new
    state are both mapped, so an owner that lost an object is reconciled too.

    :param owner: the owner's resource, with its ``kind`` (known for built-in resources, given
        as ``Resource(..., kind="Widget")`` for custom ones) and scope (``namespaced``).
    :param controller_only: only the reference with ``controller: true``. Default True; False
        maps to every owner of that kind.
    :raises ValueError: if the resource's kind is unknown.
    """
    resource = as_resource(owner)
    if not resource.kind:
        raise ValueError(
            f"the owner resource {resource} has no kind: give it as Resource(..., kind=...)"
        )
    return OwnerKeys(
        kind=resource.kind,
        group=resource.group,
        namespaced=resource.namespaced,
        controller_only=controller_only,
    )


def _same_object(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """controller-runtime's ``referSameObject``: the same group, kind and name."""
    group_a, group_b = _group_of(a.get("apiVersion")), _group_of(b.get("apiVersion"))
    if group_a is None or group_b is None:
        return False
    return group_a == group_b and a.get("kind") == b.get("kind") and a.get("name") == b.get("name")


def _describe(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace, name = metadata.get("namespace") or "", metadata.get("name") or "<unnamed>"
    return f"{namespace}/{name}" if namespace else str(name)


def set_controller_reference(
    obj: MutableMapping[str, Any],
    *,
    owner: Mapping[str, Any],
    block_owner_deletion: bool = True,
) -> MutableMapping[str, Any]:
    """Make ``owner`` the controller of ``obj``, an object the reconcile is about to create or
    apply (controller-runtime's ``controllerutil.SetControllerReference``)::

        desired = {"metadata": {"name": "web-config", "namespace": "default"}, "data": {...}}
        set_controller_reference(desired, owner=widget)
        await client.apply("configmaps", desired, field_manager="widget-operator")

    Adds (or replaces: the same group, kind and name) the reference ``{apiVersion, kind, name,
    uid, controller: true, blockOwnerDeletion: true}`` in ``obj``'s
    ``metadata.ownerReferences``, keeping the others. ``obj`` is changed in place and
    returned; never pass an object from a cache (those are shared).

    :param obj: the owned object (a dict you built).
    :param owner: the owner as stored (it needs ``apiVersion``, ``kind``, ``metadata.name`` and
        ``metadata.uid``: an object read from the server or a cache).
    :param block_owner_deletion: ``blockOwnerDeletion`` of the reference (a foreground
        deletion of the owner waits for ``obj``). Default True.
    :raises OwnerReferenceError: if the owner lacks what a reference needs (a metadata-only
        object has no kind of its own), or is namespaced and ``obj`` is cluster-scoped or in
        another namespace — owner references are namespace-local, the garbage collector would
        treat such a reference as absent.
    :raises AlreadyOwnedError: if another object already is ``obj``'s controller.
    """
    owner_meta = owner.get("metadata")
    if not isinstance(owner_meta, Mapping):
        raise OwnerReferenceError("the owner has no metadata")
    api_version, kind = owner.get("apiVersion"), owner.get("kind")
    name, uid = owner_meta.get("name"), owner_meta.get("uid")
    if kind in _PARTIAL_KINDS:
        raise OwnerReferenceError(
            f"the owner {_describe(owner)} is a {kind} (from a metadata-only informer): give it "
            "its own apiVersion and kind ({**owner, 'apiVersion': ..., 'kind': ...})"
        )
    needed = {"apiVersion": api_version, "kind": kind, "metadata.name": name, "metadata.uid": uid}
    missing = [field for field, value in needed.items() if not value or not isinstance(value, str)]
    if missing:
        raise OwnerReferenceError(
            f"the owner {_describe(owner)} has no {', '.join(missing)}: use the object as "
            "stored (read from the server or a cache)"
        )
    if _group_of(api_version) is None:
        raise OwnerReferenceError(f"the owner's apiVersion {api_version!r} is malformed")
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = obj["metadata"] = {}
    if not isinstance(metadata, MutableMapping):
        raise OwnerReferenceError("the owned object's metadata is not a mapping")
    owner_namespace = owner_meta.get("namespace") or ""
    if owner_namespace:
        namespace = metadata.get("namespace") or ""
        if not namespace:
            raise OwnerReferenceError(
                f"a cluster-scoped object cannot have a namespaced owner (owner "
                f"{_describe(owner)}); if {_describe(obj)} is namespaced, set its "
                f"metadata.namespace to {owner_namespace!r}"
            )
        if namespace != owner_namespace:
            raise OwnerReferenceError(
                f"cross-namespace owner references are disallowed: owner {_describe(owner)} "
                f"is in namespace {owner_namespace!r}, {_describe(obj)} in {namespace!r}"
            )
    reference: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": block_owner_deletion,
    }
    references = metadata.get("ownerReferences")
    references = list(references) if isinstance(references, list) else []
    for existing in references:
        if (
            isinstance(existing, Mapping)
            and existing.get("controller") is True
            and not _same_object(existing, reference)
        ):
            raise AlreadyOwnedError(
                f"{_describe(obj)} is already owned by another {existing.get('kind')} "
                f"controller {existing.get('name')}",
                existing,
            )
    for index, existing in enumerate(references):
        if isinstance(existing, Mapping) and _same_object(existing, reference):
            references[index] = reference
            break
    else:
        references.append(reference)
    metadata["ownerReferences"] = references
    return obj
