"""Whether a CRD's schema is structural, with the API server's messages.

Ports of the behaviour of apiextensions-apiserver ``pkg/apiserver/schema``: ``NewStructural``
(:func:`structural_error`: fields a structural schema cannot hold), ``ValidateStructural``
(:func:`validate_structural`: ``validateStructuralInvariants``, the checks of value
validations nested in ``allOf``/``anyOf``/``oneOf``/``not``, ``validateStructuralCompleteness``;
the errors sorted by their text, as the real function sorts them). The rules, in short:

* every field and array item specifies a ``type`` (unless ``x-kubernetes-int-or-string`` or
  ``x-kubernetes-preserve-unknown-fields`` says what it holds), the root is an ``object``,
  arrays have ``items``, no ``additionalProperties`` at the root or next to
  ``x-kubernetes-embedded-resource``;
* ``metadata`` at the root may restrict only ``name`` and ``generateName``; ``kind`` and
  ``apiVersion`` of a resource are strings; embedded resources specify properties or
  preserve unknown fields;
* inside ``allOf``/``anyOf``/``oneOf``/``not`` only value validations: no ``type``,
  ``default``, ``title``, ``description``, ``nullable``, ``additionalProperties``, Kubernetes
  extensions or ``metadata``, and what they name must exist in the structural part (checked for
  the root's value validations). The int-or-string pattern (``anyOf: [{type: integer},
  {type: string}]``) is allowed.

Schemas are plain decoded JSON (``JSONSchemaProps`` in its v1 spelling).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .._validation._fielderrors import FieldError, forbidden, invalid, required
from .._validation._meta import as_map

__all__ = ["go_regex_error", "is_zero", "structural_error", "validate_structural"]

_ROOT, _ITEM, _FIELD = range(3)
_EMPTY_TYPE = {
    _ROOT: "must not be empty at the root",
    _ITEM: "must not be empty for specified array items",
    _FIELD: "must not be empty for specified object fields",
}
_UNSUPPORTED = (
    ("id", "id"),
    ("$schema", "schema"),
    ("$ref", "$ref"),
    ("patternProperties", "patternProperties"),
    ("dependencies", "dependencies"),
    ("additionalItems", "additionalItems"),
    ("definitions", "definitions"),
)
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
_NESTED_FORBIDDEN = (
    ("type", "must be empty to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)
_GO_REGEX_ERRORS = (
    ("missing ), unterminated subpattern", "missing closing )"),
    ("unbalanced parenthesis", "unexpected )"),
    ("unterminated character set", "missing closing ]"),
    ("nothing to repeat", "missing argument to repetition operator"),
    ("multiple repeat", "invalid nested repetition operator"),
    ("bad escape", "invalid escape sequence"),
    ("bad character range", "invalid character class range"),
)


def is_zero(value: Any) -> bool:
    """Whether a decoded value is its Go type's zero value (absent, ``""``, ``false``, an
    empty list or map)."""
    return value is None or value is False or value == "" or value == [] or value == {}


def _present(s: Mapping[str, Any], key: str) -> bool:
    return not is_zero(s.get(key))


def structural_error(s: Mapping[str, Any]) -> str | None:
    """``NewStructural``'s refusal of a schema (the first one found), or None."""
    for key, name in _UNSUPPORTED:
        if _present(s, key):
            return f"OpenAPIV3Schema '{name}' is not supported"
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
    items = s.get("items")
    if isinstance(items, list) and items:
        return "OpenAPIV3Schema 'items' must be a schema, but is an array"
    children = [items] if isinstance(items, Mapping) else []
    children += list(as_map(s.get("properties")).values())
    extra = s.get("additionalProperties")
    if isinstance(extra, Mapping):
        children.append(extra)
    for key in ("allOf", "anyOf", "oneOf"):
        children += [sub for sub in s.get(key) or () if isinstance(sub, Mapping)]
    if isinstance(s.get("not"), Mapping):
        children.append(s["not"])
    for child in children:
        found = structural_error(child)
        if found:
            return found
    return None


