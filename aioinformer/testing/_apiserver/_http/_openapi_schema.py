"""OpenAPI schemas of the served kinds, from the JSON schemas :mod:`._schema` loads.

kubernetes-validate ships the definitions of ``/openapi/v2`` turned into JSON Schema
(``"type": ["string", "null"]``, ``"$ref": "#/$defs/…"``, an ``enum`` on ``apiVersion`` and
``kind``, ``oneOf`` for ``IntOrString`` and ``Quantity``). This module turns them back into
what a real server publishes: in v2, ``{"$ref": "#/definitions/…", "description": …}``;
in v3, ``{"allOf": [{"$ref": "#/components/schemas/…"}], "description": …}``, and
``IntOrString`` as ``{"type": "string", "format": "int-or-string"}`` in v2 and a
``oneOf`` integer or string in v3 (``OpenAPIV3OneOfTypes`` of apimachinery). Custom resources get
the schema of their CRD version under the name ``<reversed group>.<version>.<Kind>``, with
``apiVersion``, ``kind`` and ``metadata`` added, as apiextensions' ``openapi/builder`` does.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

from .._schema._published import schemas

__all__ = ["closure", "custom_name", "definition", "named", "reference", "root_name"]

META = "io.k8s.apimachinery.pkg.apis.meta.v1"
#: The types that are strings in v2 and ``oneOf`` in v3 (``OpenAPIV3OneOfTypes``).
_SCALAR_TYPES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": (
        {"format": "int-or-string", "type": "string"},
        {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    ),
    "io.k8s.apimachinery.pkg.api.resource.Quantity": (
        {"type": "string"},
        {"oneOf": [{"type": "string"}, {"type": "number"}]},
    ),
}
_API_VERSION = (
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
_KIND = (
    "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)
_METADATA = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


def reference(name: str, *, v3: bool) -> str:
    """The ``$ref`` of a named schema."""
    return f"#/components/schemas/{name}" if v3 else f"#/definitions/{name}"


def _convert(schema: Any, *, v3: bool, key: str = "") -> Any:
    if isinstance(schema, list):
        return [_convert(item, v3=v3) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for name, value in schema.items():
        if name == "$ref" and isinstance(value, str):
            target = reference(value.rsplit("/", 1)[-1], v3=v3)
            siblings = set(schema) - {"$ref"}
            if v3 and siblings:
                out["allOf"] = [{"$ref": target}]
            else:
                out["$ref"] = target
        elif name == "type" and isinstance(value, list):
            out["type"] = next((t for t in value if t != "null"), "object")
        elif name == "enum" and key in ("apiVersion", "kind"):
            continue  # added by the JSON Schema conversion, not in the real documents
        elif name == "properties" and isinstance(value, dict):
            out[name] = {k: _convert(v, v3=v3, key=k) for k, v in value.items()}
        else:
            out[name] = _convert(value, v3=v3)
    return out


@functools.cache
def _definition(name: str, v3: bool) -> dict[str, Any] | None:
    if name in _SCALAR_TYPES:
        return dict(_SCALAR_TYPES[name][v3])
    found = schemas().definitions.get(name)
    return None if found is None else dict(_convert(found, v3=v3))


def definition(name: str, *, v3: bool) -> dict[str, Any] | None:
    """One built-in definition in the OpenAPI form (None when unknown). Do not mutate."""
    return _definition(name, v3)


def _references(schema: Any) -> Iterable[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                yield value.rsplit("/", 1)[-1]
            else:
                yield from _references(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _references(item)


def closure(roots: Iterable[str], extra: Mapping[str, Any], *, v3: bool) -> dict[str, Any]:
    """The named schemas ``roots`` need, references followed (``extra``: custom ones)."""
    found: dict[str, Any] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        schema = extra.get(name) or definition(name, v3=v3)
        if schema is None:
            continue
        found[name] = schema
        pending.extend(_references(schema))
    return dict(sorted(found.items()))


@functools.cache
def _roots() -> dict[tuple[str, str, str], str]:
    roots: dict[tuple[str, str, str], str] = {}
    for name, schema in schemas().definitions.items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
            roots.setdefault(key, name)
    return roots


def root_name(group: str, version: str, kind: str) -> str | None:
    """The definition of a built-in kind (``io.k8s.api.apps.v1.Deployment``), or None."""
    return _roots().get((group, version, kind))


def custom_name(group: str, version: str, kind: str) -> str:
    """apiextensions' name for a custom kind: ``com.example.v1.Widget``."""
    return ".".join([*reversed(group.split(".")), version, kind])


def named(
    group: str, version: str, kind: str, schema: Mapping[str, Any] | None, *, v3: bool
) -> dict[str, Any]:
    """A custom resource's schema as published: the CRD version's ``openAPIV3Schema`` (or a
    free-form object) with ``apiVersion``, ``kind``, ``metadata`` and its GVK added."""
    out = dict(_convert(dict(schema or {"type": "object"}), v3=v3))
    properties = dict(out.get("properties") or {})
    metadata: dict[str, Any] = {"description": _METADATA}
    if v3:
        metadata["allOf"] = [{"$ref": reference(f"{META}.ObjectMeta", v3=v3)}]
    else:
        metadata["$ref"] = reference(f"{META}.ObjectMeta", v3=v3)
    properties.update(
        {
            "apiVersion": {"description": _API_VERSION, "type": "string"},
            "kind": {"description": _KIND, "type": "string"},
            "metadata": metadata,
        }
    )
    out["properties"] = dict(sorted(properties.items()))
    out.setdefault("type", "object")
    out["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    return out


def custom_list(group: str, version: str, kind: str, *, v3: bool) -> dict[str, Any]:
    """The schema of a custom resource's list (``…WidgetList``)."""
    item = reference(custom_name(group, version, kind), v3=v3)
    list_meta = reference(f"{META}.ListMeta", v3=v3)
    return {
        "description": f"{kind}List is a list of {kind}",
        "properties": {
            "apiVersion": {"description": _API_VERSION, "type": "string"},
            "items": {"items": {"$ref": item}, "type": "array"},
            "kind": {"description": _KIND, "type": "string"},
            "metadata": {"allOf": [{"$ref": list_meta}]} if v3 else {"$ref": list_meta},
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": [
            {"group": group, "kind": f"{kind}List", "version": version}
        ],
    }
