"""CustomResourceDefinitions checked as the API server checks them on create: names,
versions and schemas.

Specified by apiextensions-apiserver ``pkg/apis/apiextensions/validation/validation.go``
(``ValidateCustomResourceDefinition``) and the v1 → internal conversion
(``pkg/apis/apiextensions/v1/conversion.go``); the expected texts of
``test/integration/validation_test.go`` where it has them.
"""

from __future__ import annotations

from typing import Any

import pytest

from .crd_fixtures.helpers import (
    V1,
    V1_SCHEMA,
    Mutation,
    errors,
    set_field,
    single_version,
    v1,
    v1_spec,
)


def test_the_documentation_sample_is_valid() -> None:
    """The CronTab of the documentation, two versions, status and scale: no errors."""
    assert errors() == []


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            set_field("metadata.name", "crontab.stable.example.com"),
            [
                'metadata.name: Invalid value: "crontab.stable.example.com": must be '
                'spec.names.plural+"."+spec.group'
            ],
        ),
        (
            lambda crd: crd.update(
                metadata={"name": "crontabs.example"}, spec=dict(crd["spec"], group="example")
            ),
            ['spec.group: Invalid value: "example": should be a domain with at least one dot'],
        ),
        (
            set_field("spec.scope", "Global"),
            ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
        ),
        (set_field("spec.scope", ""), ["spec.scope: Required value"]),
        (
            set_field("spec.names.listKind", "CronTab"),
            [
                'spec.names.listKind: Invalid value: "CronTab": kind and listKind may not be '
                "the same"
            ],
        ),
        (
            set_field("spec.names.shortNames", ["c_t"]),
            [
                'spec.names.shortNames[0]: Invalid value: "c_t": a DNS-1035 label must consist '
                "of lower case alphanumeric characters or '-', start with an alphabetic "
                "character, and end with an alphanumeric character (e.g. 'my-name',  or "
                "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ],
        ),
        (
            set_field("spec.names.kind", "Cron_Tab"),
            [
                'spec.names.kind: Invalid value: "Cron_Tab": may have mixed case, but should '
                "otherwise match: a DNS-1035 label must consist of lower case alphanumeric "
                "characters or '-', start with an alphabetic character, and end with an "
                "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
                "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                'spec.names.listKind: Invalid value: "Cron_TabList": may have mixed case, but '
                "should otherwise match: a DNS-1035 label must consist of lower case "
                "alphanumeric characters or '-', start with an alphabetic character, and end "
                "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
                "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ],
        ),
    ],
)
def test_names_group_scope(mutate: Mutation, expected: list[str]) -> None:
    """``ValidateCustomResourceDefinition``: the name is ``<plural>.<group>``, the group a
    domain with a dot, the scope ``Cluster`` or ``Namespaced``, names DNS-1035 labels (kinds in
    any case), kind and list kind distinct (``singular`` and ``listKind`` are defaulted)."""
    assert errors(mutate) == expected


def test_versions() -> None:
    """``spec.versions``: unique names, exactly one storage version (the bad value is the
    versions list); a name that is not a DNS-1035 label."""
    found = errors(set_field("spec.versions.0.storage", True))
    assert found[0].startswith('spec.versions: Invalid value: [{"')
    assert found[0].endswith(": must have exactly one version marked as storage version")
    assert found[1:] == [
        'status.storedVersions: Invalid value: ["v1beta1"]: must have the storage version v1'
    ]
    found = errors(set_field("spec.versions.0.name", "v1"))
    assert [text.rpartition(": ")[2] for text in found] == [
        "must contain unique version names",
        "must have the storage version v1",
    ]
    found = errors(set_field("spec.versions.1.name", "V1"))
    assert found[0].startswith('spec.versions[1].name: Invalid value: "V1": a DNS-1035 label')


def test_deprecation_warning() -> None:
    """``validateDeprecationWarning``: only for deprecated versions, at most 256 characters."""
    assert errors(set_field("spec.versions.1.deprecationWarning", "old")) == [
        f'{V1}.deprecationWarning: Invalid value: "old": can only be set for deprecated versions'
    ]
    text = "x" * 257
    assert errors(set_field("spec.versions.0.deprecationWarning", text)) == [
        f'spec.versions[0].deprecationWarning: Invalid value: "{text}": must be <= 256 '
        "characters long"
    ]


