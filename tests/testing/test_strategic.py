"""Strategic merge patch as the fake applies it, one rule per test.

The rules are those of apimachinery's ``pkg/util/strategicpatch/patch.go``
(``StrategicMergeMapPatch`` with the server's options) and the status codes of
``interpretStrategicMergePatchError`` in apiserver's ``pkg/endpoints/handlers/patch.go``;
the merge keys and strategies come from the Kubernetes OpenAPI schemas.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._apply._strategic import strategic_merge
from aioinformer.testing._apiserver._schema._published import TypeInfo, schemas


def _root(group: str, version: str, kind: str) -> TypeInfo:
    root = schemas().root(group, version, kind)
    assert root is not None
    return root


DEPLOYMENT = _root("apps", "v1", "Deployment")


def _deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a", "b"]},
        "spec": {
            "replicas": 2,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "shop:1",
                            "args": ["--a", "--b"],
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                        },
                        {"name": "proxy", "image": "envoy:1"},
                    ]
                }
            },
        },
    }


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    containers: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return containers


def _patch_containers(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": list(items), **extra}}}}


def _refused(patch: dict[str, Any], original: dict[str, Any] | None = None) -> StatusFailure:
    with pytest.raises(StatusFailure) as caught:
        strategic_merge(original or _deployment(), patch, DEPLOYMENT)
    return caught.value


def test_merging_list_items_merge_by_their_merge_key() -> None:
    """A container in the patch merges into the live container of the same ``name``; the
    other containers and the other fields of that container stay (PodSpec.containers has
    ``patchStrategy: merge``, ``patchMergeKey: name``; ``mergeSliceWithoutSpecialElements``)."""
    result = strategic_merge(
        _deployment(), _patch_containers({"name": "app", "image": "shop:2"}), DEPLOYMENT
    )
    app, proxy = _containers(result)
    assert app["image"] == "shop:2"
    assert app["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert proxy == {"name": "proxy", "image": "envoy:1"}


def test_the_input_objects_are_not_modified() -> None:
    """Applying a patch leaves both the live object and the patch as they were."""
    original, patch = _deployment(), _patch_containers({"name": "app", "$patch": "delete"})
    before = (copy.deepcopy(original), copy.deepcopy(patch))
    strategic_merge(original, patch, DEPLOYMENT)
    assert (original, patch) == before


def test_new_items_without_an_order_directive_come_first() -> None:
    """Items only in the patch are placed before the live-only items when no
    ``$setElementOrder`` says otherwise (``normalizeElementOrder``/``mergeSortedSlice``:
    live-only items are placed by their live order, which does not know the new item)."""
    result = strategic_merge(
        _deployment(), _patch_containers({"name": "side", "image": "s"}), DEPLOYMENT
    )
    assert [c["name"] for c in _containers(result)] == ["side", "app", "proxy"]


def test_set_element_order_decides_the_order_of_the_merged_list() -> None:
    """``$setElementOrder/containers`` lists the order the client wants; the items of the
    merged list follow it, live-only items keep their relative place
    (``mergePatchIntoOriginal``, design proposal "preserve-order-in-strategic-merge-patch")."""
    order = [{"name": "proxy"}, {"name": "side"}, {"name": "app"}]
    patch = _patch_containers(
        {"name": "side", "image": "s"}, **{"$setElementOrder/containers": order}
    )
    result = strategic_merge(_deployment(), patch, DEPLOYMENT)
    assert [c["name"] for c in _containers(result)] == ["proxy", "side", "app"]
    assert "$setElementOrder/containers" not in result["spec"]["template"]["spec"]


def test_set_element_order_that_contradicts_the_patch_list_is_refused() -> None:
    """The patch list must be a subsequence of ``$setElementOrder``; otherwise the server
    answers 500 with "doesn't match $setElementOrder list" (``validatePatchWithSetOrderList``
    returns a plain error)."""
    patch = _patch_containers(
        {"name": "app", "image": "x"},
        {"name": "proxy", "image": "y"},
        **{"$setElementOrder/containers": [{"name": "proxy"}, {"name": "app"}]},
    )
    failure = _refused(patch)
    assert failure.code == 500
    assert "doesn't match $setElementOrder list" in failure.message


def test_patch_delete_removes_the_list_item_with_that_key() -> None:
    """``{"name": "proxy", "$patch": "delete"}`` in a merging list removes the live item with
    that merge key (``mergeSliceWithSpecialElements``, ``deleteDirective``)."""
    result = strategic_merge(
        _deployment(), _patch_containers({"name": "proxy", "$patch": "delete"}), DEPLOYMENT
    )
    assert [c["name"] for c in _containers(result)] == ["app"]


def test_kubectl_style_patch_keeps_every_item_it_does_not_delete() -> None:
    """The three-way patch kubectl sends on a re-apply (order directives for the containers
    and env, one env entry deleted, one image changed) keeps every other container and env
    entry and stores no directive (the bug of issue 12: they were stored literally)."""
    patch = _patch_containers(
        {
            "name": "app",
            "image": "shop:9",
            "$setElementOrder/env": [{"name": "B"}],
            "env": [{"name": "A", "$patch": "delete"}],
        },
        **{"$setElementOrder/containers": [{"name": "app"}, {"name": "proxy"}]},
    )
    result = strategic_merge(_deployment(), patch, DEPLOYMENT)
    app, proxy = _containers(result)
    assert app["image"] == "shop:9" and app["env"] == [{"name": "B", "value": "2"}]
    assert app["args"] == ["--a", "--b"] and proxy["name"] == "proxy"
    assert "$" not in repr(result)


def test_patch_replace_item_replaces_the_whole_merging_list() -> None:
    """A ``{"$patch": "replace"}`` item makes the patch's items the whole list
    (``mergeSliceWithSpecialElements``, ``replaceDirective``)."""
    patch = _patch_containers({"name": "only", "image": "o"}, {"$patch": "replace"})
    result = strategic_merge(_deployment(), patch, DEPLOYMENT)
    assert _containers(result) == [{"name": "only", "image": "o"}]


def test_patch_replace_and_delete_on_a_map() -> None:
    """``$patch: replace`` in a map makes the patch (without the directive) the whole map;
    ``$patch: delete`` empties it (``handleDirectiveInMergeMap``)."""
    replaced = strategic_merge(
        _deployment(), {"metadata": {"labels": {"$patch": "replace", "tier": "db"}}}, DEPLOYMENT
    )
    assert replaced["metadata"]["labels"] == {"tier": "db"}
    deleted = strategic_merge(
        _deployment(), {"metadata": {"labels": {"$patch": "delete"}}}, DEPLOYMENT
    )
    assert deleted["metadata"]["labels"] == {}


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"name": "app", "$patch": "merge"}, "merging lists cannot yet be specified in the patch"),
        ({"name": "app", "$patch": "bogus"}, "unknown patch type: bogus in map: map["),
        ({"image": "x"}, "map: map[image:x] does not contain declared merge key: name"),
    ],
)
def test_invalid_list_items_are_internal_errors(item: dict[str, Any], message: str) -> None:
    """``$patch: merge`` inside a list, an unknown ``$patch`` and an item without the merge key
    are plain errors, which the server answers as 500 with the message (and no reason)."""
    failure = _refused(_patch_containers(item))
    assert (failure.code, failure.reason) == (500, "")
    assert failure.message.startswith(message)


def test_retain_keys_clears_the_fields_it_does_not_list() -> None:
    """``spec.strategy`` has ``patchStrategy: retainKeys``: a ``$retainKeys`` list clears the
    live fields it does not name, so switching to ``Recreate`` drops ``rollingUpdate``
    (``applyRetainKeysDirective``)."""
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    result = strategic_merge(_deployment(), patch, DEPLOYMENT)
    assert result["spec"]["strategy"] == {"type": "Recreate"}


@pytest.mark.parametrize(
    "strategy",
    [{"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 2}}, {"$retainKeys": "type"}],
)
def test_malformed_retain_keys_are_bad_requests(strategy: dict[str, Any]) -> None:
    """A patched key missing from ``$retainKeys``, or a ``$retainKeys`` that is not a list, is
    ``ErrBadPatchFormatForRetainKeys``: 400 "invalid patch format of retainKeys"."""
    failure = _refused({"spec": {"strategy": strategy}})
    assert (failure.code, failure.reason) == (400, "BadRequest")
    assert failure.message == "invalid patch format of retainKeys"


def test_primitive_merging_lists_are_unions_and_delete_from_primitive_list_removes() -> None:
    """``metadata.finalizers`` has ``patchStrategy: merge``: the patch's values are added
    once; ``$deleteFromPrimitiveList/finalizers`` removes values (``mergeSlice`` for
    scalars, ``deleteFromSlice``)."""
    added = strategic_merge(_deployment(), {"metadata": {"finalizers": ["b", "c"]}}, DEPLOYMENT)
    assert sorted(added["metadata"]["finalizers"]) == ["a", "b", "c"]
    removed = strategic_merge(
        _deployment(), {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}, DEPLOYMENT
    )
    assert removed["metadata"]["finalizers"] == ["b"]


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("$deleteFromPrimitiveList", "invalid patch format of primitive list"),
        ("$setElementOrder", "invalid patch format of setElementOrder list"),
    ],
)
def test_directive_keys_without_a_list_name_are_bad_requests(key: str, message: str) -> None:
    """A parallel-list directive must name its list after a ``/``; otherwise 400 with
    ``ErrBadPatchFormatForPrimitiveList`` / ``ErrBadPatchFormatForSetElementOrderList``."""
    failure = _refused({"metadata": {key: ["a"]}})
    assert (failure.code, failure.message) == (400, message)


def test_lists_without_merge_strategy_are_replaced() -> None:
    """``args`` has no patch strategy: the patch's list replaces the live one."""
    result = strategic_merge(
        _deployment(), _patch_containers({"name": "app", "args": ["--c"]}), DEPLOYMENT
    )
    assert _containers(result)[0]["args"] == ["--c"]


