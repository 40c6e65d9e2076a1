"""Names, labels, annotations, selectors and object metadata, as the API server checks them."""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._validation._content import (
    is_config_map_key,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_env_var_name,
    is_label_value,
    is_qualified_name,
    is_valid_port_name,
    name_is_dns_subdomain,
)
from aioinformer.testing._apiserver._validation._fielderrors import FieldError
from aioinformer.testing._apiserver._validation._meta import (
    label_selector_matches,
    validate_label_selector,
    validate_object_meta,
    validate_object_meta_update,
)

LABEL_REGEX = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_REGEX = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)


def texts(errors: list[FieldError]) -> list[str]:
    return [str(error) for error in errors]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("web", []),
        ("a" * 63, []),
        ("a" * 64, ["must be no more than 63 bytes"]),
        ("web.example", ["must not contain dots"]),
        ("Web", [LABEL_REGEX]),
        ("-web", [LABEL_REGEX]),
    ],
)
def test_dns1123_labels(value: str, expected: list[str]) -> None:
    """``IsDNS1123Label`` (apimachinery ``pkg/api/validate/content/dns.go``): 63 bytes, a
    valid subdomain with dots is told "must not contain dots"."""
    assert is_dns1123_label(value) == expected


def test_dns_subdomains_and_dns1035_labels() -> None:
    """``IsDNS1123Subdomain`` allows dots up to 253 bytes; ``IsDNS1035Label`` (Service names)
    must start with a letter."""
    assert is_dns1123_subdomain("web.example.com") == []
    assert is_dns1123_subdomain("Web") == [SUBDOMAIN_REGEX]
    assert is_dns1123_subdomain("a" * 254)[0] == "must be no more than 253 bytes"
    assert is_dns1035_label("1web")[0].startswith("a DNS-1035 label must consist of")


def test_generate_name_prefixes_may_end_with_a_dash() -> None:
    """``maskTrailingDash`` (apimachinery ``pkg/api/validation/generic.go``): a
    ``generateName`` prefix ending in ``-`` is checked as if the dash were a letter."""
    assert name_is_dns_subdomain("web-", True) == []
    assert name_is_dns_subdomain("web-", False) == [SUBDOMAIN_REGEX]


@pytest.mark.parametrize(
    ("key", "first"),
    [
        ("app", None),
        ("example.com/app", None),
        ("/app", "prefix part must be non-empty"),
        ("Example.com/app", "prefix part a lowercase RFC 1123 subdomain"),
        ("a/b/c", "a valid label key must consist of alphanumeric characters"),
        ("-app", "name part must consist of alphanumeric characters"),
        ("a" * 64, "name part must be no more than 63 bytes"),
    ],
)
def test_label_keys(key: str, first: str | None) -> None:
    """``IsQualifiedName``/``IsLabelKey`` (apimachinery ``content/kube.go``): optional
    DNS-subdomain prefix, a name part of at most 63 bytes."""
    errors = is_qualified_name(key)
    if first is None:
        assert errors == []
    else:
        assert errors and errors[0].startswith(first)


def test_label_values_config_keys_port_names_and_env_names() -> None:
    """``IsValidLabelValue``, ``IsConfigMapKey`` (no ``.``/``..`` or ``..`` prefix),
    ``IsValidPortName`` (IANA service names), ``IsRelaxedEnvVarName`` — apimachinery
    ``pkg/util/validation/validation.go``."""
    assert is_label_value("") == []
    assert is_label_value("a b")[0].startswith("a valid label must be an empty string")
    assert is_config_map_key("..data") == ["must not start with '..'"]
    assert is_config_map_key("a/b")[0].startswith("a valid config key must consist")
    assert is_valid_port_name("http") == []
    assert is_valid_port_name("1234") == ["must contain at least one letter (a-z)"]
    assert is_valid_port_name("a--b") == ["must not contain consecutive hyphens"]
    assert is_env_var_name("MY VAR") == []
    assert is_env_var_name("A=B") == [
        "a valid environment variable name must consist only of printable ASCII characters "
        "other than '='"
    ]


