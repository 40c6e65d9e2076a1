"""Predicates (issue 22): controller-runtime's ``pkg/predicate/predicate.go`` semantics as
tables — the built-ins answer only updates (``GenerationChangedPredicate``,
``LabelChangedPredicate``, ``AnnotationChangedPredicate``, ``ResourceVersionChangedPredicate``
embed ``Funcs`` whose nil create/delete pass), ``And``/``Or``/``Not`` apply per kind of
notification — and their use as the ``filter=`` of a watch."""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer import DeletedFinalStateUnknown, KubeObject, predicates
from aioinformer._control._enqueue import EnqueueHandler
from aioinformer.predicates import Predicate
from aioinformer.workqueue import WorkQueue


def obj(
    rv: str = "1",
    generation: int | None = 1,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    name: str = "a",
) -> KubeObject:
    metadata: dict[str, Any] = {"name": name, "namespace": "ns", "resourceVersion": rv}
    if generation is not None:
        metadata["generation"] = generation
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    return {"metadata": metadata}


BASE = obj()
UPDATES: list[tuple[str, KubeObject, KubeObject, dict[str, bool]]] = [
    # name, old, new, {predicate: passes}
    (
        "resync (same object)",
        BASE,
        BASE,
        {"generation": False, "labels": False, "annotations": False, "rv": False},
    ),
    (
        "status change: new rv, same generation",
        obj(rv="1"),
        obj(rv="2"),
        {"generation": False, "labels": False, "annotations": False, "rv": True},
    ),
    (
        "spec change: generation bumped",
        obj(rv="1", generation=1),
        obj(rv="2", generation=2),
        {"generation": True, "labels": False, "annotations": False, "rv": True},
    ),
    (
        "label added",
        obj(rv="1"),
        obj(rv="2", labels={"a": "b"}),
        {"generation": False, "labels": True, "annotations": False, "rv": True},
    ),
    (
        "label value changed",
        obj(rv="1", labels={"a": "b"}),
        obj(rv="2", labels={"a": "c"}),
        {"generation": False, "labels": True, "annotations": False, "rv": True},
    ),
    (
        "empty labels equal missing labels (maps.Equal)",
        obj(rv="1"),
        obj(rv="2", labels={}),
        {"generation": False, "labels": False, "annotations": False, "rv": True},
    ),
    (
        "annotation removed",
        obj(rv="1", annotations={"x": "1"}),
        obj(rv="2", annotations={}),
        {"generation": False, "labels": False, "annotations": True, "rv": True},
    ),
    (
        "no generation on either side (generation 0 both)",
        obj(rv="1", generation=None),
        obj(rv="2", generation=None),
        {"generation": False, "labels": False, "annotations": False, "rv": True},
    ),
    (
        "generation appears",
        obj(rv="1", generation=None),
        obj(rv="2", generation=1),
        {"generation": True, "labels": False, "annotations": False, "rv": True},
    ),
]
BUILTINS = {
    "generation": predicates.generation_changed,
    "labels": predicates.labels_changed,
    "annotations": predicates.annotations_changed,
    "rv": predicates.resource_version_changed,
}


@pytest.mark.parametrize(("name", "old", "new", "expected"), UPDATES, ids=[u[0] for u in UPDATES])
def test_builtin_predicates_on_updates(
    name: str, old: KubeObject, new: KubeObject, expected: dict[str, bool]
) -> None:
    assert {key: p.update(old, new) for key, p in BUILTINS.items()} == expected


@pytest.mark.parametrize("predicate", list(BUILTINS.values()), ids=list(BUILTINS))
def test_builtin_predicates_pass_every_add_and_delete(predicate: Predicate) -> None:
    """Funcs with only Update set: Create and Delete return true (kube-rs#1768 is the bug of
    dropping deletes this avoids)."""
    assert predicate.create(BASE) is True
    assert predicate.delete(BASE) is True


T = Predicate(name="T")
F = Predicate(create=lambda o: False, update=lambda o, n: False, delete=lambda o: False, name="F")
ONLY_UPDATE_FALSE = Predicate(update=lambda o, n: False, name="U")


COMBINATIONS: list[tuple[str, Predicate, tuple[bool, bool, bool]]] = [
    # name, predicate, (create, update, delete)
    ("T", T, (True, True, True)),
    ("F", F, (False, False, False)),
    ("T & F", T & F, (False, False, False)),
    ("T | F", T | F, (True, True, True)),
    ("~T", ~T, (False, False, False)),
    ("~F", ~F, (True, True, True)),
    ("U", ONLY_UPDATE_FALSE, (True, False, True)),
    ("~U: Not negates create and delete too", ~ONLY_UPDATE_FALSE, (False, True, False)),
    ("U | F", ONLY_UPDATE_FALSE | F, (True, False, True)),
    ("U & T", ONLY_UPDATE_FALSE & T, (True, False, True)),
    ("F | ~U", F | ~ONLY_UPDATE_FALSE, (False, True, False)),
]