def test_null_deletes_a_field_and_nulls_inside_new_values_are_dropped() -> None:
    """``null`` removes the live field; nulls inside a value that is new to the object are
    discarded (``IgnoreUnmatchedNulls``, ``discardNullValuesFromPatch``)."""
    patch = {"spec": {"replicas": None, "paused": True, "selector": {"matchLabels": None}}}
    result = strategic_merge(_deployment(), patch, DEPLOYMENT)
    assert "replicas" not in result["spec"] and result["spec"]["paused"] is True
    assert result["spec"]["selector"] == {}


def test_lists_of_lists_are_unprocessable() -> None:
    """Merging a list whose items are lists is ``ErrNoListOfLists``: 422 Invalid."""
    original = _deployment()
    original["metadata"]["finalizers"] = []
    failure = _refused({"metadata": {"finalizers": [["a"]]}}, original)
    assert (failure.code, failure.reason) == (422, "Invalid")


def test_maps_without_schema_merge_recursively() -> None:
    """Keys of a map type (labels) carry no metadata: maps merge, ``null`` deletes."""
    result = strategic_merge(
        _deployment(), {"metadata": {"labels": {"app": None, "tier": "web"}}}, DEPLOYMENT
    )
    assert result["metadata"]["labels"] == {"tier": "web"}


