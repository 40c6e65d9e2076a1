"""Field paths and field sets of server-side apply, and their ``FieldsV1`` encoding.

A path is a tuple of path elements; an element is one of

* ``("f", name)``: a field of a struct or a key of a map (``f:name``),
* ``("k", ((key, json), ...))``: an item of a list of type map, by its key fields sorted by
  name, each value as compact JSON (``k:{"name":"app"}``),
* ``("v", json)``: an item of a list of type set, by its value (``v:"a"``),
* ``("i", index)``: an item of a list by position (``i:0``).

Values are kept as JSON text so that ``1``, ``1.0`` and ``true`` stay distinct, as they are
in structured-merge-diff. A :class:`FieldSet` is a trie of paths like ``fieldpath.Set``;
:meth:`FieldSet.to_fields` and :func:`FieldSet.from_fields` read and write the ``fieldsV1``
of ``managedFields`` entries, in the element order the API server writes (fields, then keys,
then values, then indices; see ``fieldpath/serialize.go`` in structured-merge-diff).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import orjson

__all__ = ["FieldSet", "Path", "PathElement", "element_text", "path_text"]

PathElement = tuple[str, Any]
Path = tuple[PathElement, ...]

_CATEGORY = {"f": 0, "k": 1, "v": 2, "i": 3}


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


@functools.lru_cache(maxsize=4096)
def _value_order(text: str) -> tuple[Any, ...]:
    """A sort key following ``value.Compare``: numbers, strings, booleans, lists, maps."""
    value = orjson.loads(text)
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(_value_order(_json(v)) for v in value))
    if isinstance(value, dict):
        return (4, tuple(sorted((k, _value_order(_json(v))) for k, v in value.items())))
    return (5,)


def _order(pe: PathElement) -> tuple[Any, ...]:
    kind, payload = pe
    if kind == "k":
        return (1, tuple((name, _value_order(text)) for name, text in payload))
    if kind == "v":
        return (2, _value_order(payload))
    return (_CATEGORY[kind], payload)


def _go_quote(value: Any) -> str:
    """``value.ToString`` of structured-merge-diff (strings quoted, the rest as written)."""
    if isinstance(value, str):
        return _json(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ",".join(_go_quote(v) for v in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{k}={_go_quote(v)}" for k, v in value.items())
    return str(value)


def element_text(pe: PathElement) -> str:
    """How a conflict message prints one element: ``.name``, ``[name="app"]``, ``[="a"]``."""
    kind, payload = pe
    if kind == "f":
        return f".{payload}"
    if kind == "k":
        return "[" + ",".join(f"{k}={_go_quote(orjson.loads(v))}" for k, v in payload) + "]"
    if kind == "v":
        return f"[={_go_quote(orjson.loads(payload))}]"
    return f"[{payload}]"


def path_text(path: Path) -> str:
    """How a conflict message prints a path, e.g. ``.spec.containers[name="app"].image``."""
    return "".join(element_text(pe) for pe in path)


def _serialize(pe: PathElement) -> str:
    kind, payload = pe
    if kind == "f":
        return f"f:{payload}"
    if kind == "k":
        return "k:{" + ",".join(f"{_json(k)}:{v}" for k, v in payload) + "}"
    if kind == "v":
        return f"v:{payload}"
    return f"i:{payload}"


def _deserialize(text: str) -> PathElement | None:
    """The element a ``fieldsV1`` key names; None for an unknown kind (skipped, as real)."""
    if len(text) < 2 or text[1] != ":":
        raise ValueError(f"invalid field path element {text!r}")
    kind, rest = text[0], text[2:]
    if kind == "f":
        return ("f", rest)
    if kind == "k":
        fields = orjson.loads(rest)
        if not isinstance(fields, dict):
            raise ValueError(f"invalid key element {text!r}")
        return ("k", tuple(sorted((k, _json(v)) for k, v in fields.items())))
    if kind == "v":
        return ("v", _json(orjson.loads(rest)))
    if kind == "i":
        return ("i", int(rest))
    return None


def key_element(fields: list[tuple[str, Any]]) -> PathElement:
    """The element of a list-map item with these key fields."""
    return ("k", tuple(sorted((name, _json(value)) for name, value in fields)))


def value_element(value: Any) -> PathElement:
    """The element of a set item."""
    return ("v", _json(value))


class FieldSet:
    """A set of paths, as a trie: ``members`` end here, ``children`` lead further."""

    __slots__ = ("_encoded", "children", "members")

    def __init__(self) -> None:
        self.members: set[PathElement] = set()
        self.children: dict[PathElement, FieldSet] = {}
        self._encoded: dict[str, Any] | None = None

    @classmethod
    def of(cls, *paths: Path) -> FieldSet:
        """A set holding ``paths``."""
        out = cls()
        for path in paths:
            out.insert(path)
        return out

    def insert(self, path: Path) -> None:
        """Add one path (the empty path is never a member, as in structured-merge-diff)."""
        if not path:
            return
        node = self
        node._encoded = None
        for pe in path[:-1]:
            child = node.children.get(pe)
            if child is None:
                child = node.children[pe] = FieldSet()
            node = child
            node._encoded = None
        node.members.add(path[-1])

    def has(self, path: Path) -> bool:
        """Whether ``path`` is a member."""
        if not path:
            return False
        node: FieldSet | None = self
        for pe in path[:-1]:
            node = node.children.get(pe) if node is not None else None
        return node is not None and path[-1] in node.members

    def empty(self) -> bool:
        """Whether the set has no member at any depth."""
        return not self.members and all(c.empty() for c in self.children.values())

    def with_prefix(self, pe: PathElement) -> FieldSet:
        """The paths below ``pe``, without it (an empty set when there are none)."""
        return self.children.get(pe) or FieldSet()

    def copy(self) -> FieldSet:
        """A deep copy."""
        out = FieldSet()
        out.members = set(self.members)
        out.children = {pe: c.copy() for pe, c in self.children.items()}
        return out

    def union(self, other: FieldSet) -> FieldSet:
        """Every path of either set."""
        out = FieldSet()
        out.members = self.members | other.members
        out.children = {pe: c.copy() for pe, c in self.children.items()}
        for pe, child in other.children.items():
            mine = out.children.get(pe)
            out.children[pe] = child.copy() if mine is None else mine.union(child)
        return out

    def intersection(self, other: FieldSet) -> FieldSet:
        """The paths in both sets."""
        out = FieldSet()
        out.members = self.members & other.members
        for pe, child in self.children.items():
            theirs = other.children.get(pe)
            if theirs is not None:
                common = child.intersection(theirs)
                if not common.empty():
                    out.children[pe] = common
        return out

    def difference(self, other: FieldSet) -> FieldSet:
        """The paths of this set that are not paths of ``other`` (``Set.Difference``)."""
        out = FieldSet()
        out.members = self.members - other.members
        for pe, child in self.children.items():
            theirs = other.children.get(pe)
            if theirs is None:
                out.children[pe] = child
            else:
                rest = child.difference(theirs)
                if not rest.empty():
                    out.children[pe] = rest
        return out

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """Like :meth:`difference`, also dropping everything below a member of ``other``."""
        out = FieldSet()
        out.members = self.members - other.members
        for pe, child in self.children.items():
            if pe in other.members:
                continue
            theirs = other.children.get(pe)
            if theirs is None:
                out.children[pe] = child
            else:
                rest = child.recursive_difference(theirs)
                if not rest.empty():
                    out.children[pe] = rest
        return out

    def paths(self, prefix: Path = ()) -> Iterator[Path]:
        """Every member path, members of a node before its children, each in element order."""
        for pe in sorted(self.members, key=_order):
            yield (*prefix, pe)
        for pe in sorted(self.children, key=_order):
            yield from self.children[pe].paths((*prefix, pe))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSet):
            return NotImplemented
        return self.to_fields() == other.to_fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FieldSet({[path_text(p) for p in self.paths()]})"

    def to_fields(self, *, include_self: bool = False) -> dict[str, Any]:
        """The ``fieldsV1`` document of this set (do not modify it: it is kept for reuse)."""
        if not include_self and self._encoded is not None:
            return self._encoded
        out: dict[str, Any] = {}
        if include_self and (self.members or self.children):
            out["."] = {}
        for pe in sorted(self.members | set(self.children), key=_order):
            child = self.children.get(pe)
            if child is None:
                out[_serialize(pe)] = {}
            else:
                out[_serialize(pe)] = child.to_fields(include_self=pe in self.members)
        if not include_self:
            self._encoded = out
        return out

    @classmethod
    def from_fields(cls, fields: Any) -> FieldSet:
        """The set a ``fieldsV1`` document holds (shared: do not insert into it).

        :raises ValueError: when it is not a valid document.
        """
        return _decoded(orjson.dumps(fields))

    @classmethod
    def _parse(cls, fields: Any) -> FieldSet:
        if not isinstance(fields, dict):
            raise ValueError("fieldsV1 must be a JSON object")
        out = cls()
        for key, value in fields.items():
            if key == ".":
                continue
            pe = _deserialize(key)
            if pe is None:
                continue
            if not isinstance(value, dict):
                raise ValueError(f"fieldsV1 entry {key!r} must be a JSON object")
            if not value or "." in value:
                out.members.add(pe)
            child = cls._parse(value)
            if child.members or child.children:
                out.children[pe] = child
        return out


@functools.lru_cache(maxsize=2048)
def _decoded(document: bytes) -> FieldSet:
    """Decoded ``fieldsV1`` documents, by their JSON (every write decodes the live ones)."""
    return FieldSet._parse(orjson.loads(document))
