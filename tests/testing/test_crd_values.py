"""Custom resources validated against their schema, with the real server's messages.

The rules are kube-openapi's ``pkg/validation/validate`` (messages from
``pkg/validation/errors/schema.go``) as apiextensions-apiserver maps them to field errors
(``pkg/apiserver/validation/validation.go``: ``kubeOpenAPIResultToFieldErrors``).
"""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._crd._schema import Schema, compile_schema
from aioinformer.testing._apiserver._crd._values import go_number, validate_value
from aioinformer.testing._apiserver._validation._fielderrors import FieldError, go_value

from .crd_fixtures import crontab, crontab_schema


def errors_of(schema: dict[str, Any], value: Any, **options: Any) -> list[str]:
    """The error texts of ``{"spec": {"x": value}}`` against ``spec.x``'s schema."""
    root = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"x": schema}}},
    }
    compiled = compile_schema(root)
    return [str(e) for e in validate_value(compiled, {"spec": {"x": value}}, **options)]


X = "spec.x"


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (
            {"type": "integer"},
            "three",
            [f'{X}: Invalid value: "string": {X} in body must be of type integer: "string"'],
        ),
        ({"type": "integer"}, 3, []),
        ({"type": "integer"}, 3.0, []),
        (
            {"type": "integer"},
            3.5,
            [
                f'{X}: Invalid value: "number": {X} in body must be of type integer: "number"',
                f'<nil>: Invalid value: "": Checked value must be of type integer (default format) '
                f"in {X}",
            ],
        ),
        ({"type": "number"}, 3, []),
        (
            {"type": "string"},
            None,
            [f'{X}: Invalid value: "null": {X} in body must be of type string: "null"'],
        ),
        ({"type": "string", "nullable": True}, None, []),
        (
            {"type": "boolean"},
            "true",
            [f'{X}: Invalid value: "string": {X} in body must be of type boolean: "string"'],
        ),
        (
            {"type": "array", "items": {"type": "string"}},
            {"a": 1},
            [f'{X}: Invalid value: "object": {X} in body must be of type array: "object"'],
        ),
        ({"x-kubernetes-int-or-string": True}, "25%", []),
        ({"x-kubernetes-int-or-string": True}, 3, []),
        (
            {"x-kubernetes-int-or-string": True},
            True,
            [
                f'{X}: Invalid value: "boolean": {X} in body must be of type integer,string: '
                '"boolean"'
            ],
        ),
        ({"x-kubernetes-preserve-unknown-fields": True}, [1, "a"], []),
    ],
)
def test_types(schema: dict[str, Any], value: Any, expected: list[str]) -> None:
    """kube-openapi ``typeValidator``: the bad value shown is the JSON type found, integral
    numbers are integers, ``nullable`` admits ``null``, int-or-string is ``integer,string``;
    a float checked against ``integer`` also fails ``IsValueValidAgainstRange``, reported on
    the validator's path (``<nil>`` for an object, as the real server prints a nil path)."""
    assert errors_of(schema, value) == expected


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"type": "integer", "minimum": 1}, 0, "should be greater than or equal to 1"),
        (
            {"type": "integer", "minimum": 1, "exclusiveMinimum": True},
            1,
            "should be greater than 1",
        ),
        ({"type": "integer", "maximum": 10}, 11, "should be less than or equal to 10"),
        (
            {"type": "integer", "maximum": 10, "exclusiveMaximum": True},
            10,
            "should be less than 10",
        ),
        (
            {"type": "number", "maximum": 1000000},
            1000000.5,
            "should be less than or equal to 1e+06",
        ),
        ({"type": "number", "minimum": 0.5}, 0.25, "should be greater than or equal to 0.5"),
        ({"type": "integer", "multipleOf": 5}, 12, "should be a multiple of 5"),
        ({"type": "number", "multipleOf": 0.5}, 0.75, "should be a multiple of 0.5"),
    ],
)
def test_numbers(schema: dict[str, Any], value: Any, expected: str) -> None:
    """kube-openapi ``numberValidator`` (``ExceedsMinimum``/``ExceedsMaximum``/
    ``NotMultipleOf``): ``Invalid value`` with the bound printed as Go's ``%v``."""
    shown = go_value(value)
    assert errors_of(schema, value) == [f"{X}: Invalid value: {shown}: {X} in body {expected}"]


