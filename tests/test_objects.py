"""Keys, accessors and tombstones (:mod:`aioinformer._objects`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aioinformer._objects import (
    DeletedFinalStateUnknown,
    annotations_of,
    deletion_handling_meta_namespace_key,
    labels_of,
    meta_namespace_key,
    name_of,
    namespace_of,
    resource_version_of,
    split_meta_namespace_key,
    uid_of,
)
from aioinformer.errors import InformerError, KeyFuncError


def obj(name: str, namespace: str | None = None, **meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, **meta}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}


# -- meta_namespace_key ----------------------------------------------------------------------


def test_meta_namespace_key_is_namespace_slash_name() -> None:
    """A namespaced object's key is ``namespace/name``."""
    assert meta_namespace_key(obj("web", "default")) == "default/web"


@pytest.mark.parametrize("namespace", [None, ""])
def test_meta_namespace_key_of_cluster_scoped_object_is_its_name(namespace: str | None) -> None:
    """An object without (or with an empty) namespace is keyed by its name alone."""
    assert meta_namespace_key(obj("node-1", namespace)) == "node-1"


def test_meta_namespace_key_passes_a_string_key_through() -> None:
    """A string is already a key (client-go ``ExplicitKey``) and is returned unchanged."""
    assert meta_namespace_key("ns/name") == "ns/name"


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"metadata": None},
        {"metadata": {}},
        {"metadata": {"name": ""}},
        {"metadata": {"name": 5, "namespace": "ns"}},
        42,
        None,
    ],
)
def test_meta_namespace_key_without_a_name_raises_key_func_error(bad: Any) -> None:
    """An object without a usable ``metadata.name`` raises KeyFuncError (an InformerError)."""
    with pytest.raises(KeyFuncError) as exc:
        meta_namespace_key(bad)
    assert isinstance(exc.value, InformerError)
    assert isinstance(exc.value, ValueError)


def test_meta_namespace_key_does_not_accept_a_tombstone() -> None:
    """Only the deletion-handling key function unwraps tombstones."""
    with pytest.raises(KeyFuncError):
        meta_namespace_key(DeletedFinalStateUnknown("ns/a", obj("a", "ns")))


# -- deletion_handling_meta_namespace_key ----------------------------------------------------


@pytest.mark.parametrize("last", [obj("other", "elsewhere"), None])
def test_deletion_handling_key_of_a_tombstone_is_the_tombstone_key(
    last: dict[str, Any] | None,
) -> None:
    """A tombstone gives its own key, whatever (or whether) it carries an object."""
    assert deletion_handling_meta_namespace_key(DeletedFinalStateUnknown("ns/a", last)) == "ns/a"


def test_deletion_handling_key_of_a_plain_object_is_the_meta_namespace_key() -> None:
    """A plain object is keyed exactly like ``meta_namespace_key``."""
    assert deletion_handling_meta_namespace_key(obj("a", "ns")) == "ns/a"
    assert deletion_handling_meta_namespace_key(obj("a")) == "a"
    assert deletion_handling_meta_namespace_key("x/y") == "x/y"
    with pytest.raises(KeyFuncError):
        deletion_handling_meta_namespace_key({"metadata": {}})


# -- split_meta_namespace_key ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "parts"),
    [("ns/name", ("ns", "name")), ("name", ("", "name")), ("/name", ("", "name"))],
)
def test_split_meta_namespace_key_gives_namespace_and_name(
    key: str, parts: tuple[str, str]
) -> None:
    """``ns/name`` splits into both parts; a bare name has the namespace ``""``."""
    assert split_meta_namespace_key(key) == parts


@pytest.mark.parametrize("key", ["", "a/b/c", "ns/", "//"])
def test_split_meta_namespace_key_rejects_malformed_keys(key: str) -> None:
    """An empty key, an empty name or more than one ``/`` raises KeyFuncError."""
    with pytest.raises(KeyFuncError):
        split_meta_namespace_key(key)


_segment = st.text(
    alphabet=st.characters(exclude_characters="/", exclude_categories=["Cs"]),
    min_size=1,
    max_size=20,
)


@given(name=_segment, namespace=st.one_of(st.just(""), _segment))
def test_split_meta_namespace_key_inverts_meta_namespace_key(name: str, namespace: str) -> None:
    """Splitting the key of an object gives back its namespace and name."""
    assert split_meta_namespace_key(meta_namespace_key(obj(name, namespace))) == (namespace, name)


# -- DeletedFinalStateUnknown ----------------------------------------------------------------


def test_deleted_final_state_unknown_is_a_frozen_value() -> None:
    """Tombstones compare by value and cannot be modified."""
    last = obj("a", "ns")
    tombstone = DeletedFinalStateUnknown("ns/a", last)
    assert tombstone.key == "ns/a"
    assert tombstone.obj is last
    assert tombstone == DeletedFinalStateUnknown("ns/a", obj("a", "ns"))
    assert tombstone != DeletedFinalStateUnknown("ns/b", last)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tombstone.key = "ns/b"  # type: ignore[misc]


# -- accessors -------------------------------------------------------------------------------


def test_accessors_read_metadata_fields() -> None:
    """namespace, name, uid, resource version, labels and annotations come from metadata."""
    o = obj(
        "a",
        "ns",
        uid="u-1",
        resourceVersion="42",
        labels={"app": "web"},
        annotations={"note": "x"},
    )
    assert namespace_of(o) == "ns"
    assert name_of(o) == "a"
    assert uid_of(o) == "u-1"
    assert resource_version_of(o) == "42"
    assert labels_of(o) == {"app": "web"}
    assert annotations_of(o) == {"note": "x"}


def test_accessors_default_to_empty_when_fields_are_absent() -> None:
    """Absent metadata fields read as ``""`` (or an empty mapping)."""
    o: dict[str, Any] = {"metadata": {}}
    assert namespace_of(o) == ""
    assert name_of(o) == ""
    assert uid_of(o) == ""
    assert resource_version_of(o) == ""
    assert labels_of(o) == {}
    assert annotations_of(o) == {}
    assert labels_of({"metadata": {"labels": None}}) == {}


@pytest.mark.parametrize(
    "accessor",
    [namespace_of, name_of, uid_of, resource_version_of, labels_of, annotations_of],
)
def test_accessors_raise_key_func_error_without_metadata(accessor: Any) -> None:
    """An object without a metadata mapping is rejected with KeyFuncError."""
    with pytest.raises(KeyFuncError):
        accessor({"kind": "Pod"})
