"""CustomResourceDefinitions checked as the API server checks them on create and update.

Specified by apiextensions-apiserver ``pkg/apis/apiextensions/validation/validation.go``
(``ValidateCustomResourceDefinition``, ``ValidateCustomResourceDefinitionUpdate``) and the v1
→ internal conversion (``pkg/apis/apiextensions/v1/conversion.go``); the expected texts of
``test/integration/validation_test.go`` where it has them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aioinformer.testing._crd_lifecycle import default_crd, prepare_crd_create, prepare_crd_update
from aioinformer.testing._crd_validation import validate_crd, validate_crd_update

from .crd_fixtures import crontab_crd

Mutation = Callable[[dict[str, Any]], None]
V1 = "spec.versions[1]"
V1_SCHEMA = f"{V1}.schema.openAPIV3Schema"


def created(mutate: Mutation | None = None) -> dict[str, Any]:
    crd = crontab_crd()
    if mutate is not None:
        mutate(crd)
    default_crd(crd)
    prepare_crd_create(crd)
    return crd


def errors(mutate: Mutation | None = None) -> list[str]:
    return [str(e) for e in validate_crd(created(mutate))]


def v1(crd: dict[str, Any]) -> dict[str, Any]:
    version: dict[str, Any] = crd["spec"]["versions"][1]
    return version


def v1_spec(crd: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = v1(crd)["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return properties["properties"]  # type: ignore[no-any-return]


def single_version(crd: dict[str, Any]) -> None:
    del crd["spec"]["versions"][0]


def test_the_documentation_sample_is_valid() -> None:
    """The CronTab of the documentation, two versions, status and scale: no errors."""
    assert errors() == []


def _set(path: str, value: Any) -> Mutation:
    def mutate(crd: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = crd
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[last] = value

    return mutate


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            _set("metadata.name", "crontab.stable.example.com"),
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
            _set("spec.scope", "Global"),
            ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
        ),
        (_set("spec.scope", ""), ["spec.scope: Required value"]),
        (
            _set("spec.names.listKind", "CronTab"),
            [
                'spec.names.listKind: Invalid value: "CronTab": kind and listKind may not be '
                "the same"
            ],
        ),
        (
            _set("spec.names.shortNames", ["c_t"]),
            [
                'spec.names.shortNames[0]: Invalid value: "c_t": a DNS-1035 label must consist '
                "of lower case alphanumeric characters or '-', start with an alphabetic "
                "character, and end with an alphanumeric character (e.g. 'my-name',  or "
                "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ],
        ),
        (
            _set("spec.names.kind", "Cron_Tab"),
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
    found = errors(_set("spec.versions.0.storage", True))
    assert found[0].startswith('spec.versions: Invalid value: [{"')
    assert found[0].endswith(": must have exactly one version marked as storage version")
    assert found[1:] == [
        'status.storedVersions: Invalid value: ["v1beta1"]: must have the storage version v1'
    ]
    found = errors(_set("spec.versions.0.name", "v1"))
    assert [text.rpartition(": ")[2] for text in found] == [
        "must contain unique version names",
        "must have the storage version v1",
    ]
    found = errors(_set("spec.versions.1.name", "V1"))
    assert found[0].startswith('spec.versions[1].name: Invalid value: "V1": a DNS-1035 label')


def test_deprecation_warning() -> None:
    """``validateDeprecationWarning``: only for deprecated versions, at most 256 characters."""
    assert errors(_set("spec.versions.1.deprecationWarning", "old")) == [
        f'{V1}.deprecationWarning: Invalid value: "old": can only be set for deprecated versions'
    ]
    text = "x" * 257
    assert errors(_set("spec.versions.0.deprecationWarning", text)) == [
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


@pytest.mark.parametrize(
    ("scale", "expected"),
    [
        (
            {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
            [],
        ),
        (
            {"statusReplicasPath": ".status.replicas"},
            [f"{V1}.subresources.scale.specReplicasPath: Required value"],
        ),
        (
            {"specReplicasPath": ".status.replicas", "statusReplicasPath": "status.replicas"},
            [
                f'{V1}.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": '
                "should be a json path under .spec",
                f'{V1}.subresources.scale.statusReplicasPath: Invalid value: "status.replicas": '
                "must be a simple json path starting with .",
            ],
        ),
        (
            {
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.replicas",
                "labelSelectorPath": ".metadata.labels",
            },
            [
                f'{V1}.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": '
                "should be a json path under either .spec or .status"
            ],
        ),
    ],
)
def test_scale_subresource(scale: dict[str, Any], expected: list[str]) -> None:
    """``ValidateCustomResourceDefinitionSubresources``: scale paths are simple JSON paths
    under ``.spec`` (replicas), ``.status`` (status replicas) or either (selector)."""
    assert errors(_set("spec.versions.1.subresources.scale", scale)) == expected


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        (
            {"name": "X", "type": "text", "jsonPath": ".spec.x"},
            'type: Invalid value: "text": must be one of boolean,date,integer,number,string',
        ),
        (
            {"name": "X", "type": "string", "format": "url", "jsonPath": ".spec.x"},
            'format: Invalid value: "url": must be one of byte,date,date-time,double,float,int32,'
            "int64,password",
        ),
        ({"name": "X", "type": "string"}, "JSONPath: Required value"),
        (
            {"name": "X", "type": "string", "jsonPath": "spec.x"},
            'JSONPath: Invalid value: "spec.x": must be a simple json path starting with .',
        ),
    ],
)
def test_printer_columns(column: dict[str, Any], expected: str) -> None:
    """``ValidateCustomResourceColumnDefinition`` (the path field is spelt ``JSONPath``, as in
    the internal type)."""

    def mutate(crd: dict[str, Any]) -> None:
        v1(crd)["additionalPrinterColumns"] = [column]

    assert errors(mutate) == [f"{V1}.additionalPrinterColumns[0].{expected}"]


def test_selectable_fields() -> None:
    """``ValidateCustomResourceSelectableFields``: paths to string, boolean or integer
    fields outside ``metadata``, unique, at most 8."""

    def mutate(crd: dict[str, Any]) -> None:
        v1(crd)["selectableFields"] = [
            {"jsonPath": ".spec.image"},
            {"jsonPath": ".spec.nothing"},
            {"jsonPath": ".spec.env"},
            {"jsonPath": ".spec.image"},
        ]

    where = f"{V1}.selectableFields"
    assert errors(mutate) == [
        f'{where}[1].jsonPath: Invalid value: ".spec.nothing": is an invalid path: does not '
        "refer to a valid field",
        f'{where}[2].jsonPath: Invalid value: ".spec.env": must point to a field of type '
        "string, boolean or integer. Enum string fields and strings with formats are allowed.",
        f'{where}[3].jsonPath: Duplicate value: ".spec.image"',
    ]


@pytest.mark.parametrize(
    ("conversion", "expected"),
    [
        ({"strategy": "None"}, []),
        (
            {"strategy": "Magic"},
            [
                'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", '
                '"Webhook"'
            ],
        ),
        (
            {"strategy": "Webhook"},
            [
                "spec.conversion.webhookClientConfig: Required value: required when strategy is "
                "set to Webhook",
                "spec.conversion.conversionReviewVersions: Required value",
            ],
        ),
        (
            {
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {"url": "https://convert.example.com"},
                    "conversionReviewVersions": ["v1"],
                },
            },
            [
                "spec.conversion.strategy: Forbidden: the fake API server calls no conversion "
                "webhooks: use strategy None (objects then change only their apiVersion between "
                "versions) or a single version"
            ],
        ),
        (
            {"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"]}},
            [
                "spec.conversion.conversionReviewVersions: Forbidden: should not be set when "
                "strategy is not set to Webhook"
            ],
        ),
    ],
)
def test_conversion(conversion: dict[str, Any], expected: list[str]) -> None:
    """``validateCustomResourceConversion`` (internal field names: ``webhookClientConfig``,
    ``conversionReviewVersions``); a valid ``Webhook`` conversion is refused by the fake for a
    CRD with several versions, since it cannot call the webhook."""
    assert errors(_set("spec.conversion", conversion)) == expected


def test_webhook_conversion_of_a_single_version_is_accepted() -> None:
    """A single version never converts: its webhook would never be called."""
    webhook = {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {"url": "https://c.example.com"},
            "conversionReviewVersions": ["v1"],
        },
    }

    def mutate(crd: dict[str, Any]) -> None:
        single_version(crd)
        crd["spec"]["conversion"] = webhook

    assert errors(mutate) == []


def test_api_approval_for_protected_groups() -> None:
    """``validateAPIApproval``: groups under ``k8s.io``/``kubernetes.io`` need the
    ``api-approved.kubernetes.io`` annotation (a URL, or a reason starting ``unapproved``)."""

    def protected(annotation: str | None) -> Mutation:
        def mutate(crd: dict[str, Any]) -> None:
            crd["spec"]["group"] = "stable.k8s.io"
            crd["metadata"]["name"] = "crontabs.stable.k8s.io"
            if annotation is not None:
                crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": annotation}

        return mutate

    assert errors(protected(None)) == [
        "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups "
        'must have approval annotation "api-approved.kubernetes.io", see '
        "https://github.com/kubernetes/enhancements/pull/1111"
    ]
    assert errors(protected("https://github.com/kubernetes/enhancements/pull/1111")) == []
    assert errors(protected("unapproved, testing")) == []
    assert errors(protected("maybe"))[0].startswith(
        'metadata.annotations[api-approved.kubernetes.io]: Invalid value: "maybe": protected'
    )


def test_preserve_unknown_fields_true_is_refused() -> None:
    """``validatePreserveUnknownFields``: v1 CRDs prune; ``spec.preserveUnknownFields: true``
    is refused on create."""
    assert errors(_set("spec.preserveUnknownFields", True)) == [
        "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set "
        "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
    ]


def test_missing_schema() -> None:
    """``requireOpenAPISchema``: every version has a schema."""

    def mutate(crd: dict[str, Any]) -> None:
        del v1(crd)["schema"]

    assert errors(mutate) == [f"{V1_SCHEMA}: Required value"]


def updated(old: dict[str, Any], mutate: Mutation, *, established: bool = True) -> list[str]:
    new = created()
    new["metadata"].update(resourceVersion="7")
    mutate(new)
    prepare_crd_update(new, old)
    return [str(e) for e in validate_crd_update(new, old, established=established)]


def test_update_immutable_fields() -> None:
    """``validateCustomResourceDefinitionSpecUpdate``: group and plural never change; scope
    and kind not once the CRD is established."""
    old = created()
    old["metadata"].update(resourceVersion="7")

    def rename(crd: dict[str, Any]) -> None:
        crd["spec"]["names"]["kind"] = "Cron"
        crd["spec"]["names"]["listKind"] = "CronList"
        crd["spec"]["scope"] = "Cluster"

    assert updated(old, rename) == [
        'spec.scope: Invalid value: "Cluster": field is immutable',
        'spec.names.kind: Invalid value: "Cron": field is immutable',
    ]
    assert updated(old, rename, established=False) == []

    def regroup(crd: dict[str, Any]) -> None:
        crd["spec"]["names"]["plural"] = "crons"

    assert 'spec.names.plural: Invalid value: "crons": field is immutable' in updated(old, regroup)


def test_update_keeps_rules_the_old_crd_broke() -> None:
    """An update does not newly require what the stored CRD already breaks
    (``requireValidPropertyType``, ``requireAtomicSetType``, ``requireMapListKeysMapSetValidation``,
    ``requirePrunedDefaults``)."""

    def bad_set(crd: dict[str, Any]) -> None:
        v1_spec(crd)["pairs"] = {
            "type": "array",
            "x-kubernetes-list-type": "set",
            "items": {"type": "object", "properties": {"id": {"type": "string"}}},
        }

    old = created(bad_set)
    old["metadata"].update(resourceVersion="7")
    assert updated(old, bad_set) == []
    assert len(errors(bad_set)) == 1


def test_stored_versions() -> None:
    """``ValidateCustomResourceDefinitionStoredVersions``: a stored version stays listed in
    ``spec.versions``."""
    old = created()
    old["metadata"].update(resourceVersion="7")
    old["status"]["storedVersions"] = ["v1beta1", "v1"]
    assert updated(old, single_version) == [
        'status.storedVersions[0]: Invalid value: "v1beta1": missing from spec.versions; v1beta1 '
        "was previously a storage version, and must remain in spec.versions until a storage "
        "migration ensures no data remains persisted in v1beta1 and removes v1beta1 from "
        "status.storedVersions"
    ]