@pytest.mark.parametrize(
    ("name", "predicate", "expected"), COMBINATIONS, ids=[c[0] for c in COMBINATIONS]
)
def test_combinators_apply_per_kind_of_notification(
    name: str, predicate: Predicate, expected: tuple[bool, bool, bool]
) -> None:
    got = (predicate.create(BASE), predicate.update(BASE, BASE), predicate.delete(BASE))
    assert got == expected


def test_combinators_short_circuit_in_order() -> None:
    """And stops at the first false, Or at the first true (the Go loops)."""
    calls: list[str] = []

    def tracked(name: str, result: bool) -> Predicate:
        def update(old: KubeObject, new: KubeObject) -> bool:
            calls.append(name)
            return result

        return Predicate(update=update, name=name)

    assert not (tracked("a", False) & tracked("b", True)).update(BASE, BASE)
    assert (tracked("c", True) | tracked("d", False)).update(BASE, BASE)
    assert calls == ["a", "c"]


def test_reprs_say_what_a_predicate_is() -> None:
    assert repr(predicates.generation_changed) == "generation_changed"
    combined = ~predicates.labels_changed | predicates.generation_changed
    assert repr(combined) == "(~labels_changed | generation_changed)"
    assert repr(Predicate(update=lambda o, n: True)) == "Predicate(update)"


def test_combining_with_a_non_predicate_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        _ = predicates.generation_changed & (lambda o: True)  # type: ignore[operator]


# -- as the filter of a watch --------------------------------------------------------------


async def keys_of(queue: WorkQueue[str]) -> list[str]:
    """Every queued key, sorted (taken from the queue)."""
    keys = []
    while len(queue):
        key = await queue.get()
        queue.done(key)
        keys.append(key)
    return sorted(keys)


def handler(predicate: Predicate, **options: Any) -> tuple[EnqueueHandler[str], WorkQueue[str]]:
    queue: WorkQueue[str] = WorkQueue()
    return EnqueueHandler(queue, filter=predicate, **options), queue


async def test_a_predicate_filter_sees_old_and_new_on_update() -> None:
    h, queue = handler(predicates.generation_changed)
    h.on_add(obj(name="added"), False)
    h.on_update(obj(name="status", rv="1"), obj(name="status", rv="2"))
    h.on_update(obj(name="spec", rv="1", generation=1), obj(name="spec", rv="2", generation=2))
    h.on_delete(obj(name="deleted"))
    assert await keys_of(queue) == ["ns/added", "ns/deleted", "ns/spec"]


async def test_a_predicate_filter_tests_a_tombstones_last_state_and_never_drops_a_bare_one() -> (
    None
):
    rejects_deletes = Predicate(delete=lambda o: o["metadata"]["name"] != "rejected")
    h, queue = handler(rejects_deletes)
    h.on_delete(DeletedFinalStateUnknown("ns/rejected", obj(name="rejected")))
    h.on_delete(DeletedFinalStateUnknown("ns/kept", obj(name="kept")))
    h.on_delete(DeletedFinalStateUnknown("ns/unknown", None))
    assert await keys_of(queue) == ["ns/kept", "ns/unknown"]


async def test_a_predicate_filter_with_map_func_maps_old_and_new_once_the_update_passes() -> None:
    def owner(o: KubeObject) -> list[str]:
        return [o["metadata"]["labels"]["owner"]]

    h, queue = handler(predicates.labels_changed, map_func=owner)
    h.on_update(obj(rv="1", labels={"owner": "x"}), obj(rv="2", labels={"owner": "y"}))
    h.on_update(obj(rv="2", labels={"owner": "y"}), obj(rv="3", labels={"owner": "y"}))
    assert await keys_of(queue) == ["x", "y"]


async def test_a_plain_function_filter_keeps_its_meaning() -> None:
    """A function of one object passes an update when either state passes (unchanged)."""
    queue: WorkQueue[str] = WorkQueue()
    h: EnqueueHandler[str] = EnqueueHandler(
        queue, filter=lambda o: o["metadata"].get("labels", {}).get("app") == "web"
    )
    h.on_update(obj(name="left", labels={"app": "web"}), obj(name="left", rv="2", labels={}))
    h.on_update(obj(name="other"), obj(name="other", rv="2"))
    assert await keys_of(queue) == ["ns/left"]
