"""CustomResourceDefinitions checked as the API server checks them: subresources, printer
columns, selectable fields, conversion, API approval, stored versions and updates.

Specified by apiextensions-apiserver ``pkg/apis/apiextensions/validation/validation.go``
(``ValidateCustomResourceDefinitionSubresources``, ``ValidateCustomResourceColumnDefinition``,
``ValidateCustomResourceSelectableFields``, ``validateCustomResourceConversion``,
``validateAPIApproval``, ``ValidateCustomResourceDefinitionStoredVersions``,
``ValidateCustomResourceDefinitionUpdate``).
"""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._crd._lifecycle import prepare_crd_update
from aioinformer.testing._apiserver._crd._validation import validate_crd_update

from .crd_fixtures.helpers import (
    V1,
    V1_SCHEMA,
    Mutation,
    created,
    errors,
    set_field,
    single_version,
    v1,
    v1_spec,
)


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
    assert errors(set_field("spec.versions.1.subresources.scale", scale)) == expected


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
    assert errors(set_field("spec.conversion", conversion)) == expected


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
    assert errors(set_field("spec.preserveUnknownFields", True)) == [
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
