"""The list half of strategic merge patch: merging lists by key, and their order.

``mergeSlice``, ``mergeSliceWithSpecialElements``, ``normalizeElementOrder`` and their helpers
of apimachinery's ``pkg/util/strategicpatch/patch.go``, with its error messages (Go's ``%v``
of decoded JSON) so that a refused patch reads as on a real server. Decoded JSON compares as
in Go: an integer never equals a float.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from .._api._failure import StatusFailure
from .._schema._published import MAP, TypeInfo

__all__ = [
    "DIRECTIVE",
    "MergeMap",
    "aliased_order",
    "bad_arg_type",
    "element_type",
    "go",
    "merge_key_equal",
    "merge_slice",
    "no_merge_key",
    "normalize_order",
    "partition_maps",
    "partition_primitives",
    "same",
    "split_deletes",
]

#: Merges a patch map into a live map (the map half, passed in to merge list items).
MergeMap = Callable[[Any, dict[str, Any], TypeInfo], Any]

DIRECTIVE = "$patch"


def go(value: Any) -> str:
    """A value as Go's ``%v`` prints decoded JSON (for error messages)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def go_type(value: Any) -> str:
    """The Go type a decoded JSON value has (``reflect.TypeOf``)."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "<nil>" if value is None else "string"


def bad_arg_type(expected: str, actual: Any) -> StatusFailure:
    return StatusFailure.internal(f"expected a {expected}, but received a {go_type(actual)}")


def no_merge_key(item: dict[str, Any], merge_key: str) -> StatusFailure:
    return StatusFailure.internal(
        f"map: {go(item)} does not contain declared merge key: {merge_key}"
    )


def same(a: Any, b: Any) -> bool:
    """Go's ``==`` on decoded JSON scalars (an int64 never equals a float64)."""
    return type(a) is type(b) and a == b


