"""Validation of ``storage.k8s.io`` StorageClasses (kubernetes
``pkg/apis/storage/validation``: ``ValidateStorageClass``, ``ValidateStorageClassUpdate``). The
group's other kinds (CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment,
VolumeAttributesClass) are checked against their schema and metadata only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._content import is_qualified_name
from ._fielderrors import FieldError, forbidden, invalid, not_supported, required, too_long
from ._meta import as_map, immutable, semantic

__all__ = [
    "validate_storage_class",
    "validate_storage_class_update",
]

# -- storage.k8s.io/v1 StorageClass ---------------------------------------------------------


def validate_storage_class(obj: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateStorageClass``: a provisioner (a qualified name), at most 512 parameters of
    256 KiB in all, ``reclaimPolicy`` and ``volumeBindingMode`` enums."""
    errors: list[FieldError] = []
    provisioner = str(obj.get("provisioner") or "")
    if not provisioner:
        errors.append(required("provisioner"))
    else:
        errors += [
            invalid("provisioner", provisioner, m) for m in is_qualified_name(provisioner.lower())
        ]
    parameters = as_map(obj.get("parameters"))
    if len(parameters) > 512:
        errors.append(too_long("parameters", 512))
    else:
        errors += [invalid("parameters", k, "field can not be empty.") for k in parameters if not k]
        if sum(len(k) + len(str(v)) for k, v in parameters.items()) > 256 * 1024:
            errors.append(too_long("parameters", 256 * 1024))
    policy = obj.get("reclaimPolicy")
    if policy is not None and policy not in ("Delete", "Retain"):
        errors.append(not_supported("reclaimPolicy", policy, ["Delete", "Retain"]))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        errors.append(required("volumeBindingMode"))
    elif mode not in ("Immediate", "WaitForFirstConsumer"):
        errors.append(
            not_supported("volumeBindingMode", mode, ["Immediate", "WaitForFirstConsumer"])
        )
    return errors


def validate_storage_class_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[FieldError]:
    """``ValidateStorageClassUpdate``: parameters, provisioner, reclaim policy and binding mode
    are fixed at creation."""
    errors: list[FieldError] = []
    if semantic(new.get("parameters")) != semantic(old.get("parameters")):
        errors.append(forbidden("parameters", "updates to parameters are forbidden."))
    if new.get("provisioner") != old.get("provisioner"):
        errors.append(forbidden("provisioner", "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errors.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    errors += immutable(
        new.get("volumeBindingMode"), old.get("volumeBindingMode"), "volumeBindingMode"
    )
    return errors
