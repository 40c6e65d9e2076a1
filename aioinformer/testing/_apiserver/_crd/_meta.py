"""``metadata`` of custom resources and of resources embedded in them.

Ports of the behaviour of apiextensions-apiserver ``pkg/apiserver/schema/objectmeta``
(``GetObjectMetaWithOptions``, ``SetObjectMeta``, ``CoerceWithOptions``, ``Validate``) and
of the handler's ``unstructuredSchemaCoercer`` for the root:

* a custom resource's ``metadata`` goes through Go's ``ObjectMeta`` and back
  (:func:`decode_meta`): unknown fields vanish (``unknown field "metadata.foo"`` under
  ``fieldValidation``), a field of the wrong type refuses the body (``json: cannot unmarshal
  number into Go struct field ObjectMeta.labels of type string``), or, reading what storage
  holds, is dropped alone;
* objects marked ``x-kubernetes-embedded-resource`` (:func:`coerce_embedded`): ``apiVersion``
  and ``kind`` must be strings and their ``metadata`` is decoded the same way (a zero
  ``creationTimestamp`` removed); :func:`validate_embedded` then requires ``apiVersion`` and
  ``kind`` and validates the metadata as on create, with path-segment names and a namespace
  only when one is set.
"""

from __future__ import annotations

import copy
from typing import Any

from .._schema._decode import DecodeError, _named, _Walk
from .._validation._content import is_dns1035_label, is_path_segment_name
from .._validation._fielderrors import FieldError, invalid, required
from .._validation._meta import validate_object_meta
from ._schema import Schema

__all__ = ["DecodeError", "coerce_embedded", "decode_meta", "validate_embedded"]

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def decode_meta(
    meta: Any, *, strict: bool = False, drop_invalid: bool = False, prefix: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """``metadata`` as Go's ``ObjectMeta`` decodes and encodes it, and its unknown fields
    (paths under ``<prefix>metadata``, collected when ``strict``).

    :param drop_invalid: drop fields of the wrong type instead of refusing (storage reads).
    :raises DecodeError: a field of the wrong type (or ``metadata`` not an object).
    """
    node = _named(_OBJECT_META)
    walk = _Walk(strict)
    if not isinstance(meta, dict):
        if drop_invalid:
            return {}, []
        walk.fail(meta, "v1.ObjectMeta", "", None)
    try:
        decoded: dict[str, Any] = walk.struct(node, meta, None, None)
    except DecodeError:
        if not drop_invalid:
            raise
        kept: dict[str, Any] = {}
        for key, value in meta.items():
            try:
                _Walk(False).struct(node, {key: value}, None, None)
            except DecodeError:
                continue
            kept[key] = value
        decoded = _Walk(False).struct(node, kept, None, None)
    where = f"{prefix}metadata."
    return decoded, [where + path for path in walk.unknown]


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def coerce_embedded(
    value: Any,
    schema: Schema | None,
    *,
    path: str = "",
    resource: bool = False,
    drop_invalid: bool = False,
    found: list[str] | None = None,
) -> FieldError | None:
    """``CoerceWithOptions``, in place: the first problem, or None (``resource``: the value
    itself is a resource; ``found`` collects unknown metadata fields)."""
    if schema is None:
        return None
    if resource and not schema.embedded:
        schema = _as_embedded(schema)
    if isinstance(value, dict):
        if schema.embedded:
            problem = _coerce_meta(value, path, drop_invalid, found)
            if problem is not None:
                return problem
        properties = schema.properties or {}
        for key, item in list(value.items()):
            prop = properties.get(key)
            if prop is not None:
                where = _child(path, key)
            elif schema.additional_allows is not None:
                prop, where = schema.additional, f"{path}[{key}]"
            else:
                continue
            problem = coerce_embedded(
                item, prop, path=where, drop_invalid=drop_invalid, found=found
            )
            if problem is not None:
                return problem
    elif isinstance(value, list):
        for i, item in enumerate(value):
            problem = coerce_embedded(
                item, schema.items, path=f"{path}[{i}]", drop_invalid=drop_invalid, found=found
            )
            if problem is not None:
                return problem
    return None


def _as_embedded(schema: Schema) -> Schema:
    clone = copy.copy(schema)
    clone.embedded = True
    return clone


def _coerce_meta(
    value: dict[str, Any], path: str, drop_invalid: bool, found: list[str] | None
) -> FieldError | None:
    for key in ("apiVersion", "kind"):
        if key in value and not isinstance(value[key], str):
            if drop_invalid:
                del value[key]
            else:
                return invalid(_child(path, key), value[key], "must be a string")
    if "metadata" not in value:
        return None
    raw = value["metadata"]
    prefix = f"{path}." if path else ""
    try:
        meta, unknown = decode_meta(
            raw, strict=found is not None, drop_invalid=drop_invalid, prefix=prefix
        )
    except DecodeError as error:
        return invalid(_child(path, "metadata"), raw, str(error))
    if found is not None:
        found.extend(unknown)
    if meta.get("creationTimestamp") is None:
        meta.pop("creationTimestamp", None)
    value["metadata"] = meta
    return None


def _parse_group_version(text: str) -> str:
    if text.count("/") > 1:
        return f"unexpected GroupVersion string: {text}"
    return ""


def _path_segment(name: str, prefix: bool) -> list[str]:
    return is_path_segment_name(name, prefix)


def _embedded_errors(value: dict[str, Any], path: str) -> list[FieldError]:
    """``validateEmbeddedResource``."""
    errors: list[FieldError] = []
    for key in ("apiVersion", "kind"):
        if key not in value:
            errors.append(required(_child(path, key)))
    for key, item in value.items():
        where = _child(path, key)
        if key in ("apiVersion", "kind"):
            if not isinstance(item, str):
                errors.append(invalid(where, item, "must be a string"))
            elif not item:
                errors.append(invalid(where, item, "must not be empty"))
            elif key == "apiVersion" and _parse_group_version(item):
                errors.append(invalid(where, item, _parse_group_version(item)))
            elif key == "kind" and is_dns1035_label(item.lower()):
                detail = "may have mixed case, but should otherwise match: " + ",".join(
                    is_dns1035_label(item.lower())
                )
                errors.append(invalid(where, item, detail))
        elif key == "metadata":
            try:
                meta, _ = decode_meta(item)
            except DecodeError as error:
                errors.append(invalid(where, item, str(error)))
                continue
            meta = dict(meta, name=meta.get("name") or "fakename")
            errors += validate_object_meta(
                meta, namespaced=bool(meta.get("namespace")), name_fn=_path_segment, path=where
            )
    return errors


def validate_embedded(value: Any, schema: Schema | None, path: str = "") -> list[FieldError]:
    """``objectmeta.Validate`` (not at a resource root): the embedded resources' checks."""
    if schema is None:
        return []
    errors: list[FieldError] = []
    if isinstance(value, dict):
        if schema.embedded:
            errors += _embedded_errors(value, path)
        properties = schema.properties or {}
        for key, item in value.items():
            prop = properties.get(key)
            if prop is not None:
                errors += validate_embedded(item, prop, _child(path, key))
            elif schema.additional_allows is not None:
                errors += validate_embedded(item, schema.additional, f"{path}[{key}]")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            errors += validate_embedded(item, schema.items, f"{path}[{i}]")
    return errors
