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

from ._fielderrors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_found,
    required,
)
from ._validation_content import (
    inclusive_range_error,
    is_dns1123_label,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns_subdomain,
)
from ._validation_meta import (
    as_list as _list,
)
from ._validation_meta import (
    as_map as _map,
)
from ._validation_meta import (
    one_of,
    validate_annotations,
    validate_labels,
    validate_object_meta,
)
from ._validation_podparts import (
    validate_env,
    validate_resources,
    validate_tolerations,
    validate_volumes,
)

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