def go_regex_error(pattern: str) -> str | None:
    """Go's ``regexp.Compile`` refusal of ``pattern`` as Python finds it (None: it compiles,
    or uses constructs only RE2 has, like ``\\p{L}``)."""
    try:
        re.compile(pattern.replace("\\z", "\\Z"))
    except re.error as error:
        if "\\p" in pattern or "\\P" in pattern or "[[:" in pattern:
            return None
        text = str(error).split(" at position")[0]
        code = next((go for py, go in _GO_REGEX_ERRORS if text.startswith(py)), text)
        return f"error parsing regexp: {code}: `{pattern}`"
    return None


def _is_int_or_string(any_of: Any) -> bool:
    if not isinstance(any_of, list) or len(any_of) != 2:
        return False
    cleaned = [{k: v for k, v in as_map(sub).items() if not is_zero(v)} for sub in any_of]
    return cleaned == _INT_OR_STRING


def _value_validation(
    s: Mapping[str, Any], skip_any_of: bool, skip_first_all_of_any_of: bool, path: str
) -> list[FieldError]:
    errors: list[FieldError] = []
    if not skip_any_of:
        for i, sub in enumerate(s.get("anyOf") or ()):
            errors += _nested(as_map(sub), False, f"{path}.anyOf[{i}]")
    for i, sub in enumerate(s.get("allOf") or ()):
        errors += _nested(as_map(sub), skip_first_all_of_any_of and i == 0, f"{path}.allOf[{i}]")
    for i, sub in enumerate(s.get("oneOf") or ()):
        errors += _nested(as_map(sub), False, f"{path}.oneOf[{i}]")
    if isinstance(s.get("not"), Mapping):
        errors += _nested(s["not"], False, f"{path}.not")
    pattern = s.get("pattern")
    if isinstance(pattern, str) and pattern:
        problem = go_regex_error(pattern)
        if problem:
            detail = f"must be a valid regular expression, but isn't: {problem}"
            errors.append(invalid(f"{path}.pattern", pattern, detail))
    return errors


def _nested(v: Mapping[str, Any], skip_any_of: bool, path: str) -> list[FieldError]:
    """``validateNestedValueValidation``."""
    errors = _value_validation(v, skip_any_of, False, path)
    if isinstance(v.get("items"), Mapping):
        errors += _nested(v["items"], False, f"{path}.items")
    for key, sub in as_map(v.get("properties")).items():
        errors += _nested(as_map(sub), False, f"{path}.properties[{key}]")
    extra = v.get("additionalProperties")
    for key, detail in _NESTED_FORBIDDEN[:1]:
        if _present(v, key):
            errors.append(forbidden(f"{path}.{key}", detail))
    if isinstance(extra, Mapping) or extra is True:
        errors.append(
            forbidden(f"{path}.additionalProperties", "must be undefined to be structural")
        )
    for key, detail in _NESTED_FORBIDDEN[1:]:
        present = v.get(key) is not None if key == "default" else _present(v, key)
        if present:
            errors.append(forbidden(f"{path}.{key}", detail))
    if "metadata" in as_map(v.get("properties")):
        errors.append(
            forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context")
        )
    return errors


def _metadata(s: Mapping[str, Any], check: bool, level: int, path: str) -> list[FieldError]:
    """``validateStructuralMetadataInvariants``."""
    errors: list[FieldError] = []
    if check and s.get("type") != "object":
        errors.append(invalid(f"{path}.type", s.get("type") or "", "must be object"))
    if level == _ROOT:
        properties = set(as_map(s.get("properties")))
        rest = {k for k, v in s.items() if not is_zero(v)} - {"type", "default"}
        if properties and properties <= {"name", "generateName"}:
            rest.discard("properties")
        if rest:
            errors.append(
                forbidden(
                    path,
                    "must not specify anything other than name and generateName, but metadata "
                    "is implicitly specified",
                )
            )
    return errors


