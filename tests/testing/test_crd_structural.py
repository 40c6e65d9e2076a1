"""Structural schemas: what apiextensions-apiserver requires of a CRD's ``openAPIV3Schema``.

Specified by apiextensions-apiserver ``pkg/apiserver/schema/validation.go``
(``ValidateStructural``), ``complete.go`` and ``convert.go`` (``NewStructural``); described in
the API documentation ("Specifying a structural schema").
"""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._crd._structural import structural_error, validate_structural

P = "spec.validation.openAPIV3Schema"


def root(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def texts(schema: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate_structural(P, schema)]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (root(spec={"type": "object"}), []),
        ({"properties": {}}, [f"{P}.type: Required value: must not be empty at the root"]),
        (
            {"type": "string"},
            [f'{P}.type: Invalid value: "string": must be object at the root'],
        ),
        (
            root(spec={"properties": {"a": {"type": "string"}}}),
            [
                f"{P}.properties[spec].type: Required value: must not be empty for specified "
                "object fields"
            ],
        ),
        (
            root(list={"type": "array"}),
            [f"{P}.properties[list].items: Required value: must be specified"],
        ),
        (
            root(list={"type": "array", "items": {}}),
            [
                f"{P}.properties[list].items.type: Required value: must not be empty for "
                "specified array items"
            ],
        ),
        (
            {"type": "object", "additionalProperties": {"type": "string"}},
            [f"{P}.additionalProperties: Forbidden: must not be used at the root"],
        ),
        (root(free={"x-kubernetes-preserve-unknown-fields": True}), []),
        (root(port={"x-kubernetes-int-or-string": True}), []),
    ],
)
def test_types_everywhere(schema: dict[str, Any], expected: list[str]) -> None:
    """``validateStructuralInvariants``: a ``type`` at the root (``object``), for every field
    and array item, unless ``x-kubernetes-preserve-unknown-fields`` or
    ``x-kubernetes-int-or-string`` stands in; arrays have ``items``; no
    ``additionalProperties`` at the root."""
    assert texts(schema) == expected


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"type": "object"}, []),
        ({"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}}, []),
        (
            {
                "type": "object",
                "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}},
            },
            [],
        ),
        (
            {"type": "object", "properties": {"labels": {"type": "object"}}},
            [
                f"{P}.properties[metadata]: Forbidden: must not specify anything other than name "
                "and generateName, but metadata is implicitly specified"
            ],
        ),
        (
            {"type": "object", "description": "the metadata"},
            [
                f"{P}.properties[metadata]: Forbidden: must not specify anything other than name "
                "and generateName, but metadata is implicitly specified"
            ],
        ),
        (
            {"type": "string"},
            [f'{P}.properties[metadata].type: Invalid value: "string": must be object'],
        ),
    ],
)
def test_root_metadata(metadata: dict[str, Any], expected: list[str]) -> None:
    """``validateStructuralMetadataInvariants``: at the root, ``metadata`` is an object that
    may restrict only ``name`` and ``generateName``."""
    assert texts(root(metadata=metadata)) == expected


