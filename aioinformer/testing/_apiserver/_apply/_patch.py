"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902), never mutating their input.

Strategic merge patch lives in :mod:`._strategic`, server-side apply in :mod:`._apply`;
:mod:`._writes` picks among them.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from .._api._failure import StatusFailure
from .._api._status import status_error

__all__ = ["apply_json_patch", "apply_merge_patch", "patch_type_of"]

_CONTENT_TYPES = {
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/json-patch+json": "json",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "apply",
}


def _patch_error(message: str, *, malformed: bool = False) -> StatusFailure:
    """The error for a patch: 400 BadRequest when malformed, else 422 Invalid (as the server)."""
    if malformed:
        return status_error(400, "BadRequest", message)
    return status_error(422, "Invalid", message)


def patch_type_of(content_type: str) -> str | None:
    """The patch type of a PATCH Content-Type (merge, strategic, json, apply), or None."""
    return _CONTENT_TYPES.get(content_type.split(";")[0].strip().lower())


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise _patch_error(f"invalid JSON pointer {path!r}", malformed=True)
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _index(container: list[Any], token: str, *, insert: bool) -> int:
    if token == "-" and insert:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise _patch_error(f"invalid array index {token!r}")
    index = int(token)
    if index > len(container) or (index == len(container) and not insert):
        raise _patch_error(f"array index {index} out of range")
    return index


def _parent(doc: Any, tokens: list[str]) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict):
            if token not in node:
                raise _patch_error(f"path segment {token!r} does not exist")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, insert=False)]
        else:
            raise _patch_error(f"path segment {token!r} is not a container")
    return node


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise _patch_error(f"path {'/'.join(tokens)!r} does not exist")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, insert=False)]
    raise _patch_error(f"path {'/'.join(tokens)!r} does not exist")


def _remove(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        raise _patch_error("cannot remove the whole document")
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise _patch_error(f"cannot remove missing path {'/'.join(tokens)!r}")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, insert=False))
    raise _patch_error(f"cannot remove from {'/'.join(tokens)!r}")


def _add(doc: Any, tokens: list[str], value: Any, *, replace: bool) -> Any:
    if not tokens:
        return value
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise _patch_error(f"cannot replace missing path {'/'.join(tokens)!r}")
        parent[last] = value
    elif isinstance(parent, list):
        index = _index(parent, last, insert=not replace)
        if replace:
            parent[index] = value
        else:
            parent.insert(index, value)
    else:
        raise _patch_error(f"cannot add to {'/'.join(tokens)!r}")
    return doc


def apply_json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902 over a deep copy of ``target``: add, remove, replace, move, copy, test.

    :raises StatusFailure: 400, when an operation is malformed.
    :raises StatusFailure: 422, when an operation does not apply (e.g. a failed test).
    """
    if not isinstance(operations, list):
        raise _patch_error("a JSON patch must be a list of operations", malformed=True)
    doc = orjson.loads(orjson.dumps(target))
    for op in operations:
        if not isinstance(op, dict) or not isinstance(op.get("op"), str):
            raise _patch_error(f"invalid JSON patch operation {op!r}", malformed=True)
        name = op["op"]
        if not isinstance(op.get("path"), str):
            raise _patch_error(f"JSON patch operation {name!r} has no path", malformed=True)
        tokens = _pointer(op["path"])
        if name in ("add", "replace", "test") and "value" not in op:
            raise _patch_error(f"JSON patch operation {name!r} has no value", malformed=True)
        if name == "add":
            doc = _add(doc, tokens, copy.deepcopy(op["value"]), replace=False)
        elif name == "replace":
            doc = _add(doc, tokens, copy.deepcopy(op["value"]), replace=True)
        elif name == "remove":
            _remove(doc, tokens)
        elif name in ("move", "copy"):
            if not isinstance(op.get("from"), str):
                raise _patch_error(f"JSON patch operation {name!r} has no from", malformed=True)
            source = _pointer(op["from"])
            if name == "move":
                if tokens[: len(source)] == source and tokens != source:
                    raise _patch_error("cannot move a value into one of its children")
                value = _remove(doc, source)
            else:
                value = copy.deepcopy(_get(doc, source))
            doc = _add(doc, tokens, value, replace=False)
        elif name == "test":
            if _get(doc, tokens) != op["value"]:
                raise _patch_error(f"test failed at {op['path']!r}")
        else:
            raise _patch_error(f"unknown JSON patch operation {name!r}", malformed=True)
    return doc
