"""A structural schema as the CEL rules see it: nodes, their rules, their CEL types.

Behaviour of apiextensions-apiserver ``pkg/apiserver/schema/cel/model/schemas.go`` and
apiserver ``pkg/cel/common/schemas.go`` (``SchemaDeclType``): each node has a CEL type:

* ``x-kubernetes-int-or-string``: ``dyn``;
* ``integer``: ``int``; ``number``: ``double``; ``boolean``: ``bool``; ``string``: ``string``,
  or ``bytes`` (``format: byte``), ``duration`` (``duration``), ``timestamp`` (``date``,
  ``date-time``);
* ``array`` with ``items``: ``list(<items>)``; ``object`` with an ``additionalProperties``
  schema: ``map(string, <values>)``; any other ``object``: an object type whose fields are the
  properties with a CEL name (:mod:`._escape`) and a type; a property without a type (only
  ``x-kubernetes-preserve-unknown-fields``) is not a field;
* the root and ``x-kubernetes-embedded-resource`` objects have ``apiVersion``, ``kind`` and a
  ``metadata`` of only ``name`` and ``generateName`` (``WithTypeAndObjectMeta``).

Object types become protobuf messages (built per CRD in a private descriptor pool) so that the
type checker of cel-expr-python reports unknown fields and operand mismatches as cel-go does.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, duration_pb2, struct_pb2, timestamp_pb2

from ._escape import escape

__all__ = ["Node", "Rule", "TypeBuilder", "build_node"]

#: request size limit used for unbounded sizes (apiserver ``DefaultMaxRequestSizeBytes``)
MAX_REQUEST = 3 * 1024 * 1024


@dataclass(frozen=True)
class Rule:
    """One ``x-kubernetes-validations`` entry, as written."""

    rule: str
    message: str = ""
    message_expression: str = ""
    reason: str | None = None
    field_path: str = ""
    optional_old_self: bool | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @staticmethod
    def of(raw: Mapping[str, Any]) -> Rule:
        opt = raw.get("optionalOldSelf")
        reason = raw.get("reason")
        return Rule(
            rule=str(raw.get("rule") or ""),
            message=str(raw.get("message") or ""),
            message_expression=str(raw.get("messageExpression") or ""),
            reason=str(reason) if reason is not None else None,
            field_path=str(raw.get("fieldPath") or ""),
            optional_old_self=opt if isinstance(opt, bool) else None,
            raw=raw,
        )


class Node:
    """One schema node (structural view, ``allOf`` rule holders attached)."""

    __slots__ = (
        "additional",
        "all_of",
        "embedded",
        "enum",
        "format",
        "has_default",
        "int_or_string",
        "items",
        "list_keys",
        "list_type",
        "map_type",
        "max_items",
        "max_length",
        "max_properties",
        "nullable",
        "preserve",
        "properties",
        "raw",
        "required",
        "rules",
        "source",
        "type",
    )

    def __init__(self, raw: Mapping[str, Any]) -> None:
        get = raw.get
        self.raw = raw
        self.source: Node | None = None
        self.type: str = str(get("type") or "")
        self.format: str = str(get("format") or "")
        self.nullable = get("nullable") is True
        self.int_or_string = get("x-kubernetes-int-or-string") is True
        self.preserve = get("x-kubernetes-preserve-unknown-fields") is True
        self.embedded = get("x-kubernetes-embedded-resource") is True
        self.list_type: str | None = get("x-kubernetes-list-type")
        self.list_keys: tuple[str, ...] = tuple(get("x-kubernetes-list-map-keys") or ())
        self.map_type: str | None = get("x-kubernetes-map-type")
        self.max_items: int | None = get("maxItems")
        self.max_length: int | None = get("maxLength")
        self.max_properties: int | None = get("maxProperties")
        self.enum: list[Any] | None = get("enum")
        self.required: tuple[str, ...] = tuple(get("required") or ())
        self.has_default = get("default") is not None
        self.rules: tuple[Rule, ...] = tuple(
            Rule.of(r) for r in (get("x-kubernetes-validations") or ()) if isinstance(r, Mapping)
        )
        props = get("properties")
        self.properties: dict[str, Node] | None = (
            {k: Node(v) for k, v in props.items() if isinstance(v, Mapping)}
            if isinstance(props, Mapping)
            else None
        )
        extra = get("additionalProperties")
        self.additional: Node | None = Node(extra) if isinstance(extra, Mapping) else None
        items = get("items")
        self.items: Node | None = Node(items) if isinstance(items, Mapping) else None
        self.all_of: tuple[Node, ...] = tuple(
            Node(s) for s in (get("allOf") or ()) if isinstance(s, Mapping)
        )

    def with_type_meta(self) -> Node:
        """``WithTypeAndObjectMeta``: ``kind``, ``apiVersion``, ``metadata.{name,generateName}``."""
        clone = object.__new__(Node)
        for slot in Node.__slots__:
            setattr(clone, slot, getattr(self, slot))
        props = dict(self.properties or {})
        meta = (self.properties or {}).get("metadata")
        meta_props = (meta.properties or {}) if meta is not None else {}

        def capped(existing: Node | None, limit: int) -> Node:
            n = Node({"type": "string"})
            if existing is not None and existing.max_length is not None:
                limit = min(limit, existing.max_length)
            n.max_length = limit
            return n

        props["kind"] = Node({"type": "string"})
        props["apiVersion"] = Node({"type": "string"})
        m = Node({"type": "object"})
        m.properties = {
            "name": capped(meta_props.get("name"), 253),
            "generateName": capped(meta_props.get("generateName"), 252),
        }
        props["metadata"] = m
        clone.properties = props
        return clone


def build_node(schema: Mapping[str, Any]) -> Node:
    return Node(schema)


# ---- CEL types ---------------------------------------------------------------------------------
_FD = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "int": (_FD.TYPE_INT64, ""),
    "double": (_FD.TYPE_DOUBLE, ""),
    "string": (_FD.TYPE_STRING, ""),
    "bool": (_FD.TYPE_BOOL, ""),
    "bytes": (_FD.TYPE_BYTES, ""),
    "timestamp": (_FD.TYPE_MESSAGE, ".google.protobuf.Timestamp"),
    "duration": (_FD.TYPE_MESSAGE, ".google.protobuf.Duration"),
    "dyn": (_FD.TYPE_MESSAGE, ".google.protobuf.Value"),
}
_counter = itertools.count(1)


@dataclass
class CelType:
    """A node's CEL type: ``kind`` is a scalar name, ``list``, ``map`` or ``object``."""

    kind: str
    elem: CelType | None = None
    name: str = ""  # object: the message's full name
    fields: dict[str, CelType] = field(default_factory=dict)
    max_elements: int = 0  # lists, maps, strings: the size bound used for cost estimates
    min_size: int = 1  # the smallest JSON serialization (``MinSerializedSize``)

    def signature(self) -> str:
        """The type as cel-expr-python's ``Type(signature)`` spells it."""
        if self.kind == "list":
            assert self.elem is not None
            return f"list<{self.elem.signature()}>"
        if self.kind == "map":
            assert self.elem is not None
            return f"map<string,{self.elem.signature()}>"
        if self.kind == "object":
            return self.name
        return {
            "timestamp": "google.protobuf.Timestamp",
            "duration": "google.protobuf.Duration",
        }.get(self.kind, self.kind)


