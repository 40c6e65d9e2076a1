"""JSON values as the CEL rules see them (apiserver ``pkg/cel/common/valuesunstructured.go``).

* objects with properties (and embedded resources, the root): only the properties the schema
  names and CEL can spell (escaped names, :mod:`._escape`) are visible; ``null`` ones are
  absent (``has()`` is false); the other keys are kept under hidden keys so ``==`` still
  compares them (Go compares unknown fields with ``DeepEqual`` and counts every key);
* maps (``additionalProperties``): keys as written; lists: in order;
* ``number`` values are doubles, ``integer`` ints; ``format: date``/``date-time`` strings are
  timestamps, ``duration`` durations, ``byte`` bytes; int-or-string values as they are;
* ``x-kubernetes-list-type: set``/``map``: equality ignores order (sets by element, maps by
  key). cel-expr-python compares lists in order, so when a set/map list and its old value are
  equal as sets, the old one is handed to CEL in the new one's order (:func:`align`); ``+`` on
  such lists concatenates (Kubernetes dedups/merges) — not reproduced.
"""

from __future__ import annotations

import base64
import datetime
import json
import re
from typing import Any

from google.protobuf import duration_pb2, timestamp_pb2

from ._escape import escape
from ._schema import Node

__all__ = ["align", "k8s_equal", "project", "same"]

_HIDDEN = "\x00"


def same(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` of decoded JSON (``1`` and ``1.0`` differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


_DURATION = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|ms|s|m|h|d|w)")
_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1,
    "m": 60,
    "h": 3600,
    "d": 86400,
    "w": 604800,
}


def _duration(text: str) -> duration_pb2.Duration | None:
    """``strfmt.ParseDuration`` (Go durations plus ``d`` and ``w``)."""
    s = text.strip()
    sign = -1 if s.startswith("-") else 1
    s = s.lstrip("+-")
    if s == "0":
        return duration_pb2.Duration()
    pos, total = 0, 0.0
    while pos < len(s):
        m = _DURATION.match(s, pos)
        if m is None or not m.group(1) or m.group(1) == ".":
            return None
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not s:
        return None
    d = duration_pb2.Duration()
    d.FromNanoseconds(round(sign * total * 1e9))
    return d


def _timestamp(text: str, date_only: bool) -> timestamp_pb2.Timestamp | None:
    try:
        if date_only:
            day = datetime.date.fromisoformat(text)
            when = datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC)
        else:
            t = text.replace("z", "Z").replace("t", "T")
            if t.endswith("Z"):
                t = t[:-1] + "+00:00"
            when = datetime.datetime.fromisoformat(t)
            if when.tzinfo is None:
                when = when.replace(tzinfo=datetime.UTC)
    except ValueError:
        return None
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(when)
    return ts


def project(value: Any, node: Node, resource_root: bool = False) -> Any:
    """``UnstructuredToVal``: the Python value cel-expr-python gets for ``value`` at ``node``."""
    if value is None:
        return None
    if node.int_or_string:
        return value
    if resource_root:
        node = node.with_type_meta()
    if node.type == "object" and isinstance(value, dict):
        if node.embedded or node.properties is not None:
            if node.embedded and not resource_root:
                node = node.with_type_meta()
            props = node.properties or {}
            out: dict[str, Any] = {}
            for key, item in value.items():
                prop = props.get(key)
                name = escape(key) if prop is not None else None
                if prop is None or name is None or item is None or not _typed(prop):
                    out[_HIDDEN + key] = _canon(item)
                else:
                    out[name] = project(item, prop, prop.embedded)
            return out
        if node.additional is not None:
            extra = node.additional
            return {k: project(v, extra, extra.embedded) for k, v in value.items()}
        return {_HIDDEN + k: _canon(v) for k, v in value.items()}
    if node.type == "array" and isinstance(value, list):
        items = node.items
        if items is None:
            return list(value)
        return [project(v, items, items.embedded) for v in value]
    if node.type == "string" and isinstance(value, str):
        if node.format == "byte":
            try:
                return base64.b64decode(value, validate=True)
            except Exception:
                return value
        if node.format == "duration":
            return _duration(value) or value
        if node.format in ("date", "date-time"):
            return _timestamp(value, node.format == "date") or value
        return value
    if node.type == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


def _typed(node: Node) -> bool:
    return bool(
        node.int_or_string
        or node.type in ("object", "array", "string", "integer", "number", "boolean")
    )


def _key(item: Any, keys: tuple[str, ...]) -> str:
    return _canon([item.get(k) if isinstance(item, dict) else None for k in keys])


def k8s_equal(a: Any, b: Any, node: Node | None) -> bool:
    """CEL ``==`` of two values of ``node`` as Kubernetes defines it (set/map lists unordered)."""
    if node is None or a is None or b is None:
        return same(a, b)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        if node.list_type == "set":
            sa, sb = {_canon(x) for x in a}, {_canon(x) for x in b}
            return sa == sb
        if node.list_type == "map" and node.list_keys:
            by_key = {_key(x, node.list_keys): x for x in a}
            seen = set()
            for y in b:
                k = _key(y, node.list_keys)
                if k not in by_key or not k8s_equal(by_key[k], y, node.items):
                    return False
                seen.add(k)
            return len(seen) == len(by_key)
        return all(k8s_equal(x, y, node.items) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for k, x in a.items():
            if k not in b:
                return False
            child = node.properties.get(k) if node.properties else node.additional
            if not k8s_equal(x, b[k], child):
                return False
        return True
    return same(a, b)


def align(new: Any, old: Any, node: Node | None) -> Any:
    """``old`` with each set/map list that equals its new counterpart put in the new order."""
    if node is None or old is None or new is None:
        return old
    if isinstance(new, list) and isinstance(old, list):
        if node.list_type in ("set", "map") and k8s_equal(new, old, node):
            if node.list_type == "set":
                pool = list(old)
                ordered = []
                for x in new:
                    i = next(j for j, y in enumerate(pool) if _canon(y) == _canon(x))
                    ordered.append(pool.pop(i))
            else:
                by_key = {_key(y, node.list_keys): y for y in old}
                ordered = [by_key[_key(x, node.list_keys)] for x in new]
            return [align(x, y, node.items) for x, y in zip(new, ordered, strict=True)]
        if node.list_type == "map" and node.list_keys:
            by_key = {_key(y, node.list_keys): y for y in old}
            return [
                align(new[i], y, node.items)
                if i < len(new) and _key(new[i], node.list_keys) == _key(y, node.list_keys)
                else y
                for i, y in enumerate(old)
            ]
        return [align(new[i], y, node.items) if i < len(new) else y for i, y in enumerate(old)]
    if isinstance(new, dict) and isinstance(old, dict):
        out = {}
        for k, y in old.items():
            child = (node.properties or {}).get(k) if node.properties else node.additional
            out[k] = align(new.get(k), y, child) if k in new else y
        return out
    return old