def _invariants(s: Mapping[str, Any], level: int, path: str) -> list[FieldError]:
    """``validateStructuralInvariants``."""
    errors: list[FieldError] = []
    kind = s.get("type") or ""
    items = s.get("items")
    if kind == "array" and not isinstance(items, Mapping):
        errors.append(required(f"{path}.items", "must be specified"))
    if isinstance(items, Mapping):
        errors += _invariants(items, _ITEM, f"{path}.items")
    properties = as_map(s.get("properties"))
    for key, sub in properties.items():
        errors += _invariants(as_map(sub), _FIELD, f"{path}.properties[{key}]")
    extra = s.get("additionalProperties")
    if extra is not None:
        if level == _ROOT:
            errors.append(forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(extra, Mapping):
            errors += _invariants(extra, _FIELD, f"{path}.additionalProperties")
    int_or_string = s.get("x-kubernetes-int-or-string") is True
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = s.get("x-kubernetes-embedded-resource") is True
    if int_or_string and preserve:
        errors.append(
            invalid(
                f"{path}.x-kubernetes-preserve-unknown-fields",
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    if int_or_string and embedded:
        errors.append(
            invalid(
                f"{path}.x-kubernetes-embedded-resource",
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    all_of = s.get("allOf")
    first = all_of[0] if isinstance(all_of, list) and all_of else None
    skip_first = _is_int_or_string(as_map(first).get("anyOf"))
    errors += _value_validation(s, _is_int_or_string(s.get("anyOf")), skip_first, path)
    check_metadata = level == _ROOT or embedded
    if embedded and kind != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        errors.append(
            required(f"{path}.type", detail) if not kind else invalid(f"{path}.type", kind, detail)
        )
    elif not kind and not int_or_string and not preserve:
        errors.append(required(f"{path}.type", _EMPTY_TYPE[level]))
    if embedded and extra is not None:
        errors.append(
            forbidden(
                f"{path}.additionalProperties",
                "must not be used if x-kubernetes-embedded-resource is set",
            )
        )
    if level == _ROOT and kind and kind != "object":
        errors.append(invalid(f"{path}.type", kind, "must be object at the root"))
    for name in ("kind", "apiVersion"):
        if name in properties and check_metadata:
            found = as_map(properties[name]).get("type") or ""
            if found != "string":
                errors.append(invalid(f"{path}.properties[{name}].type", found, "must be string"))
    if "metadata" in properties:
        errors += _metadata(
            as_map(properties["metadata"]), check_metadata, level, f"{path}.properties[metadata]"
        )
    if embedded and not preserve and not properties:
        errors.append(
            required(
                f"{path}.properties",
                "must not be empty if x-kubernetes-embedded-resource is true without "
                "x-kubernetes-preserve-unknown-fields",
            )
        )
    return errors


def _complete(
    v: Mapping[str, Any], s: Mapping[str, Any] | None, s_path: str, v_path: str
) -> list[FieldError]:
    """``validateValueValidationCompleteness`` of the clauses of ``v`` against ``s``."""
    errors: list[FieldError] = []
    if isinstance(v.get("not"), Mapping):
        errors += _nested_complete(v["not"], s, s_path, f"{v_path}.not")
    for key in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(v.get(key) or ()):
            errors += _nested_complete(as_map(sub), s, s_path, f"{v_path}.{key}[{i}]")
    return errors


def _nested_complete(
    v: Mapping[str, Any], s: Mapping[str, Any] | None, s_path: str, v_path: str
) -> list[FieldError]:
    if s is None:
        return [required(s_path, f"because it is defined in {v_path}")]
    errors = _complete(v, s, s_path, v_path)
    if isinstance(v.get("items"), Mapping):
        items = s.get("items")
        errors += _nested_complete(
            v["items"],
            items if isinstance(items, Mapping) else None,
            f"{s_path}.items",
            f"{v_path}.items",
        )
    own = as_map(s.get("properties"))
    for key, sub in as_map(v.get("properties")).items():
        where, there = f"{s_path}.properties[{key}]", f"{v_path}.properties[{key}]"
        if key not in own:
            errors.append(required(where, f"because it is defined in {there}"))
        else:
            errors += _nested_complete(as_map(sub), as_map(own[key]), where, there)
    return errors


def validate_structural(path: str, s: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateStructural`` of a schema that :func:`structural_error` accepts."""
    errors = _invariants(s, _ROOT, path) + _complete(s, s, path, path)
    return sorted(errors, key=str)