def meta(**fields: Any) -> dict[str, Any]:
    return {"name": "web", "namespace": "default", **fields}


@pytest.mark.parametrize(
    ("given", "namespaced", "expected"),
    [
        (meta(), True, []),
        (
            {"namespace": "default"},
            True,
            ["metadata.name: Required value: name or generateName is required"],
        ),
        (meta(namespace=""), True, ["metadata.namespace: Required value"]),
        (
            {"name": "n", "namespace": "x"},
            False,
            ["metadata.namespace: Forbidden: not allowed on this type"],
        ),
        (
            meta(labels={"bad key!": "ok"}),
            True,
            [
                'metadata.labels: Invalid value: "bad key!": name part must consist of '
                "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
        ),
        (
            meta(generation=-1),
            True,
            ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            meta(finalizers=["orphan", "foregroundDeletion"]),
            True,
            [
                'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer '
                "orphan and foregroundDeletion cannot be both set"
            ],
        ),
        (
            meta(ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "p"}]),
            True,
            ["metadata.ownerReferences[0].uid: Required value: must not be empty"],
        ),
    ],
)
def test_object_meta_on_create(
    given: dict[str, Any], namespaced: bool, expected: list[str]
) -> None:
    """``ValidateObjectMetaAccessor`` (apimachinery ``pkg/api/validation/objectmeta.go``):
    a name (or generateName), the namespace only on namespaced kinds, generation, labels,
    annotations, owner references and finalizers."""
    assert texts(validate_object_meta(given, namespaced=namespaced)) == expected


def test_annotations_are_limited_to_256_kib_in_total() -> None:
    """``ValidateAnnotationsSize``: keys and values together at most 256 KiB."""
    errors = validate_object_meta(meta(annotations={"a": "x" * 262144}), namespaced=True)
    assert texts(errors) == ["metadata.annotations: Too long: may not be more than 262144 bytes"]


def test_object_meta_on_update() -> None:
    """``ValidateObjectMetaAccessorUpdate``: name, namespace, uid and creationTimestamp are
    immutable (``field is immutable``), generation may not decrease, no finalizer may be added
    to an object being deleted, a resourceVersion is required."""
    old = meta(
        uid="u1", resourceVersion="5", generation=3, deletionTimestamp="t", finalizers=["a/b"]
    )
    new = meta(name="other", uid="u2", generation=2, finalizers=["a/b", "c/d"])
    assert texts(validate_object_meta_update(new, old)) == [
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being "
        'deleted, found new finalizers []string{"c/d"}',
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        "metadata.generation: Invalid value: 2: must not be decremented",
        'metadata.name: Invalid value: "other": field is immutable',
        'metadata.uid: Invalid value: "u2": field is immutable',
        "metadata.deletionTimestamp: Invalid value: null: field is immutable",
    ]


def test_label_selectors() -> None:
    """``ValidateLabelSelector`` (apimachinery ``pkg/apis/meta/v1/validation``): operators
    In/NotIn need values, Exists/DoesNotExist forbid them, unknown operators are invalid."""
    selector = {
        "matchExpressions": [
            {"key": "a", "operator": "In"},
            {"key": "b", "operator": "Exists", "values": ["x"]},
            {"key": "c", "operator": "Near", "values": ["x"]},
        ]
    }
    assert texts(validate_label_selector(selector, "spec.selector")) == [
        "spec.selector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn'",
        "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when "
        "`operator` is 'Exists' or 'DoesNotExist'",
        'spec.selector.matchExpressions[2].operator: Invalid value: "Near": not a valid '
        "selector operator",
    ]


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        (None, {"a": "1"}, False),
        ({}, {"a": "1"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {}, False),
    ],
)
def test_label_selector_matching(selector: Any, labels: dict[str, str], matches: bool) -> None:
    """``LabelSelectorAsSelector``: a null selector selects nothing, an empty one everything;
    matchLabels and matchExpressions must all hold."""
    assert label_selector_matches(selector, labels) is matches