def test_schema_paths_per_version_and_shared() -> None:
    """Versions with different schemas are validated one by one
    (``spec.versions[i].schema.openAPIV3Schema``); identical ones once, as the internal
    ``spec.validation`` the v1 conversion makes of them."""

    def no_type(crd: dict[str, Any]) -> None:
        del v1_spec(crd)["image"]["type"]

    assert errors(no_type) == [
        f"{V1_SCHEMA}.properties[spec].properties[image].type: Required value: must not be "
        "empty for specified object fields"
    ]

    def single_without_root_type(crd: dict[str, Any]) -> None:
        single_version(crd)
        del crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["type"]

    assert errors(single_without_root_type) == [
        "spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root"
    ]

    def single_with_string_root(crd: dict[str, Any]) -> None:
        single_version(crd)
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["type"] = "string"

    assert errors(single_with_string_root) == [
        'spec.validation.openAPIV3Schema.type: Invalid value: "string": only "object" is '
        "allowed as the type at the root of the schema if the status subresource is enabled",
        'spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root',
    ]


def test_status_subresource_root_keywords() -> None:
    """With ``/status``, the root of the schema admits only some keywords (so that
    ``properties[status]`` keeps all of the status' validation)."""

    def root_enum(crd: dict[str, Any]) -> None:
        v1(crd)["schema"]["openAPIV3Schema"]["minProperties"] = 1

    found = errors(root_enum)
    assert len(found) == 1
    assert found[0].startswith(f"{V1_SCHEMA}: Invalid value: ")
    assert found[0].endswith(
        ": only [Description Type Format Title Maximum ExclusiveMaximum Minimum "
        "ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf "
        "Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] "
        "fields are allowed at the root of the schema if the status subresource is enabled"
    )


@pytest.mark.parametrize(
    ("field", "schema", "expected"),
    [
        (
            "replicas",
            {"type": "integer", "minimum": 1, "default": 0},
            "properties[replicas].default: Invalid value: 0:  in body should be greater than or "
            "equal to 1",
        ),
        (
            "image",
            {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"b": 1}},
            'properties[image].default: Invalid value: {"b":1}: must not have unknown fields',
        ),
        (
            "image",
            {"type": "string", "uniqueItems": True},
            "properties[image].uniqueItems: Forbidden: uniqueItems cannot be set to true since "
            "the runtime complexity becomes quadratic",
        ),
        (
            "image",
            {"type": "string", "$ref": "#/definitions/x"},
            "properties[image].$ref: Forbidden: $ref is not supported",
        ),
        (
            "image",
            {"type": "date"},
            'properties[image].type: Unsupported value: "date": supported values: "array", '
            '"boolean", "integer", "number", "object", "string"',
        ),
        (
            "image",
            {"type": "string", "x-kubernetes-list-type": "set"},
            'properties[image].type: Invalid value: "string": must be array if '
            "x-kubernetes-list-type is specified",
        ),
        (
            "image",
            {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"},
            'properties[image].x-kubernetes-list-type: Unsupported value: "bag": supported '
            'values: "atomic", "set", "map"',
        ),
        (
            "image",
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["id"],
                "items": {"type": "object", "properties": {"id": {"type": "string"}}},
            },
            "properties[image].items.properties[id].default: Required value: this property is "
            "in x-kubernetes-list-map-keys, so it must have a default or be a required property",
        ),
        (
            "image",
            {
                "type": "array",
                "x-kubernetes-list-type": "set",
                "items": {"type": "object", "properties": {"id": {"type": "string"}}},
            },
            "properties[image].items.x-kubernetes-map-type: Invalid value: null: must be atomic "
            "as item of a list with x-kubernetes-list-type=set",
        ),
        (
            "image",
            {"type": "object", "x-kubernetes-map-type": "granularish"},
            'properties[image].x-kubernetes-map-type: Unsupported value: "granularish": '
            'supported values: "atomic", "granular"',
        ),
        (
            "image",
            {"type": "string", "x-kubernetes-validations": [{"rule": " "}]},
            "properties[image].x-kubernetes-validations[0].rule: Required value: rule is not "
            "specified",
        ),
    ],
)
def test_schema_rules(field: str, schema: dict[str, Any], expected: str) -> None:
    """``ValidateCustomResourceDefinitionOpenAPISchema`` and ``ValidateDefaults``: defaults
    valid and pruned, unsupported keywords, list and map types, the shape of CEL rules."""

    def mutate(crd: dict[str, Any]) -> None:
        v1_spec(crd)[field] = schema

    assert errors(mutate) == [f"{V1_SCHEMA}.properties[spec].{expected}"]


def test_defaults_forbidden_in_metadata() -> None:
    """``specStandardValidatorV3``: no default in the root's ``metadata``."""

    def mutate(crd: dict[str, Any]) -> None:
        properties = v1(crd)["schema"]["openAPIV3Schema"]["properties"]
        properties["metadata"] = {"type": "object", "default": {"name": "x"}}

    assert errors(mutate) == [
        f"{V1_SCHEMA}.properties[metadata].default: Forbidden: must not be set in top-level "
        "metadata"
    ]