_DIRECTIVE_KEYS = st.sampled_from(
    ["$patch", "$retainKeys", "$setElementOrder/containers", "$deleteFromPrimitiveList/args"]
)
_DIRECTIVE_VALUES = st.sampled_from(
    ["replace", "delete", "merge", ["name"], [{"name": "app"}], ["--a"]]
)


def _sprinkle(draw: st.DrawFn, value: Any, depth: int) -> Any:
    if isinstance(value, dict):
        out = {k: _sprinkle(draw, v, depth + 1) for k, v in value.items()}
        if draw(st.booleans()):
            out[draw(_DIRECTIVE_KEYS)] = draw(_DIRECTIVE_VALUES)
        return out
    if isinstance(value, list):
        return [_sprinkle(draw, v, depth + 1) for v in value]
    return value


@st.composite
def _patches(draw: st.DrawFn) -> dict[str, Any]:
    base = _patch_containers(
        {"name": "app", "image": "x", "args": ["--a"], "env": [{"name": "A", "value": "9"}]},
        {"name": "proxy", "image": "y"},
    )
    base["metadata"] = {"labels": {"x": "y"}}
    patch: dict[str, Any] = _sprinkle(draw, base, 0)
    return patch


def _keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [k for k, v in value.items() for k in [k, *_keys(v)]]
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    return []


@settings(max_examples=150, deadline=None)
@given(_patches())
def test_no_directive_is_ever_stored(patch: dict[str, Any]) -> None:
    """Whatever directives a patch carries, where they belong or not, the result holds
    none: the real server decodes the result into typed objects, which have no such fields."""
    try:
        result = strategic_merge(_deployment(), patch, DEPLOYMENT)
    except StatusFailure:
        return
    assert not [k for k in _keys(result) if k.startswith("$")]
