"""Objects seen through their schema, as server-side apply sees them.

The operations of structured-merge-diff's ``typed`` package, over plain JSON values and the
types of :mod:`._schema`:

* :func:`field_set`: the fields an object sets (``ToFieldSet``): scalars, atomic lists and
  maps, list items, map keys that are not declared fields, empty maps and nulls;
* :func:`compare`: added, modified and removed fields between two objects (``Compare``);
* :func:`merge`: an applied configuration merged over a live object (``Merge``): list items
  of ``set``/``map`` lists merge by value/key, atomic lists and maps are replaced;
* :func:`remove`: an object without some fields (``RemoveItems``);
* :func:`validate`: the errors of an applied configuration (undeclared fields, scalar types,
  duplicate and malformed list items), as ``ValidationErrors`` prints them.

A value whose shape does not fit its type (a map where a string belongs) is treated as one
opaque leaf, as are ``null`` values.
"""

from __future__ import annotations

from typing import Any

from ._fieldpath import FieldSet, Path, PathElement, element_text, key_element, value_element
from ._published import ANY, ASSOCIATIVE, ATOMIC, DEDUCED, LIST, MAP, SCALAR, SET, TypeInfo

__all__ = [
    "MISSING",
    "Comparison",
    "compare",
    "field_set",
    "item_element",
    "merge",
    "named_fields",
    "remove",
    "validate",
]

#: The absence of a value (as opposed to ``None``, a JSON null).
MISSING: Any = object()

_LEAF, _MAPPED, _LISTED = 0, 1, 2

#: Defaults of list-map key fields that the published OpenAPI documents declare
#: (``+default`` markers), which the JSON schemas leave out.
_KEY_DEFAULTS = {
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): "TCP",
    ("io.k8s.api.core.v1.ServicePort", "protocol"): "TCP",
}


def _shape(t: TypeInfo, lhs: Any, rhs: Any = MISSING) -> int:
    """How to walk values of type ``t``: as a leaf, a granular map or an associative list
    (absent and null values do not count)."""
    kind = t.kind
    if kind == SCALAR:
        return _LEAF
    maps = lists = False
    for value in (lhs, rhs):
        if value is MISSING or value is None:
            continue
        if type(value) is dict:
            maps = True
        elif type(value) is list:
            lists = True
        else:
            return _LEAF
    if maps and not lists:
        return _MAPPED if kind == ANY or (kind == MAP and not t.atomic) else _LEAF
    if lists and not maps and kind == LIST and t.list_type in (SET, ASSOCIATIVE):
        return _LISTED
    return _LEAF


def _blank(value: Any) -> bool:
    """Absent, null, or an empty map or list (``emptyPromoteToLeaf``)."""
    return value is MISSING or value is None or (type(value) in (dict, list) and not value)


def _element(t: TypeInfo) -> TypeInfo:
    return t.element or DEDUCED


def _child(t: TypeInfo, key: str) -> TypeInfo:
    return t.child(key) or DEDUCED


def item_element(t: TypeInfo, item: Any) -> PathElement:
    """The path element of an item of an associative list (``listItemToPathElement``).

    :raises ValueError: with structured-merge-diff's message when the item has none.
    """
    if t.list_type == ASSOCIATIVE and t.keys:
        if item is None:
            raise ValueError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise ValueError("associative list with keys may not have non-map elements")
        item_type = _element(t)
        fields: list[tuple[str, Any]] = []
        for key in t.keys:
            if key in item:
                fields.append((key, item[key]))
            elif (item_type.name, key) in _KEY_DEFAULTS:
                fields.append((key, _KEY_DEFAULTS[(item_type.name, key)]))
        if not fields:
            keys = "[" + " ".join(f'"{k}"' for k in t.keys) + "]"
            raise ValueError(
                f"associative list with keys has an element that omits all key fields {keys} "
                "(and doesn't have default values for any key fields)"
            )
        return key_element(fields)
    if isinstance(item, dict):
        raise ValueError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise ValueError("not supported: associative list with lists as elements")
    if item is None:
        raise ValueError("associative list without keys has an element that's an explicit null")
    return value_element(item)


def _index(t: TypeInfo, items: list[Any]) -> list[tuple[PathElement, Any]]:
    """Every item with its path element (items without one are skipped)."""
    out = []
    for item in items:
        try:
            out.append((item_element(t, item), item))
        except ValueError:
            continue
    return out


# -- field sets -----------------------------------------------------------------------------


def field_set(value: Any, t: TypeInfo) -> FieldSet:
    """``ToFieldSet``: the fields ``value`` sets."""
    out = FieldSet()
    _collect(value, t, (), out)
    return out


