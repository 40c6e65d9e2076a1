"""The checks every write makes on a body's shape and identity: kind, namespace, name,
resource version and preconditions, and the stored object's layout.

Pure functions over one object; the registry (:mod:`._rest`) applies them in order. Each
refusal carries the real server's Status (``handlers/rest.go``, the registry's
``BeforeCreate``/``BeforeUpdate`` and ``Store.Update``). What a write does to the object
itself (decoding, defaults, validation, status, generation) is :mod:`._writerules`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from .._api import _status as status
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo

__all__ = [
    "check_body",
    "check_name",
    "check_preconditions",
    "check_resource_version",
    "namespace_for",
    "now",
    "object_key",
    "set_managed_fields",
    "shape",
]


def object_key(namespace: str, name: str) -> str:
    """The storage key: ``namespace/name``, or ``name`` when cluster-scoped (etcd order)."""
    return f"{namespace}/{name}" if namespace else name


def now() -> str:
    """A timestamp as the server writes one (RFC 3339, whole seconds)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def set_managed_fields(meta: dict[str, Any], managed: list[dict[str, Any]] | None) -> None:
    """Store (or, for None, drop) ``managedFields``."""
    if managed is None:
        meta.pop("managedFields", None)
    else:
        meta["managedFields"] = managed


def check_name(obj: Mapping[str, Any], name: str) -> None:
    """A patch may not rename the object (``checkName`` in apiserver ``handlers/rest.go``)."""
    meta = obj.get("metadata")
    in_object = str((meta if isinstance(meta, dict) else {}).get("name") or "")
    if in_object != name:
        raise status.bad_request(
            f"the name of the object ({in_object}) does not match the name on the URL ({name})"
        )


def check_body(info: ResourceInfo, obj: Any) -> dict[str, Any]:
    """A written body must be an object of the resource's kind; returns a copy of its
    metadata."""
    if not isinstance(obj, dict):
        raise status.bad_request(f"the body of a {info.kind} must be a JSON object")
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if (kind and kind != info.kind) or (api_version and api_version != info.api_version):
        raise status.bad_request(
            f"the object provided is unrecognized (must be of type {info.kind}): "
            f"{api_version}, Kind={kind}"
        )
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise status.bad_request("metadata must be a JSON object")
    return dict(metadata or {})


def namespace_for(info: ResourceInfo, meta: dict[str, Any], namespace: str) -> str:
    """The namespace of a write (the URL's, else the body's, else ``default``), set in
    ``meta``; ``""`` (and none in ``meta``) for a cluster-scoped resource."""
    if not info.namespaced:
        meta.pop("namespace", None)
        return ""
    in_body = str(meta.get("namespace") or "")
    if namespace and in_body and in_body != namespace:
        raise status.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    resolved = namespace or in_body or "default"
    meta["namespace"] = resolved
    return resolved


def shape(info: ResourceInfo, meta: dict[str, Any], body: Mapping[str, Any]) -> KubeObject:
    """The stored object: ``kind``, ``apiVersion`` and ``metadata`` first, then the body."""
    obj: KubeObject = {"kind": info.kind, "apiVersion": info.api_version, "metadata": meta}
    for key, value in body.items():
        if key not in obj:
            obj[key] = value
    return obj


def check_resource_version(info: ResourceInfo, old: KubeObject, wanted: Any) -> None:
    """A write that names a resource version must name the stored one (409 Conflict)."""
    if wanted and str(wanted) != old["metadata"]["resourceVersion"]:
        raise status.conflict(
            info,
            old["metadata"]["name"],
            "the object has been modified; please apply your changes to the latest version "
            "and try again",
        )


def check_preconditions(
    info: ResourceInfo, meta: Mapping[str, Any], preconditions: Mapping[str, Any]
) -> None:
    """A delete's ``uid``/``resourceVersion`` preconditions must hold (409 Conflict)."""
    for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
        wanted = preconditions.get(field)
        if wanted and str(wanted) != str(meta.get(field)):
            raise status.conflict(
                info,
                str(meta.get("name")),
                f"Precondition failed: {label} in precondition: {wanted}, "
                f"{label} in object meta: {meta.get(field)}",
            )
