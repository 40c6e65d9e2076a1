"""Parts of a pod spec validated on their own: volumes, environment, resources, tolerations.

Ports of the behaviour of kubernetes ``pkg/apis/core/validation`` (``ValidateVolumes`` with
``validateVolumeSource``, ``ValidateEnv`` with ``validateEnvVarValueFrom`` and the key
selectors, ``ValidateResourceRequirements``, ``ValidateTolerations``); used by
:mod:`._validation_pod`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._fielderrors import FieldError, duplicate, forbidden, invalid, not_supported, required
from ._quantity import quantity_value
from ._validation_content import (
    is_config_map_key,
    is_dns1123_label,
    is_env_var_name,
    is_label_value,
    is_qualified_name,
)
from ._validation_meta import IS_NEGATIVE
from ._validation_meta import as_list as _list
from ._validation_meta import as_map as _map

__all__ = ["validate_env", "validate_resources", "validate_tolerations", "validate_volumes"]

_VOLUME_TYPES = [
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
]
_REQUIRED_SOURCE_FIELDS = {
    "hostPath": "path",
    "secret": "secretName",
    "configMap": "name",
    "persistentVolumeClaim": "claimName",
    "nfs": "server",
    "csi": "driver",
}
_FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"
_ENV_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")


def validate_volumes(volumes: Any, path: str) -> tuple[set[str], list[FieldError]]:
    names: set[str] = set()
    errors: list[FieldError] = []
    for i, volume in enumerate(_list(volumes)):
        volume = _map(volume)
        where = f"{path}[{i}]"
        found: list[FieldError] = []
        sources = [t for t in _VOLUME_TYPES if volume.get(t) is not None]
        if not sources:
            found.append(required(where, "must specify a volume type"))
        for extra in sources[1:]:
            found.append(forbidden(f"{where}.{extra}", "may not specify more than 1 volume type"))
        for source in sources[:1]:
            needed = _REQUIRED_SOURCE_FIELDS.get(source)
            spec = _map(volume.get(source))
            if needed and not spec.get(needed):
                found.append(required(f"{where}.{source}.{needed}"))
            mode = spec.get("defaultMode")
            if isinstance(mode, int) and not 0 <= mode <= 0o777:
                found.append(invalid(f"{where}.{source}.defaultMode", mode, _FILE_MODE))
        name = str(volume.get("name") or "")
        if not name:
            found.append(required(f"{where}.name"))
        else:
            found.extend(invalid(f"{where}.name", name, m) for m in is_dns1123_label(name))
        if name and name in names:
            found.append(duplicate(f"{where}.name", name))
        if found:
            errors.extend(found)
        else:
            names.add(name)
    return names, errors


def _key_selector(selector: Mapping[str, Any], path: str) -> list[FieldError]:
    errors = []
    if not selector.get("name"):
        errors.append(required(f"{path}.name"))
    key = str(selector.get("key") or "")
    if not key:
        errors.append(required(f"{path}.key"))
    else:
        errors.extend(invalid(f"{path}.key", key, msg) for msg in is_config_map_key(key))
    return errors


def validate_env(env: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, var in enumerate(_list(env)):
        var = _map(var)
        where = f"{path}[{i}]"
        name = str(var.get("name") or "")
        if not name:
            errors.append(required(f"{where}.name"))
        errors.extend(invalid(f"{where}.name", name, msg) for msg in is_env_var_name(name))
        source = var.get("valueFrom")
        if source is None:
            continue
        source = _map(source)
        present = [s for s in _ENV_SOURCES if source.get(s) is not None]
        from_path = f"{where}.valueFrom"
        if not present:
            errors.append(
                invalid(
                    from_path,
                    "",
                    "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                    "`secretKeyRef`",
                )
            )
        elif var.get("value"):
            errors.append(invalid(from_path, "", "may not be specified when `value` is not empty"))
        if len(present) > 1:
            errors.append(
                invalid(from_path, "", "may not have more than one field specified at a time")
            )
        for kind in present:
            if kind in ("configMapKeyRef", "secretKeyRef"):
                errors.extend(_key_selector(_map(source.get(kind)), f"{from_path}.{kind}"))
            elif kind == "fieldRef" and not _map(source.get(kind)).get("fieldPath"):
                errors.append(required(f"{from_path}.fieldRef.fieldPath"))
    return errors


def validate_resources(resources: Any, path: str) -> list[FieldError]:
    resources = _map(resources)
    errors: list[FieldError] = []
    parsed: dict[str, dict[str, Any]] = {}
    for part in ("limits", "requests"):
        parsed[part] = {}
        for name, text in _map(resources.get(part)).items():
            where = f"{path}.{part}[{name}]"
            errors.extend(invalid(where, name, msg) for msg in is_qualified_name(name))
            value = quantity_value(str(text))
            if value is None:
                continue
            if value < 0:
                errors.append(invalid(where, str(text), IS_NEGATIVE))
            parsed[part][name] = (value, str(text))
    for name, (value, text) in parsed["requests"].items():
        limit = parsed["limits"].get(name)
        if limit is not None and value > limit[0]:
            errors.append(
                invalid(
                    f"{path}.requests[{name}]",
                    text,
                    f"must be less than or equal to {name} limit of {limit[1]}",
                )
            )
    return errors


def validate_tolerations(tolerations: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, toleration in enumerate(_list(tolerations)):
        toleration = _map(toleration)
        where = f"{path}[{i}]"
        key, operator = str(toleration.get("key") or ""), toleration.get("operator") or ""
        effect, value = toleration.get("effect") or "", str(toleration.get("value") or "")
        if key:
            errors.extend(invalid(f"{where}.key", key, msg) for msg in is_qualified_name(key))
        if not key and operator != "Exists":
            errors.append(
                invalid(
                    f"{where}.operator",
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values '
                    'and all keys"',
                )
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errors.append(
                invalid(
                    f"{where}.effect",
                    effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if operator in ("Equal", ""):
            messages = is_label_value(value)
            if messages:
                errors.append(invalid(f"{where}.operator", value, ";".join(messages)))
        elif operator == "Exists":
            if value:
                errors.append(
                    invalid(
                        f"{where}.operator",
                        dict(toleration),
                        "value must be empty when `operator` is 'Exists'",
                    )
                )
        else:
            errors.append(not_supported(f"{where}.operator", operator, ["Equal", "Exists"]))
        if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            errors.append(
                not_supported(
                    f"{where}.effect", effect, ["NoSchedule", "PreferNoSchedule", "NoExecute"]
                )
            )
    return errors