def _collect(value: Any, t: TypeInfo, path: Path, out: FieldSet) -> None:
    shape = _shape(t, value)
    if shape == _LEAF:
        granular = t.kind == ANY or (t.kind == MAP and not t.atomic)
        if value is not None or not (granular or (t.kind == LIST and t.list_type != ATOMIC)):
            out.insert(path)
        return
    if shape == _LISTED:
        indexed = _index(t, value)
        seen: dict[PathElement, int] = {}
        for pe, _ in indexed:
            seen[pe] = seen.get(pe, 0) + 1
        for pe, item in indexed:
            child = (*path, pe)
            if seen[pe] == 1:
                _collect(item, _element(t), child, out)
            out.insert(child)
        return
    for key, item in value.items():
        child = (*path, ("f", key))
        _collect(item, _child(t, key), child, out)
        if item is None or item == {} or t.field(key) is None:
            out.insert(child)


# -- comparing ------------------------------------------------------------------------------


class Comparison:
    """The fields ``added``, ``modified`` and ``removed`` between two objects."""

    __slots__ = ("added", "modified", "removed")

    def __init__(self) -> None:
        self.added = FieldSet()
        self.modified = FieldSet()
        self.removed = FieldSet()


def compare(lhs: Any, rhs: Any, t: TypeInfo) -> Comparison:
    """``Compare``: how ``rhs`` differs from ``lhs`` (either may be :data:`MISSING`)."""
    out = Comparison()
    _compare(lhs, rhs, t, (), out)
    return out


def _compare(lhs: Any, rhs: Any, t: TypeInfo, path: Path, out: Comparison) -> None:
    if lhs == rhs and lhs is not MISSING:
        return  # equal values differ nowhere below (the common case of an update)
    shape = _shape(t, lhs, rhs)
    if shape == _LEAF or (_blank(lhs) and _blank(rhs)):
        if lhs is MISSING:
            out.added.insert(path)
        elif rhs is MISSING:
            out.removed.insert(path)
        elif lhs != rhs:
            out.modified.insert(path)
        return
    if shape == _MAPPED:
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        for key in [*left, *(k for k in right if k not in left)]:
            sub = _child(t, key)
            _compare(left.get(key, MISSING), right.get(key, MISSING), sub, (*path, ("f", key)), out)
    else:
        _compare_items(lhs, rhs, t, path, out)
    if lhs is MISSING:
        out.added.insert(path)
    elif rhs is MISSING:
        out.removed.insert(path)


def _compare_items(lhs: Any, rhs: Any, t: TypeInfo, path: Path, out: Comparison) -> None:
    groups: dict[PathElement, tuple[list[Any], list[Any]]] = {}
    for side, items in enumerate((lhs, rhs)):
        for pe, item in _index(t, items if isinstance(items, list) else []):
            groups.setdefault(pe, ([], []))[side].append(item)
    item_type = _element(t)
    for pe, (left, right) in groups.items():
        child = (*path, pe)
        if len(left) <= 1 and len(right) <= 1:
            _compare(
                left[0] if left else MISSING, right[0] if right else MISSING, item_type, child, out
            )
        elif len(left) >= 2 and len(right) >= 2:
            if left != right:
                out.modified.insert(child)
        elif len(left) >= 2:
            if right:
                _compare(MISSING, right[0], item_type, child, out)
            out.removed.insert(child)
        else:
            if left:
                _compare(left[0], MISSING, item_type, child, out)
            out.added.insert(child)


# -- merging --------------------------------------------------------------------------------


def merge(lhs: Any, rhs: Any, t: TypeInfo) -> Any:
    """``Merge``: ``rhs`` (an applied configuration) over ``lhs`` (the live object)."""
    return _merge(lhs, rhs, t)


def _merge(lhs: Any, rhs: Any, t: TypeInfo) -> Any:
    shape = _shape(t, lhs, rhs)
    if shape == _LEAF or (_blank(lhs) and _blank(rhs)):
        return rhs if rhs is not MISSING else lhs
    if shape == _MAPPED:
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        out = {}
        for key in [*left, *(k for k in right if k not in left)]:
            merged = _merge(left.get(key, MISSING), right.get(key, MISSING), _child(t, key))
            if merged is not MISSING:
                out[key] = merged
        return out if out else MISSING
    return _merge_items(
        lhs if isinstance(lhs, list) else [], rhs if isinstance(rhs, list) else [], t
    )


