"""Pruning, ``null`` removal and defaulting of custom resources, and the string formats.

Specified by apiextensions-apiserver ``pkg/apiserver/schema/pruning/algorithm.go``,
``pkg/apiserver/schema/defaulting/algorithm.go``, ``prunenulls.go`` and ``prune.go``, and by
kube-openapi ``pkg/validation/strfmt``; described in the API documentation ("Extend the
Kubernetes API with CustomResourceDefinitions": Field pruning, Defaulting, Defaulting and
Nullable).
"""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._crd._formats import (
    check_format,
    strip_format,
    unrecognized_format,
)
from aioinformer.testing._apiserver._crd._schema import (
    MISSING,
    Schema,
    apply_defaults,
    compile_schema,
    prune,
    prune_nulls,
    same,
)

from .crd_fixtures import crontab, crontab_schema


def schema(props: dict[str, Any]) -> Schema:
    compiled = compile_schema(props)
    assert compiled is not None
    return compiled


CRONTAB = schema(crontab_schema())


def test_prune_drops_unknown_fields_and_reports_them_sorted() -> None:
    """``PruneWithOptions``: unknown fields are removed; with tracking on (``fieldValidation``
    Strict or Warn) their paths come back sorted."""
    obj = crontab(zeta=1, alpha={"deep": 1})
    obj["extra"] = True
    found = prune(obj, CRONTAB, root=True, found=[])
    assert found == ["extra", "spec.alpha", "spec.zeta"]
    assert obj == crontab()


def test_prune_keeps_resource_meta_fields_at_the_root() -> None:
    """The root is a resource: ``apiVersion``, ``kind`` and ``metadata`` stay although the
    schema does not name them."""
    obj = crontab()
    prune(obj, CRONTAB, root=True)
    assert set(obj) == {"apiVersion", "kind", "metadata", "spec"}


def test_prune_preserve_unknown_fields() -> None:
    """``x-kubernetes-preserve-unknown-fields: true`` keeps unknown fields below the node,
    while fields it specifies are still pruned by their own schema."""
    s = schema(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {
                        "known": {"type": "object", "properties": {"a": {"type": "string"}}}
                    },
                }
            },
        }
    )
    obj = {"spec": {"free": {"x": 1}, "known": {"a": "1", "b": 2}}}
    assert prune(obj, s, root=True, found=[]) == ["spec.known.b"]
    assert obj == {"spec": {"free": {"x": 1}, "known": {"a": "1"}}}


def test_prune_embedded_resource_keeps_its_meta_fields() -> None:
    """``x-kubernetes-embedded-resource``: the embedded object keeps ``apiVersion``, ``kind``
    and ``metadata``; elsewhere those names are unknown fields like any other."""
    s = schema(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "template": {
                            "type": "object",
                            "x-kubernetes-embedded-resource": True,
                            "properties": {"spec": {"type": "object"}},
                        }
                    },
                }
            },
        }
    )
    obj = {
        "spec": {
            "kind": "Nested",
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "bad": 1},
        }
    }
    assert prune(obj, s, root=True, found=[]) == ["spec.kind", "spec.template.bad"]
    assert obj == {
        "spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}}
    }


def test_prune_lists_and_maps() -> None:
    """Items of arrays are pruned by ``items``; values of maps by ``additionalProperties``;
    paths of list items carry their index."""
    s = schema(
        {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "byName": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"size": {"type": "integer"}},
                    },
                },
            },
        }
    )
    obj = {"items": [{"name": "a", "x": 1}], "byName": {"k": {"size": 1, "y": 2}}}
    assert prune(obj, s, root=True, found=[]) == ["byName.k.y", "items[0].x"]
    assert obj == {"items": [{"name": "a"}], "byName": {"k": {"size": 1}}}


def test_prune_nulls() -> None:
    """``PruneNonNullableNullsWithoutDefaults``: ``null`` of a non-nullable field without
    default vanishes; nullable fields and fields with a default keep it (the default
    replaces it next)."""
    obj = crontab()
    obj["spec"].update(cronSpec=None, suspend=None, replicas=None)
    prune_nulls(obj, CRONTAB)
    assert obj["spec"] == {"image": "my-awesome-cron-image", "suspend": None, "replicas": None}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, {"image": "busybox:1.36", "replicas": 1}),
        ({"replicas": 3}, {"image": "busybox:1.36", "replicas": 3}),
        ({"replicas": None}, {"image": "busybox:1.36", "replicas": 1}),
        ({"suspend": None}, {"image": "busybox:1.36", "replicas": 1, "suspend": None}),
    ],
)
def test_defaults(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    """``defaulting.Default``: a missing field takes its ``default``, and so does a ``null``
    one unless it is ``nullable`` ("Defaulting and Nullable" in the documentation)."""
    obj = {"spec": dict(spec)}
    apply_defaults(obj, CRONTAB)
    assert obj == {"spec": expected}


def test_defaults_apply_inside_defaulted_values_and_items() -> None:
    """Defaults are applied outermost first, then inside the defaulted value; list items and
    map values take the defaults of ``items``/``additionalProperties``."""
    s = schema(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "default": {},
                    "properties": {
                        "ports": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"protocol": {"type": "string", "default": "TCP"}},
                            },
                        },
                        "sizes": {
                            "type": "object",
                            "additionalProperties": {"type": "integer", "default": 7},
                        },
                        "mode": {"type": "string", "default": "fast"},
                    },
                }
            },
        }
    )
    empty: dict[str, Any] = {}
    apply_defaults(empty, s)
    assert empty == {"spec": {"mode": "fast"}}
    obj = {"spec": {"ports": [{}, {"protocol": "UDP"}], "sizes": {"a": None, "b": 1}}}
    apply_defaults(obj, s)
    assert obj["spec"] == {
        "ports": [{"protocol": "TCP"}, {"protocol": "UDP"}],
        "sizes": {"a": 7, "b": 1},
        "mode": "fast",
    }


