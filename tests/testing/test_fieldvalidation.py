"""Write options and ``fieldValidation`` (Strict, Warn, Ignore) as the API server applies them."""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._validation._fieldvalidation import (
    directive,
    duplicate_fields,
    go_format,
    strict_outcome,
    validate_options,
    warning_header,
)

PROBLEMS = ['unknown field "spec.replica"', 'duplicate field "metadata.name"']


def test_the_default_directive_is_warn() -> None:
    """apiserver ``handlers.fieldValidation``: an empty directive means ``Warn``."""
    assert directive(None) == directive("") == "Warn"
    assert directive("Strict") == "Strict"


def test_strict_create_and_update_answer_400_naming_every_field() -> None:
    """``transformDecodeError``: ``<Kind> in version "<v>" cannot be handled as a <Kind>:
    strict decoding error: …`` (400 BadRequest), every problem listed
    (apimachinery ``runtime.strictDecodingError``)."""
    with pytest.raises(StatusFailure) as caught:
        strict_outcome(
            PROBLEMS, directive="Strict", operation="create", kind="Deployment", version="v1"
        )
    assert (caught.value.code, caught.value.reason) == (400, "BadRequest")
    assert caught.value.message == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.replica", duplicate field "metadata.name"'
    )


def test_strict_patches_answer_422_on_the_patch() -> None:
    """The patch handlers (apiserver ``handlers/patch.go``): JSON and merge patches print the
    patched object, strategic patches the patch as Go's ``%+v``; 422 with an empty kind."""
    with pytest.raises(StatusFailure) as caught:
        strict_outcome(
            PROBLEMS[:1], directive="Strict", operation="merge", patched={"spec": {"replica": 3}}
        )
    assert caught.value.code == 422
    assert caught.value.message == (
        ' "" is invalid: patch: Invalid value: "{\\"spec\\":{\\"replica\\":3}}": strict decoding '
        'error: unknown field "spec.replica"'
    )
    details: dict[str, Any] = caught.value.details or {}
    assert details["causes"][0]["field"] == "patch"
    with pytest.raises(StatusFailure) as strategic:
        strict_outcome(
            PROBLEMS[:1],
            directive="Strict",
            operation="strategic",
            patched={"spec": {"replica": 3}},
        )
    assert 'Invalid value: "map[spec:map[replica:3]]"' in strategic.value.message
    with pytest.raises(StatusFailure) as applied:
        strict_outcome(PROBLEMS[1:], directive="Strict", operation="apply")
    assert (applied.value.code, applied.value.message) == (
        400,
        'error strict decoding patch: duplicate field "metadata.name"',
    )


def test_warn_gives_one_warning_per_problem_and_ignore_nothing() -> None:
    """``addStrictDecodingWarnings``: one warning per problem (repeats once); ``Ignore``
    drops the fields silently."""
    assert strict_outcome(PROBLEMS * 2, directive="Warn", operation="create") == PROBLEMS
    assert strict_outcome(PROBLEMS, directive="Ignore", operation="create") == []
    assert strict_outcome([], directive="Strict", operation="create") == []


def test_warning_header_format() -> None:
    """``NewWarningHeader(299, "-", text)``: ``299 - "<text>"`` with ``"`` and ``\\`` escaped
    (apimachinery ``util/net/http.go``)."""
    assert warning_header('unknown field "spec.replica"') == (
        '299 - "unknown field \\"spec.replica\\""'
    )


def test_duplicate_fields_in_document_order_with_paths() -> None:
    """sigs.k8s.io/json's strict decoder reports repeated keys where they occur, nested
    ones included, with list items as ``[i]``."""
    body = (
        b'{"spec":{"replicas":1,"replicas":2,"template":{"spec":{"containers":'
        b'[{"name":"a","name":"b"}]}}},"spec":{}}'
    )
    assert duplicate_fields(body) == [
        'duplicate field "spec.replicas"',
        'duplicate field "spec.template.spec.containers[0].name"',
        'duplicate field "spec"',
    ]
    assert duplicate_fields(b"not json") == []


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        (
            "CreateOptions",
            {"dry_run": ["Yes"]},
            'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Yes"]: '
            'supported values: "All"',
        ),
        (
            "UpdateOptions",
            {"field_validation": "Loud"},
            'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: '
            '"Loud": supported values: "", "Ignore", "Strict", "Warn"',
        ),
        (
            "PatchOptions",
            {"patch_type": "apply"},
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required '
            "for apply patch",
        ),
        (
            "PatchOptions",
            {"patch_type": "merge", "force": True},
            'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for '
            "non-apply patch",
        ),
        (
            "CreateOptions",
            {"field_manager": "m" * 129},
            'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more '
            "than 128 bytes",
        ),
    ],
)
def test_option_validation(kind: str, options: dict[str, Any], message: str) -> None:
    """``ValidateCreateOptions``/``ValidateUpdateOptions``/``ValidatePatchOptions``
    (apimachinery ``pkg/apis/meta/v1/validation``), answered as
    ``NewInvalid(GroupKind{meta.k8s.io, <kind>}, "", errs)``."""
    with pytest.raises(StatusFailure) as caught:
        validate_options(kind, **options)
    assert (caught.value.code, caught.value.message) == (422, message)
    assert (caught.value.details or {})["group"] == "meta.k8s.io"


def test_valid_options_pass() -> None:
    """``dryRun: [All]``, any known directive and a short manager are accepted."""
    validate_options(
        "PatchOptions",
        dry_run=["All"],
        field_validation="Strict",
        patch_type="apply",
        field_manager="kubectl",
    )


def test_go_format_is_percent_plus_v() -> None:
    """``fmt.Sprintf("%+v", map[string]interface{})``: sorted keys, space-separated."""
    assert (
        go_format({"b": [1, "x", None, True], "a": {"c": 1.5}})
        == "map[a:map[c:1.5] b:[1 x <nil> true]]"
    )
