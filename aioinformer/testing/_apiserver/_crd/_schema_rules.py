"""The rules a CRD version's ``openAPIV3Schema`` must follow beyond being structural.

Ports of the behaviour of apiextensions-apiserver ``pkg/apis/apiextensions/validation``
(``ValidateCustomResourceDefinitionOpenAPISchema`` with ``specStandardValidatorV3``,
``validateMapListKeysMapSet``; the static checks of ``x-kubernetes-validations`` rules, whose
CEL :mod:`._cel` compiles) and of ``pkg/apiserver/schema/defaulting`` (``ValidateDefaults``):

* unsupported JSON-schema keywords (``id``, ``$ref``, ``definitions``, ``dependencies``,
  ``patternProperties``, ``additionalItems``, ``uniqueItems``, ``type: null``, array
  ``items``) are forbidden; ``additionalProperties`` excludes ``properties``;
* ``default`` is forbidden in the root's ``metadata``, ``apiVersion`` and ``kind`` and in maps
  applying to resource metadata; every default must survive pruning unchanged and pass the
  schema's validation (reported under ``….default``);
* ``x-kubernetes-list-type``/``-list-map-keys``/``-map-type`` combinations: set items atomic,
  map keys scalar properties that are required or defaulted and not nullable.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .._validation._fielderrors import FieldError, forbidden, invalid, not_supported, required
from .._validation._meta import as_map
from ._meta import coerce_embedded, validate_embedded
from ._schema import META_FIELDS, Schema, prune, same
from ._structural import is_zero, structural_error, validate_structural
from ._values import validate_value

__all__ = ["SchemaOptions", "default_errors", "relaxed_options", "schema_rule_errors"]

_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]
_SET_ITEM = "must be atomic as item of a list with x-kubernetes-list-type=set"


@dataclass(frozen=True, slots=True)
class SchemaOptions:
    """What the rules require (an update relaxes a rule the old CRD already broke)."""

    valid_types: bool = True
    atomic_sets: bool = True
    map_list_keys: bool = True
    pruned_defaults: bool = True
    allow_defaults: bool = True
    no_defaults_reason: str = ""
    inside_meta: bool = False


def _standard(s: Mapping[str, Any], path: str, opts: SchemaOptions) -> list[FieldError]:
    """``specStandardValidatorV3.validate``."""
    errors: list[FieldError] = []
    kind = s.get("type") or ""
    if opts.valid_types and kind and kind not in _TYPES:
        errors.append(not_supported(f"{path}.type", kind, _TYPES))
    if s.get("default") is not None and not opts.allow_defaults:
        reason = f" {opts.no_defaults_reason}" if opts.no_defaults_reason else ""
        errors.append(forbidden(f"{path}.default", "must not be set" + reason))
    for key, detail in (
        ("id", "id is not supported"),
        ("additionalItems", "additionalItems is not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("definitions", "definitions is not supported"),
        ("dependencies", "dependencies is not supported"),
        ("$ref", "$ref is not supported"),
    ):
        if not is_zero(s.get(key)):
            errors.append(forbidden(f"{path}.{key}", detail))
    if kind == "null":
        errors.append(
            forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative")
        )
    if isinstance(s.get("items"), list) and s["items"]:
        errors.append(forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if opts.inside_meta and s.get("x-kubernetes-embedded-resource") is True:
        errors.append(
            forbidden(
                f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"
            )
        )
    return errors


def _no_defaults(opts: SchemaOptions, reason: str) -> SchemaOptions:
    return replace(opts, allow_defaults=False, no_defaults_reason=reason)


def _children(s: Mapping[str, Any], path: str, opts: SchemaOptions, root: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    extra = s.get("additionalProperties")
    properties = as_map(s.get("properties"))
    if extra is not None:
        if properties and (extra is False or isinstance(extra, Mapping)):
            errors.append(
                forbidden(
                    f"{path}.additionalProperties",
                    "additionalProperties and properties are mutual exclusive",
                )
            )
        sub = opts
        if opts.inside_meta:
            sub = _no_defaults(opts, "inside additionalProperties applying to object metadata")
        if isinstance(extra, Mapping):
            errors += _rules(extra, f"{path}.additionalProperties", sub, False)
    embedded = s.get("x-kubernetes-embedded-resource") is True
    for key in sorted(properties):
        sub = opts
        if (root or embedded) and key in META_FIELDS:
            sub = replace(sub, inside_meta=True)
            if root:
                sub = _no_defaults(sub, f"in top-level {key}")
        errors += _rules(as_map(properties[key]), f"{path}.properties[{key}]", sub, False)
    if isinstance(s.get("not"), Mapping):
        errors += _rules(s["not"], f"{path}.not", opts, False)
    for key in ("allOf", "oneOf", "anyOf"):
        for i, sub_schema in enumerate(s.get(key) or ()):
            errors += _rules(as_map(sub_schema), f"{path}.{key}[{i}]", opts, False)
    for key, sub_schema in sorted(as_map(s.get("definitions")).items()):
        errors += _rules(as_map(sub_schema), f"{path}.definitions[{key}]", opts, False)
    items = s.get("items")
    if isinstance(items, Mapping):
        errors += _rules(items, f"{path}.items", opts, False)
    elif isinstance(items, list):
        for i, item in enumerate(items):
            errors += _rules(as_map(item), f"{path}.items[{i}]", opts, False)
    for key, dependency in sorted(as_map(s.get("dependencies")).items()):
        if isinstance(dependency, Mapping):
            errors += _rules(dependency, f"{path}.dependencies[{key}]", opts, False)
    return errors


def _kind_for(s: Mapping[str, Any], path: str, wanted: str, extension: str) -> list[FieldError]:
    kind = s.get("type") or ""
    detail = f"must be {wanted} if {extension} is specified"
    if kind == wanted:
        return []
    return [required(f"{path}.type", detail) if not kind else invalid(f"{path}.type", kind, detail)]


def _lists(s: Mapping[str, Any], path: str, opts: SchemaOptions) -> list[FieldError]:
    errors: list[FieldError] = []
    map_type, list_type = s.get("x-kubernetes-map-type"), s.get("x-kubernetes-list-type")
    keys = list(s.get("x-kubernetes-list-map-keys") or ())
    items = s.get("items")
    item = as_map(items)
    if map_type is not None:
        errors += _kind_for(s, path, "object", "x-kubernetes-map-type")
        if map_type not in ("atomic", "granular"):
            errors.append(
                not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"])
            )
    if list_type is not None and s.get("type") != "array":
        errors += _kind_for(s, path, "array", "x-kubernetes-list-type")
    elif opts.atomic_sets and list_type == "set" and isinstance(items, Mapping):
        nested_list, nested_map = (
            item.get("x-kubernetes-list-type"),
            item.get("x-kubernetes-map-type"),
        )
        if item.get("type") == "array" and nested_list not in (None, "atomic"):
            errors.append(invalid(f"{path}.items.x-kubernetes-list-type", nested_list, _SET_ITEM))
        elif item.get("type") == "object" and nested_map != "atomic":
            errors.append(invalid(f"{path}.items.x-kubernetes-map-type", nested_list, _SET_ITEM))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errors.append(
            not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"])
        )
    if keys:
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        if list_type is None:
            errors.append(required(f"{path}.x-kubernetes-list-type", detail))
        elif list_type != "map":
            errors.append(invalid(f"{path}.x-kubernetes-list-type", list_type, detail))
    if list_type == "map":
        errors += _map_list(s, path, keys, items)
    if opts.map_list_keys:
        errors += _map_list_keys_map_set(s, path)
    return errors


def _map_list(s: Mapping[str, Any], path: str, keys: list[Any], items: Any) -> list[FieldError]:
    errors: list[FieldError] = []
    where = f"{path}.x-kubernetes-list-map-keys"
    if not keys:
        errors.append(required(where, "must not be empty if x-kubernetes-list-type is map"))
    if items is None:
        errors.append(
            required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map")
        )
    elif not isinstance(items, Mapping):
        errors.append(
            invalid(
                f"{path}.items",
                items,
                "must only have a single schema if x-kubernetes-list-type is map",
            )
        )
    elif items.get("type") != "object":
        errors.append(
            invalid(
                f"{path}.items.type",
                items.get("type") or "",
                "must be object if parent array's x-kubernetes-list-type is map",
            )
        )
    else:
        properties = as_map(items.get("properties"))
        seen: set[str] = set()
        for key in keys:
            if key in properties:
                if as_map(properties[key]).get("type") in ("array", "object"):
                    errors.append(
                        invalid(
                            f"{path}.items.properties[{key}].type",
                            "object",
                            "must be a scalar type if parent array's x-kubernetes-list-type is map",
                        )
                    )
            else:
                errors.append(invalid(where, keys, "entries must all be names of item properties"))
            if key in seen:
                errors.append(invalid(where, keys, "must not contain duplicate entries"))
            seen.add(key)
    return errors


def _map_list_keys_map_set(s: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateMapListKeysMapSet``."""
    items, list_type = s.get("items"), s.get("x-kubernetes-list-type")
    if not isinstance(items, Mapping) or list_type not in ("set", "map"):
        return []
    errors: list[FieldError] = []
    if items.get("nullable") is True:
        errors.append(
            forbidden(
                f"{path}.items.nullable",
                f"cannot be nullable when x-kubernetes-list-type is {list_type}",
            )
        )
    if list_type == "map":
        properties = as_map(items.get("properties"))
        needed = set(items.get("required") or ())
        for key in s.get("x-kubernetes-list-map-keys") or ():
            if key not in properties:
                continue
            prop = as_map(properties[key])
            where = f"{path}.items.properties[{key}]"
            if key not in needed and prop.get("default") is None:
                errors.append(
                    required(
                        f"{where}.default",
                        "this property is in x-kubernetes-list-map-keys, so it must have a "
                        "default or be a required property",
                    )
                )
            if prop.get("nullable") is True:
                errors.append(
                    forbidden(
                        f"{where}.nullable",
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                    )
                )
    return errors


