"""Strategic merge patch, applied as a real API server applies it.

This follows ``StrategicMergeMapPatch`` of apimachinery (``pkg/util/strategicpatch/patch.go``)
with the options the server uses (``MergeParallelList`` and ``IgnoreUnmatchedNulls``), driven
by the schema's ``x-kubernetes-patch-strategy`` and ``x-kubernetes-patch-merge-key``:

* maps merge recursively and ``null`` deletes a key;
* lists with strategy ``merge`` merge by their merge key (lists of primitives: union), every
  other list is replaced;
* ``$patch: replace`` / ``$patch: delete`` on a map, ``$patch: delete`` / ``replace`` items in
  a merging list, ``$setElementOrder/<list>`` (order of the result), ``$retainKeys`` (keys not
  listed are cleared), ``$deleteFromPrimitiveList/<list>``;
* errors carry the status the server answers with (``interpretStrategicMergePatchError`` in
  apiserver's ``handlers/patch.go``): 400 for malformed directives, 422 for lists of lists,
  and 500 with the bare message for everything else (e.g. a missing merge key).

Directives never reach storage: the real server decodes the result into typed objects, which
drops them; the fake removes any that remain.

Lists follow ``mergeSlice``, ``mergeSliceWithSpecialElements``, ``normalizeElementOrder`` and
their helpers, with their error messages (Go's ``%v`` of decoded JSON) so that a refused patch
reads as on a real server. Decoded JSON compares as in Go: an integer never equals a float.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson

from .._api._failure import StatusFailure
from .._schema._published import DEDUCED, LIST, MAP, TypeInfo

__all__ = ["strategic_merge"]

# -- lists ---------------------------------------------------------------------------------

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


# -- maps and the patch as a whole ----------------------------------------------------------

_DELETE_FROM_PRIMITIVE = "$deleteFromPrimitiveList"
_RETAIN_KEYS = "$retainKeys"
_SET_ORDER = "$setElementOrder"
_DIRECTIVE_PREFIXES = (DIRECTIVE, _RETAIN_KEYS, f"{_SET_ORDER}/", f"{_DELETE_FROM_PRIMITIVE}/")

_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_SET_ORDER = "invalid patch format of setElementOrder list"


def _extract_key(key: str, prefix: str, error: str) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        raise StatusFailure.bad_request(error)
    return rest


def _lookup(t: TypeInfo, key: str, *, slice_: bool) -> tuple[TypeInfo, str, str]:
    """``LookupPatchMetadataForStruct``/``ForSlice``: subschema, strategy, merge key.

    Fields the schema does not declare (a map's keys, or unknown fields) carry no metadata.
    """
    field = t.field(key) if t.kind == MAP else None
    if field is None:
        sub = t.element if t.kind == MAP and t.element is not None else DEDUCED
        strategies: tuple[str, ...] = ()
        merge_key = ""
    else:
        sub, strategies, merge_key = field.type, field.strategies, field.merge_key
    if slice_ and sub.kind == LIST:
        sub = sub.element or DEDUCED
    strategies = tuple(s for s in strategies if s)
    others = [s for s in strategies if s != "retainKeys"]
    if len(strategies) > 2 or (len(strategies) == 2 and len(others) != 1):
        raise StatusFailure.internal(f"unexpected patch strategy: [{' '.join(strategies)}]")
    return sub, (others[0] if others else ""), merge_key


def strategic_merge(original: dict[str, Any], patch: dict[str, Any], root: TypeInfo) -> Any:
    """The result of a strategic merge patch (neither input is modified).

    :raises StatusFailure: with the status a real server answers for this patch.
    """
    merged = _merge_map(copy.deepcopy(original), copy.deepcopy(patch), root)
    return _strip_directives(merged)


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_directives(v)
            for k, v in value.items()
            if not (k.startswith("$") and k.startswith(_DIRECTIVE_PREFIXES))
        }
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def _merge_map(original: Any, patch: dict[str, Any], t: TypeInfo) -> Any:
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if directive == "replace":
            del patch[DIRECTIVE]
            return patch
        if directive == "delete":
            return {}
        raise StatusFailure.internal(f"unknown patch type: {go(directive)} in map: {go(patch)}")
    if original is None:
        original = {}
    _apply_retain_keys(original, patch)
    _merge_set_element_order(original, patch, t)
    for key, patch_value in list(patch.items()):
        delete_list = key.startswith(_DELETE_FROM_PRIMITIVE)
        if delete_list:
            key = _extract_key(key, _DELETE_FROM_PRIMITIVE, _BAD_PRIMITIVE_LIST)
        if patch_value is None:
            original.pop(key, None)
            continue
        current = original.get(key, _MISSING)
        if current is _MISSING or type(current) is not type(patch_value):
            if not delete_list:
                _discard_nulls(patch_value)
                _set_without_directives(original, key, patch_value)
            continue
        if isinstance(current, dict):
            sub, strategy, _ = _lookup(t, key, slice_=False)
            original[key] = (
                patch_value if strategy == "replace" else _merge_map(current, patch_value, sub)
            )
        elif isinstance(current, list):
            sub, strategy, merge_key = _lookup(t, key, slice_=True)
            original[key] = _merge_slice_handler(
                current, patch_value, sub, strategy, merge_key, delete_list
            )
        else:
            _set_without_directives(original, key, patch_value)
    return original


_MISSING: Any = object()


def _set_without_directives(target: dict[str, Any], key: str, value: Any) -> None:
    cleaned, keep = _remove_directives(value)
    if keep:
        target[key] = cleaned
    else:
        target.pop(key, None)


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """``removeDirectives``: maps carrying ``$patch`` vanish, recursively."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for k in list(value):
            cleaned, keep = _remove_directives(value[k])
            if keep:
                value[k] = cleaned
            else:
                del value[k]
        return value, True
    if isinstance(value, list):
        kept = [_remove_directives(v) for v in value]
        return [v for v, keep in kept if keep], True
    return value, True


def _discard_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for k in [k for k, v in value.items() if v is None]:
            del value[k]
        for v in value.values():
            _discard_nulls(v)
    elif isinstance(value, list):
        for v in value:
            _discard_nulls(v)


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if _RETAIN_KEYS not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS)
    if not isinstance(retain, list):
        raise StatusFailure.bad_request(_BAD_RETAIN_KEYS)
    keep = {k for k in retain if isinstance(k, str)}
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_FROM_PRIMITIVE, _SET_ORDER)):
            continue
        if key not in keep:
            raise StatusFailure.bad_request(_BAD_RETAIN_KEYS)
    for key in [k for k in original if k not in keep]:
        del original[key]


