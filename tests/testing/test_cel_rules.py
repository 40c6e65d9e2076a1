"""Rule semantics. Each test names the Kubernetes source its expectation comes from
(apiextensions-apiserver pkg/apiserver/schema/cel/validation.go = VALIDATION,
compilation.go = COMPILATION, pkg/apis/apiextensions/validation/validation.go = CRDVALIDATION,
apiserver pkg/cel/common/valuesunstructured.go = VALUES, schemas.go = SCHEMAS, escaping.go,
and the docs page "Validation rules" / CRD docs = DOCS)."""

from __future__ import annotations

from aioinformer.testing._apiserver._crd._cel import blocking_error, validate
from aioinformer.testing._apiserver._validation._fielderrors import FieldError

from .cel_support import compiled, crd_errors, crd_schema, messages, obj

REPLICAS = crd_schema(
    {
        "type": "object",
        "x-kubernetes-validations": [
            {
                "rule": "self.minReplicas <= self.replicas",
                "message": "replicas should be greater than or equal to minReplicas.",
            }
        ],
        "properties": {"replicas": {"type": "integer"}, "minReplicas": {"type": "integer"}},
    }
)


def test_docs_min_replicas_rejects_with_message() -> None:
    """DOCS example; VALIDATION: object value omitted (1.35+), message trimmed."""
    assert messages(REPLICAS, obj({"replicas": 1, "minReplicas": 2})) == [
        "spec: Invalid value: replicas should be greater than or equal to minReplicas."
    ]
    assert messages(REPLICAS, obj({"replicas": 3, "minReplicas": 2})) == []


def test_cause_shape() -> None:
    """VALIDATION: field.Invalid -> cause reason FieldValueInvalid, field = the node's path."""
    [error] = validate(compiled(REPLICAS), obj({"replicas": 1, "minReplicas": 2}))
    assert error.cause() == {
        "reason": "FieldValueInvalid",
        "field": "spec",
        "message": "Invalid value: replicas should be greater than or equal to minReplicas.",
    }


def test_default_message_is_failed_rule() -> None:
    """VALIDATION ruleMessageOrDefault: 'failed rule: <rule trimmed>'."""
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [{"rule": " self.a > 1 "}],
            "properties": {"a": {"type": "integer"}},
        }
    )
    assert messages(schema, obj({"a": 0})) == ["spec: Invalid value: failed rule: self.a > 1"]


def test_scalar_value_is_shown() -> None:
    """VALIDATION: scalar values are the bad value (quoted strings, plain numbers)."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "s": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self.startsWith('x')"}],
                },
                "n": {
                    "type": "integer",
                    "x-kubernetes-validations": [{"rule": "self < 10", "message": "too big"}],
                },
            },
        }
    )
    assert messages(schema, obj({"s": "abc", "n": 12})) == [
        "spec.s: Invalid value: \"abc\": failed rule: self.startsWith('x')",
        "spec.n: Invalid value: 12: too big",
    ]


def test_root_rule_path_is_nil_and_sees_metadata_name() -> None:
    """VALIDATION fldPath nil at the root; SCHEMAS WithTypeAndObjectMeta: name visible."""
    schema = crd_schema(
        {"type": "object"},
        **{"x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('my-')"}]},
    )
    assert messages(schema, obj({}) | {"metadata": {"name": "other"}}) == [
        "<nil>: Invalid value: failed rule: self.metadata.name.startsWith('my-')"
    ]
    assert messages(schema, obj({})) == []


def test_root_metadata_only_name_and_generate_name() -> None:
    """SCHEMAS WithTypeAndObjectMeta: metadata.labels is not a field (compile error)."""
    schema = crd_schema(
        {"type": "object"},
        **{"x-kubernetes-validations": [{"rule": "self.metadata.labels.size() > 0"}]},
    )
    [error] = crd_errors(schema)
    assert "undefined field 'labels'" in error


def test_transition_rule_immutability() -> None:
    """DOCS: self == oldSelf with 'Value is immutable'; VALIDATION: skipped without old value."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {"rule": "self == oldSelf", "message": "Value is immutable"}
                    ],
                }
            },
        }
    )
    assert messages(schema, obj({"name": "a"})) == []
    assert messages(schema, obj({"name": "b"}), obj({"name": "a"})) == [
        'spec.name: Invalid value: "b": Value is immutable'
    ]
    assert messages(schema, obj({"name": "a"}), obj({"name": "a"})) == []


