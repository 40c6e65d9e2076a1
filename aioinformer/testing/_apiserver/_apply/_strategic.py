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
"""

from __future__ import annotations

import copy
from typing import Any

from .._api._failure import StatusFailure
from .._schema._published import DEDUCED, LIST, MAP, TypeInfo
from ._strategic_lists import (
    DIRECTIVE,
    aliased_order,
    bad_arg_type,
    element_type,
    go,
    merge_key_equal,
    merge_slice,
    normalize_order,
    partition_maps,
    partition_primitives,
    split_deletes,
)

__all__ = ["strategic_merge"]

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
