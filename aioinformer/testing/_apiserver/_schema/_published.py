"""The published Kubernetes OpenAPI schemas, as the fake API server reads them.

The schemas come from the ``kubernetes-validate`` package (the ``testing`` extra), which ships
the JSON schema of every API type for each Kubernetes release, with the extensions the API
server acts on: ``x-kubernetes-patch-merge-key``/``-patch-strategy`` (strategic merge patch),
``x-kubernetes-list-type``/``-list-map-keys``/``-map-type`` (server-side apply) and
``x-kubernetes-group-version-kind``. The fake serves the newest release the package has.

Everything is lazy and shared by every server in the process: the definitions file is read on
the first question (1.8 MB of JSON, 10-20 ms), a type is built on first use, and its fields
when first asked for. The types follow the rules the API server uses to turn OpenAPI into its merge
schema (kube-openapi ``pkg/schemaconv``): objects with properties are structs (granular unless
``x-kubernetes-map-type: atomic``), ``additionalProperties`` make maps, objects without either
are free-form (deduced), lists are atomic unless ``x-kubernetes-list-type`` (or, failing that,
a ``merge`` patch strategy) says ``set`` or ``map``, and int-or-string/quantity are scalars.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

__all__ = [
    "DEDUCED",
    "INSTALL_HINT",
    "Field",
    "Schemas",
    "TypeInfo",
    "require_schemas",
    "schemas",
]

#: What to run when the schemas are missing.
INSTALL_HINT = "pip install 'aioinformer[testing]'"

_PACKAGE = "kubernetes_validate"
_VERSION_DIR = re.compile(r"^v(\d+)\.(\d+)\.(\d+)-local$")

SCALAR, MAP, LIST, ANY = "scalar", "map", "list", "any"
ATOMIC, SET, ASSOCIATIVE = "atomic", "set", "map"


class TypeInfo:
    """One type of the merge schema.

    ``kind`` is ``scalar``, ``map`` (a struct or a map), ``list`` or ``any`` (free-form:
    deduced from the value, maps granular and lists atomic, as ``__untyped_deduced_``).
    """

    __slots__ = (
        "_fields",
        "_loader",
        "_props",
        "atomic",
        "element",
        "keys",
        "kind",
        "list_type",
        "name",
        "required",
        "scalar",
    )

    def __init__(
        self,
        kind: str,
        *,
        name: str = "",
        scalar: str = "",
        atomic: bool = False,
        list_type: str = "",
        keys: tuple[str, ...] = (),
        element: TypeInfo | None = None,
        props: dict[str, Any] | None = None,
        required: frozenset[str] = frozenset(),
        loader: Schemas | None = None,
    ) -> None:
        self.kind = kind
        self.name = name
        #: For scalars: ``string``, ``numeric``, ``boolean`` or ``untyped``.
        self.scalar = scalar
        #: Maps: ``x-kubernetes-map-type: atomic``; lists: list type ``atomic``.
        self.atomic = atomic
        #: Lists: ``atomic``, ``set`` or ``map``.
        self.list_type = list_type
        #: Lists of type ``map``: the key fields.
        self.keys = keys
        #: Lists: the item type; maps: the type of keys that are not declared fields.
        self.element = element
        self.required = required
        self._props = props
        self._fields: dict[str, Field] | None = None
        self._loader = loader

    @property
    def fields(self) -> dict[str, Field]:
        """The declared fields of a struct (empty for maps and other kinds)."""
        if self._fields is None:
            if self._props is None or self._loader is None:
                self._fields = {}
            else:
                loader = self._loader
                self._fields = {k: loader.field(k, v) for k, v in self._props.items()}
        return self._fields

    def field(self, name: str) -> Field | None:
        """The declared field ``name``, or None."""
        return self.fields.get(name) if self._props else None

    def child(self, name: str) -> TypeInfo | None:
        """The type of the value under key ``name`` (a field, else the map element)."""
        declared = self.field(name)
        if declared is not None:
            return declared.type
        if self.kind == ANY:
            return DEDUCED
        return self.element if self.kind == MAP else None

    def with_atomic(self, atomic: bool) -> TypeInfo:
        """This type with another map relationship (a reference-site override)."""
        if atomic == self.atomic:
            return self
        copy = TypeInfo(
            self.kind,
            name=self.name,
            scalar=self.scalar,
            atomic=atomic,
            list_type=self.list_type,
            keys=self.keys,
            element=self.element,
            props=self._props,
            required=self.required,
            loader=self._loader,
        )
        copy._fields = self._fields
        return copy

    def __repr__(self) -> str:
        return f"TypeInfo({self.kind}, {self.name or self.scalar or self.list_type})"


#: The free-form type (``__untyped_deduced_``).
DEDUCED = TypeInfo(ANY, name="__untyped_deduced_")
DEDUCED.element = DEDUCED


@dataclass(frozen=True, slots=True)
class Field:
    """A declared field of a struct, with its patch metadata.

    :param strategies: ``x-kubernetes-patch-strategy`` split on commas (e.g. ``merge``,
        ``retainKeys``, ``replace``); empty when unset.
    :param merge_key: ``x-kubernetes-patch-merge-key``, ``""`` when unset.
    """

    name: str
    type: TypeInfo
    strategies: tuple[str, ...] = ()
    merge_key: str = ""


def _type_name(schema: dict[str, Any]) -> str:
    declared = schema.get("type")
    if isinstance(declared, list):
        declared = next((t for t in declared if t != "null"), "")
    return declared if isinstance(declared, str) else ""


def _list_relationship(schema: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """``getListElementRelationship`` of kube-openapi's schemaconv."""
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == SET:
        return SET, ()
    if list_type == ASSOCIATIVE:
        return ASSOCIATIVE, tuple(schema.get("x-kubernetes-list-map-keys") or ())
    if list_type is None and schema.get("x-kubernetes-patch-strategy") in (
        "merge",
        "merge,retainKeys",
    ):
        key = schema.get("x-kubernetes-patch-merge-key")
        return (ASSOCIATIVE, (key,)) if isinstance(key, str) else (SET, ())
    return ATOMIC, ()