def test_transition_rule_skipped_when_field_new() -> None:
    """VALIDATION: 'transition rules are evaluated only if there is a comparable existing value'."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
                }
            },
        }
    )
    assert messages(schema, obj({"name": "b"}), obj({})) == []


def test_docs_has_oldself_rule() -> None:
    """DOCS: '!has(oldSelf.x) || has(self.x)' - a field once set may not be removed."""
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "!has(oldSelf.x) || has(self.x)", "message": "x may not be removed"}
            ],
            "properties": {"x": {"type": "string"}},
        }
    )
    assert messages(schema, obj({}), obj({"x": "a"})) == [
        "spec: Invalid value: x may not be removed"
    ]
    assert messages(schema, obj({"x": "b"}), obj({})) == []


def test_optional_old_self() -> None:
    """COMPILATION: optionalOldSelf gives oldSelf optional(T); VALIDATION: runs on create too."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "v": {
                    "type": "integer",
                    "x-kubernetes-validations": [
                        {
                            "rule": "oldSelf.hasValue() ? self >= oldSelf.value() : self < 10",
                            "optionalOldSelf": True,
                            "message": "bad",
                        }
                    ],
                }
            },
        }
    )
    assert messages(schema, obj({"v": 20})) == ["spec.v: Invalid value: 20: bad"]
    assert messages(schema, obj({"v": 5})) == []
    assert messages(schema, obj({"v": 4}), obj({"v": 5})) == ["spec.v: Invalid value: 4: bad"]
    assert messages(schema, obj({"v": 50}), obj({"v": 5})) == []


def test_nested_items_and_additional_properties_scoping() -> None:
    """VALIDATION validateArray/validateMap: self is each item / each map value."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "list": {
                    "type": "array",
                    "items": {
                        "type": "string",
                        "x-kubernetes-validations": [
                            {"rule": "self.size() <= 3", "message": "long"}
                        ],
                    },
                },
                "map": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "integer",
                        "x-kubernetes-validations": [{"rule": "self > 0", "message": "positive"}],
                    },
                },
            },
        }
    )
    assert messages(schema, obj({"list": ["ab", "abcd"], "map": {"a": 1, "b": -1}})) == [
        'spec.list[1]: Invalid value: "abcd": long',
        "spec.map[b]: Invalid value: -1: positive",
    ]


def test_docs_all_keys_start_with_x() -> None:
    """DOCS: self.all(k, k.startsWith('x')) over a map's keys."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "m": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "x-kubernetes-validations": [{"rule": "self.all(k, k.startsWith('x'))"}],
                }
            },
        }
    )
    assert messages(schema, obj({"m": {"xa": "1"}})) == []
    assert messages(schema, obj({"m": {"ya": "1"}})) == [
        "spec.m: Invalid value: failed rule: self.all(k, k.startsWith('x'))"
    ]


def test_message_expression() -> None:
    """VALIDATION evalMessageExpression: string result trimmed; errors/empty fall back."""
    rule = {
        "rule": "self.x < 5",
        "message": "fallback",
        "messageExpression": "'x is ' + string(self.x)",
    }
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [rule],
            "properties": {"x": {"type": "integer"}},
        }
    )
    assert messages(schema, obj({"x": 7})) == ["spec: Invalid value: x is 7"]
    rule["messageExpression"] = "'   '"
    assert messages(schema, obj({"x": 7})) == ["spec: Invalid value: fallback"]
    rule["messageExpression"] = "string(1/0)"
    assert messages(schema, obj({"x": 7})) == ["spec: Invalid value: fallback"]