def test_int32_format_range() -> None:
    """``IsValueValidAgainstRange`` with ``format: int32``: a value out of range is a plain
    error on the validator's path."""
    assert errors_of({"type": "integer", "format": "int32"}, 2**31) == [
        '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in '
        "spec.x"
    ]


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (
            {"type": "string", "maxLength": 3},
            "abcd",
            f"{X}: Too long: may not be more than 3 bytes",
        ),
        (
            {"type": "string", "minLength": 3},
            "ab",
            f'{X}: Invalid value: "ab": {X} in body should be at least 3 chars long',
        ),
        (
            {"type": "string", "pattern": "^[a-z]+$"},
            "A1",
            f"{X}: Invalid value: \"A1\": {X} in body should match '^[a-z]+$'",
        ),
        (
            {"type": "string", "enum": ["Allow", "Forbid"]},
            "Never",
            f'{X}: Unsupported value: "Never": supported values: "Allow", "Forbid"',
        ),
        (
            {"type": "integer", "enum": [1, 2]},
            3,
            f'{X}: Unsupported value: 3: supported values: "1", "2"',
        ),
        (
            {"type": "string", "format": "date-time"},
            "yesterday",
            f'{X}: Invalid value: "yesterday": {X} in body must be of type date-time: "yesterday"',
        ),
        (
            {"type": "string", "format": "ipv4"},
            "300.1.1.1",
            f'{X}: Invalid value: "300.1.1.1": {X} in body must be of type ipv4: "300.1.1.1"',
        ),
    ],
)
def test_strings_and_enums(schema: dict[str, Any], value: Any, expected: str) -> None:
    """kube-openapi ``stringValidator`` (one error: length, then pattern), ``formatValidator``
    (a type error naming the format) and ``basicCommonValidator`` (``Unsupported value``,
    non-string enum values shown as JSON)."""
    assert errors_of(schema, value) == [expected]


def test_unknown_format_is_not_checked() -> None:
    """``StripUnsupportedFormatsPostProcessorForVersion``: a format the server does not know
    (or one for another type) is ignored."""
    assert errors_of({"type": "string", "format": "my-format"}, "anything") == []
    assert errors_of({"type": "integer", "format": "date-time"}, 5) == []


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (
            {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            ["a", "b", "c"],
            f"{X}: Too many: 3: must have at most 2 items",
        ),
        (
            {"type": "array", "items": {"type": "string"}, "minItems": 2},
            ["a"],
            f"{X}: Invalid value: 1: {X} in body should have at least 2 items",
        ),
        (
            {"type": "array", "items": {"type": "integer"}},
            [1, "b"],
            f'{X}[1]: Invalid value: "string": {X}[1] in body must be of type integer: "string"',
        ),
        (
            {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
            {"a": "1", "b": "2"},
            f"{X}: Too many: 2: must have at most 1 item",
        ),
        (
            {"type": "object", "minProperties": 2, "additionalProperties": {"type": "string"}},
            {"a": "1"},
            f"{X}: Invalid value: 1: {X} in body should have at least 2 properties",
        ),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            {"a.b": "x"},
            f'{X}.a.b: Invalid value: "string": {X}.a.b in body must be of type integer: "string"',
        ),
        (
            {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
            {},
            f"{X}.name: Required value",
        ),
    ],
)
def test_arrays_and_objects(schema: dict[str, Any], value: Any, expected: str) -> None:
    """kube-openapi ``schemaSliceValidator`` and ``objectValidator``: ``maxItems`` and
    ``maxProperties`` become ``Too many``, ``minItems``/``minProperties`` ``Invalid value``,
    ``required`` ``Required value``; map keys join the path with a dot."""
    assert errors_of(schema, value) == [expected]


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "anyOf",
            "abc",
            ['<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)'],
        ),
        (
            "oneOf",
            "abc",
            [
                '<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). '
                "Found none valid"
            ],
        ),
        (
            "allOf",
            "abc",
            ['<nil>: Invalid value: "": "spec.x" must validate all the schemas (allOf)'],
        ),
    ],
)
def test_combinators(key: str, value: Any, expected: list[str]) -> None:
    """kube-openapi ``schemaPropsValidator``: the combinator's own error has no field (the
    real server reports it on a nil path) and comes with the (first) failing clause's
    errors; ``allOf`` lists its clauses' errors first."""
    second = {"minLength": 1} if key == "allOf" else {"pattern": "^z"}
    schema = {"type": "string", key: [{"maxLength": 2}, second]}
    clause = f"{X}: Too long: may not be more than 2 bytes"
    wanted = [clause, *expected] if key == "allOf" else [*expected, clause]
    assert errors_of(schema, value) == wanted