def _entry_name(field_name: str) -> str:
    """The name protobuf requires for a map field's entry message."""
    out, upper = [], True
    for ch in field_name:
        if ch == "_":
            upper = True
        elif upper:
            out.append(ch.upper())
            upper = False
        else:
            out.append(ch)
    return "".join(out) + "Entry"


def _zero(v: int | None) -> int:
    return max(v or 0, 0)


class TypeBuilder:
    """Builds the CEL types of one CRD version's schema into a private descriptor pool."""

    def __init__(self) -> None:
        self.pool = descriptor_pool.DescriptorPool()
        for dep in (timestamp_pb2, duration_pb2, struct_pb2):
            self.pool.AddSerializedFile(dep.DESCRIPTOR.serialized_pb)
        self.prefix = f"selfType{next(_counter)}"
        self.file = descriptor_pb2.FileDescriptorProto(
            name=f"{self.prefix}.proto",
            package=self.prefix,
            syntax="proto3",
            dependency=[
                "google/protobuf/timestamp.proto",
                "google/protobuf/duration.proto",
                "google/protobuf/struct.proto",
            ],
        )
        self._names = itertools.count(1)
        self._done = False

    def finish(self) -> None:
        if not self._done:
            self.pool.Add(self.file)
            self._done = True

    def decl(self, node: Node | None, resource_root: bool = False) -> CelType | None:
        """``SchemaDeclType``."""
        if node is None:
            return None
        if node.int_or_string:
            limit = node.max_length * 4 if node.max_length is not None else MAX_REQUEST - 2
            return CelType("dyn", max_elements=limit, min_size=1)
        if resource_root:
            node = node.with_type_meta()
        if node.type == "array":
            if node.items is None:
                return None
            elem = self.decl(node.items, node.items.embedded)
            if elem is None:
                return None
            size = (
                _zero(node.max_items)
                if node.max_items is not None
                else (MAX_REQUEST - 2) // (elem.min_size + 1)
            )
            return CelType("list", elem, max_elements=size, min_size=2)
        if node.type == "object":
            if node.additional is not None:
                elem = self.decl(node.additional, node.additional.embedded)
                if elem is None:
                    return None
                size = (
                    _zero(node.max_properties)
                    if node.max_properties is not None
                    else (MAX_REQUEST - 2) // (elem.min_size + 6)
                )
                return CelType("map", elem, max_elements=size, min_size=2)
            fields: dict[str, CelType] = {}
            min_size = 2
            required = set(node.required)
            for name, prop in (node.properties or {}).items():
                t = self.decl(prop, prop.embedded)
                if t is None:
                    continue
                cel_name = escape(name)
                if cel_name is not None:
                    fields[cel_name] = t
                if name in required and not prop.has_default:
                    min_size += len(name) + t.min_size + 4
            obj = CelType("object", fields=fields, min_size=min_size)
            obj.name = f"{self.prefix}.T{next(self._names)}"
            self._message(obj)
            return obj
        if node.type == "string":
            unbounded = MAX_REQUEST - 2
            if node.format == "byte":
                return CelType(
                    "bytes",
                    max_elements=_zero(node.max_length)
                    if node.max_length is not None
                    else unbounded,
                )
            if node.format == "duration":
                return CelType("duration", max_elements=64, min_size=4)
            if node.format in ("date", "date-time"):
                return CelType(
                    "timestamp", max_elements=32, min_size=12 if node.format == "date" else 22
                )
            if node.max_length is not None:
                size = _zero(node.max_length) * 4
            elif node.enum:
                size = max((len(v) for v in node.enum if isinstance(v, str)), default=0)
            else:
                size = unbounded
            return CelType("string", max_elements=size, min_size=2)
        if node.type == "boolean":
            return CelType("bool", min_size=4)
        if node.type == "number":
            return CelType("double")
        if node.type == "integer":
            return CelType("int")
        return None

    def _message(self, obj: CelType) -> None:
        msg = self.file.message_type.add(name=obj.name.rpartition(".")[2])
        for number, (fname, ftype) in enumerate(sorted(obj.fields.items()), start=1):
            f = msg.field.add(name=fname, number=number, json_name=f"f{number}")
            entry_name = _entry_name(fname)
            if ftype.kind == "map" and entry_name not in {n.name for n in msg.nested_type}:
                assert ftype.elem is not None
                entry = msg.nested_type.add(name=entry_name)
                entry.options.map_entry = True
                entry.field.add(
                    name="key", number=1, type=_FD.TYPE_STRING, label=_FD.LABEL_OPTIONAL
                )
                value = entry.field.add(name="value", number=2, label=_FD.LABEL_OPTIONAL)
                self._element(value, ftype.elem)
                f.label = _FD.LABEL_REPEATED
                f.type = _FD.TYPE_MESSAGE
                f.type_name = f".{obj.name}.{entry_name}"
            elif ftype.kind == "list":
                assert ftype.elem is not None
                f.label = _FD.LABEL_REPEATED
                self._element(f, ftype.elem)
            else:
                f.label = _FD.LABEL_OPTIONAL
                self._element(f, ftype)

    def _element(self, f: Any, t: CelType) -> None:
        """A scalar, message, or (nested list/map, which protobuf cannot nest) dyn container."""
        if t.kind == "list":
            f.type, f.type_name = _FD.TYPE_MESSAGE, ".google.protobuf.ListValue"
        elif t.kind == "map":
            f.type, f.type_name = _FD.TYPE_MESSAGE, ".google.protobuf.Struct"
        elif t.kind == "object":
            f.type, f.type_name = _FD.TYPE_MESSAGE, "." + t.name
        else:
            kind, name = _SCALARS[t.kind]
            f.type = kind
            if name:
                f.type_name = name
