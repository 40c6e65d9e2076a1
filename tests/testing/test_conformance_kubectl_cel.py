"""Issue 23's CEL acceptance lines (``x-kubernetes-validations``), driven by kubectl 1.32
against the standalone fake server.

Rules are evaluated by apiextensions-apiserver's ``pkg/apiserver/schema/cel/validation.go``
(``Validator.Validate``), called from the custom resource strategies
(``pkg/registry/customresource/strategy.go``: ``Validate``, ``ValidateUpdate``; the status
strategy ``status_strategy.go``), and compiled when the CRD is written
(``pkg/apis/apiextensions/validation/validation.go``,
``ValidateCustomResourceDefinitionOpenAPISchema``, with ``cel.Compile`` of
``pkg/apiserver/schema/cel/compilation.go``). The message form is 1.35+'s: a failed rule on
an object shows no value (``spec: Invalid value: <message>``). Skipped without kubectl.
"""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from typing import Any

import pytest

from .standalone import Kubectl, Standalone

pytestmark = pytest.mark.skipif(
    shutil.which("kubectl") is None, reason="kubectl is not on PATH (these tests drive kubectl)"
)


def _widget_crd(group: str, spec_rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "x-kubernetes-validations": spec_rules,
                                    "properties": {
                                        "size": {"type": "integer"},
                                        "color": {"type": "string", "default": "red"},
                                        "name": {
                                            "type": "string",
                                            "x-kubernetes-validations": [
                                                {
                                                    "rule": "self == oldSelf",
                                                    "message": "Value is immutable",
                                                }
                                            ],
                                        },
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {"phase": {"type": "string"}},
                                    "x-kubernetes-validations": [
                                        {
                                            "rule": "self.phase in ['Pending', 'Ready']",
                                            "messageExpression": "'unknown phase ' + self.phase",
                                            "reason": "FieldValueForbidden",
                                        }
                                    ],
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


_BIG_BLUE = {
    "rule": "self.size <= 5 || self.color == 'blue'",
    "message": "big widgets must be blue",
}


def _widget(group: str, widget: str, **spec: Any) -> str:
    meta = {"name": widget}
    return json.dumps(
        {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": meta, "spec": spec}
    )


def _install(kubectl: Kubectl, group: str, rules: list[dict[str, Any]]) -> None:
    kubectl("apply", "-f", "-", stdin=json.dumps(_widget_crd(group, rules)))
    kubectl("wait", "--for=condition=Established", "--timeout=20s", f"crd/widgets.{group}")


def test_a_cel_rule_rejects_a_violating_widget_with_422_and_its_message(
    kubectl: Kubectl, standalone_server: Standalone
) -> None:
    """Issue 23 acceptance: ``self.size <= 5 || self.color == 'blue'`` with ``message: big
    widgets must be blue`` rejects ``{size: 7}`` (``color`` defaults to ``red`` before the
    rules run): 422 ``Invalid``, cause ``{reason: FieldValueInvalid, field: spec}``, and
    kubectl prints ``The Widget "w3" is invalid: spec: Invalid value: big widgets must be
    blue`` (``validation.go`` ``Validate`` → ``field.Invalid(fldPath, sts.Type,
    ruleMessageOrDefault(rule))``; the object value is omitted since 1.35). A conforming
    widget is created."""
    group = "cel.example.com"
    _install(kubectl, group, [_BIG_BLUE])
    refused = kubectl.fails("create", "-f", "-", stdin=_widget(group, "w3", size=7))
    assert 'The Widget "w3" is invalid: spec: Invalid value: big widgets must be blue' in refused
    kubectl("create", "-f", "-", stdin=_widget(group, "w4", size=7, color="blue"))
    kubectl("create", "-f", "-", stdin=_widget(group, "w5", size=2))
    url = f"{standalone_server.url}/apis/{group}/v1/namespaces/default/widgets"
    request = urllib.request.Request(
        url,
        data=_widget(group, "w6", size=9, color="green").encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refusal:
        urllib.request.urlopen(request, timeout=30)
    body = json.loads(refusal.value.read())
    assert (refusal.value.code, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        f'Widget.{group} "w6" is invalid: spec: Invalid value: big widgets must be blue'
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: big widgets must be blue",
            "field": "spec",
        }
    ]


def test_a_transition_rule_with_old_self_rejects_an_illegal_change(kubectl: Kubectl) -> None:
    """Issue 23 acceptance: a transition rule (``self == oldSelf``, "Value is immutable") is
    skipped on create and enforced on update (``validation.go``: rules that use ``oldSelf``
    run only when there is an old value); ``kubectl patch`` changing ``spec.name`` is refused
    with ``spec.name: Invalid value: "b": Value is immutable`` (a scalar shows its value),
    and a change elsewhere passes."""
    group = "transition.example.com"
    _install(kubectl, group, [_BIG_BLUE])
    kubectl("create", "-f", "-", stdin=_widget(group, "named", size=1, name="a"))
    refused = kubectl.fails(
        "patch", f"widgets.{group}", "named", "--type=merge", "-p", '{"spec": {"name": "b"}}'
    )
    assert 'The Widget "named" is invalid: spec.name: Invalid value: "b": Value is immutable' in (
        refused
    )
    kubectl("patch", f"widgets.{group}", "named", "--type=merge", "-p", '{"spec": {"size": 2}}')
    stored = kubectl.raw(f"/apis/{group}/v1/namespaces/default/widgets/named")
    assert stored["spec"] == {"size": 2, "color": "red", "name": "a"}


def test_status_rules_run_on_status_writes_with_message_expression_and_reason(
    kubectl: Kubectl,
) -> None:
    """Rules under ``status`` run on ``/status`` writes (``status_strategy.go``
    ``ValidateUpdate`` runs the validator over the whole object): ``messageExpression``
    builds the message and ``reason: FieldValueForbidden`` makes the cause a ``Forbidden``
    (no value shown: ``fieldErrorForReason``)."""
    group = "status.example.com"
    _install(kubectl, group, [_BIG_BLUE])
    kubectl("create", "-f", "-", stdin=_widget(group, "s", size=1))
    patch = '{"status": {"phase": "Gone"}}'
    refused = kubectl.fails(
        "patch", f"widgets.{group}", "s", "--subresource=status", "--type=merge", "-p", patch
    )
    assert 'The Widget "s" is invalid: status: Forbidden: unknown phase Gone' in refused
    kubectl(
        "patch", f"widgets.{group}", "s", "--subresource=status", "--type=merge",
        "-p", '{"status": {"phase": "Ready"}}',
    )  # fmt: skip


def test_a_rule_that_does_not_compile_refuses_the_crd(kubectl: Kubectl) -> None:
    """A rule the CEL checker refuses makes the CRD itself invalid (422 at create,
    ``ValidateCustomResourceDefinitionOpenAPISchema``: ``field.Invalid(…rule, rule,
    "compilation failed: " + issues)``), with cel-go's issue text."""
    group = "broken.example.com"
    crd = _widget_crd(group, [{"rule": "self.size > 'x'"}])
    refused = kubectl.fails("create", "-f", "-", stdin=json.dumps(crd))
    assert f'The CustomResourceDefinition "widgets.{group}" is invalid' in refused
    assert (
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: "
        "Invalid value: apiextensions.ValidationRule{Rule:\"self.size > 'x'\"" in refused
    )
    assert "compilation failed: ERROR: <input>:1:11: found no matching overload for '_>_' " in (
        refused
    )
