"""Validation of Pods, pod specs and pod templates.

Ports of the behaviour of kubernetes ``pkg/apis/core/validation`` (``ValidatePodCreate``,
``ValidatePodSpec``, ``validateContainers``/``validateContainerCommon``,
``validateContainerPorts``, ``ValidateEnv``, ``ValidateVolumes``, ``ValidateVolumeMounts``,
``validateRestartPolicy``, ``validateDNSPolicy``, ``validatePullPolicy``,
``ValidateTolerations``, ``ValidateResourceRequirements``, ``ValidatePodTemplateSpec``) for
the fields controllers and users set every day. Objects are decoded and defaulted first, as on
a real server, so ``restartPolicy``/``dnsPolicy``/``imagePullPolicy``/``protocol`` are set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._schema._quantity import quantity_value
from ._content import (
    inclusive_range_error,
    is_config_map_key,
    is_dns1123_label,
    is_env_var_name,
    is_label_value,
    is_qualified_name,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns_subdomain,
)
from ._fielderrors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
)
from ._meta import (
    IS_NEGATIVE,
    one_of,
    validate_annotations,
    validate_labels,
    validate_object_meta,
)
from ._meta import as_list as _list
from ._meta import as_map as _map

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


__all__ = ["validate_pod", "validate_pod_spec", "validate_pod_template"]

_MAX_INT32 = 2**31 - 1


def _dns_label(value: str, path: str) -> list[FieldError]:
    return [invalid(path, value, msg) for msg in is_dns1123_label(value)]


def _ports(ports: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(_list(ports)):
        port = _map(port)
        where = f"{path}[{i}]"
        name = str(port.get("name") or "")
        if name:
            messages = is_valid_port_name(name)
            errors.extend(invalid(f"{where}.name", name, msg) for msg in messages)
            if not messages and name in names:
                errors.append(duplicate(f"{where}.name", name))
            names.add(name)
        number = port.get("containerPort") or 0
        if not number:
            errors.append(required(f"{where}.containerPort"))
        else:
            errors.extend(
                invalid(f"{where}.containerPort", number, m) for m in is_valid_port_num(number)
            )
        host = port.get("hostPort") or 0
        if host:
            errors.extend(invalid(f"{where}.hostPort", host, m) for m in is_valid_port_num(host))
        errors.extend(one_of(port.get("protocol"), f"{where}.protocol", ["SCTP", "TCP", "UDP"]))
    return errors


def _volume_mounts(mounts: Any, volumes: set[str], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, mount in enumerate(_list(mounts)):
        mount = _map(mount)
        where = f"{path}[{i}]"
        name, mount_path = str(mount.get("name") or ""), str(mount.get("mountPath") or "")
        if not name:
            errors.append(required(f"{where}.name"))
        if name not in volumes:
            errors.append(not_found(f"{where}.name", name))
        if not mount_path:
            errors.append(required(f"{where}.mountPath"))
        if mount_path in seen:
            errors.append(invalid(f"{where}.mountPath", mount_path, "must be unique"))
        seen.add(mount_path)
    return errors


def _container(
    container: Mapping[str, Any], volumes: set[str], path: str, *, is_pod: bool
) -> list[FieldError]:
    errors: list[FieldError] = []
    name = str(container.get("name") or "")
    if not name:
        errors.append(required(f"{path}.name"))
    else:
        errors.extend(_dns_label(name, f"{path}.name"))
    image = str(container.get("image") or "")
    if not image:
        errors.append(required(f"{path}.image"))
    elif is_pod and image != image.strip():
        errors.append(
            invalid(f"{path}.image", image, "must not have leading or trailing whitespace")
        )
    errors.extend(_ports(container.get("ports"), f"{path}.ports"))
    errors.extend(validate_env(container.get("env"), f"{path}.env"))
    errors.extend(_volume_mounts(container.get("volumeMounts"), volumes, f"{path}.volumeMounts"))
    policy = container.get("terminationMessagePolicy") or ""
    if not policy:
        errors.append(
            required(
                f"{path}.terminationMessagePolicy", "must be 'File' or 'FallbackToLogsOnError'"
            )
        )
    elif policy not in ("File", "FallbackToLogsOnError"):
        errors.append(
            invalid(
                f"{path}.terminationMessagePolicy",
                policy,
                "must be 'File' or 'FallbackToLogsOnError'",
            )
        )
    pulls = ["Always", "IfNotPresent", "Never"]
    errors.extend(one_of(container.get("imagePullPolicy"), f"{path}.imagePullPolicy", pulls))
    errors.extend(validate_resources(container.get("resources"), f"{path}.resources"))
    return errors


def _containers(
    spec: Mapping[str, Any], volumes: set[str], path: str, *, is_pod: bool
) -> list[FieldError]:
    errors: list[FieldError] = []
    containers = _list(spec.get("containers"))
    if not containers:
        errors.append(required(f"{path}.containers"))
    names: set[str] = set()
    for kind in ("containers", "initContainers"):
        for i, container in enumerate(_list(spec.get(kind))):
            where = f"{path}.{kind}[{i}]"
            container = _map(container)
            errors.extend(_container(container, volumes, where, is_pod=is_pod))
            name = str(container.get("name") or "")
            if name in names:
                errors.append(duplicate(f"{where}.name", name))
            names.add(name)
    return errors


def _host_ports(spec: Mapping[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for kind in ("containers", "initContainers"):
        for i, container in enumerate(_list(spec.get(kind))):
            for j, port in enumerate(_list(_map(container).get("ports"))):
                port = _map(port)
                host = port.get("hostPort") or 0
                if not host:
                    continue
                key = f"{port.get('protocol') or ''}/{port.get('hostIP') or ''}/{host}"
                if key in seen:
                    errors.append(duplicate(f"{path}.{kind}[{i}].ports[{j}].hostPort", key))
                seen.add(key)
    return errors


def validate_pod_spec(spec: Any, path: str, *, is_pod: bool = False) -> list[FieldError]:
    """``ValidatePodSpec``: volumes, containers, restart and DNS policies, node selector,
    service account, node name, deadlines, host names and tolerations."""
    spec = _map(spec)
    volumes, errors = validate_volumes(spec.get("volumes"), f"{path}.volumes")
    errors.extend(_containers(spec, volumes, path, is_pod=is_pod))
    errors.extend(_host_ports(spec, path))
    restarts = ["Always", "OnFailure", "Never"]
    errors.extend(one_of(spec.get("restartPolicy"), f"{path}.restartPolicy", restarts))
    dns_values = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
    errors.extend(one_of(spec.get("dnsPolicy"), f"{path}.dnsPolicy", dns_values))
    errors.extend(validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector"))
    for field in ("serviceAccountName", "nodeName"):
        value = str(spec.get(field) or "")
        if value:
            messages = name_is_dns_subdomain(value, False)
            errors.extend(invalid(f"{path}.{field}", value, msg) for msg in messages)
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= _MAX_INT32:
        errors.append(
            invalid(f"{path}.activeDeadlineSeconds", deadline, inclusive_range_error(1, _MAX_INT32))
        )
    for field in ("hostname", "subdomain"):
        value = str(spec.get(field) or "")
        if value:
            errors.extend(_dns_label(value, f"{path}.{field}"))
    errors.extend(validate_tolerations(spec.get("tolerations"), f"{path}.tolerations"))
    return errors


def validate_pod(pod: Any) -> list[FieldError]:
    """``ValidatePodCreate``: metadata (DNS subdomain names) and the spec, with the checks that
    apply to Pods but not templates (image whitespace)."""
    pod = _map(pod)
    errors = validate_object_meta(pod.get("metadata"), namespaced=True)
    errors.extend(validate_pod_spec(pod.get("spec"), "spec", is_pod=True))
    return errors


def validate_pod_template(template: Any, path: str) -> list[FieldError]:
    """``ValidatePodTemplateSpec``: the template's labels (reported at ``<path>.labels``),
    annotations and spec; ephemeral containers are forbidden."""
    template = _map(template)
    meta = _map(template.get("metadata"))
    errors = validate_labels(meta.get("labels"), f"{path}.labels")
    errors.extend(validate_annotations(meta.get("annotations"), f"{path}.annotations"))
    spec = _map(template.get("spec"))
    errors.extend(validate_pod_spec(spec, f"{path}.spec"))
    if _list(spec.get("ephemeralContainers")):
        errors.append(
            forbidden(
                f"{path}.spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            )
        )
    return errors
