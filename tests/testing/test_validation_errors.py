"""Field errors and the 422 ``Invalid`` Status, as apimachinery prints them."""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._validation._fielderrors import (
    OMIT,
    FieldError,
    aggregate,
    duplicate,
    forbidden,
    go_quote,
    invalid,
    invalid_failure,
    not_found,
    not_supported,
    required,
    too_long,
    too_many,
)


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (required("spec.selector"), "spec.selector: Required value"),
        (
            required("metadata.name", "name or generateName is required"),
            "metadata.name: Required value: name or generateName is required",
        ),
        (
            invalid("spec.replicas", -1, "must be greater than or equal to 0"),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (invalid("x", "a\tb", "bad"), 'x: Invalid value: "a\\tb": bad'),
        (invalid("x", True, "bad"), "x: Invalid value: true: bad"),
        (invalid("x", 1.5, "bad"), "x: Invalid value: 1.5: bad"),
        (
            invalid("spec.template.metadata.labels", {"b": "2", "a": "<1>"}, "no"),
            'spec.template.metadata.labels: Invalid value: {"a":"\\u003c1\\u003e","b":"2"}: no',
        ),
        (invalid("x", None, "bad"), "x: Invalid value: null: bad"),
        (
            not_supported("spec.restartPolicy", "Sometimes", ["Always", "OnFailure", "Never"]),
            'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
            '"OnFailure", "Never"',
        ),
        (
            duplicate("spec.containers[1].name", "app"),
            'spec.containers[1].name: Duplicate value: "app"',
        ),
        (forbidden("spec", "nope"), "spec: Forbidden: nope"),
        (
            too_long("metadata.annotations", 262144),
            "metadata.annotations: Too long: may not be more than 262144 bytes",
        ),
        (too_long("x", 1), "x: Too long: may not be more than 1 byte"),
        (too_many("x", 25, 20), "x: Too many: 25: must have at most 20 items"),
        (
            not_found("spec.containers[0].volumeMounts[0].name", "data"),
            'spec.containers[0].volumeMounts[0].name: Not found: "data"',
        ),
        (FieldError("FieldValueInvalid", "x", OMIT, "bad"), "x: Invalid value: bad"),
    ],
)
def test_error_texts(error: FieldError, text: str) -> None:
    """``field.Error.Error()`` is ``<field>: <ErrorBody>``; the body shows no value for
    Required/Forbidden/TooLong, numbers and booleans as ``%v``, strings as ``%q`` and other
    values as ``json.Marshal`` (HTML-escaped) — apimachinery
    ``pkg/util/validation/field/errors.go`` (``ErrorBody``, ``NotSupported``, ``TooLong``)."""
    assert str(error) == text


def test_go_quote_escapes_like_strconv_quote() -> None:
    """``%q`` is ``strconv.Quote``: printable runes kept, quotes/backslashes and control
    characters escaped."""
    assert go_quote('a"b\\c\n\x01é') == '"a\\"b\\\\c\\n\\x01é"'


def test_aggregate_is_one_message_or_a_bracketed_list_without_repeats() -> None:
    """``ErrorList.ToAggregate`` drops repeated messages; an aggregate of one prints the
    message, of several ``[m1, m2]`` (apimachinery ``util/errors.aggregate.Error``)."""
    one = required("spec.selector")
    two = invalid("spec.replicas", -1, "must be greater than or equal to 0")
    assert aggregate([one]) == "spec.selector: Required value"
    assert aggregate([one, two, one]) == (
        "[spec.selector: Required value, spec.replicas: Invalid value: -1: must be greater "
        "than or equal to 0]"
    )


def test_invalid_status_is_new_invalid() -> None:
    """``errors.NewInvalid(GroupKind, name, errs)``: code 422, reason Invalid,
    ``details.kind`` the Kind (not the resource), ``details.group``, every error a cause
    (``reason``, ``message`` = ErrorBody, ``field``), message ``Kind.group "name" is invalid:
    …`` (apimachinery ``pkg/api/errors/errors.go``)."""
    errors = [required("spec.selector"), required("spec.selector")]
    failure = invalid_failure("apps", "Deployment", "web", errors)
    assert (failure.code, failure.reason) == (422, "Invalid")
    assert failure.message == 'Deployment.apps "web" is invalid: spec.selector: Required value'
    details: dict[str, Any] = failure.details or {}
    assert details == {
        "name": "web",
        "group": "apps",
        "kind": "Deployment",
        "causes": [
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.selector"}
        ]
        * 2,
    }
    core = invalid_failure("", "ConfigMap", "c", [forbidden("data", "x")])
    assert core.message == 'ConfigMap "c" is invalid: data: Forbidden: x'
    assert "group" not in (core.details or {})
