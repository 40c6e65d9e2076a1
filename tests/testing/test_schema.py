"""The Kubernetes schemas the fake reads from kubernetes-validate, and what they answer."""

from __future__ import annotations

import pytest

from aioinformer.testing import FakeApiServer
from aioinformer.testing._apiserver._schema import _published as _schema
from aioinformer.testing._apiserver._schema._published import (
    ANY,
    LIST,
    MAP,
    SCALAR,
    TypeInfo,
    lookup,
    schemas,
)


def _deployment() -> TypeInfo:
    root = schemas().root("apps", "v1", "Deployment")
    assert root is not None
    return root


def test_without_the_testing_extra_the_server_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Constructing the fake without kubernetes-validate fails at once with one clear error
    naming ``pip install 'aioinformer[testing]'``."""
    monkeypatch.setattr(_schema, "_package_dir", lambda: None)
    with pytest.raises(ImportError, match=r"pip install 'aioinformer\[testing\]'"):
        FakeApiServer()


def test_kinds_resolve_by_group_version_kind() -> None:
    """``x-kubernetes-group-version-kind`` maps built-in kinds to their schema; custom kinds
    have none (the fake then treats them as real servers treat schemaless resources)."""
    assert _deployment().name == "io.k8s.api.apps.v1.Deployment"
    pod = schemas().root("", "v1", "Pod")
    assert pod is not None and pod.name == "io.k8s.api.core.v1.Pod"
    assert schemas().root("example.com", "v1", "Widget") is None


def test_fields_carry_their_patch_and_apply_metadata() -> None:
    """Containers are a list-map keyed by ``name`` with patch strategy ``merge``; ports are
    keyed by ``containerPort`` and ``protocol``; finalizers are a set; args are atomic; the
    selector is an atomic map; labels a granular map of strings; ``strategy`` retains keys."""
    deployment = _deployment()
    pod_spec = lookup(deployment, ["spec", "template", "spec"])
    assert pod_spec is not None
    containers = pod_spec.field("containers")
    assert containers is not None
    assert (containers.strategies, containers.merge_key) == (("merge",), "name")
    assert (containers.type.kind, containers.type.list_type, containers.type.keys) == (
        LIST,
        "map",
        ("name",),
    )
    ports = lookup(deployment, ["spec", "template", "spec", "containers", "ports"])
    assert ports is not None and ports.keys == ("containerPort", "protocol")
    finalizers = lookup(deployment, ["metadata", "finalizers"])
    assert finalizers is not None and finalizers.list_type == "set"
    args = lookup(deployment, ["spec", "template", "spec", "containers", "args"])
    assert args is not None and args.list_type == "atomic"
    selector = lookup(deployment, ["spec", "selector"])
    assert selector is not None and (selector.kind, selector.atomic) == (MAP, True)
    labels = lookup(deployment, ["metadata", "labels"])
    assert labels is not None and labels.kind == MAP and not labels.atomic
    assert labels.element is not None and labels.element.scalar == "string"
    spec = lookup(deployment, ["spec"])
    assert spec is not None
    strategy = spec.field("strategy")
    assert strategy is not None and strategy.strategies == ("retainKeys",)


def test_int_or_string_quantities_and_free_form_objects() -> None:
    """IntOrString and Quantity are scalars of any type; an object without properties
    (RawExtension in a ControllerRevision) is free-form, deduced from its value."""
    deployment = _deployment()
    surge = lookup(deployment, ["spec", "strategy", "rollingUpdate", "maxSurge"])
    assert surge is not None and (surge.kind, surge.scalar) == (SCALAR, "untyped")
    limits = lookup(deployment, ["spec", "template", "spec", "containers", "resources", "limits"])
    assert limits is not None and limits.element is not None
    assert limits.element.scalar == "untyped"
    revision = schemas().root("apps", "v1", "ControllerRevision")
    assert revision is not None
    data = lookup(revision, ["data"])
    assert data is not None and data.kind == MAP and data.element is not None
    assert data.element.kind == ANY
