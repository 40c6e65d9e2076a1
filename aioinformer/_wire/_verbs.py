"""What each verb of :class:`~aioinformer.KubeClient` sends, as pure functions: the object's
path, the query parameters of writes, the bodies of apply and delete. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, Literal

from .._listwatch import Resource

__all__ = [
    "APPLY",
    "PatchType",
    "PropagationPolicy",
    "apply_body",
    "delete_options",
    "name_of",
    "object_path",
    "patch_body",
    "write_query",
]

#: The content type of a server-side apply request (JSON is YAML too).
APPLY = "application/apply-patch+yaml"

#: What happens to the dependents of a deleted object (``propagationPolicy``).
PropagationPolicy = Literal["Orphan", "Background", "Foreground"]


class PatchType(StrEnum):
    """How :meth:`~aioinformer.KubeClient.patch` merges its body into the object (server-side
    apply is :meth:`~aioinformer.KubeClient.apply`)."""

    #: RFC 7386 JSON merge patch: maps merge, anything else (lists included) is replaced,
    #: ``None`` deletes a key. Works on every resource.
    MERGE = "application/merge-patch+json"
    #: RFC 6902 JSON patch: a list of operations (``{"op": "replace", "path": ..., ...}``).
    JSON = "application/json-patch+json"
    #: Kubernetes' strategic merge patch: lists merge by their merge key (containers by
    #: name, ...), as ``kubectl patch`` does. Built-in resources only (a custom resource
    #: answers 415, :class:`~aioinformer.errors.UnsupportedMediaTypeError`).
    STRATEGIC = "application/strategic-merge-patch+json"


def name_of(body: Mapping[str, Any], verb: str) -> str:
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        raise ValueError(f"{verb}: the body has no metadata.name")
    return name


def write_query(
    *, dry_run: bool, field_manager: str | None, force: bool | None = None
) -> dict[str, str]:
    query: dict[str, str] = {}
    if dry_run:
        query["dryRun"] = "All"
    if field_manager:
        query["fieldManager"] = field_manager
    if force is not None:
        query["force"] = "true" if force else "false"
    return query


def delete_options(
    *,
    uid: str | None = None,
    resource_version: str | None = None,
    propagation_policy: PropagationPolicy | None = None,
    grace_period_seconds: int | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """The ``DeleteOptions`` body of a delete (apimachinery's ``meta/v1``): preconditions on
    ``uid`` and ``resourceVersion``, ``propagationPolicy``, ``gracePeriodSeconds``, ``dryRun``.
    """
    options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    preconditions = {
        key: value
        for key, value in (("uid", uid), ("resourceVersion", resource_version))
        if value is not None
    }
    if preconditions:
        options["preconditions"] = preconditions
    if propagation_policy is not None:
        options["propagationPolicy"] = propagation_policy
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if dry_run:
        options["dryRun"] = ["All"]
    return options


def object_path(
    resource: Resource,
    *,
    namespace: str | None,
    default_namespace: str,
    name: str | None = None,
    body: Mapping[str, Any] | None = None,
    subresource: str | None = None,
) -> str:
    """The URL path of an object (or of a namespace's collection, without ``name``).

    A namespaced resource without ``namespace`` is in ``body``'s ``metadata.namespace``, else
    in ``default_namespace``.

    :raises ValueError: for a namespace given to a cluster-scoped resource.
    """
    if resource.namespaced and not namespace:
        metadata = body.get("metadata") if body is not None else None
        given = metadata.get("namespace") if isinstance(metadata, Mapping) else None
        namespace = given if isinstance(given, str) and given else default_namespace
    path = resource.path(namespace=namespace, name=name)
    return f"{path}/{subresource}" if subresource else path


def apply_body(resource: Resource, body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with the ``apiVersion`` and ``kind`` server-side apply needs, when missing."""
    document = dict(body)
    document.setdefault("apiVersion", resource.api_version)
    if resource.kind:
        document.setdefault("kind", resource.kind)
    return document


def patch_body(
    patch: Mapping[str, Any] | Sequence[Mapping[str, Any]], patch_type: PatchType
) -> Any:
    """The body of a patch of ``patch_type``: a dict (merge and strategic) or a list (JSON).

    :raises ValueError: for a list with a merge patch type, or a dict with ``JSON``.
    """
    patch_type = PatchType(patch_type)
    if (patch_type is PatchType.JSON) == isinstance(patch, Mapping):
        wanted = "a list of operations" if patch_type is PatchType.JSON else "a dict"
        raise ValueError(f"a {patch_type.name} patch is {wanted}")
    return patch if isinstance(patch, Mapping) else list(patch)
