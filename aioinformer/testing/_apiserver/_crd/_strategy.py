"""The registry strategies apiextensions-apiserver brings: of the CustomResourceDefinitions
themselves, and of the custom resources a CRD serves
(:class:`~.._registry._rest_types.ResourceStrategy`; the CRD delegate, :mod:`._controller`, hands
them to the registry):

* ``customresourcedefinitions``: the built-in decoding, then apiextensions-apiserver's CRD
  strategy (``registry/customresourcedefinition/strategy.go``: :mod:`._writes`);
* custom resources of a CRD (``ResourceInfo.custom`` is its :class:`._kind.CustomKind`): the
  CRD's schema only (:mod:`._objects`: ``customresource_handler.go`` and
  ``registry/customresource``), never a built-in Go type, zero value or default; objects are
  kept in the storage version (``stored``) and read in the version asked (``view``), and
  ``/scale`` follows the CRD's scale paths.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._api._failure import StatusFailure
from .._api._resources import ResourceInfo
from .._registry._rest_types import WriteOptions
from .._registry._strategy_service import ServiceAllocator
from .._registry._writerules import BuiltinStrategy
from .._validation._fieldvalidation import directive as field_directive
from ._kind import CustomKind, apply_scale, scale_of
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
    "CRDS",
    "CRD_GROUP",
    "CRD_PLURAL",
    "CUSTOM_RESOURCES",
    "CrdStrategy",
    "CustomResourceStrategy",
    "custom_kind",
    "is_crd",
]

CRD_GROUP, CRD_PLURAL = "apiextensions.k8s.io", "customresourcedefinitions"


def is_crd(info: ResourceInfo) -> bool:
    """Whether the resource is ``customresourcedefinitions.apiextensions.k8s.io``."""
    return info.plural == CRD_PLURAL and info.group == CRD_GROUP


def custom_kind(info: ResourceInfo) -> CustomKind | None:
    """The serving view of the CRD that serves a resource, None for any other resource."""
    custom = info.custom
    return custom if isinstance(custom, CustomKind) else None


def _kind(info: ResourceInfo) -> CustomKind:
    custom = custom_kind(info)
    assert custom is not None, f"{info} is not served by a CRD"
    return custom


class CrdStrategy(BuiltinStrategy):
    """The strategy of ``customresourcedefinitions``: decoded as the built-in kind, then
    apiextensions-apiserver's CRD strategy."""

    def before_create(
        self,
        info: ResourceInfo,
        obj: dict[str, Any],
        *,
        uid: str,
        now: str,
        name: Callable[[str], str],
        services: ServiceAllocator,
        dry_run: bool,
    ) -> list[str]:
        return crd_before_create(obj, uid=uid, now=now, name=name)

    def before_update(
        self,
        info: ResourceInfo,
        new: dict[str, Any],
        old: dict[str, Any],
        *,
        services: ServiceAllocator,
        dry_run: bool,
    ) -> list[str]:
        return crd_before_update(new, old)

    def before_status_update(
        self, info: ResourceInfo, new: dict[str, Any], old: dict[str, Any]
    ) -> list[str]:
        return crd_before_status_update(new, old)


class CustomResourceStrategy:
    """The strategy of every custom resource a CRD serves (its :class:`._kind.CustomKind` is
    the resource's ``custom``)."""

    def decode(
        self,
        info: ResourceInfo,
        body: Any,
        options: WriteOptions,
        *,
        operation: str,
        raw: bytes | None = None,
        patch: Any = None,
    ) -> tuple[dict[str, Any], list[str]]:
        return decode_custom(
            _kind(info),
            info.version,
            body,
            raw=raw,
            directive=field_directive(options.field_validation),
            operation=operation,
            patch=patch,
        )

    def before_create(
        self,
        info: ResourceInfo,
        obj: dict[str, Any],
        *,
        uid: str,
        now: str,
        name: Callable[[str], str],
        services: ServiceAllocator,
        dry_run: bool,
    ) -> list[str]:
        if "create" not in info.verbs:  # the CRD is terminating (``serveResource``)
            raise StatusFailure(
                405,
                "MethodNotAllowed",
                "create not allowed while custom resource definition is terminating",
                details={"group": info.group, "kind": info.plural},
            )
        return before_custom_create(_kind(info), info.version, obj, uid=uid, now=now, name=name)

    def before_update(
        self,
        info: ResourceInfo,
        new: dict[str, Any],
        old: dict[str, Any],
        *,
        services: ServiceAllocator,
        dry_run: bool,
    ) -> list[str]:
        return before_custom_update(_kind(info), info.version, new, old)

    def before_status_update(
        self, info: ResourceInfo, new: dict[str, Any], old: dict[str, Any]
    ) -> list[str]:
        return before_custom_status_update(_kind(info), info.version, new, old)

    def stored(self, info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
        return to_storage(_kind(info), obj)

    def view(self, info: ResourceInfo, obj: Mapping[str, Any]) -> Any:
        return read_custom(_kind(info), obj, info.version)

    def view_result(self, info: ResourceInfo, result: Mapping[str, Any]) -> Any:
        if isinstance(result.get("items"), list):
            return {**result, "items": [self.view(info, item) for item in result["items"]]}
        if result.get("kind") == _kind(info).kind:
            return self.view(info, result)
        return result

    def scale(self, info: ResourceInfo, obj: Mapping[str, Any], *, for_update: bool) -> Any:
        return scale_of(_kind(info), info.version, obj, for_update=for_update)

    def scaled(
        self, info: ResourceInfo, old: dict[str, Any], scale: dict[str, Any]
    ) -> dict[str, Any]:
        return apply_scale(_kind(info), info.version, old, scale)


#: The strategies of CRDs and of custom resources (neither keeps any state).
CRDS = CrdStrategy()
CUSTOM_RESOURCES = CustomResourceStrategy()
