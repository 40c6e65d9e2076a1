"""A CustomResourceDefinition as its resource is served, and the ``/scale`` subresource.

:class:`CustomKind` is built once per CRD (``crdHandler.getOrCreateServingInfoFor``): per
version its compiled schema (:mod:`._crd._schema`, defaults pruned), its compiled CEL rules
(:mod:`._cel`), the schema of ``status``
(what a status update validates), whether ``/status`` and ``/scale`` are served, the printer
columns and the deprecation warning
(``defaultDeprecationWarning``: ``stable.example.com/v1beta1 CronTab is deprecated; use
stable.example.com/v1 CronTab``).

Scale (apiextensions-apiserver ``registry/customresource/etcd.go``, ``ScaleREST``): a GET
answers an ``autoscaling/v1`` ``Scale`` read from ``specReplicasPath``,
``statusReplicasPath`` and ``labelSelectorPath`` (500 when the spec path is absent); an
update writes ``spec.replicas`` back at ``specReplicasPath`` (400 when neither side has one)
and then goes through the main resource's update rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._api._failure import StatusFailure
from ._cel import CompiledSchema, rules_of
from ._lifecycle import _version_key, storage_version
from ._schema import Schema, compile_schema, json_copy
from ._values import go_number

__all__ = ["CustomKind", "CustomVersion", "ScalePaths", "apply_scale", "nested_value", "scale_of"]

_NOT_SET = -(2**31)


@dataclass(frozen=True, slots=True)
class ScalePaths:
    """A version's ``subresources.scale`` (paths with their leading dot)."""

    spec_replicas: str
    status_replicas: str
    label_selector: str = ""


@dataclass(frozen=True, slots=True)
class CustomVersion:
    """One version of a custom resource as it is served."""

    name: str
    served: bool
    storage: bool
    schema: Schema | None
    status_schema: Schema | None
    status: bool
    scale: ScalePaths | None
    columns: tuple[Mapping[str, Any], ...] = ()
    warning: str = ""
    selectable: tuple[str, ...] = ()
    openapi: Mapping[str, Any] | None = None
    #: The schema's ``x-kubernetes-validations``, compiled (None: the schema has none).
    rules: CompiledSchema | None = None


@dataclass(frozen=True, slots=True)
class CustomKind:
    """What serving a CRD's resource needs: names, scope, versions (by name)."""

    group: str
    kind: str
    list_kind: str
    plural: str
    singular: str
    namespaced: bool
    storage: str
    versions: Mapping[str, CustomVersion] = field(default_factory=dict)
    preserve_unknown: bool = False
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    @classmethod
    def from_crd(cls, crd: Mapping[str, Any]) -> CustomKind:
        """The serving view of a (validated, defaulted) CRD."""
        spec = crd.get("spec") or {}
        names = (crd.get("status") or {}).get("acceptedNames") or {}
        wanted = spec.get("names") or {}
        group, kind = str(spec.get("group") or ""), str(names.get("kind") or wanted.get("kind"))
        entries = [v for v in spec.get("versions") or () if isinstance(v, Mapping)]
        versions = {}
        for entry in entries:
            name = str(entry.get("name"))
            props = (entry.get("schema") or {}).get("openAPIV3Schema")
            schema = compile_schema(props) if isinstance(props, Mapping) else None
            subresources = entry.get("subresources") or {}
            scale = subresources.get("scale")
            versions[name] = CustomVersion(
                name=name,
                served=entry.get("served") is True,
                storage=entry.get("storage") is True,
                schema=schema,
                status_schema=(schema.properties or {}).get("status") if schema else None,
                status=subresources.get("status") is not None,
                scale=None
                if not isinstance(scale, Mapping)
                else ScalePaths(
                    str(scale.get("specReplicasPath") or ""),
                    str(scale.get("statusReplicasPath") or ""),
                    str(scale.get("labelSelectorPath") or ""),
                ),
                columns=tuple(entry.get("additionalPrinterColumns") or ()),
                warning=_warning(entry, entries, group, str(wanted.get("kind") or kind)),
                selectable=tuple(
                    str(chosen.get("jsonPath") or "").lstrip(".")
                    for chosen in entry.get("selectableFields") or ()
                    if isinstance(chosen, Mapping)
                ),
                openapi=json_copy(dict(props)) if isinstance(props, Mapping) else None,
                rules=rules_of(props) if isinstance(props, Mapping) else None,
            )
        return cls(
            group=group,
            kind=kind,
            list_kind=str(names.get("listKind") or wanted.get("listKind") or f"{kind}List"),
            plural=str(names.get("plural") or wanted.get("plural") or ""),
            singular=str(names.get("singular") or wanted.get("singular") or ""),
            namespaced=spec.get("scope") == "Namespaced",
            storage=storage_version(crd) or "",
            versions=versions,
            preserve_unknown=spec.get("preserveUnknownFields") is True,
            short_names=tuple(names.get("shortNames") or wanted.get("shortNames") or ()),
            categories=tuple(names.get("categories") or wanted.get("categories") or ()),
        )

    def version(self, name: str) -> CustomVersion:
        """A version by name (``KeyError`` when the CRD has none)."""
        return self.versions[name]

    def api_version(self, version: str) -> str:
        """``<group>/<version>``."""
        return f"{self.group}/{version}"

    def field_labels(self, version: str) -> tuple[str, ...]:
        """The field selectors a version supports (``crConverter.ConvertFieldLabel``; any
        other is answered 400 ``field label not supported: <label>``)."""
        own = ("metadata.name", "metadata.namespace") if self.namespaced else ("metadata.name",)
        return own + self.version(version).selectable

    def field_values(self, version: str, obj: Mapping[str, Any]) -> dict[str, str]:
        """The values field selectors match (``GetAttrs``): names, and the selectable fields
        printed as Go's ``fmt.Sprint`` (missing or ``null``: empty)."""
        meta = obj.get("metadata") or {}
        values = {"metadata.name": str(meta.get("name") or "")}
        if self.namespaced:
            values["metadata.namespace"] = str(meta.get("namespace") or "")
        for path in self.version(version).selectable:
            value: Any = obj
            for key in path.split("."):
                value = value.get(key) if isinstance(value, Mapping) else None
            values[path] = "" if value is None else _go_text(value)
        return values