def _hashable(value: Any) -> tuple[type, Any]:
    if isinstance(value, dict | list):
        return (type(value), orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    return (type(value), value)


def aliased_order(original: list[Any], patch: list[Any], merge_key: str) -> list[Any]:
    """The live list as the Go code sees it after merging a patch into it in place.

    Go deletes list items by shifting the rest left within the same array and appends new
    items into the slots that frees, so the "live order" used to place server-only items
    after a ``$setElementOrder`` merge is the original array as overwritten. The results of
    real servers depend on it (apimachinery's "add map and delete map from merging list").
    """
    backing = list(original)
    length = len(backing)

    def find(items: list[Any], value: Any) -> int:
        for i, item in enumerate(items):
            if isinstance(item, dict) and merge_key in item and same(item[merge_key], value):
                return i
        return -1

    additions = []
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            continue
        if item.get(DIRECTIVE) == "delete":
            while (i := find(backing[:length], item[merge_key])) >= 0:
                backing[i : length - 1] = backing[i + 1 : length]
                length -= 1
        elif DIRECTIVE not in item:
            additions.append(item)
    current = backing[:length]
    for item in additions:
        if find(current, item[merge_key]) >= 0:
            continue
        current.append(item)
        if length < len(backing):
            backing[length] = item
            length += 1
    return backing


def merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return same(left, right)
    for item in (left, right):
        if not isinstance(item, dict):
            raise bad_arg_type("map[string]interface {}", item)
        if merge_key not in item:
            raise no_merge_key(item, merge_key)
    return bool(same(left[merge_key], right[merge_key]))


def element_type(*lists: list[Any]) -> type:
    """``sliceElementType``: the one type of every item (lists of lists are refused)."""
    found: type | None = None
    for items in lists:
        for item in items:
            if found is None:
                found = type(item)
                if found is list:
                    raise StatusFailure(
                        422,
                        "Invalid",
                        "the server rejected our request due to an error in our request",
                        details={},
                    )
            elif type(item) is not found:
                raise StatusFailure.internal(
                    f"list element types are not identical: [{' '.join(go(x) for x in lists)}]"
                )
    if found is None:
        raise StatusFailure.internal("no elements in any of the given slices")
    return found


def merge_slice(
    original: list[Any],
    patch: list[Any],
    t: TypeInfo,
    merge_key: str,
    delete_list: bool,
    merge_map: MergeMap,
) -> list[Any]:
    """``mergeSlice``: scalars union (or deletion), maps merged by ``merge_key``."""
    if not original and not patch:
        return original
    kind = element_type(original, patch)
    if kind is not dict:
        if delete_list:
            doomed = {_hashable(v) for v in patch}
            return [v for v in original if _hashable(v) not in doomed]
        merged = _dedupe_scalars(original + patch)
    else:
        if not merge_key:
            raise StatusFailure.internal(
                f"cannot merge lists without merge key for {'struct' if t.kind == MAP else 'map'}"
            )
        original, patch = _special_elements(original, patch, merge_key)
        merged = list(original)
        for item in patch:
            if merge_key not in item:
                raise no_merge_key(item, merge_key)
            index = _find(merged, merge_key, item[merge_key])
            if index < 0:
                merged.append(item)
            else:
                merged[index] = merge_map(merged[index], item, t)
    if merge_key:
        ours, server_only = partition_maps(merged, patch, merge_key)
    else:
        ours, server_only = partition_primitives(merged, patch)
    return normalize_order(ours, server_only, patch, original, merge_key, kind)


def _dedupe_scalars(items: list[Any]) -> list[Any]:
    """``deduplicateScalars``, whose swap-with-last removal decides the provisional order."""
    items = list(items)
    last = len(items) - 1
    i = 0
    while i < last:
        j = i + 1
        while j <= last:
            if same(items[i], items[j]):
                items[j] = items[last]
                items = items[:last]
                last -= 1
                j -= 1
            j += 1
        i += 1
    return items


def _find(items: list[Any], merge_key: str, value: Any) -> int:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise StatusFailure.internal(f"value for key {index} is not a map")
        if merge_key in item and same(item[merge_key], value):
            return index
    return -1


def _special_elements(
    original: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    """``mergeSliceWithSpecialElements``: apply ``$patch: delete``/``replace`` items."""
    plain: list[Any] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == "delete":
            if merge_key not in item:
                raise no_merge_key(item, merge_key)
            original = [
                o for o in original if not (merge_key in o and same(o[merge_key], item[merge_key]))
            ]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise StatusFailure.internal("merging lists cannot yet be specified in the patch")
        else:
            raise StatusFailure.internal(f"unknown patch type: {go(directive)} in map: {go(item)}")
    return (plain, []) if replace else (original, plain)


def split_deletes(items: list[Any]) -> tuple[list[Any], list[Any]]:
    keep: list[Any] = []
    doomed: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            raise bad_arg_type("map[string]interface {}", item)
        (doomed if item.get(DIRECTIVE) == "delete" else keep).append(item)
    return keep, doomed


def partition_primitives(merged: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    present = {_hashable(v) for v in by}
    ours = [v for v in merged if _hashable(v) in present]
    return ours, [v for v in merged if _hashable(v) not in present]


def partition_maps(merged: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    ours: list[Any] = []
    server_only: list[Any] = []
    for item in merged:
        if not isinstance(item, dict):
            raise bad_arg_type("map[string]interface {}", item)
        if merge_key not in item:
            raise no_merge_key(item, merge_key)
        (ours if _find(by, merge_key, item[merge_key]) >= 0 else server_only).append(item)
    return ours, server_only


def _index_fn(merge_key: str, kind: type) -> Callable[[list[Any], Any], int]:
    def value_of(item: Any) -> Any:
        if kind is dict:
            return item.get(merge_key) if isinstance(item, dict) else None
        return item

    def index(items: list[Any], wanted: Any) -> int:
        target = value_of(wanted)
        for i, item in enumerate(items):
            if same(value_of(item), target):
                return i
        return -1

    return index


def _sort_by(items: list[Any], order: list[Any], merge_key: str, kind: type) -> list[Any]:
    """``normalizeSliceOrder``: items in the order of ``order`` (deletions last)."""
    doomed: list[Any] = []
    if kind is dict:
        for item in [*items, *order]:
            if not isinstance(item, dict):
                raise bad_arg_type("map[string]interface {}", item)
            if merge_key not in item:
                raise no_merge_key(item, merge_key)
        items, doomed = split_deletes(items)
    index = _index_fn(merge_key, kind)
    ranked = sorted(items, key=lambda item: i if (i := index(order, item)) >= 0 else len(order))
    return ranked + doomed


def normalize_order(
    ours: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    kind: type,
) -> list[Any]:
    """``normalizeElementOrder``: patch items in patch order, server-only items slotted in
    where the live list had them (``mergeSortedSlice``)."""
    right = _sort_by(ours, patch_order, merge_key, kind)
    left = _sort_by(server_only, server_order, merge_key, kind)
    index = _index_fn(merge_key, kind)
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li, ri = index(server_order, left[i]), index(server_order, right[j])
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out
