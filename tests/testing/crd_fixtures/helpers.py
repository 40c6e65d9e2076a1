"""Helpers shared by the CRD building blocks' tests: CRDs mutated and validated, the CronTab
kind as served, custom resources created through the write path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._crd._kind import CustomKind
from aioinformer.testing._apiserver._crd._lifecycle import (
    accepted_status,
    default_crd,
    prepare_crd_create,
)
from aioinformer.testing._apiserver._crd._objects import (
    before_custom_create,
    decode_custom,
    read_custom,
    to_storage,
)
from aioinformer.testing._apiserver._crd._validation import validate_crd

from . import crontab_crd

__all__ = [
    "KIND",
    "NOW",
    "V1",
    "V1_SCHEMA",
    "Mutation",
    "create",
    "created",
    "errors",
    "refused",
    "set_field",
    "single_version",
    "v1",
    "v1_spec",
]

Mutation = Callable[[dict[str, Any]], None]
NOW = "2026-11-30T10:00:00Z"
V1 = "spec.versions[1]"
V1_SCHEMA = f"{V1}.schema.openAPIV3Schema"


def created(mutate: Mutation | None = None) -> dict[str, Any]:
    """The CronTab CRD, changed by ``mutate``, defaulted and prepared for create."""
    crd = crontab_crd()
    if mutate is not None:
        mutate(crd)
    default_crd(crd)
    prepare_crd_create(crd)
    return crd


def errors(mutate: Mutation | None = None) -> list[str]:
    """The texts of the create errors of the CronTab CRD changed by ``mutate``."""
    return [str(e) for e in validate_crd(created(mutate))]


def v1(crd: dict[str, Any]) -> dict[str, Any]:
    """The CRD's ``v1`` version entry."""
    version: dict[str, Any] = crd["spec"]["versions"][1]
    return version


def v1_spec(crd: dict[str, Any]) -> dict[str, Any]:
    """The properties of ``spec`` in the ``v1`` schema."""
    properties: dict[str, Any] = v1(crd)["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return properties["properties"]  # type: ignore[no-any-return]


def single_version(crd: dict[str, Any]) -> None:
    """Keep only ``v1``."""
    del crd["spec"]["versions"][0]


def set_field(path: str, value: Any) -> Mutation:
    """A mutation setting a dotted path (list indices as numbers)."""

    def mutate(crd: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = crd
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[last] = value

    return mutate


def _kind() -> CustomKind:
    crd = crontab_crd()
    default_crd(crd)
    prepare_crd_create(crd)
    accepted_status(crd, [], now=NOW)
    return CustomKind.from_crd(crd)


#: The CronTab as served once its CRD is established.
KIND = _kind()


def refused(call: Any, *args: Any, **kwargs: Any) -> StatusFailure:
    """The failure ``call`` raises."""
    with pytest.raises(StatusFailure) as caught:
        call(*args, **kwargs)
    return caught.value


def create(body: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    """A custom resource created in ``version`` and read back (resourceVersion 10)."""
    obj, _ = decode_custom(KIND, version, body)
    before_custom_create(KIND, version, obj, uid="uid-1", now=NOW)
    stored = to_storage(KIND, obj)
    stored["metadata"]["resourceVersion"] = "10"
    return read_custom(KIND, stored, version)