def test_kind_and_api_version_are_strings() -> None:
    """``kind`` and ``apiVersion`` of the root (or an embedded resource) have type string."""
    assert texts(root(kind={"type": "integer"}, apiVersion={"type": "string"})) == [
        f'{P}.properties[kind].type: Invalid value: "integer": must be string'
    ]


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (
            {"type": "object", "x-kubernetes-embedded-resource": True},
            [
                f"{P}.properties[t].properties: Required value: must not be empty if "
                "x-kubernetes-embedded-resource is true without "
                "x-kubernetes-preserve-unknown-fields"
            ],
        ),
        (
            {
                "type": "string",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
            [
                f'{P}.properties[t].type: Invalid value: "string": must be object if '
                "x-kubernetes-embedded-resource is true"
            ],
        ),
        (
            {"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True},
            [
                f"{P}.properties[t].x-kubernetes-preserve-unknown-fields: Invalid value: true: "
                "must be false if x-kubernetes-int-or-string is true"
            ],
        ),
        (
            {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {"metadata": {"type": "string"}},
            },
            [
                f'{P}.properties[t].properties[metadata].type: Invalid value: "string": '
                "must be object"
            ],
        ),
    ],
)
def test_extensions(field: dict[str, Any], expected: list[str]) -> None:
    """``validateExtensions`` and the embedded-resource invariants: embedded resources are
    objects that specify properties or preserve unknown fields, whose ``metadata`` is an
    object; int-or-string excludes preserve-unknown-fields."""
    assert texts(root(t=field)) == expected


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ({"maxLength": 3}, []),
        (
            {"type": "string"},
            [f"{P}.properties[s].allOf[0].type: Forbidden: must be empty to be structural"],
        ),
        (
            {"default": "x"},
            [f"{P}.properties[s].allOf[0].default: Forbidden: must be undefined to be structural"],
        ),
        (
            {"description": "d", "nullable": True},
            [
                f"{P}.properties[s].allOf[0].description: Forbidden: must be empty to be "
                "structural",
                f"{P}.properties[s].allOf[0].nullable: Forbidden: must be false to be structural",
            ],
        ),
        (
            {"x-kubernetes-list-type": "set"},
            [
                f"{P}.properties[s].allOf[0].x-kubernetes-list-type: Forbidden: must be undefined "
                "to be structural"
            ],
        ),
        (
            {"properties": {"metadata": {}}},
            [
                f"{P}.properties[s].allOf[0].properties[metadata]: Forbidden: must not be "
                "specified in a nested context"
            ],
        ),
    ],
)
def test_value_validations_only_in_combinators(clause: dict[str, Any], expected: list[str]) -> None:
    """``validateNestedValueValidation``: ``allOf``/``anyOf``/``oneOf``/``not`` hold value
    validations only (no type, default, title, description, nullable, extensions, metadata)."""
    assert texts(root(s={"type": "string", "allOf": [clause]})) == expected


def test_int_or_string_pattern_is_allowed() -> None:
    """``isIntOrStringAnyOfPattern``: ``anyOf: [{type: integer}, {type: string}]`` (with
    int-or-string) is the one place a nested ``type`` is allowed, also as ``allOf[0]``."""
    int_or_string = [{"type": "integer"}, {"type": "string"}]
    field = {"x-kubernetes-int-or-string": True, "anyOf": int_or_string}
    assert texts(root(port=field)) == []
    field = {"x-kubernetes-int-or-string": True, "allOf": [{"anyOf": int_or_string}]}
    assert texts(root(port=field)) == []


def test_completeness() -> None:
    """``validateStructuralCompleteness``: what the root's value validations name must be
    specified by the structural part too."""
    schema = root(a={"type": "string"})
    schema["anyOf"] = [{"properties": {"a": {}}}, {"properties": {"b": {}}}]
    assert texts(schema) == [
        f"{P}.properties[b]: Required value: because it is defined in {P}.anyOf[1].properties[b]"
    ]


def test_pattern_must_compile() -> None:
    """``validateValueValidation``: ``pattern`` must be a valid regular expression, with Go's
    ``regexp`` error."""
    assert texts(root(s={"type": "string", "pattern": "(abc"})) == [
        f'{P}.properties[s].pattern: Invalid value: "(abc": must be a valid regular expression, '
        "but isn't: error parsing regexp: missing closing ): `(abc`"
    ]


def test_pattern_error_of_the_integration_tests() -> None:
    """The text ``test/integration/validation_test.go`` expects for ``pattern: "+"``."""
    assert texts(root(foo={"type": "string", "pattern": "+"})) == [
        f'{P}.properties[foo].pattern: Invalid value: "+": must be a valid regular expression, '
        "but isn't: error parsing regexp: missing argument to repetition operator: `+`"
    ]


def test_errors_are_sorted() -> None:
    """``ValidateStructuralWithOptions`` sorts the errors by their text."""
    found = texts(root(z={}, a={}))
    assert found == sorted(found)
    assert len(found) == 2


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (root(a={"$ref": "#/x"}), "OpenAPIV3Schema '$ref' is not supported"),
        (
            root(a={"type": "array", "items": [{"type": "string"}]}),
            "OpenAPIV3Schema 'items' must be a schema, but is an array",
        ),
        (
            root(a={"x-kubernetes-preserve-unknown-fields": False}),
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined",
        ),
        (root(a={"type": "string"}), None),
    ],
)
def test_new_structural_refusals(schema: dict[str, Any], message: str | None) -> None:
    """``NewStructural``: keywords a structural schema cannot hold."""
    assert structural_error(schema) == message