def _validation_rules(s: Mapping[str, Any], path: str) -> list[FieldError]:
    """The static checks of ``x-kubernetes-validations`` (their CEL is compiled afterwards,
    :func:`.._cel.compile_rules`, once the schema is found valid)."""
    errors: list[FieldError] = []
    for i, rule in enumerate(s.get("x-kubernetes-validations") or ()):
        rule = as_map(rule)
        where = f"{path}.x-kubernetes-validations[{i}]"
        text, message = str(rule.get("rule") or ""), str(rule.get("message") or "")
        expression = str(rule.get("messageExpression") or "")
        if not text.strip():
            errors.append(required(f"{where}.rule", "rule is not specified"))
        elif message and not message.strip():
            errors.append(invalid(f"{where}.message", message, "must be non-empty if specified"))
        elif "\n" in message.strip() or "\r" in message.strip():
            errors.append(invalid(f"{where}.message", message, "must not contain line breaks"))
        elif ("\n" in text.strip() or "\r" in text.strip()) and not message.strip():
            errors.append(
                required(
                    f"{where}.message", "message must be specified if rule contains line breaks"
                )
            )
        if expression and not expression.strip():
            errors.append(
                required(
                    f"{where}.messageExpression", "messageExpression must be non-empty if specified"
                )
            )
        reason = rule.get("reason")
        if reason is not None and reason not in _REASONS:
            errors.append(not_supported(f"{where}.reason", reason, _REASONS))
        field_path = str(rule.get("fieldPath") or "")
        if field_path and not field_path.strip():
            errors.append(
                invalid(f"{where}.fieldPath", field_path, "must be non-empty if specified")
            )
        if "\n" in field_path or "\r" in field_path:
            errors.append(invalid(f"{where}.fieldPath", field_path, "must not contain line breaks"))
    return errors


