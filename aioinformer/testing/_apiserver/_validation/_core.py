"""Validation of Services, ConfigMaps, Secrets, Namespaces and PersistentVolumeClaims.

Ports of the behaviour of kubernetes ``pkg/apis/core/validation`` (``ValidateService`` with
``validateServicePort``, ``ValidatePortNumOrName`` and the traffic-policy checks;
``ValidateConfigMap``; ``ValidateSecret`` with the per-type required keys; ``ValidateNamespace``
with ``validateFinalizerName``; the basics of ``ValidatePersistentVolumeClaim``) on defaulted
objects. Their update rules are in :mod:`._immutable`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from ._content import (
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_ip,
    is_valid_port_name,
    is_valid_port_num,
)
from ._fielderrors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from ._meta import as_list as _list
from ._meta import as_map as _map
from ._meta import one_of, validate_labels

__all__ = [
    "MAX_SECRET_SIZE",
    "kube_finalizer_errors",
    "validate_config_map",
    "validate_namespace",
    "validate_pvc",
    "validate_secret",
    "validate_service",
]

#: ``core.MaxSecretSize`` (also the ConfigMap limit).
MAX_SECRET_SIZE = 1024 * 1024
_STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")
_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]


def kube_finalizer_errors(finalizers: Any, path: str) -> list[FieldError]:
    """``validateKubeFinalizerName``: a finalizer without ``/`` must be a standard one."""
    return [
        invalid(
            f"{path}[{i}]",
            name,
            "name is neither a standard finalizer name nor is it fully qualified",
        )
        for i, name in enumerate(_list(finalizers))
        if isinstance(name, str) and "/" not in name and name not in _STANDARD_FINALIZERS
    ]


def _service_port(
    port: Mapping[str, Any], path: str, *, need_name: bool, names: set[str]
) -> list[FieldError]:
    errors: list[FieldError] = []
    name = str(port.get("name") or "")
    if need_name and not name:
        errors.append(required(f"{path}.name"))
    elif name:
        errors.extend(invalid(f"{path}.name", name, m) for m in is_dns1123_label(name))
        if name in names:
            errors.append(duplicate(f"{path}.name", name))
        names.add(name)
    number = port.get("port") or 0
    errors.extend(invalid(f"{path}.port", number, m) for m in is_valid_port_num(number))
    errors.extend(one_of(port.get("protocol"), f"{path}.protocol", ["SCTP", "TCP", "UDP"]))
    target = port.get("targetPort", 0)
    if isinstance(target, str):
        errors.extend(invalid(f"{path}.targetPort", target, m) for m in is_valid_port_name(target))
    elif isinstance(target, int):
        errors.extend(invalid(f"{path}.targetPort", target, m) for m in is_valid_port_num(target))
    return errors


def _externally_accessible(spec: Mapping[str, Any]) -> bool:
    kind = spec.get("type")
    return kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and bool(_list(spec.get("externalIPs")))
    )


def validate_service(service: Any) -> list[FieldError]:
    """``ValidateService`` (after the metadata): ports, type, selector, session affinity,
    cluster IPs, external IPs, node ports and traffic policies."""
    spec = _map(_map(service).get("spec"))
    errors: list[FieldError] = []
    kind = spec.get("type") or ""
    headless = spec.get("clusterIP") == "None"
    ports = [_map(p) for p in _list(spec.get("ports"))]
    if not ports and not headless and kind != "ExternalName":
        errors.append(required("spec.ports"))
    if kind in ("LoadBalancer", "NodePort") and headless:
        errors.append(
            invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services")
        )
    if kind == "ExternalName":
        for field in ("clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if spec.get(field):
                errors.append(
                    forbidden(f"spec.{field}", "may not be set for ExternalName services")
                )
        cname = str(spec.get("externalName") or "").removesuffix(".")
        if cname:
            errors.extend(
                invalid("spec.externalName", cname, m) for m in is_dns1123_subdomain(cname)
            )
        else:
            errors.append(required("spec.externalName"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        errors.extend(
            _service_port(port, f"spec.ports[{i}]", need_name=len(ports) > 1, names=names)
        )
    errors.extend(validate_labels(spec.get("selector"), "spec.selector"))
    affinity = spec.get("sessionAffinity") or ""
    errors.extend(one_of(affinity, "spec.sessionAffinity", ["ClientIP", "None"]))
    if affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        errors.append(
            forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None")
        )
    for i, ip in enumerate(_list(spec.get("clusterIPs")) or [spec.get("clusterIP") or ""]):
        if ip and ip != "None" and is_valid_ip(str(ip)):
            errors.extend(invalid(f"spec.clusterIPs[{i}]", ip, m) for m in is_valid_ip(str(ip)))
    for i, ip in enumerate(_list(spec.get("externalIPs"))):
        errors.extend(invalid(f"spec.externalIPs[{i}]", ip, m) for m in is_valid_ip(str(ip)))
    errors.extend(one_of(kind, "spec.type", _SERVICE_TYPES))
    if kind == "ClusterIP":
        for i, port in enumerate(ports):
            if port.get("nodePort"):
                errors.append(
                    forbidden(
                        f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'"
                    )
                )
    seen: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol"), port.get("port"))
        if key in seen:
            errors.append(duplicate(f"spec.ports[{i}]", {"protocol": key[0], "port": key[1]}))
        seen.add(key)
    external = spec.get("externalTrafficPolicy") or ""
    if external and not _externally_accessible(spec):
        errors.append(
            invalid(
                "spec.externalTrafficPolicy",
                external,
                "may only be set for externally-accessible services",
            )
        )
    if external and external not in ("Cluster", "Local"):
        errors.append(not_supported("spec.externalTrafficPolicy", external, ["Cluster", "Local"]))
    internal = spec.get("internalTrafficPolicy")
    if internal is None:
        if kind in ("NodePort", "LoadBalancer", "ClusterIP"):
            errors.append(required("spec.internalTrafficPolicy"))
    elif internal not in ("Cluster", "Local"):
        errors.append(not_supported("spec.internalTrafficPolicy", internal, ["Cluster", "Local"]))
    return errors


def validate_config_map(config_map: Any) -> list[FieldError]:
    """``ValidateConfigMap`` (after the metadata): keys, no key in both maps, 1 MiB in all."""
    config_map = _map(config_map)
    data, binary = _map(config_map.get("data")), _map(config_map.get("binaryData"))
    errors: list[FieldError] = []
    total = 0
    for key, value in data.items():
        errors.extend(invalid(f"data[{key}]", key, msg) for msg in is_config_map_key(key))
        if key in binary:
            errors.append(invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(str(value or "").encode())
    for key, value in binary.items():
        errors.extend(invalid(f"binaryData[{key}]", key, msg) for msg in is_config_map_key(key))
        total += _decoded_length(value)
    if total > MAX_SECRET_SIZE:
        errors.append(too_long("", MAX_SECRET_SIZE))
    return errors


def _decoded_length(value: Any) -> int:
    try:
        return len(base64.b64decode(str(value or ""), validate=False))
    except (binascii.Error, ValueError):
        return 0


def _secret_json(data: Mapping[str, Any], key: str) -> list[FieldError]:
    try:
        json.loads(base64.b64decode(str(data[key] or "")))
    except (ValueError, binascii.Error) as error:
        return [invalid(f"data[{key}]", "<secret contents redacted>", str(error))]
    return []


def validate_secret(secret: Any) -> list[FieldError]:
    """``ValidateSecret`` (after the metadata): keys, 1 MiB, and the keys each type needs."""
    secret = _map(secret)
    data = _map(secret.get("data"))
    errors: list[FieldError] = []
    total = 0
    for key, value in data.items():
        errors.extend(invalid(f"data[{key}]", key, msg) for msg in is_config_map_key(key))
        total += _decoded_length(value)
    if total > MAX_SECRET_SIZE:
        errors.append(too_long("data", MAX_SECRET_SIZE))
    kind = secret.get("type") or ""
    annotations = _map(_map(secret.get("metadata")).get("annotations"))
    if kind == "kubernetes.io/service-account-token":
        key = "kubernetes.io/service-account.name"
        if not annotations.get(key):
            errors.append(required(f"metadata.annotations[{key}]"))
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind.endswith("dockercfg") else ".dockerconfigjson"
        errors.extend(_secret_json(data, key) if key in data else [required(f"data[{key}]")])
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            errors += [required("data[username]"), required("data[password]")]
    elif kind == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            errors.append(required("data[ssh-privatekey]"))
    elif kind == "kubernetes.io/tls":
        errors.extend(required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data)
    return errors


def validate_namespace(namespace: Any) -> list[FieldError]:
    """``ValidateNamespace`` (after the metadata): the spec's finalizer names."""
    finalizers = _list(_map(_map(namespace).get("spec")).get("finalizers"))
    errors: list[FieldError] = []
    for name in finalizers:
        text = str(name)
        errors.extend(invalid("spec.finalizers", text, m) for m in is_qualified_name(text))
        if "/" not in text and text not in _STANDARD_FINALIZERS:
            errors.append(
                invalid(
                    "spec.finalizers",
                    text,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return errors


def validate_pvc(claim: Any) -> list[FieldError]:
    """The basics of ``ValidatePersistentVolumeClaim``: access modes and a storage request."""
    spec = _map(_map(claim).get("spec"))
    errors: list[FieldError] = []
    modes = _list(spec.get("accessModes"))
    if not modes:
        errors.append(required("spec.accessModes", "at least 1 access mode is required"))
    supported = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
    for mode in modes:
        if mode not in supported:
            errors.append(not_supported("spec.accessModes", mode, supported))
    requests = _map(_map(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        errors.append(required("spec.resources[storage]"))
    return errors
