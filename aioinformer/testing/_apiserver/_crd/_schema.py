"""A custom resource version's schema, compiled once, and the decoding steps built on it.

The API server turns a CRD version's ``openAPIV3Schema`` into a structural schema
(apiextensions-apiserver ``pkg/apiserver/schema``: ``NewStructural``) and a kube-openapi
validator (``pkg/apiserver/validation``: ``ConvertJSONSchemaPropsWithPostProcess``). One
:class:`Schema` node serves both here. On it:

* :func:`prune`: ``pruning.PruneWithOptions``: fields the schema does not specify are dropped
  (``x-kubernetes-preserve-unknown-fields`` keeps them, ``apiVersion``/``kind``/``metadata``
  of the root and of ``x-kubernetes-embedded-resource`` objects are kept), their paths
  returned sorted (``unknown field "spec.foo"`` under ``fieldValidation``);
* :func:`prune_nulls`: ``PruneNonNullableNullsWithoutDefaults``: ``null`` values of
  non-nullable fields without a default vanish;
* :func:`apply_defaults`: ``defaulting.Default``: a missing field (or a ``null`` one that is
  not nullable) takes the schema's ``default``, outermost first, into the defaulted values too;
* defaults are pruned when compiled (``PruneDefaults``, as the handler does when it serves).

Values are decoded JSON: ``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

import orjson

from ._formats import strip_format

__all__ = [
    "META_FIELDS",
    "MISSING",
    "Schema",
    "apply_defaults",
    "compile_schema",
    "json_copy",
    "prune",
    "prune_nulls",
    "same",
]

#: An absent value (a schema without ``default``, a field without an old value).
MISSING: Any = object()
#: The fields every resource has without the schema naming them.
META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})


class Schema:
    """One compiled schema node (structural and value validation in one).

    ``additional`` is the ``additionalProperties`` schema, ``additional_allows`` whether
    ``additionalProperties`` is set (None), ``true`` or a schema (True), or ``false``.
    """

    __slots__ = (
        "additional",
        "additional_allows",
        "all_of",
        "any_of",
        "default",
        "embedded",
        "enum",
        "exclusive_maximum",
        "exclusive_minimum",
        "format",
        "int_or_string",
        "items",
        "list_keys",
        "list_type",
        "max_items",
        "max_length",
        "max_properties",
        "maximum",
        "min_items",
        "min_length",
        "min_properties",
        "minimum",
        "multiple_of",
        "not_",
        "nullable",
        "one_of",
        "pattern",
        "preserve",
        "properties",
        "regex",
        "required",
        "type",
        "types",
        "unique_items",
    )

    def __init__(self, props: Mapping[str, Any]) -> None:
        get = props.get
        self.type: str = str(get("type") or "")
        self.int_or_string: bool = get("x-kubernetes-int-or-string") is True
        self.types: tuple[str, ...] = (
            ("integer", "string") if self.int_or_string else (self.type,) if self.type else ()
        )
        self.nullable: bool = get("nullable") is True
        single = self.types[0] if len(self.types) == 1 else ""
        self.format: str = strip_format(single, str(get("format") or ""))
        self.preserve: bool = get("x-kubernetes-preserve-unknown-fields") is True
        self.embedded: bool = get("x-kubernetes-embedded-resource") is True
        self.list_type: str | None = get("x-kubernetes-list-type")
        self.list_keys: tuple[str, ...] = tuple(get("x-kubernetes-list-map-keys") or ())
        default = get("default", MISSING)
        self.default: Any = MISSING if default is None else default
        self.enum: list[Any] | None = get("enum") or None
        self.required: tuple[str, ...] = tuple(get("required") or ())
        self.maximum: int | float | None = get("maximum")
        self.minimum: int | float | None = get("minimum")
        self.exclusive_maximum: bool = get("exclusiveMaximum") is True
        self.exclusive_minimum: bool = get("exclusiveMinimum") is True
        self.multiple_of: int | float | None = get("multipleOf")
        self.max_length: int | None = get("maxLength")
        self.min_length: int | None = get("minLength")
        self.pattern: str = str(get("pattern") or "")
        self.regex: re.Pattern[str] | None = None
        self.max_items: int | None = get("maxItems")
        self.min_items: int | None = get("minItems")
        self.unique_items: bool = get("uniqueItems") is True
        self.max_properties: int | None = get("maxProperties")
        self.min_properties: int | None = get("minProperties")
        properties = get("properties")
        self.properties: dict[str, Schema] | None = (
            {key: Schema(sub) for key, sub in properties.items() if isinstance(sub, Mapping)}
            if isinstance(properties, Mapping) and properties
            else None
        )
        extra = get("additionalProperties")
        self.additional: Schema | None = Schema(extra) if isinstance(extra, Mapping) else None
        self.additional_allows: bool | None = (
            True if isinstance(extra, Mapping) else extra if isinstance(extra, bool) else None
        )
        items = get("items")
        self.items: Schema | None = Schema(items) if isinstance(items, Mapping) else None
        self.all_of = _schemas(get("allOf"))
        self.any_of = _schemas(get("anyOf"))
        self.one_of = _schemas(get("oneOf"))
        negated = get("not")
        self.not_: Schema | None = Schema(negated) if isinstance(negated, Mapping) else None
        if self.pattern:
            self.regex = _regex(self.pattern)

    def child(self, key: str) -> Schema | None:
        """The schema of a field (a property, else the ``additionalProperties`` schema)."""
        if self.properties is not None:
            found = self.properties.get(key)
            if found is not None:
                return found
        return self.additional


def _schemas(value: Any) -> tuple[Schema, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(Schema(sub) for sub in value if isinstance(sub, Mapping))


def _regex(pattern: str) -> re.Pattern[str] | None:
    """The pattern as Python compiles it (RE2's ``\\z`` spelt ``\\Z``); None when Python
    cannot (a construct RE2 has and Python lacks: the value is then not checked)."""
    try:
        return re.compile(pattern.replace("\\z", "\\Z"))
    except re.error:
        return None


def compile_schema(props: Mapping[str, Any] | None) -> Schema | None:
    """A CRD version's ``openAPIV3Schema`` compiled, its defaults pruned (None: no schema)."""
    if props is None:
        return None
    schema = Schema(props)
    _prune_defaults(schema)
    return schema


def _prune_defaults(schema: Schema) -> None:
    """``PruneDefaults``: each default as pruning by its own schema leaves it."""
    if schema.default is not MISSING and isinstance(schema.default, dict | list):
        value = json_copy(schema.default)
        prune(value, schema)
        schema.default = value
    for child in (schema.additional, schema.items):
        if child is not None:
            _prune_defaults(child)
    for prop in (schema.properties or {}).values():
        _prune_defaults(prop)


def json_copy(value: Any) -> Any:
    """A deep copy of decoded JSON (an orjson round trip, several times faster than
    ``copy.deepcopy``; integers beyond 64 bits fall back to it)."""
    if not isinstance(value, dict | list):
        return value
    try:
        return orjson.loads(orjson.dumps(value))
    except (orjson.JSONEncodeError, TypeError):
        return copy.deepcopy(value)


def same(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` of decoded JSON: ``1``, ``1.0`` and ``true`` differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def prune(
    value: Any, schema: Schema | None, *, root: bool = False, found: list[str] | None = None
) -> list[str]:
    """Drop what ``schema`` does not specify, in place (``root``: the value is a resource,
    whose ``apiVersion``, ``kind`` and ``metadata`` stay). Returns the dropped paths, sorted,
    when ``found`` is given (it collects them), else an empty list."""
    if root and (schema is None or not schema.embedded):
        schema = _embedded(schema)
    _prune(value, schema, found, "")
    if found is not None:
        found.sort()
        return found
    return []


def _embedded(schema: Schema | None) -> Schema:
    clone = Schema({}) if schema is None else copy.copy(schema)
    clone.embedded = True
    return clone


def _prune(value: Any, schema: Schema | None, found: list[str] | None, path: str) -> None:
    if schema is not None and schema.preserve:
        _skip_prune(value, schema, found, path)
        return
    if isinstance(value, dict):
        if schema is None:
            if found is not None:
                found.extend(_join(path, key) for key in value)
            value.clear()
            return
        properties = schema.properties or {}
        additional = schema.additional_allows is not None
        for key in list(value):
            if schema.embedded and key in META_FIELDS:
                continue
            prop = properties.get(key)
            if prop is not None:
                _prune(value[key], prop, found, _join(path, key) if found is not None else "")
            elif additional:
                where = _join(path, key) if found is not None else ""
                _prune(value[key], schema.additional, found, where)
            else:
                if found is not None and (key not in META_FIELDS or path):
                    found.append(_join(path, key))
                del value[key]
    elif isinstance(value, list):
        items = None if schema is None else schema.items
        for i, item in enumerate(value):
            if isinstance(item, dict | list):
                _prune(item, items, found, f"{path}[{i}]" if found is not None else "")


def _skip_prune(value: Any, schema: Schema, found: list[str] | None, path: str) -> None:
    if isinstance(value, dict):
        properties = schema.properties or {}
        additional = schema.additional_allows is not None
        for key, item in value.items():
            if schema.embedded and key in META_FIELDS:
                continue
            where = _join(path, key) if found is not None else ""
            prop = properties.get(key)
            if prop is not None:
                _prune(item, prop, found, where)
            elif additional:
                _prune(item, schema.additional, found, where)
    elif isinstance(value, list) and schema.items is not None:
        for i, item in enumerate(value):
            _skip_prune(item, schema.items, found, f"{path}[{i}]" if found is not None else "")


def _droppable_null(value: Any, schema: Schema | None) -> bool:
    return (
        value is None and schema is not None and not schema.nullable and schema.default is MISSING
    )


def prune_nulls(value: Any, schema: Schema | None) -> None:
    """``PruneNonNullableNullsWithoutDefaults``, in place (without a schema nothing below is
    dropped)."""
    if schema is None:
        return
    if isinstance(value, dict):
        for key in list(value):
            child = schema.child(key)
            if _droppable_null(value[key], child):
                del value[key]
            else:
                prune_nulls(value[key], child)
    elif isinstance(value, list):
        for item in value:
            prune_nulls(item, schema.items)


def _null_to_fill(value: Any, schema: Schema | None) -> bool:
    return value is None and schema is not None and not schema.nullable


def apply_defaults(value: Any, schema: Schema | None) -> None:
    """``defaulting.Default``, in place (defaults are deep-copied into the value)."""
    if schema is None:
        return
    if isinstance(value, dict):
        properties = schema.properties
        if properties is not None:
            for key, prop in properties.items():
                if prop.default is MISSING:
                    continue
                if key not in value or _null_to_fill(value[key], prop):
                    value[key] = json_copy(prop.default)
        extra = schema.additional
        for key, item in value.items():
            known = properties.get(key) if properties is not None else None
            if known is not None:
                if isinstance(item, dict | list):
                    apply_defaults(item, known)
            elif schema.additional_allows is not None and extra is not None:
                if _null_to_fill(item, extra) and extra.default is not MISSING:
                    item = value[key] = json_copy(extra.default)
                apply_defaults(item, extra)
    elif isinstance(value, list):
        items = schema.items
        if items is None:
            return
        for i, item in enumerate(value):
            if _null_to_fill(item, items) and items.default is not MISSING:
                item = value[i] = json_copy(items.default)
            if isinstance(item, dict | list):
                apply_defaults(item, items)
