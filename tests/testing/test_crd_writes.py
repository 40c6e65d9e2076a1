"""CustomResourceDefinition requests end to end through the building blocks: decoded as the
built-in kind, then create, update and status update as a real server runs them.

Specified by apiserver ``rest.BeforeCreate``/``rest.BeforeUpdate`` with apiextensions-apiserver
``pkg/registry/customresourcedefinition/strategy.go`` (``AllowUnconditionalUpdate`` false,
``PrepareForCreate``/``PrepareForUpdate``, the status strategy) and
``pkg/apis/apiextensions/validation``.
"""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._crd._kind import CustomKind
from aioinformer.testing._apiserver._crd._lifecycle import accepted_status, discovery_resources
from aioinformer.testing._apiserver._crd._writes import (
    crd_before_create,
    crd_before_status_update,
    crd_before_update,
)
from aioinformer.testing._apiserver._registry._writerules import Kind, decode

from .crd_fixtures import crontab_crd

NOW = "2026-11-30T10:00:00Z"
CRD_KIND = Kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition", namespaced=False)


def stored() -> dict[str, Any]:
    crd, _ = decode(CRD_KIND, crontab_crd())
    assert crd_before_create(crd, uid="crd-uid", now=NOW) == []
    crd["metadata"]["resourceVersion"] = "3"
    accepted_status(crd, [], now=NOW)
    return crd


def test_create_then_serve() -> None:
    """A created CRD is defaulted, gets ``generation: 1``, its storage version recorded, and
    once the controllers accept its names its resource is served."""
    crd = stored()
    assert crd["metadata"]["generation"] == 1
    assert crd["metadata"]["uid"] == "crd-uid"
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["status"]["storedVersions"] == ["v1"]
    kind = CustomKind.from_crd(crd)
    assert (kind.plural, kind.storage) == ("crontabs", "v1")
    assert [r["name"] for r in discovery_resources(crd, "v1")] == [
        "crontabs",
        "crontabs/status",
        "crontabs/scale",
    ]


def test_create_refused() -> None:
    """422 ``CustomResourceDefinition.apiextensions.k8s.io "<name>" is invalid``."""
    crd = crontab_crd()
    crd["spec"]["scope"] = "Everywhere"
    with pytest.raises(StatusFailure) as caught:
        crd_before_create(crd, uid="u", now=NOW)
    assert caught.value.code == 422
    assert caught.value.message == (
        'CustomResourceDefinition.apiextensions.k8s.io "crontabs.stable.example.com" is invalid: '
        'spec.scope: Unsupported value: "Everywhere": supported values: "Cluster", "Namespaced"'
    )


def test_update_keeps_status_and_requires_a_resource_version() -> None:
    """An update keeps the stored status and bumps ``generation`` on a spec change; without a
    ``resourceVersion`` it is refused (no unconditional updates)."""
    old = stored()
    new = crontab_crd()
    new["metadata"]["resourceVersion"] = "3"
    new["spec"]["versions"][0]["served"] = False
    assert crd_before_update(new, old) == []
    assert new["status"] == old["status"]
    assert new["metadata"]["generation"] == 2
    unconditional = crontab_crd()
    with pytest.raises(StatusFailure) as caught:
        crd_before_update(unconditional, old)
    assert caught.value.message.endswith(
        'is invalid: metadata.resourceVersion: Invalid value: "": must be specified for an update'
    )


def test_update_of_an_established_crd_keeps_its_kind() -> None:
    """Once established, ``spec.names.kind`` is immutable."""
    old = stored()
    new = crontab_crd()
    new["metadata"]["resourceVersion"] = "3"
    new["spec"]["names"]["kind"] = "Cron"
    with pytest.raises(StatusFailure) as caught:
        crd_before_update(new, old)
    assert caught.value.message.endswith(
        'spec.names.kind: Invalid value: "Cron": field is immutable'
    )


def test_status_update_keeps_spec() -> None:
    """The status strategy keeps the stored spec and validates the accepted names."""
    old = stored()
    new = stored()
    new["spec"]["scope"] = "Cluster"
    new["status"]["acceptedNames"]["plural"] = "Cron Tabs"
    with pytest.raises(StatusFailure) as caught:
        crd_before_status_update(new, old)
    assert caught.value.message.startswith(
        'CustomResourceDefinition.apiextensions.k8s.io "crontabs.stable.example.com" is invalid: '
        'status.acceptedNames.plural: Invalid value: "Cron Tabs": a DNS-1035 label'
    )
    fine = stored()
    fine["spec"]["scope"] = "Cluster"
    assert crd_before_status_update(fine, old) == []
    assert fine["spec"]["scope"] == "Namespaced"