_SCALARS = {"string": "string", "integer": "numeric", "number": "numeric", "boolean": "boolean"}


class Schemas:
    """The definitions of one Kubernetes release, turned into types on demand.

    :param definitions: the ``$defs`` of kubernetes-validate's ``_definitions.json``.
    :param version: the release, e.g. ``(1, 37, 0)``.
    """

    def __init__(self, definitions: dict[str, Any], version: tuple[int, int, int]) -> None:
        self.definitions = definitions
        self.version = version
        self._named: dict[str, TypeInfo] = {}
        self._roots: dict[tuple[str, str, str], str] | None = None

    @property
    def git_version(self) -> str:
        """The served version as ``/version`` spells it, e.g. ``v1.37.0``."""
        return "v{}.{}.{}".format(*self.version)

    def root(self, group: str, version: str, kind: str) -> TypeInfo | None:
        """The type of objects of one group/version/kind, or None when it is not built in."""
        if self._roots is None:
            roots: dict[tuple[str, str, str], str] = {}
            for name, schema in self.definitions.items():
                for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                    key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
                    roots.setdefault(key, name)
            self._roots = roots
        found = self._roots.get((group, version, kind))
        return None if found is None else self.named(found)

    def named(self, name: str) -> TypeInfo:
        """The type of one definition (``io.k8s.api.core.v1.Pod``)."""
        found = self._named.get(name)
        if found is None:
            schema = self.definitions.get(name)
            found = DEDUCED if schema is None else self.parse(schema, name=name)
            self._named[name] = found
        return found

    def parse(self, schema: dict[str, Any], *, name: str = "") -> TypeInfo:
        """The type a (sub)schema describes (references resolved lazily)."""
        ref = schema.get("$ref")
        if ref is None and len(schema.get("allOf") or ()) == 1:
            ref = schema["allOf"][0].get("$ref")
        if isinstance(ref, str):
            named = self.named(ref.rsplit("/", 1)[-1])
            map_type = schema.get("x-kubernetes-map-type")
            return named if map_type is None else named.with_atomic(map_type == ATOMIC)
        declared = _type_name(schema)
        if not declared and ("properties" in schema or "additionalProperties" in schema):
            declared = "object"
        if schema.get("format") == "int-or-string" or (
            not declared and ("oneOf" in schema or "anyOf" in schema)
        ):
            return TypeInfo(SCALAR, name=name, scalar="untyped")
        if declared in _SCALARS:
            return TypeInfo(SCALAR, name=name, scalar=_SCALARS[declared])
        if declared == "array":
            list_type, keys = _list_relationship(schema)
            items = schema.get("items")
            item_type = self.parse(items) if isinstance(items, dict) else DEDUCED
            return TypeInfo(LIST, name=name, list_type=list_type, keys=keys, element=item_type)
        if declared == "object":
            props = schema.get("properties") or None
            extra = schema.get("additionalProperties")
            element: TypeInfo | None
            if isinstance(extra, dict):
                element = self.parse(extra)
            elif extra is True or (extra is None and not props):
                element = DEDUCED
            else:
                element = None
            return TypeInfo(
                MAP,
                name=name,
                atomic=schema.get("x-kubernetes-map-type") == ATOMIC,
                element=element,
                props=props,
                required=frozenset(schema.get("required") or ()),
                loader=self,
            )
        return DEDUCED

    def field(self, name: str, schema: dict[str, Any]) -> Field:
        """A struct field from its property schema."""
        strategy = schema.get("x-kubernetes-patch-strategy")
        merge_key = schema.get("x-kubernetes-patch-merge-key")
        return Field(
            name,
            self.parse(schema),
            tuple(strategy.split(",")) if isinstance(strategy, str) and strategy else (),
            merge_key if isinstance(merge_key, str) else "",
        )


def lookup(root: TypeInfo, path: Iterable[str]) -> TypeInfo | None:
    """The type at a field path below ``root`` (list items are stepped into transparently)."""
    current: TypeInfo | None = root
    for name in path:
        while current is not None and current.kind == LIST:
            current = current.element
        if current is None:
            return None
        current = current.child(name)
    return current


@functools.cache
def _package_dir() -> Path | None:
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def require_schemas() -> None:
    """Make sure the schemas are installed (cheap: nothing is read).

    :raises ImportError: naming the ``testing`` extra when kubernetes-validate is missing.
    """
    if _package_dir() is None:
        raise ImportError(
            "the fake Kubernetes API server needs the Kubernetes OpenAPI schemas from the "
            f"kubernetes-validate package: {INSTALL_HINT}"
        )


@functools.cache
def schemas() -> Schemas:
    """The schemas of the newest Kubernetes release kubernetes-validate has (read once).

    :raises ImportError: naming the ``testing`` extra when kubernetes-validate is missing.
    """
    require_schemas()
    package = _package_dir()
    assert package is not None
    root = package / "kubernetes-json-schema"
    versions = []
    for entry in root.iterdir():
        match = _VERSION_DIR.match(entry.name)
        if match:
            versions.append((int(match[1]), int(match[2]), int(match[3])))
    if not versions:
        raise ImportError(f"kubernetes-validate ships no schemas in {root}: {INSTALL_HINT}")
    version = max(versions)
    document = orjson.loads(
        (root / "v{}.{}.{}-local".format(*version) / "_definitions.json").read_bytes()
    )
    return Schemas(document["$defs"], version)