def test_message_expression_must_be_string() -> None:
    """COMPILATION: 'messageExpression must evaluate to a string'."""
    schema = crd_schema(
        {"type": "object", "x-kubernetes-validations": [{"rule": "true", "messageExpression": "1"}]}
    )
    [error] = crd_errors(schema)
    assert error.endswith(": messageExpression must evaluate to a string")
    assert error.startswith(
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].messageEx"
        "pression: Invalid value: apiextensions.ValidationRule{"
    )


def test_reasons() -> None:
    """VALIDATION fieldErrorForReason: Forbidden/Required show no value; Duplicate no detail."""

    def one(reason: str) -> list[str]:
        schema = crd_schema(
            {
                "type": "object",
                "properties": {
                    "s": {
                        "type": "string",
                        "x-kubernetes-validations": [
                            {"rule": "false", "message": "m", "reason": reason}
                        ],
                    }
                },
            }
        )
        return messages(schema, obj({"s": "v"}))

    assert one("FieldValueForbidden") == ["spec.s: Forbidden: m"]
    assert one("FieldValueRequired") == ["spec.s: Required value: m"]
    assert one("FieldValueDuplicate") == ['spec.s: Duplicate value: "v"']
    assert one("FieldValueInvalid") == ['spec.s: Invalid value: "v": m']
    [error] = validate(
        compiled(
            crd_schema(
                {
                    "type": "object",
                    "x-kubernetes-validations": [
                        {"rule": "false", "reason": "FieldValueForbidden"}
                    ],
                }
            )
        ),
        obj({}),
    )
    assert error.cause()["reason"] == "FieldValueForbidden"


def test_field_path() -> None:
    """VALIDATION ValidFieldPath: the error is reported at the rule's fieldPath."""
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.a.b > 0", "fieldPath": ".a.b", "message": "b"},
                {"rule": "self.m['k'] > 0", "fieldPath": ".m['k']", "message": "k"},
            ],
            "properties": {
                "a": {"type": "object", "properties": {"b": {"type": "integer"}}},
                "m": {"type": "object", "additionalProperties": {"type": "integer"}},
            },
        }
    )
    assert messages(schema, obj({"a": {"b": 0}, "m": {"k": 0}})) == [
        "spec.a.b: Invalid value: b",
        "spec.m[k]: Invalid value: k",
    ]


def test_invalid_field_path_at_crd_creation() -> None:
    """CRDVALIDATION pathValid: 'must be a valid path'."""
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [{"rule": "true", "fieldPath": ".nope"}],
            "properties": {"a": {"type": "integer"}},
        }
    )
    assert crd_errors(schema) == [
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].fieldPath: "
        'Invalid value: ".nope": must be a valid path'
    ]


def test_compile_error_at_crd_creation() -> None:
    """COMPILATION 'compilation failed: ' + issues; CRDVALIDATION Invalid(rule, ValidationRule)."""
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [{"rule": "self.x <"}],
            "properties": {"x": {"type": "integer"}},
        }
    )
    [error] = crd_errors(schema)
    assert error == (
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: "
        'Invalid value: apiextensions.ValidationRule{Rule:"self.x <", Message:"", '
        'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", '
        "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:9: Syntax error: "
        "mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', "
        "'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self.x <\n | "
        "........^"
    )


def test_undefined_field_and_type_mismatch() -> None:
    """COMPILATION: the checker knows the schema's fields and types (cel-go wording)."""
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [{"rule": "self.nope == 1"}, {"rule": "self.x == 'a'"}],
            "properties": {"x": {"type": "integer"}},
        }
    )
    errors = crd_errors(schema)
    assert "compilation failed: ERROR: <input>:1:5: undefined field 'nope'" in errors[0]
    assert "found no matching overload for '_==_' applied to '(int, string)'" in errors[1]


