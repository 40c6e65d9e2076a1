"""The write rules of a served resource, by what defines it: the built-in kinds, the
CustomResourceDefinitions themselves, and the custom resources a CRD serves.

The registry (:mod:`._registry._rest`) calls these for every write; each picks the real
server's path:

* built-in kinds: :mod:`._registry._writerules` (Go types, built-in defaults and validation);
* ``customresourcedefinitions``: the built-in decoding, then apiextensions-apiserver's CRD
  strategy (:mod:`._crd._writes`);
* custom resources of a CRD (``ResourceInfo.custom``): the CRD's schema only
  (:mod:`._crd._objects`: ``customresource_handler.go`` and ``registry/customresource``), never a
  built-in Go type, zero value or default; objects are kept in the storage version
  (:func:`stored`) and read in the version asked (:func:`view`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._api._failure import StatusFailure
from .._api._resources import ResourceInfo
from .._registry._rest_types import WriteOptions, decoded, kind_of
from .._registry._strategy_service import ServiceAllocator
from .._registry._writerules import before_create, before_status_update, before_update, decode
from .._validation._fieldvalidation import directive as field_directive
from ._kind import CustomKind
from ._objects import (
    before_custom_create,
    before_custom_status_update,
    before_custom_update,
    decode_custom,
    read_custom,
    to_storage,
)
from ._writes import crd_before_create, crd_before_status_update, crd_before_update

__all__ = [
    "CRD_GROUP",
    "CRD_PLURAL",
    "create_rules",
    "decode_body",
    "is_crd",
    "status_update_rules",
    "stored",
    "update_rules",
    "view",
    "view_result",
]

CRD_GROUP, CRD_PLURAL = "apiextensions.k8s.io", "customresourcedefinitions"


def is_crd(info: ResourceInfo) -> bool:
    """Whether the resource is ``customresourcedefinitions.apiextensions.k8s.io``."""
    return info.plural == CRD_PLURAL and info.group == CRD_GROUP


def _custom(info: ResourceInfo) -> CustomKind | None:
    custom = info.custom
    return custom if isinstance(custom, CustomKind) else None


def decode_body(
    info: ResourceInfo,
    body: Any,
    options: WriteOptions,
    *,
    operation: str,
    raw: bytes | None = None,
    patch: Any = None,
) -> tuple[dict[str, Any], list[str]]:
    """The body (or patched object) decoded and defaulted by the request's
    ``fieldValidation``; the object is the caller's to change."""
    directive = field_directive(options.field_validation)
    custom = _custom(info)
    if custom is not None:
        return decode_custom(
            custom,
            info.version,
            body,
            raw=raw,
            directive=directive,
            operation=operation,
            patch=patch,
        )
    kind = kind_of(info)
    obj, warnings = decode(
        kind, body, raw=raw, directive=directive, operation=operation, patch=patch
    )
    return decoded(kind, obj), warnings


def create_rules(
    info: ResourceInfo,
    obj: dict[str, Any],
    *,
    uid: str,
    now: str,
    name: Callable[[str], str],
    services: ServiceAllocator,
    dry_run: bool,
) -> list[str]:
    """``rest.BeforeCreate`` with the resource's strategy, in place; the warnings."""
    custom = _custom(info)
    if custom is not None:
        if "create" not in info.verbs:  # the CRD is terminating (``serveResource``)
            raise StatusFailure(
                405,
                "MethodNotAllowed",
                "create not allowed while custom resource definition is terminating",
                details={"group": info.group, "kind": info.plural},
            )
        return before_custom_create(custom, info.version, obj, uid=uid, now=now, name=name)
    if is_crd(info):
        return crd_before_create(obj, uid=uid, now=now, name=name)
    return before_create(
        kind_of(info), obj, uid=uid, now=now, name=name, services=services, dry_run=dry_run
    )


def update_rules(
    info: ResourceInfo,
    new: dict[str, Any],
    old: dict[str, Any],
    *,
    services: ServiceAllocator,
    dry_run: bool,
) -> list[str]:
    """``rest.BeforeUpdate`` of the main resource, in place; the warnings."""
    custom = _custom(info)
    if custom is not None:
        return before_custom_update(custom, info.version, new, old)
    if is_crd(info):
        return crd_before_update(new, old)
    return before_update(kind_of(info), new, old, services=services, dry_run=dry_run)


def status_update_rules(info: ResourceInfo, new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    """``rest.BeforeUpdate`` with the status strategy, in place; the warnings."""
    custom = _custom(info)
    if custom is not None:
        return before_custom_status_update(custom, info.version, new, old)
    if is_crd(info):
        return crd_before_status_update(new, old)
    return before_status_update(kind_of(info), new, old)


def stored(info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
    """The object as storage keeps it (a custom resource: in the storage version)."""
    custom = _custom(info)
    return obj if custom is None else to_storage(custom, obj)


def view(info: ResourceInfo, obj: Mapping[str, Any]) -> Any:
    """A stored object as a read in the resource's version answers it."""
    custom = _custom(info)
    if custom is None:
        return obj
    return read_custom(custom, obj, info.version)


def view_result(info: ResourceInfo, result: Mapping[str, Any]) -> Any:
    """An object or a list of a resource as a read in its version answers it (``Status``
    and other kinds unchanged)."""
    custom = _custom(info)
    if custom is None:
        return result
    if isinstance(result.get("items"), list):
        return {**result, "items": [view(info, item) for item in result["items"]]}
    if result.get("kind") == custom.kind:
        return view(info, result)
    return result
