"""What a write does to an object before it is stored: patches and managed fields.

The storage asks here for the result of a PATCH (JSON patch, merge patch, strategic merge
patch, server-side apply) and for the ``managedFields`` of every written object, driven by
the schema of the resource's kind. Kinds without a built-in schema (custom resources) are
handled as the real server handles them without a structural schema: strategic merge patch
is refused (415) and apply deduces list and map semantics from the values.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from .._api._failure import StatusFailure
from .._api._resources import ResourceInfo
from .._schema._published import DEDUCED, TypeInfo, schemas
from ._patch import apply_json_patch, apply_merge_patch
from ._server_side import apply, track_update
from ._strategic import strategic_merge

__all__ = [
    "PATCH_TYPES",
    "accepted_patch_types",
    "applied_object",
    "managed_fields_after_update",
    "patched_object",
    "root_type",
]

#: The PATCH content types of built-in resources, by patch type, in the order the real
#: server lists them (``apply-patch+cbor`` is behind a disabled feature gate).
PATCH_TYPES = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


def root_type(info: ResourceInfo) -> TypeInfo | None:
    """The schema of a resource's objects; None when the kind has no built-in schema."""
    return schemas().root(info.group, info.version, info.kind)


def accepted_patch_types(info: ResourceInfo) -> list[str]:
    """The PATCH content types a resource accepts (custom resources: no strategic merge)."""
    custom = root_type(info) is None
    return [ct for kind, ct in PATCH_TYPES.items() if not (custom and kind == "strategic")]


def unsupported_media_type(info: ResourceInfo) -> StatusFailure:
    """415 for a PATCH content type the resource does not accept (``negotiation/errors.go``)."""
    accepted = ", ".join(accepted_patch_types(info))
    return StatusFailure(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{accepted}",
    )


@functools.lru_cache(maxsize=4)
def _timestamp(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _now() -> str:
    """The time of a managed fields entry (RFC 3339, whole seconds, as metav1.Time)."""
    return _timestamp(int(time.time()))


def _go_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "string"


def patched_object(info: ResourceInfo, old: Mapping[str, Any], patch: Any, patch_type: str) -> Any:
    """The object a JSON, merge or strategic merge patch makes of ``old``.

    :raises StatusFailure: as the real server refuses the patch (strategic merge on a kind
        without schema: 415; malformed: 400; see :mod:`._strategic`).
    """
    if patch_type == "json":
        return apply_json_patch(old, patch)
    if patch_type == "strategic":
        root = root_type(info)
        if root is None:
            raise unsupported_media_type(info)
        if patch is None:
            patch = {}
        if not isinstance(patch, dict):
            raise StatusFailure.bad_request(
                f"json: cannot unmarshal {_go_kind(patch)} into Go value of type "
                "map[string]interface {}"
            )
        return strategic_merge(dict(old), patch, root)
    if not isinstance(patch, dict):
        raise StatusFailure.bad_request(f"a {patch_type} patch must be a JSON object")
    return apply_merge_patch(old, patch)


def managed_fields_after_update(
    info: ResourceInfo,
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any],
    *,
    manager: str,
    subresource: str = "",
) -> list[dict[str, Any]] | None:
    """The ``managedFields`` of ``new`` after a create (``old`` None) or an update."""
    return track_update(
        old,
        new,
        root_type(info) or DEDUCED,
        manager=manager,
        api_version=info.api_version,
        kind=info.kind,
        subresource=subresource,
        now=_now(),
    )


def applied_object(
    info: ResourceInfo,
    old: Mapping[str, Any] | None,
    config: Any,
    *,
    manager: str,
    force: bool,
    subresource: str = "",
) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None]:
    """A server-side apply of ``config`` over ``old`` (None: create): the new object (None
    when nothing but, maybe, the managed fields changes) and its ``managedFields``."""
    return apply(
        old,
        config,
        root_type(info) or DEDUCED,
        manager=manager,
        force=force,
        api_version=info.api_version,
        kind=info.kind,
        subresource=subresource,
        now=_now(),
    )
