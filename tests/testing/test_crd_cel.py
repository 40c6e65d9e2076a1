"""CEL rules (``x-kubernetes-validations``) through the fake's CRD write path, in process.

The rules' semantics are tested on the evaluator itself (``test_cel_*.py``); here, where the
real server runs them: at CRD create and update (``ValidateCustomResourceDefinitionOpenAPISchema``
in ``apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go``), and on custom
resource create, update and status update (``pkg/registry/customresource/strategy.go`` and
``status_strategy.go``: the CEL validator runs after the schema, embedded-resource and
list-type checks, unless one of them found a blocking error).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from aioinformer.errors import UnprocessableEntityError
from aioinformer.testing import FakeApiServer
from aioinformer.testing._apiserver._crd._cel import CompiledSchema, compile_rules

Obj = dict[str, Any]


def _crd(spec_schema: Obj, status_schema: Obj | None = None) -> Obj:
    properties: Obj = {"spec": spec_schema}
    if status_schema is not None:
        properties["status"] = status_schema
    return {
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": properties}},
                }
            ],
        },
    }


def _gadget(name: str, spec: Obj) -> Obj:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": spec,
    }


def _refused(call: Any, *args: Any, **kwargs: Any) -> Obj:
    with pytest.raises(UnprocessableEntityError) as caught:
        call(*args, **kwargs)
    status: Obj = caught.value.status
    return status


_SIZE = {"size": {"type": "integer"}, "max": {"type": "integer"}}


def test_a_crd_update_with_a_rule_that_does_not_compile_is_refused() -> None:
    """CRD updates are validated like creates: a rule naming an undeclared field fails to
    compile (``undeclared reference`` / ``undefined field``) and the update is 422; the
    stored CRD keeps its rules."""
    server = FakeApiServer()
    server.objects.create(
        "customresourcedefinitions",
        _crd({"type": "object", "properties": _SIZE, "x-kubernetes-validations": [
            {"rule": "self.size <= self.max"}
        ]}),
    )  # fmt: skip
    broken = server.objects.get("customresourcedefinitions", "gadgets.example.com")
    schema = broken["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["x-kubernetes-validations"] = [{"rule": "self.nope > 1"}]
    status = _refused(server.objects.update, "customresourcedefinitions", broken)
    [cause] = status["details"]["causes"]
    assert cause["field"] == (
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    )
    assert "compilation failed: ERROR: <input>:1:5: undefined field 'nope'" in cause["message"]


def test_field_path_reason_and_the_default_message() -> None:
    """``fieldPath`` moves the error to the named field, ``reason`` picks the cause type
    (``FieldValueRequired`` shows no value), and without ``message`` the text is
    ``failed rule: <rule>``; a rule on a scalar shows the value."""
    server = FakeApiServer()
    spec = {
        "type": "object",
        "properties": {**_SIZE, "name": {
            "type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('g-')"}]
        }},
        "x-kubernetes-validations": [
            {
                "rule": "!has(self.max) || self.size <= self.max",
                "fieldPath": ".size",
                "message": "too big",
            },
            {"rule": "has(self.max)", "reason": "FieldValueRequired", "message": "max please"},
        ],
    }  # fmt: skip
    server.objects.create("customresourcedefinitions", _crd(spec))
    status = _refused(server.objects.create, "gadgets.example.com", _gadget("g", {"size": 3}))
    assert (
        status["message"] == 'Gadget.example.com "g" is invalid: spec: Required value: max please'
    )
    status = _refused(
        server.objects.create, "gadgets.example.com", _gadget("g", {"size": 3, "max": 1})
    )
    assert (
        status["message"] == 'Gadget.example.com "g" is invalid: spec.size: Invalid value: too big'
    )
    status = _refused(
        server.objects.create, "gadgets.example.com",
        _gadget("h", {"size": 1, "max": 2, "name": "x"}),
    )  # fmt: skip
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: \"x\": failed rule: self.startsWith('g-')",
            "field": "spec.name",
        }
    ]


def test_rules_do_not_run_over_a_blocking_error() -> None:
    """``hasBlockingErr``: when the schema already found a ``Required`` (or ``NotSupported``,
    ``TooLong``, ``TooMany``, ``TypeInvalid``) error, the rules are not run and the answer
    says so (``<nil>: Invalid value: "null": some validation rules were not checked …``)."""
    server = FakeApiServer()
    spec = {
        "type": "object",
        "required": ["max"],
        "properties": _SIZE,
        "x-kubernetes-validations": [{"rule": "self.size <= self.max"}],
    }
    server.objects.create("customresourcedefinitions", _crd(spec))
    status = _refused(server.objects.create, "gadgets.example.com", _gadget("g", {"size": 3}))
    assert [c["message"] for c in status["details"]["causes"]] == [
        "Required value",
        'Invalid value: "null": some validation rules were not checked because the object was '
        "invalid; correct the existing errors to complete validation",
    ]


def test_optional_old_self_runs_on_create_and_update() -> None:
    """A transition rule with ``optionalOldSelf: true`` also runs on create, where
    ``oldSelf`` is ``optional.none()``; on update it compares with the stored value."""
    server = FakeApiServer()
    spec = {
        "type": "object",
        "properties": _SIZE,
        "x-kubernetes-validations": [
            {
                "rule": "oldSelf.hasValue() ? self.size >= oldSelf.value().size : self.size == 1",
                "optionalOldSelf": True,
                "message": "starts at 1 and never shrinks",
            }
        ],
    }
    server.objects.create("customresourcedefinitions", _crd(spec))
    status = _refused(server.objects.create, "gadgets.example.com", _gadget("g", {"size": 2}))
    assert status["message"].endswith("spec: Invalid value: starts at 1 and never shrinks")
    server.objects.create("gadgets.example.com", _gadget("g", {"size": 1}))
    server.objects.patch("gadgets.example.com", "g", {"spec": {"size": 5}})
    status = _refused(server.objects.patch, "gadgets.example.com", "g", {"spec": {"size": 4}})
    assert status["message"].endswith("spec: Invalid value: starts at 1 and never shrinks")


def test_status_rules_run_on_status_writes() -> None:
    """The status strategy runs the rules over the whole object (``status_strategy.go``
    ``ValidateUpdate``): a rule under ``status`` refuses a status write that breaks it."""
    server = FakeApiServer()
    status_schema = {
        "type": "object",
        "properties": {"ready": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.ready >= 0", "message": "ready >= 0"}],
    }
    server.objects.create(
        "customresourcedefinitions", _crd({"type": "object", "properties": _SIZE}, status_schema)
    )
    server.objects.create("gadgets.example.com", _gadget("g", {"size": 1}))
    status = _refused(
        server.objects.patch, "gadgets.example.com", "g", {"status": {"ready": -1}},
        subresource="status",
    )  # fmt: skip
    assert (
        status["message"] == 'Gadget.example.com "g" is invalid: status: Invalid value: ready >= 0'
    )
    done = server.objects.patch(
        "gadgets.example.com", "g", {"status": {"ready": 2}}, subresource="status"
    )
    assert done["status"] == {"ready": 2}


def test_compiled_rules_are_kept_per_schema() -> None:
    """A CRD's schema is compiled when the CRD is validated and when its resource is served:
    identical schemas share one compilation."""
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": _SIZE, "x-kubernetes-validations": [
            {"rule": "self.size <= self.max"}
        ]}},
    }  # fmt: skip
    first = compile_rules(schema)
    assert isinstance(first, CompiledSchema)
    assert compile_rules(copy.deepcopy(schema)) is first