def _merge_items(lhs: list[Any], rhs: list[Any], t: TypeInfo) -> Any:
    """``visitListItems`` of the merging walker: live order, applied items where they fit."""
    left = _index(t, lhs)
    right = _index(t, rhs)
    observed_left: dict[PathElement, Any] = {}
    for pe, item in left:
        observed_left[pe] = None if pe in observed_left else item
    observed_right = dict(right)
    shared = [pe for pe, _ in right if pe in observed_left]
    next_shared = shared.pop(0) if shared else None
    item_type = _element(t)
    merged_right: set[PathElement] = set()
    out: list[Any] = []

    def emit(pe: PathElement, lchild: Any, rchild: Any) -> None:
        value = _merge(lchild, rchild, item_type)
        if value is not MISSING:
            out.append(value)

    li = ri = 0
    while li < len(left) or ri < len(right):
        if li < len(left) and ri < len(right):
            pe = left[li][0]
            if pe == right[ri][0]:
                merged_right.add(pe)
                emit(pe, observed_left.get(pe, MISSING), observed_right[pe])
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in observed_right and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(left):
            pe, item = left[li]
            if pe not in observed_right:
                emit(pe, item, MISSING)
                li += 1
                continue
            if pe in merged_right:
                li += 1
        if ri < len(right):
            pe = right[ri][0]
            merged_right.add(pe)
            emit(pe, observed_left.get(pe, MISSING), observed_right[pe])
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out if out else MISSING


# -- removing -------------------------------------------------------------------------------


def remove(value: Any, t: TypeInfo, doomed: FieldSet) -> Any:
    """``RemoveItems``: ``value`` without the fields and items in ``doomed``.

    A map or list that loses every entry this way becomes ``None`` (as the walker leaves a
    null value there, which is dropped when the result is stored).
    """
    shape = _shape(t, value)
    if shape == _MAPPED:
        out = {}
        for key, item in value.items():
            pe: PathElement = ("f", key)
            if pe in doomed.members:
                continue
            below = doomed.children.get(pe)
            if below is not None and not below.empty():
                item = remove(item, _child(t, key), below)
            out[key] = item
        return out or None
    if shape == _LISTED:
        items = []
        for item in value:
            try:
                element = item_element(t, item)
            except ValueError:
                items.append(item)
                continue
            if element in doomed.members:
                continue
            below = doomed.children.get(element)
            if below is not None and not below.empty():
                item = remove(item, _element(t), below)
            items.append(item)
        return items or None
    return value


def named_fields(fields: FieldSet, t: TypeInfo) -> FieldSet:
    """``EnsureNamedFieldsAreMembers``: also own the declared fields leading to members."""
    out = FieldSet()
    out.members = set(fields.members)
    for pe, child in fields.children.items():
        if pe[0] == "f" and t.field(pe[1]) is not None:
            out.members.add(pe)
        sub = _child(t, pe[1]) if pe[0] == "f" else _element(t)
        out.children[pe] = named_fields(child, sub)
    return out


# -- validating -----------------------------------------------------------------------------


def validate(value: Any, t: TypeInfo) -> list[str]:
    """The errors of an applied configuration, each ``<path>: <message>``."""
    errors: list[str] = []
    _validate(value, t, "", errors)
    return errors


_SCALAR_NAMES = {"string": "string", "numeric": "numeric (int or float)", "boolean": "boolean"}


def _validate(value: Any, t: TypeInfo, path: str, errors: list[str]) -> None:
    if value is None:
        return
    where = f"{path}: " if path else ""
    if t.kind == SCALAR:
        ok = {
            "string": isinstance(value, str),
            "numeric": isinstance(value, int | float) and not isinstance(value, bool),
            "boolean": isinstance(value, bool),
        }.get(t.scalar, not isinstance(value, dict | list))
        if not ok:
            wanted = _SCALAR_NAMES.get(t.scalar, "any scalar")
            errors.append(f"{where}expected {wanted}, got {value!r}")
        return
    if t.kind == MAP:
        if not isinstance(value, dict):
            errors.append(f"{where}expected map, got {value!r}")
            return
        for key, item in value.items():
            sub = t.child(key)
            if sub is None:
                errors.append(f"{path}.{key}: field not declared in schema")
                return
            _validate(item, sub, f"{path}.{key}", errors)
    elif t.kind == LIST:
        if not isinstance(value, list):
            errors.append(f"{where}expected list, got {value!r}")
            return
        seen: set[PathElement] = set()
        for i, item in enumerate(value):
            if t.list_type == ATOMIC:
                _validate(item, _element(t), f"{path}[{i}]", errors)
                continue
            try:
                pe = item_element(t, item)
            except ValueError as exc:
                errors.append(f"{where}element {i}: {exc}")
                return
            if pe in seen:
                errors.append(f"{where}duplicate entries for key {element_text(pe)}")
            seen.add(pe)
            _validate(item, _element(t), f"{path}{element_text(pe)}", errors)