def test_rule_must_return_bool() -> None:
    """COMPILATION: 'cel expression must evaluate to a bool'."""
    schema = crd_schema({"type": "object", "x-kubernetes-validations": [{"rule": "1 + 1"}]})
    assert crd_errors(schema)[0].endswith(": cel expression must evaluate to a bool")


def test_old_self_on_uncorrelatable_list_items() -> None:
    """CRDVALIDATION: oldSelf under items of a non-map list is refused."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "l": {
                    "type": "array",
                    "items": {
                        "type": "string",
                        "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
                    },
                }
            },
        }
    )
    assert crd_errors(schema) == [
        "spec.validation.openAPIV3Schema.properties[spec].properties[l].items.x-kubernetes-vali"
        "dations[0].rule: "
        'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of '
        "the schema within spec.validation.openAPIV3Schema.properties[spec].properties[l]"
    ]


def test_optional_old_self_without_old_self() -> None:
    """CRDVALIDATION: 'may not be set if oldSelf is not used in rule'."""
    schema = crd_schema(
        {"type": "object", "x-kubernetes-validations": [{"rule": "true", "optionalOldSelf": True}]}
    )
    assert crd_errors(schema) == [
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].optionalO"
        "ldSelf: "
        "Invalid value: true: may not be set if oldSelf is not used in rule"
    ]


def test_map_list_transition_rule_correlates_by_key() -> None:
    """VALIDATION validateArray + makeMapList: old item found by key."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "l": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"name": {"type": "string"}, "v": {"type": "integer"}},
                        "x-kubernetes-validations": [
                            {"rule": "self.v >= oldSelf.v", "message": "no decrease"}
                        ],
                    },
                }
            },
        }
    )
    old = obj({"l": [{"name": "a", "v": 1}, {"name": "b", "v": 5}]})
    assert messages(schema, obj({"l": [{"name": "b", "v": 4}, {"name": "a", "v": 2}]}), old) == [
        "spec.l[0]: Invalid value: no decrease"
    ]


def test_set_list_equality_ignores_order() -> None:
    """VALUES unstructuredSetList.Equal / unstructuredMapList.Equal."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "s": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                    "x-kubernetes-validations": [
                        {"rule": "self == oldSelf", "message": "immutable"}
                    ],
                }
            },
        }
    )
    assert messages(schema, obj({"s": ["b", "a"]}), obj({"s": ["a", "b"]})) == []
    assert messages(schema, obj({"s": ["a", "c"]}), obj({"s": ["a", "b"]})) == [
        "spec.s: Invalid value: immutable"
    ]


def test_escaped_property_names() -> None:
    """escaping.go: reserved words and -./__ are escaped."""
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.__namespace__ == 'a' && self.x__dash__y == 1 && self.a__dot__b == 2"}
            ],
            "properties": {
                "namespace": {"type": "string"},
                "x-y": {"type": "integer"},
                "a.b": {"type": "integer"},
            },
        }
    )
    assert messages(schema, obj({"namespace": "a", "x-y": 1, "a.b": 2})) == []
    assert len(messages(schema, obj({"namespace": "b", "x-y": 1, "a.b": 2}))) == 1


def test_value_types() -> None:
    """VALUES/SCHEMAS: number -> double, date-time -> timestamp, duration, int-or-string dyn."""
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [
                {
                    "rule": "self.d == 2.0 && self.t > timestamp('2020-01-01T00:00:00Z') && "
                    "self.dur == duration('90s') && (type(self.ios) == int || "
                    "self.ios.endsWith('%'))"
                }
            ],
            "properties": {
                "d": {"type": "number"},
                "t": {"type": "string", "format": "date-time"},
                "dur": {"type": "string", "format": "duration"},
                "ios": {"x-kubernetes-int-or-string": True},
            },
        }
    )
    assert (
        messages(schema, obj({"d": 2, "t": "2021-05-01T10:00:00Z", "dur": "1m30s", "ios": "50%"}))
        == []
    )
    assert (
        messages(schema, obj({"d": 2, "t": "2021-05-01T10:00:00Z", "dur": "1m30s", "ios": 3})) == []
    )


def test_int_or_string_runtime_overload_error() -> None:
    """VALIDATION: 'no such overload' at run time (int-or-string is dyn)."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "ios": {
                    "x-kubernetes-int-or-string": True,
                    "x-kubernetes-validations": [{"rule": "self > 1"}],
                }
            },
        }
    )
    assert messages(schema, obj({"ios": "a"})) == [
        "spec.ios: Invalid value: \"\": 'no such overload': call arguments did not match a "
        "supported "
        "operator, function or macro signature for rule: self > 1"
    ]


