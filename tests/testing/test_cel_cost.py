"""Cost (approximated): CRDVALIDATION getCostErrorMessage / StaticEstimatedCostLimit and
VALIDATION's runtime per-call limit. See crdcel/_cost.py for the model."""

from __future__ import annotations

from .cel_support import crd_errors, crd_schema, messages, obj


def test_unbounded_nested_iteration_is_refused_at_crd_creation() -> None:
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "l": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-validations": [
                        {"rule": "self.all(x, self.all(y, x.contains(y)))"}
                    ],
                }
            },
        }
    )
    errors = crd_errors(schema)
    assert errors[1:] == [
        "spec.validation.openAPIV3Schema.properties[spec].properties[l].x-kubernetes-validation"
        "s[0].rule: "
        "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire "
        "OpenAPIv3 schema",
        "spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule "
        "cost total "
        "for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try "
        "simplifying the "
        "rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings "
        "are declared)",
    ]
    assert errors[0] == (
        "spec.validation.openAPIV3Schema.properties[spec].properties[l].x-kubernetes-validation"
        "s[0].rule: "
        "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try "
        "simplifying "
        "the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and "
        "strings "
        "are declared)"
    )


def test_bounded_iteration_is_accepted() -> None:
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "l": {
                    "type": "array",
                    "maxItems": 10,
                    "items": {"type": "string", "maxLength": 10},
                    "x-kubernetes-validations": [
                        {"rule": "self.all(x, self.all(y, x.contains(y)))"}
                    ],
                }
            },
        }
    )
    assert messages(schema, obj({"l": ["a"]})) == []


def test_runtime_per_call_limit_follows_actual_iterations() -> None:
    """The run-time charge grows with the data present (limit lowered as k8s tests do)."""
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "l": {
                    "type": "array",
                    "maxItems": 100,
                    "items": {"type": "integer"},
                    "x-kubernetes-validations": [
                        {"rule": "self.all(i, self.all(j, i + j >= 0))"},
                        {"rule": "true"},
                    ],
                }
            },
        }
    )
    assert messages(schema, obj({"l": list(range(10))}), per_call_limit=1000) == []
    assert messages(schema, obj({"l": list(range(100))}), per_call_limit=1000) == [
        "spec.l: Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no "
        "further validation rules will be run due to call cost exceeds limit for rule: "
        "self.all(i, self.all(j, i + j >= 0))"
    ]


def test_runtime_budget_exhausted() -> None:
    schema = crd_schema(
        {
            "type": "object",
            "properties": {
                "l": {
                    "type": "array",
                    "maxItems": 100,
                    "items": {"type": "integer"},
                    "x-kubernetes-validations": [
                        {"rule": "self.all(i, i >= 0)"},
                        {"rule": "self.all(i, i >= 0)"},
                    ],
                }
            },
        }
    )
    assert messages(schema, obj({"l": list(range(50))}), budget=60) == [
        'spec.l: Invalid value: "array": validation failed due to running out of cost budget, no '
        "further validation rules will be run"
    ]