def test_not() -> None:
    """kube-openapi ``schemaPropsValidator``: ``not``."""
    assert errors_of({"type": "string", "not": {"pattern": "^a"}}, "abc") == [
        '<nil>: Invalid value: "": "spec.x" must not validate the schema (not)'
    ]


def test_additional_properties_false() -> None:
    """kube-openapi ``objectValidator``: with ``additionalProperties: false`` every key is a
    forbidden property."""
    assert errors_of({"type": "object", "additionalProperties": False}, {"a": 1}) == [
        f'{X}: Invalid value: "a": {X}.a in body is a forbidden property'
    ]


def test_status_validator_path() -> None:
    """``ValidateStatusUpdate``: the status is validated by the ``status`` property's schema
    under the ``status`` path; messages name the path inside the status."""
    compiled = compile_schema(crontab_schema())
    assert compiled is not None and compiled.properties is not None
    status = compiled.properties["status"]
    assert [str(e) for e in validate_value(status, {"replicas": -1}, prefix="status")] == [
        "status.replicas: Invalid value: -1: replicas in body should be greater than or equal to 0"
    ]


def test_cause_reason_of_type_errors() -> None:
    """``field.TypeInvalid``: the cause reason is ``FieldValueTypeInvalid``."""
    compiled = compile_schema(crontab_schema())
    found = validate_value(compiled, crontab(replicas="3"))
    assert [e.cause() for e in found] == [
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "string": spec.replicas in body must be of type integer: '
            '"string"',
            "field": "spec.replicas",
        }
    ]


def _texts(errors: list[FieldError]) -> list[str]:
    return [str(e) for e in errors]


class TestRatcheting:
    """``CRDValidationRatcheting`` (GA in 1.33; ``pkg/apiserver/validation/ratcheting.go``,
    apiserver ``cel/common/equality.go``): on update an invalid value that did not change
    keeps its errors to itself."""

    schema: Schema | None = compile_schema(crontab_schema())

    def test_unchanged_invalid_field_is_accepted(self) -> None:
        """A field equal to its old value is not validated again."""
        old = crontab(replicas=50)
        new = crontab(replicas=50, image="other")
        assert _texts(validate_value(self.schema, new, old=old)) == []
        assert _texts(validate_value(self.schema, new))[0].startswith("spec.replicas:")

    def test_changed_invalid_field_is_refused(self) -> None:
        """A field that changed is validated."""
        old, new = crontab(replicas=50), crontab(replicas=60)
        assert _texts(validate_value(self.schema, new, old=old)) == [
            "spec.replicas: Invalid value: 60: spec.replicas in body should be less than or "
            "equal to 10"
        ]

    def test_map_lists_correlate_by_key(self) -> None:
        """Items of a ``map`` list correlate by their keys, whatever their position."""
        bad = {"name": "A", "value": 5}
        old = crontab(env=[bad])
        new = crontab(env=[{"name": "B", "value": "ok"}, bad])
        assert _texts(validate_value(self.schema, new, old=old)) == []

    def test_atomic_lists_do_not_correlate(self) -> None:
        """Items of other lists do not correlate: a changed list is validated whole."""
        old = crontab(tags=["x" * 30])
        new = crontab(tags=["ok", "x" * 30])
        assert _texts(validate_value(self.schema, new, old=old)) == [
            "spec.tags[1]: Too long: may not be more than 20 bytes"
        ]


@pytest.mark.parametrize(
    ("value", "text"),
    [(3, "3"), (1e6, "1e+06"), (100000.0, "100000"), (0.5, "0.5"), (1e-5, "1e-05"), (-2.5, "-2.5")],
)
def test_go_number(value: float, text: str) -> None:
    """Go's ``%v`` of ``int64`` and ``float64`` (``strconv`` ``'g'``, shortest, exponent
    from 1e+06 and below 1e-04)."""
    assert go_number(value) == text