def test_runtime_error_messages() -> None:
    """VALIDATION: '<err> evaluating rule: <rule>' with cel-go's error texts; type as value."""
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.m['missing'] == 1"},
                {"rule": "self.l[5] == 1"},
                {"rule": "1 / self.z == 1"},
            ],
            "properties": {
                "m": {"type": "object", "additionalProperties": {"type": "integer"}},
                "l": {"type": "array", "items": {"type": "integer"}},
                "z": {"type": "integer"},
            },
        }
    )
    assert messages(schema, obj({"m": {}, "l": [], "z": 0})) == [
        'spec: Invalid value: "object": no such key: missing evaluating rule: '
        "self.m['missing'] == 1",
        'spec: Invalid value: "object": index out of bounds: 5 evaluating rule: self.l[5] == 1',
        'spec: Invalid value: "object": division by zero evaluating rule: 1 / self.z == 1',
    ]


def test_null_values_are_not_validated() -> None:
    """VALIDATION validateExpressions: 'We only validate non-null values'."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "s": {
                    "type": "string",
                    "nullable": True,
                    "x-kubernetes-validations": [{"rule": "false"}],
                }
            },
        }
    )
    assert messages(schema, obj({"s": None})) == []


def test_embedded_resource_sees_type_meta() -> None:
    """SCHEMAS/VALUES: x-kubernetes-embedded-resource gets apiVersion, kind, metadata.name."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "tmpl": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                    "x-kubernetes-validations": [
                        {"rule": "self.kind == 'Pod' && self.metadata.name != ''"}
                    ],
                }
            },
        }
    )
    assert (
        messages(
            schema, obj({"tmpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}})
        )
        == []
    )
    assert (
        len(
            messages(
                schema,
                obj({"tmpl": {"apiVersion": "v1", "kind": "Svc", "metadata": {"name": "p"}}}),
            )
        )
        == 1
    )


def test_ratcheting_turns_unchanged_errors_into_warnings() -> None:
    """VALIDATION shouldRatchetError (CRDValidationRatcheting): unchanged value -> warning."""
    warnings: list[str] = []
    old = obj({"replicas": 1, "minReplicas": 2})
    assert messages(REPLICAS, obj({"replicas": 1, "minReplicas": 2}), old, warnings=warnings) == []
    assert warnings == [
        "spec: Invalid value: replicas should be greater than or equal to minReplicas."
    ]
    assert len(messages(REPLICAS, obj({"replicas": 0, "minReplicas": 2}), old)) == 1


def test_all_of_rules_run() -> None:
    """VALIDATION: allOf validators run at the same value."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "allOf": [{"x-kubernetes-validations": [{"rule": "self.x > 0", "message": "pos"}]}],
        }
    )
    assert messages(schema, obj({"x": 0})) == ["spec: Invalid value: pos"]


def test_blocking_error_shape() -> None:
    """registry/customresource strategy.go hasBlockingErr."""
    assert str(blocking_error()) == (
        '<nil>: Invalid value: "null": some validation rules were not checked because the object '
        "was invalid; correct the existing errors to complete validation"
    )
    assert isinstance(blocking_error(), FieldError)
