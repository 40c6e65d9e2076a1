"""The printers of ``storage.k8s.io`` and ``admissionregistration.k8s.io``.

From ``pkg/printers/internalversion/printers.go`` (``AddHandlers`` and ``printStorageClass``,
``printCSIDriver``, ``printCSINode``, ``printVolumeAttachment``, ``printCSIStorageCapacity``,
``printVolumeAttributesClass``, ``printMutatingWebhook``, ``printValidatingWebhook``,
``printValidatingAdmissionPolicy``, ``printValidatingAdmissionPolicyBinding``). A StorageClass
marked default by its annotation is named ``<name> (default)``; fields the server defaults are
assumed when missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ._format import AGE, NAME, Column, age_of, col, format_label_selector, name_of, part
from ._workloads import Printer

__all__ = ["STORAGE_AND_ADMISSION"]

Obj = Mapping[str, Any]
_DEFAULT_CLASS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


def _storage_class(obj: Obj, now: datetime) -> list[Any]:
    annotations = part(obj, "metadata", "annotations") or {}
    name = name_of(obj)
    if any(annotations.get(key) == "true" for key in _DEFAULT_CLASS):
        name += " (default)"
    return [
        name,
        obj.get("provisioner") or "",
        obj.get("reclaimPolicy") or "Delete",
        obj.get("volumeBindingMode") or "Immediate",
        bool(obj.get("allowVolumeExpansion")),
        age_of(obj, now),
    ]


def _csi_driver(obj: Obj, now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    audiences = [str(t.get("audience") or "") for t in spec.get("tokenRequests") or ()]
    modes = ",".join(str(m) for m in spec.get("volumeLifecycleModes") or ())
    attach = spec.get("attachRequired")
    return [
        name_of(obj),
        True if attach is None else bool(attach),
        bool(spec.get("podInfoOnMount")),
        bool(spec.get("storageCapacity")),
        ",".join(audiences) if audiences else "<unset>",
        bool(spec.get("requiresRepublish")),
        modes or "<none>",
        age_of(obj, now),
    ]


def _volume_attachment(obj: Obj, now: datetime) -> list[Any]:
    return [
        name_of(obj),
        part(obj, "spec", "attacher") or "",
        part(obj, "spec", "source", "persistentVolumeName") or "",
        part(obj, "spec", "nodeName") or "",
        bool(part(obj, "status", "attached")),
        age_of(obj, now),
    ]


def _capacity(obj: Obj, now: datetime) -> list[Any]:
    capacity = obj.get("capacity")
    return [name_of(obj), obj.get("storageClassName") or "", capacity or "<unset>"]


def _count(*path: str) -> Any:
    def printer(obj: Obj, now: datetime) -> list[Any]:
        return [name_of(obj), len(part(obj, *path) or ()), age_of(obj, now)]

    return printer


def _policy(obj: Obj, now: datetime) -> list[Any]:
    kind = part(obj, "spec", "paramKind")
    shown = f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}" if kind else "<unset>"
    return [name_of(obj), len(part(obj, "spec", "validations") or ()), shown, age_of(obj, now)]


def _binding(obj: Obj, now: datetime) -> list[Any]:
    ref = part(obj, "spec", "paramRef")
    shown = "<unset>"
    if ref:
        namespace = ref.get("namespace") or ""
        if ref.get("name"):
            shown = f"{namespace}/{ref['name']}" if namespace else str(ref["name"])
        elif ref.get("selector") is not None:
            selector = format_label_selector(ref.get("selector"))
            shown = f"{namespace or '*'}/{selector}"
    return [name_of(obj), part(obj, "spec", "policyName") or "", shown, age_of(obj, now)]


_WEBHOOKS = (
    NAME,
    col(
        "Webhooks",
        "integer",
        text="Webhooks indicates the number of webhooks registered in this configuration",
    ),
    AGE,
)
_ADMISSION = "admissionregistration.k8s.io"

#: ``(group, kind)`` → the columns and the printer of the cells.
STORAGE_AND_ADMISSION: dict[tuple[str, str], Printer] = {
    ("storage.k8s.io", "StorageClass"): (
        (
            NAME,
            col("Provisioner", doc="storage.StorageClass.provisioner"),
            col("ReclaimPolicy", doc="storage.StorageClass.reclaimPolicy"),
            col("VolumeBindingMode", doc="storage.StorageClass.volumeBindingMode"),
            col("AllowVolumeExpansion", doc="storage.StorageClass.allowVolumeExpansion"),
            AGE,
        ),
        _storage_class,
    ),
    ("storage.k8s.io", "CSIDriver"): (
        (
            NAME,
            col("AttachRequired", "boolean", doc="storage.CSIDriverSpec.attachRequired"),
            col("PodInfoOnMount", "boolean", doc="storage.CSIDriverSpec.podInfoOnMount"),
            col("StorageCapacity", "boolean", doc="storage.CSIDriverSpec.storageCapacity"),
            col("TokenRequests", doc="storage.CSIDriverSpec.tokenRequests"),
            col("RequiresRepublish", "boolean", doc="storage.CSIDriverSpec.requiresRepublish"),
            col("Modes", doc="storage.CSIDriverSpec.volumeLifecycleModes"),
            AGE,
        ),
        _csi_driver,
    ),
    ("storage.k8s.io", "CSINode"): (
        (
            NAME,
            col(
                "Drivers",
                "integer",
                text="Drivers indicates the number of CSI drivers registered on the node",
            ),
            AGE,
        ),
        _count("spec", "drivers"),
    ),
    ("storage.k8s.io", "VolumeAttachment"): (
        (
            NAME,
            Column("Attacher", format="name", doc="storage.VolumeAttachmentSpec.attacher"),
            col("PV", doc="storage.VolumeAttachmentSource.persistentVolumeName"),
            col("Node", doc="storage.VolumeAttachmentSpec.nodeName"),
            col("Attached", "boolean", doc="storage.VolumeAttachmentStatus.attached"),
            AGE,
        ),
        _volume_attachment,
    ),
    ("storage.k8s.io", "CSIStorageCapacity"): (
        (
            NAME,
            col("StorageClassName", doc="storage.CSIStorageCapacity.storageClassName"),
            col("Capacity", doc="storage.CSIStorageCapacity.capacity"),
        ),
        _capacity,
    ),
    ("storage.k8s.io", "VolumeAttributesClass"): (
        (NAME, col("DriverName", doc="storage.VolumeAttributesClass.driverName"), AGE),
        lambda obj, now: [name_of(obj), obj.get("driverName") or "", age_of(obj, now)],
    ),
    (_ADMISSION, "MutatingWebhookConfiguration"): (_WEBHOOKS, _count("webhooks")),
    (_ADMISSION, "ValidatingWebhookConfiguration"): (_WEBHOOKS, _count("webhooks")),
    (_ADMISSION, "ValidatingAdmissionPolicy"): (
        (
            NAME,
            col(
                "Validations",
                "integer",
                text="Validations indicates the number of validation rules defined in this "
                "configuration",
            ),
            col(
                "ParamKind",
                text="ParamKind specifies the kind of resources used to parameterize this policy",
            ),
            AGE,
        ),
        _policy,
    ),
    (_ADMISSION, "ValidatingAdmissionPolicyBinding"): (
        (
            NAME,
            col(
                "PolicyName",
                text="PolicyName indicates the policy definition which the policy binding "
                "binded to",
            ),
            col(
                "ParamRef",
                text="ParamRef indicates the param resource which sets the configration param",
            ),
            AGE,
        ),
        _binding,
    ),
}
