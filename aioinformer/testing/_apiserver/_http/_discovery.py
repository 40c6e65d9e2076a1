"""Discovery documents: ``/version``, ``/api``, ``/apis``, group and group-version lists.

These are the legacy (unaggregated) documents; a client that asks for aggregated discovery
(kubectl does) gets ``/api`` and ``/apis`` as an ``APIGroupDiscoveryList`` instead
(:mod:`._discovery_aggregated`).
"""

from __future__ import annotations

from typing import Any

from .._api._resources import ResourceInfo, ResourceRegistry
from .._schema._published import schemas
from ._subresources import discovery_entries

__all__ = ["api_group", "api_group_list", "api_resource_list", "api_versions", "version_info"]

#: The verbs of a ``status`` subresource.
_STATUS_VERBS = ["get", "patch", "update"]


def version_info() -> dict[str, Any]:
    """``/version``: the Kubernetes release whose schemas the fake serves (the newest the
    ``kubernetes-validate`` package has), the one the OpenAPI documents name too."""
    served = schemas()
    major, minor, _ = served.version
    return {
        "major": str(major),
        "minor": str(minor),
        "gitVersion": f"{served.git_version}-aioinformer-fake",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.23.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def api_versions(server_address: str) -> dict[str, Any]:
    """``/api``: the core group's versions."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def api_group(name: str, versions: list[str]) -> dict[str, Any]:
    """``/apis/{group}``."""
    listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": name,
        "versions": listed,
        "preferredVersion": listed[0],
    }


def api_group_list(registry: ResourceRegistry) -> dict[str, Any]:
    """``/apis``: every non-core group."""
    groups = []
    for name, versions in registry.groups().items():
        group = api_group(name, versions)
        del group["kind"], group["apiVersion"]
        groups.append(group)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def _resource_entry(info: ResourceInfo) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": info.plural,
        "singularName": info.singular_name,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": list(info.verbs),
    }
    if info.short_names:
        entry["shortNames"] = list(info.short_names)
    return entry


def _subresource_entry(info: ResourceInfo, subresource: str) -> dict[str, Any]:
    """``<plural>/status`` (the kind itself) or ``<plural>/scale`` (``autoscaling/v1``
    ``Scale``, as ``discovery.go`` lists a subresource of another group's kind)."""
    entry: dict[str, Any] = {
        "name": f"{info.plural}/{subresource}",
        "singularName": "",
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": _STATUS_VERBS,
    }
    if subresource == "scale":
        entry.update(group="autoscaling", version="v1", kind="Scale")
    return entry


def api_resource_list(
    registry: ResourceRegistry, group: str, version: str
) -> dict[str, Any] | None:
    """``/api/v1`` or ``/apis/{group}/{version}``, or None when nothing is served there."""
    infos = registry.in_group_version(group, version)
    if not infos:
        return None
    resources: list[dict[str, Any]] = []
    for info in infos:
        resources.append(_resource_entry(info))
        resources.extend(_subresource_entry(info, s) for s in info.subresources)
        resources.extend(discovery_entries(info))
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }
