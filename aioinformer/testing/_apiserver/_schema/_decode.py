"""A request body decoded into a built-in kind as the API server's Go types decode it.

The real server unmarshals JSON into the kind's Go struct (``sigs.k8s.io/json``, strict when
``fieldValidation`` is ``Strict`` or ``Warn``) and encodes that struct back. This module does
both at once over plain JSON, from the kind's OpenAPI schema and the Go encoding facts of the
API types (``_gotypes.json``: per type and field, the Go type and whether it is a pointer, a
plain struct, ``omitempty`` or ``omitzero``; written by ``tests/testing/gen_gotypes.py`` from
the ``types.go`` of kubernetes/api and kubernetes/apimachinery, 1.37 development snapshots
``10b39a3`` and ``eed236c``):

* a value of the wrong type stops decoding with Go's message (``json: cannot unmarshal string
  into Go struct field DeploymentSpec.spec.replicas of type int32``), as do a malformed
  quantity, time or base64 string;
* undeclared fields are dropped (pruning) and reported as ``unknown field "spec.replica"``;
* the result is what Go encodes: ``null`` and zero values of ``omitempty`` plain fields
  vanish, plain structs appear even when absent (``resources: {}``, ``status: {}``), fields
  without ``omitempty`` appear with their zero value, times are UTC and quantities canonical.
"""

from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass, field
from typing import Any

import orjson

from ._published import schemas
from ._quantity import QuantityError, canonical_text
from ._scalars import ScalarError, canonical_time, check_base64

__all__ = ["DecodeError", "Decoded", "decode_object"]

_MISSING: Any = object()
STRUCT, MAP, LIST, STRING, BYTES, INT, NUMBER, BOOL = range(8)
INTSTR, QUANTITY, TIME, MICROTIME, ANY = range(8, 13)
_SPECIAL = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": INTSTR,
    "io.k8s.apimachinery.pkg.api.resource.Quantity": QUANTITY,
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": TIME,
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": MICROTIME,
}
_INT_RANGES = {"int32": 2**31, "int64": 2**63}


class DecodeError(ValueError):
    """A body the Go decoder refuses (the message is Go's)."""


@dataclass(slots=True)
class Node:
    """A compiled schema node: its kind, and for structs the Go name and the fields."""

    kind: int
    go: str = ""
    bits: str = "int64"
    element: Node | None = None
    fields: dict[str, Slot] = field(default_factory=dict)
    plan: tuple[tuple[tuple[str, int, Node], ...], frozenset[str]] | None = None


@dataclass(slots=True)
class Slot:
    """A struct field: its node, Go type and encoding flags (``p``ointer, ``o``mitempty,
    ``z`` omitzero, ``S`` plain struct, ``t`` time, ``q`` int-or-string/quantity)."""

    node: Node
    go: str
    flags: str


@functools.cache
def _go_table() -> dict[str, Any]:
    raw = importlib.resources.files(__package__).joinpath("_gotypes.json").read_bytes()
    table: dict[str, Any] = orjson.loads(raw)
    return table


_NAMED: dict[str, Node] = {}


def _named(name: str) -> Node:
    node = _NAMED.get(name)
    if node is None:
        special = _SPECIAL.get(name)
        if special is not None:
            node = Node(special)
            _NAMED[name] = node
            return node
        schema = schemas().definitions.get(name) or {}
        node = Node(STRUCT if "properties" in schema else ANY, go=name.rsplit(".", 1)[-1])
        _NAMED[name] = node  # before the fields: types refer to themselves
        if node.kind == STRUCT:
            _fill(node, name, schema)
        else:
            _NAMED[name] = node = _parse(schema)
    return node


def _fill(node: Node, name: str, schema: dict[str, Any]) -> None:
    go_entry = _go_table().get(name)
    go_fields: dict[str, str] = go_entry[1] if go_entry else {}
    for key, sub in schema["properties"].items():
        child = _parse(sub)
        flags, _, go_type = go_fields.get(key, "").partition(" ")
        node.fields[key] = Slot(child, go_type or _derived_go(child, sub), flags or "po")


def _derived_go(node: Node, schema: dict[str, Any]) -> str:
    ref = schema.get("$ref") or ""
    if ref:
        parts = ref.rsplit("/", 1)[-1].split(".")
        return f"{parts[-2]}.{parts[-1]}"
    if node.kind == LIST:
        return "[]" + _derived_go(node.element or Node(ANY), schema.get("items") or {})
    if node.kind == MAP:
        value = schema.get("additionalProperties")
        sub = value if isinstance(value, dict) else {}
        return "map[string]" + _derived_go(node.element or Node(ANY), sub)
    return {INT: node.bits, NUMBER: "float64", BOOL: "bool", BYTES: "[]uint8"}.get(
        node.kind, "string"
    )


def _parse(schema: dict[str, Any]) -> Node:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _named(ref.rsplit("/", 1)[-1])
    declared = schema.get("type")
    kinds = set(declared) if isinstance(declared, list) else {declared}
    fmt = schema.get("format")
    if "array" in kinds:
        return Node(LIST, element=_parse(schema.get("items") or {}))
    if "object" in kinds:
        if "properties" in schema:
            node = Node(STRUCT, go="")
            _fill(node, "", schema)
            return node
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return Node(MAP, element=_parse(extra))
        return Node(ANY)
    if "string" in kinds:
        return Node({"byte": BYTES, "date-time": TIME}.get(str(fmt), STRING))
    if "integer" in kinds:
        return Node(INT, bits="int32" if fmt == "int32" else "int64")
    if "number" in kinds:
        return Node(NUMBER)
    if "boolean" in kinds:
        return Node(BOOL)
    return Node(ANY)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


@dataclass(slots=True)
class Decoded:
    """A decoded object and the strict-decoding errors (``unknown field "…"``) found."""

    obj: dict[str, Any]
    unknown: list[str]


Link = tuple[Any, str] | None  # (parent link, segment): a path built only when needed


def _dotted(link: Link) -> str:
    """A strict-decoding path: keys joined with ``.``, list items as ``[i]``."""
    parts: list[str] = []
    while link is not None:
        link, segment = link
        parts.append(segment)
    text = ""
    for segment in reversed(parts):
        text += segment if segment.startswith("[") or not text else "." + segment
    return text


class _Walk:
    __slots__ = ("strict", "unknown")

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.unknown: list[str] = []

    def fail(self, value: Any, go: str, struct: str, path: Link, literal: str = "") -> None:
        kind = _json_kind(value) + (f" {literal}" if literal else "")
        where = f"Go struct field {struct}.{_dotted(path)}" if struct else "Go value"
        raise DecodeError(f"json: cannot unmarshal {kind} into {where} of type {go}")

    def value(self, node: Node, value: Any, go: str, struct: str, path: Link, at: Link) -> Any:
        kind = node.kind
        if kind == STRUCT:
            if not isinstance(value, dict):
                self.fail(value, go, struct, path)
            return self.struct(node, value, path, at)
        if kind == MAP:
            if not isinstance(value, dict):
                self.fail(value, go, struct, path)
            element_go = go.split("]", 1)[1] if go.startswith("map[") else "string"
            assert node.element is not None
            element = node.element
            if element.kind == STRING:  # the common case: labels, annotations, data
                for v in value.values():
                    if not isinstance(v, str) and v is not None:
                        self.fail(v, element_go, struct, path)
                return {k: "" if v is None else v for k, v in value.items()}
            return {
                k: self.value(element, v, element_go, struct, path, (at, k))
                if v is not None
                else _zero(element)
                for k, v in value.items()
            }
        if kind == LIST:
            if not isinstance(value, list):
                self.fail(value, go, struct, path)
            element_go = go[2:] if go.startswith("[]") else go
            assert node.element is not None
            element = node.element
            return [
                self.value(element, v, element_go, struct, path, (at, f"[{i}]"))
                if v is not None
                else _zero(element)
                for i, v in enumerate(value)
            ]
        return self.scalar(node, value, go, struct, path)

    def scalar(self, node: Node, value: Any, go: str, struct: str, path: Link) -> Any:
        kind = node.kind
        if kind == STRING:
            if not isinstance(value, str):
                self.fail(value, go, struct, path)
            return value
        if kind == INT:
            limit = _INT_RANGES[node.bits]
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.fail(value, go, struct, path)
            if isinstance(value, float) or not -limit <= value < limit:
                self.fail(value, go, struct, path, literal=repr(value))
            return value
        if kind == BOOL:
            if not isinstance(value, bool):
                self.fail(value, go, struct, path)
            return value
        if kind == BYTES:
            if not isinstance(value, str):
                self.fail(value, go, struct, path)
            try:
                check_base64(value)
            except ScalarError as error:
                raise DecodeError(str(error)) from None
            return value
        if kind == NUMBER:
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.fail(value, go, struct, path)
            return value
        if kind == INTSTR:
            if isinstance(value, str):
                return value
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.fail(value, "int32", struct, path)
            if isinstance(value, float) or not -(2**31) <= value < 2**31:
                self.fail(value, "int32", struct, path, literal=repr(value))
            return value
        if kind == QUANTITY:
            text = value if isinstance(value, str) else orjson.dumps(value).decode()
            try:
                return canonical_text(text)
            except QuantityError as error:
                raise DecodeError(str(error)) from None
        if kind in (TIME, MICROTIME):
            if not isinstance(value, str):
                self.fail(value, "string", struct, path)
            try:
                return canonical_time(value, micro=kind == MICROTIME)
            except ScalarError as error:
                raise DecodeError(str(error)) from None
        return value

    def struct(self, node: Node, value: dict[str, Any], path: Link, at: Link) -> Any:
        out: dict[str, Any] = {}
        fields = node.fields
        for key, item in value.items():
            slot = fields.get(key)
            if slot is None:
                if self.strict:
                    self.unknown.append(_dotted((at, key)))
                continue
            if item is None:
                continue
            out[key] = self.value(slot.node, item, slot.go, node.go, (path, key), (at, key))
        return _encode(node, out)


_ZEROS = {STRING: "", BYTES: "", INT: 0, NUMBER: 0, BOOL: False, INTSTR: 0, QUANTITY: "0"}
_EMPTY: tuple[Any, ...] = ("", 0, False, [], {})
_NULL, _STRUCT, _ZERO = range(3)


def _zero(node: Node) -> Any:
    """What Go decodes ``null`` into for a map value or list item: the type's zero value."""
    if node.kind == STRUCT:
        return _encode(node, {})
    return _ZEROS.get(node.kind)


def _plan(node: Node) -> tuple[tuple[tuple[str, int, Node], ...], frozenset[str]]:
    """How Go encodes a struct type: the fields written when absent (as null, an empty
    struct or a zero value) and the plain ``omitempty``/``omitzero`` fields dropped when
    zero."""
    if node.plan is None:
        missing: list[tuple[str, int, Node]] = []
        droppable: set[str] = set()
        for key, slot in node.fields.items():
            flags, child = slot.flags, slot.node
            pointer, omitempty, omitzero = "p" in flags, "o" in flags, "z" in flags
            shape = flags[:1]
            if pointer:
                if not omitempty:
                    missing.append((key, _NULL, child))
            elif shape == "S":
                if not omitzero:
                    missing.append((key, _STRUCT, child))
            elif shape == "t":
                if not omitzero:
                    missing.append((key, _NULL, child))
            elif shape == "q":
                missing.append((key, _ZERO, child))
            elif not omitempty and not omitzero:
                missing.append((key, _NULL if child.kind in (LIST, MAP) else _ZERO, child))
            elif child.kind not in (STRUCT, INTSTR, QUANTITY):
                droppable.add(key)
        node.plan = (tuple(missing), frozenset(droppable))
    return node.plan


def _encode(node: Node, out: dict[str, Any]) -> dict[str, Any]:
    """The fields as Go encodes the struct: zero ``omitempty`` plain fields dropped, plain
    structs and fields without ``omitempty`` always present."""
    missing, droppable = _plan(node)
    for key in droppable.intersection(out):
        if out[key] in _EMPTY:
            del out[key]
    for key, how, child in missing:
        if key not in out:
            if how == _STRUCT:
                out[key] = _encode(child, {})
            else:
                out[key] = None if how == _NULL else _ZEROS.get(child.kind)
    return out


def decode_object(group: str, version: str, kind: str, obj: Any, *, strict: bool) -> Decoded:
    """Decode a body into a built-in kind (:class:`DecodeError` on what Go refuses).

    :param strict: collect unknown fields (``fieldValidation`` ``Strict`` or ``Warn``).
    """
    root = schemas().root(group, version, kind)
    if root is None or root.name == "":
        raise KeyError(f"{group}/{version}/{kind} is not a built-in kind")
    node = _named(root.name)
    walk = _Walk(strict)
    if not isinstance(obj, dict):
        walk.fail(obj, f"{version}.{kind}", "", None)
    result = walk.struct(node, obj, None, None)
    return Decoded(result, walk.unknown)
