"""Merge patch (RFC 7386) and JSON patch (RFC 6902) as the fake applies them."""

from __future__ import annotations

import pytest

from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._apply._patch import (
    apply_json_patch,
    apply_merge_patch,
    patch_type_of,
)


def test_merge_patch_merges_objects_deletes_nulls_and_replaces_lists() -> None:
    """Objects merge recursively, ``null`` removes a key, lists are replaced whole."""
    target = {"a": {"b": 1, "c": 2}, "l": [1, 2], "keep": True}
    patched = apply_merge_patch(target, {"a": {"b": None, "d": 4}, "l": [3]})
    assert patched == {"a": {"c": 2, "d": 4}, "l": [3], "keep": True}
    assert target == {"a": {"b": 1, "c": 2}, "l": [1, 2], "keep": True}


def test_json_patch_applies_every_operation_without_mutating_the_input() -> None:
    """add, remove, replace, move, copy and test all work; the target is untouched."""
    target = {"a": [1, 2], "b": {"x~y": 1, "s/t": 2}, "c": "old"}
    ops = [
        {"op": "test", "path": "/c", "value": "old"},
        {"op": "add", "path": "/a/-", "value": 3},
        {"op": "add", "path": "/a/0", "value": 0},
        {"op": "remove", "path": "/b/x~0y"},
        {"op": "replace", "path": "/c", "value": "new"},
        {"op": "move", "from": "/b/s~1t", "path": "/moved"},
        {"op": "copy", "from": "/a", "path": "/copied"},
    ]
    assert apply_json_patch(target, ops) == {
        "a": [0, 1, 2, 3],
        "b": {},
        "c": "new",
        "moved": 2,
        "copied": [0, 1, 2, 3],
    }
    assert target["a"] == [1, 2]


def test_a_failed_json_patch_test_is_unprocessable() -> None:
    """A failing ``test`` operation answers 422, like the server."""
    with pytest.raises(StatusFailure) as caught:
        apply_json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
    assert (caught.value.code, caught.value.reason) == (422, "Invalid")


@pytest.mark.parametrize(
    "ops",
    [{"op": "add"}, [{"op": "bogus", "path": "/a"}], [{"op": "add", "path": "a", "value": 1}]],
)
def test_a_malformed_json_patch_is_a_bad_request(ops: object) -> None:
    """A JSON patch that is not a list of valid operations answers 400."""
    with pytest.raises(StatusFailure) as caught:
        apply_json_patch({"a": 1}, ops)
    assert (caught.value.code, caught.value.reason) == (400, "BadRequest")


def test_patch_types_follow_the_content_type() -> None:
    """The PATCH Content-Type picks the patch type; unknown types are None."""
    assert patch_type_of("application/merge-patch+json") == "merge"
    assert patch_type_of("application/strategic-merge-patch+json; charset=utf-8") == "strategic"
    assert patch_type_of("application/json-patch+json") == "json"
    assert patch_type_of("application/apply-patch+yaml") == "apply"
    assert patch_type_of("application/json") is None
