"""A minimal OpenAPI v3 surface, enough for kubectl.

kubectl (1.27+) asks ``/openapi/v3`` whether the server validates fields itself: it looks for
a PATCH operation of the object's kind declaring the ``fieldValidation`` query parameter. When
found, kubectl skips client-side validation (which would need full schemas) and leaves it to
the server. So each group version lists, for every resource, a PATCH operation with that
parameter and the ``x-kubernetes-group-version-kind`` extension; there are no schemas.
``/openapi/v2`` answers 404.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from .resources import ResourceInfo, ResourceRegistry

__all__ = ["openapi_v3_document", "openapi_v3_root"]


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _group_versions(registry: ResourceRegistry) -> dict[tuple[str, str], list[ResourceInfo]]:
    out: dict[tuple[str, str], list[ResourceInfo]] = {}
    for info in registry:
        out.setdefault((info.group, info.version), []).append(info)
    return out


def openapi_v3_root(registry: ResourceRegistry) -> dict[str, Any]:
    """``/openapi/v3``: one entry per group version, pointing at its document."""
    paths = {}
    for (group, version), infos in _group_versions(registry).items():
        digest = hashlib.sha256(orjson.dumps([str(i) for i in infos])).hexdigest()[:16].upper()
        path = _gv_path(group, version)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


def openapi_v3_document(registry: ResourceRegistry, path: str) -> dict[str, Any] | None:
    """``/openapi/v3/api/v1`` or ``/openapi/v3/apis/{group}/{version}``, or None."""
    for (group, version), infos in _group_versions(registry).items():
        if _gv_path(group, version) != path.strip("/"):
            continue
        paths: dict[str, Any] = {}
        for info in infos:
            base = f"/{_gv_path(group, version)}/"
            base += (
                f"namespaces/{{namespace}}/{info.plural}/{{name}}"
                if info.namespaced
                else f"{info.plural}/{{name}}"
            )
            paths[base] = {
                "patch": {
                    "operationId": f"patch{info.kind}",
                    "x-kubernetes-group-version-kind": {
                        "group": group,
                        "version": version,
                        "kind": info.kind,
                    },
                    "parameters": [
                        {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
                        {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
                    ],
                    "responses": {"200": {"description": "OK"}},
                }
            }
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes (aioinformer fake)", "version": "v1.32.0"},
            "paths": paths,
            "components": {"schemas": {}},
        }
    return None