def _rules(s: Mapping[str, Any], path: str, opts: SchemaOptions, root: bool) -> list[FieldError]:
    errors = _standard(s, path, opts)
    if s.get("uniqueItems") is True:
        errors.append(
            forbidden(
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    errors += _children(s, path, opts, root)
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errors.append(
            invalid(
                f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"
            )
        )
    return errors + _lists(s, path, opts) + _validation_rules(s, path)


def schema_rule_errors(
    path: str, schema: Mapping[str, Any], opts: SchemaOptions = SchemaOptions()
) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionOpenAPISchema`` of a version's root schema."""
    return _rules(schema, path, opts, True)


def default_errors(
    path: str, schema: Mapping[str, Any], compiled: Schema, *, pruned: bool = True
) -> list[FieldError]:
    """``ValidateDefaults``: each default pruned as it is, valid metadata where it holds
    an embedded resource, valid against its schema."""
    return _defaults(schema, compiled, path, False, True, pruned)


def _defaults(
    s: Mapping[str, Any], node: Schema, path: str, inside_meta: bool, root: bool, pruned: bool
) -> list[FieldError]:
    embedded = root or node.embedded
    if node.embedded:
        inside_meta = False
    errors: list[FieldError] = []
    default = s.get("default")
    if default is not None:
        where = f"{path}.default"
        if not inside_meta:
            if pruned:
                copied = copy.deepcopy(default)
                prune(copied, node, root=embedded)
                if not same(copied, default):
                    errors.append(invalid(where, default, "must not have unknown fields"))
            problem = coerce_embedded(copy.deepcopy(default), node, path=where, resource=embedded)
            if problem is not None:
                return [*errors, problem]
            found = validate_embedded(default, node, where)
            errors += found or validate_value(node, default, prefix=where)
        else:
            errors += validate_value(node, default, prefix=where)
    if isinstance(s.get("items"), Mapping) and node.items is not None:
        errors += _defaults(s["items"], node.items, f"{path}.items", inside_meta, False, pruned)
    properties = as_map(s.get("properties"))
    for key in sorted(properties):
        child = (node.properties or {}).get(key)
        if child is None:
            continue
        meta = inside_meta or (embedded and key in META_FIELDS)
        errors += _defaults(
            as_map(properties[key]), child, f"{path}.properties[{key}]", meta, False, pruned
        )
    return errors


def _walk(s: Any) -> Iterator[Mapping[str, Any]]:
    """Every schema inside ``s``, itself first (``SchemaHas``)."""
    if not isinstance(s, Mapping):
        return
    yield s
    children: list[Any] = [s.get("not"), s.get("additionalProperties"), s.get("additionalItems")]
    items = s.get("items")
    children += items if isinstance(items, list) else [items]
    for key in ("allOf", "anyOf", "oneOf"):
        children += s.get(key) or []
    for key in ("properties", "patternProperties", "definitions", "dependencies"):
        children += list(as_map(s.get(key)).values())
    for child in children:
        yield from _walk(child)


def _non_atomic_set(s: Mapping[str, Any]) -> bool:
    item = s.get("items")
    if s.get("x-kubernetes-list-type") != "set" or not isinstance(item, Mapping):
        return False
    if item.get("type") == "array":
        return item.get("x-kubernetes-list-type") not in (None, "atomic")
    return item.get("type") == "object" and item.get("x-kubernetes-map-type") != "atomic"


def _unpruned(schema: Mapping[str, Any]) -> bool:
    if structural_error(schema) or validate_structural("", schema):
        return False
    found = default_errors("", schema, Schema(schema))
    return any(e.detail == "must not have unknown fields" for e in found)


def relaxed_options(old_schemas: Iterable[Mapping[str, Any]]) -> SchemaOptions:
    """The options of a CRD update: the rules its old schemas already break are not
    required (``requireValidPropertyType``, ``requireAtomicSetType``,
    ``requireMapListKeysMapSetValidation``, ``requirePrunedDefaults``)."""
    schemas = list(old_schemas)
    nodes = [node for schema in schemas for node in _walk(schema)]
    return SchemaOptions(
        valid_types=not any(n.get("type") and n.get("type") not in _TYPES for n in nodes),
        atomic_sets=not any(_non_atomic_set(n) for n in nodes),
        map_list_keys=not any(_map_list_keys_map_set(n, "") for n in nodes),
        pruned_defaults=not any(_unpruned(schema) for schema in schemas),
    )