def test_defaults_are_copied() -> None:
    """Each object receives its own copy of a default (``runtime.DeepCopyJSONValue``)."""
    s = schema(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "default": {"list": [1]},
                    "properties": {"list": {"type": "array", "items": {"type": "integer"}}},
                }
            },
        }
    )
    first: dict[str, Any] = {}
    second: dict[str, Any] = {}
    apply_defaults(first, s)
    apply_defaults(second, s)
    first["spec"]["list"].append(2)
    assert second == {"spec": {"list": [1]}}


def test_compiled_defaults_are_pruned() -> None:
    """``PruneDefaults`` (the handler prunes defaults before serving): fields of a default the
    schema does not know are not applied."""
    s = schema(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "default": {"a": "1", "unknown": 2},
                    "properties": {"a": {"type": "string"}},
                }
            },
        }
    )
    assert s.properties is not None
    assert s.properties["spec"].default == {"a": "1"}
    assert compile_schema(None) is None
    assert Schema({"default": None}).default is MISSING


def test_same_is_type_strict() -> None:
    """``reflect.DeepEqual`` of decoded JSON: ``1``, ``1.0`` and ``true`` are different."""
    assert same({"a": [1, "x"]}, {"a": [1, "x"]})
    assert not same(1, 1.0)
    assert not same(1, True)
    assert not same({"a": 1}, {"a": 1, "b": 2})


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("date-time", "2026-01-02T03:04:05Z", "2026-01-02 03:04:05"),
        ("date-time", "2026-01-02T03:04:05.123+01:00", "2026-13-02T03:04:05Z"),
        ("date", "2026-02-28", "2026-02-30"),
        ("duration", "1h30m", "soon"),
        ("duration", "3 days", "forever"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567"),
        ("uuid4", "123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"),
        ("ipv4", "10.0.0.1", "::1"),
        ("ipv6", "::1", "10.0.0.1"),
        ("cidr", "10.0.0.0/8", "10.0.0.0"),
        ("mac", "01:23:45:67:89:ab", "01:23:45"),
        ("hostname", "example.com", "-bad-.com"),
        ("email", "someone@example.com", "someone"),
        ("uri", "https://example.com/x", "example.com"),
        ("byte", "aGVsbG8=", "not base64!"),
        ("hexcolor", "#ff0000", "red"),
        ("rgbcolor", "rgb(1, 2, 3)", "rgb(300,0,0)"),
        ("isbn10", "0321751043", "0321751044"),
        ("isbn13", "978-0321751041", "978-0321751042"),
        ("creditcard", "4111 1111 1111 1111", "4111 1111 1111 1112"),
        ("ssn", "123-45-6789", "123456"),
        ("bsonobjectid", "507f1f77bcf86cd799439011", "507f1f77"),
        ("k8s-short-name", "my-name", "My-Name"),
        ("k8s-long-name", "a.b-c.d", "a..b"),
        ("password", "anything", None),
    ],
)
def test_formats(fmt: str, good: str, bad: str | None) -> None:
    """kube-openapi ``strfmt`` checkers (``default.go``, ``time.go``, ``date.go``,
    ``duration.go``, ``bson.go``, ``kubernetes-extensions.go``)."""
    assert check_format(fmt, good)
    if bad is not None:
        assert not check_format(fmt, bad)


@pytest.mark.parametrize(
    ("type_name", "fmt", "kept"),
    [
        ("string", "date-time", "date-time"),
        ("string", "int32", ""),
        ("", "uuid", "uuid"),
        ("integer", "int32", "int32"),
        ("integer", "uuid", ""),
        ("number", "double", "double"),
        ("boolean", "byte", ""),
    ],
)
def test_strip_unsupported_formats(type_name: str, fmt: str, kept: str) -> None:
    """``StripUnsupportedFormatsPostProcessorForVersion``: formats apply only to the types
    that support them; the others are dropped and earn the CRD an ``unrecognized format``
    warning."""
    assert strip_format(type_name, fmt) == kept
    assert unrecognized_format(type_name, fmt) == (not kept)