def _merge_set_element_order(original: dict[str, Any], patch: dict[str, Any], t: TypeInfo) -> None:
    """``mergePatchIntoOriginal``: merge each list that has a ``$setElementOrder`` and order it."""
    for key in [k for k in patch if k.startswith(_SET_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise bad_arg_type("[]interface {}", order)
        list_key = _extract_key(key, _SET_ORDER, _BAD_SET_ORDER)
        found_original = list_key in original
        found_patch = list_key in patch
        original_list = original.get(list_key)
        patch_list = patch.get(list_key)
        if found_original and not isinstance(original_list, list):
            raise bad_arg_type("[]interface {}", original_list)
        if found_patch and not isinstance(patch_list, list):
            raise bad_arg_type("[]interface {}", patch_list)
        sub, strategy, merge_key = _lookup(t, list_key, slice_=True)
        _validate_set_order(patch_list or [], order, merge_key)
        merged: list[Any]
        if found_original and not found_patch:
            merged = list(original_list or ())
        elif found_patch and not found_original:
            merged, _ = _remove_directives(patch_list)
        elif found_original:
            merged = _merge_slice_handler(
                original_list, patch_list, sub, strategy, merge_key, False
            )
        else:
            continue
        if merge_key:
            ours, server_only = partition_maps(merged, order, merge_key)
        else:
            ours, server_only = partition_primitives(merged, order)
        kind = element_type(original_list or [], patch_list or [])
        server_order = original_list or []
        if found_original and found_patch and strategy == "merge" and merge_key:
            server_order = aliased_order(server_order, patch_list or [], merge_key)
        original[list_key] = normalize_order(
            ours, server_only, order, server_order, merge_key, kind
        )
        patch.pop(list_key, None)


def _validate_set_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """The items of the patch list must appear in ``$setElementOrder`` in the same order."""
    if not order or not patch_list:
        return
    items = split_deletes(patch_list)[0] if merge_key else patch_list
    i = j = 0
    while i < len(items) and j < len(order):
        if isinstance(items[i], dict) and DIRECTIVE in items[i]:
            i += 1
            continue
        if merge_key_equal(items[i], order[j], merge_key):
            i += 1
        j += 1
    if i < len(items) and j >= len(order):
        raise StatusFailure.internal(
            f"The order in patch list:\n{go(patch_list)}\n doesn't match {_SET_ORDER} "
            f"list:\n{go(order)}\n"
        )


def _merge_slice_handler(
    original: Any,
    patch: Any,
    t: TypeInfo,
    strategy: str,
    merge_key: str,
    delete_list: bool,
) -> list[Any]:
    if not isinstance(original, list):
        raise bad_arg_type("[]interface {}", original)
    if not isinstance(patch, list):
        raise bad_arg_type("[]interface {}", patch)
    if strategy == "merge" or delete_list:
        return merge_slice(original, patch, t, merge_key, delete_list, _merge_map)
    return patch
