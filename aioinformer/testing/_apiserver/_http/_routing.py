"""What a request is about: its verb and the resource it names (the server's RequestInfo).

Paths follow the real API: ``/api/v1/...`` for the core group, ``/apis/{group}/{version}/...``
for the others, with ``namespaces/{ns}/`` before namespaced resources, an optional name and
subresource, and the legacy ``watch/`` prefix. Discovery, OpenAPI, health and ``/version``
and ``/metrics`` are ``discovery``; ``/_fake/...`` is ``admin``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["RequestInfo", "parse_request", "truthy"]

_DISCOVERY_PREFIXES = ("/openapi/", "/healthz", "/livez", "/readyz")
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


def truthy(value: str | None) -> bool:
    """A boolean query parameter as the server parses it (``1``, ``t``, ``true``, ...)."""
    return value is not None and value.lower() in ("1", "t", "true")


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """The parsed request.

    :ivar verb: get, list, watch, create, update, patch, delete, deletecollection,
        discovery, admin, or ``""`` for a method the path does not support.
    :ivar is_resource: whether the path names a resource (else discovery/admin/unknown).
    """

    verb: str
    is_resource: bool
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    legacy_watch: bool = False


def _resource_verb(method: str, name: str, watch: bool) -> str:
    if method == "GET":
        if watch:
            return "watch"
        return "get" if name else "list"
    if method == "POST":
        return "" if name else "create"
    if method == "PUT":
        return "update" if name else ""
    if method == "PATCH":
        return "patch" if name else ""
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    return ""


def parse_request(method: str, path: str, query: Mapping[str, str]) -> RequestInfo:
    """Classify a request by method, path and query."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["_fake"]:
        return RequestInfo("admin", False)
    if parts in (["version"], ["api"], ["apis"], ["metrics"]) or path.startswith(
        _DISCOVERY_PREFIXES
    ):
        return RequestInfo("discovery", False)
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    elif parts[:1] == ["apis"] and len(parts) == 2:
        return RequestInfo("discovery", False, group=parts[1])
    else:
        return RequestInfo("", False)
    if not rest:
        return RequestInfo("discovery", False, group=group, version=version)
    legacy_watch = rest[0] == "watch"
    if legacy_watch:
        rest = rest[1:]
    namespace = ""
    if len(rest) > 1 and rest[0] == "namespaces":
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
        else:
            namespace = ""
    if not rest or len(rest) > 3:
        return RequestInfo("", False, group=group, version=version)
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    verb = _resource_verb(method, name, legacy_watch or truthy(query.get("watch")))
    return RequestInfo(
        verb,
        True,
        group=group,
        version=version,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
        legacy_watch=legacy_watch,
    )