def _warning(
    entry: Mapping[str, Any], entries: list[Mapping[str, Any]], group: str, kind: str
) -> str:
    if entry.get("deprecated") is not True:
        return ""
    if isinstance(entry.get("deprecationWarning"), str):
        return str(entry["deprecationWarning"])
    name = str(entry.get("name"))
    text = f"{group}/{name} {kind} is deprecated"
    newer = [
        str(v.get("name"))
        for v in entries
        if v.get("served") is True
        and v.get("deprecated") is not True
        and _version_key(str(v.get("name"))) < _version_key(name)
    ]
    if newer:
        text += f"; use {group}/{min(newer, key=_version_key)} {kind}"
    return text


_GO_TYPES = {bool: "bool", str: "string", int: "int64", float: "float64"}


def _go_type(value: Any) -> str:
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return _GO_TYPES.get(type(value), "<nil>")


def _go_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return go_number(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_text(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_text(v) for v in value) + "]"
    return "<nil>" if value is None else str(value)


def nested_value(obj: Mapping[str, Any], path: str, want: type) -> tuple[Any, bool, str]:
    """``unstructured.NestedInt64``/``NestedString`` at a ``.a.b`` path: the value, whether
    found, and the accessor error (``.spec.replicas accessor error: three is of the type
    string, expected int64``)."""
    keys = path.lstrip(".").split(".")
    current: Any = obj
    for i, key in enumerate(keys):
        if not isinstance(current, Mapping):
            where = "." + ".".join(keys[:i])
            return (
                None,
                False,
                (
                    f"{where} accessor error: {_go_text(current)} is of the type "
                    f"{_go_type(current)}, expected map[string]interface{{}}"
                ),
            )
        if key not in current:
            return None, False, ""
        current = current[key]
    if type(current) is not want:
        expected = "int64" if want is int else "string"
        return (
            None,
            True,
            (
                f".{'.'.join(keys)} accessor error: {_go_text(current)} is of the type "
                f"{_go_type(current)}, expected {expected}"
            ),
        )
    return current, True, ""


def scale_of(
    kind: CustomKind, version: str, obj: Mapping[str, Any], *, for_update: bool = False
) -> dict[str, Any]:
    """The ``autoscaling/v1`` ``Scale`` of a custom resource (``scaleFromCustomResource``).

    :param for_update: the old Scale an update or patch starts from: a missing
        ``specReplicasPath`` is marked rather than refused.
    :raises StatusFailure: 500 when the version has no scale subresource paths to read, the
        spec path is absent (GET) or a value has the wrong type.
    """
    paths = kind.version(version).scale
    if paths is None:
        raise StatusFailure(404, "NotFound", "the server could not find the requested resource")
    replicas, found, problem = nested_value(obj, paths.spec_replicas, int)
    status, _, status_problem = nested_value(obj, paths.status_replicas, int)
    selector, selector_problem = "", ""
    if paths.label_selector:
        selector, _, selector_problem = nested_value(obj, paths.label_selector, str)
    problem = problem or status_problem or selector_problem
    if problem:
        raise _internal(problem)
    if not found and not for_update:
        raise _internal(f'the spec replicas field "{paths.spec_replicas}" does not exist')
    meta = obj.get("metadata") or {}
    scale_meta = {
        key: meta[key]
        for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        if meta.get(key)
    }
    spec_replicas = _int32(replicas) if found else _NOT_SET
    status_body: dict[str, Any] = {"replicas": _int32(status or 0)}
    if selector:
        status_body["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": scale_meta,
        "spec": {"replicas": spec_replicas} if spec_replicas else {},
        "status": status_body,
    }


def _int32(value: int) -> int:
    """Go's ``int32(x)`` of an ``int64``: wrapped around."""
    return (value + 2**31) % 2**32 - 2**31


def _internal(message: str) -> StatusFailure:
    return StatusFailure(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        details={"causes": [{"message": message}]},
    )


def apply_scale(
    kind: CustomKind, version: str, obj: Mapping[str, Any], scale: Mapping[str, Any]
) -> dict[str, Any]:
    """The custom resource after a ``Scale`` update (``scaleUpdatedObjectInfo``): a copy of
    ``obj`` with ``spec.replicas`` written at ``specReplicasPath`` and the Scale's
    ``resourceVersion`` (a precondition) when it has one. Run the main resource's update
    rules on the result.

    :raises StatusFailure: 400 when the update leaves the replicas unset.
    """
    paths = kind.version(version).scale
    assert paths is not None
    replicas = (scale.get("spec") or {}).get("replicas") or 0
    if replicas == _NOT_SET:
        raise StatusFailure.bad_request(
            f'the spec replicas field "{paths.spec_replicas}" cannot be empty'
        )
    result: dict[str, Any] = json_copy(dict(obj))
    node = result
    keys = paths.spec_replicas.lstrip(".").split(".")
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[keys[-1]] = int(replicas)
    version_seen = (scale.get("metadata") or {}).get("resourceVersion")
    if version_seen:
        result.setdefault("metadata", {})["resourceVersion"] = version_seen
    return result
