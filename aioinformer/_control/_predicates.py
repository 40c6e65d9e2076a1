"""Predicates: which informer notifications a controller's watch turns into keys.

A :class:`Predicate` answers one question per kind of notification — should this add, this
update (old and new state), this delete be enqueued? — with controller-runtime's
``predicate.Funcs`` semantics: a question left unanswered passes. The built-in predicates
answer only the update question, so they never drop adds or deletes (kube-rs's generation
predicate drops deletes, kube-rs#1768; controller-runtime's does not, and neither do these).

Combine them with ``&`` (and), ``|`` (or) and ``~`` (not), evaluated per kind of
notification exactly as controller-runtime's ``predicate.And``, ``Or`` and ``Not``: so
``~generation_changed`` rejects every add and delete (the negation of "pass").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from .._objects import KubeObject, annotations_of, labels_of, try_resource_version

__all__ = [
    "Predicate",
    "annotations_changed",
    "generation_changed",
    "labels_changed",
    "resource_version_changed",
]

#: ``create(obj) -> bool`` and ``delete(obj) -> bool``.
ObjectTest = Callable[[KubeObject], bool]
#: ``update(old, new) -> bool``.
UpdateTest = Callable[[KubeObject, KubeObject], bool]


def _always(*_: object) -> bool:
    return True


class Predicate:
    """Which adds, updates and deletes pass (controller-runtime's ``predicate.Funcs``).

    Give it as the ``filter=`` of :meth:`~aioinformer.Controller.watch` or
    :func:`~aioinformer.enqueue_keys`::

        from aioinformer import predicates

        controller.watch(widgets, filter=predicates.generation_changed)
        controller.watch(pods, filter=predicates.labels_changed | predicates.annotations_changed)

    A tombstone's delete is tested on its last known state; a tombstone without one is
    enqueued untested (a delete is never lost for want of a state to test). Resync
    notifications are updates whose old and new states are the same object, so the
    ``*_changed`` predicates drop them.

    :param create: ``create(obj) -> bool`` for adds (including the initial list). Default None:
        every add passes.
    :param update: ``update(old, new) -> bool`` for updates. Default None: every update passes.
    :param delete: ``delete(obj) -> bool`` for deletes (the last known state). Default None:
        every delete passes.
    :param name: how :func:`repr` shows it. Default None: ``Predicate(...)``.
    """

    __slots__ = ("_create", "_delete", "_name", "_update")

    def __init__(
        self,
        *,
        create: ObjectTest | None = None,
        update: UpdateTest | None = None,
        delete: ObjectTest | None = None,
        name: str | None = None,
    ) -> None:
        self._create: ObjectTest = create or _always
        self._update: UpdateTest = update or _always
        self._delete: ObjectTest = delete or _always
        self._name = name

    def __repr__(self) -> str:
        if self._name is not None:
            return self._name
        given = [n for n, f in (("create", self._create), ("update", self._update),
                                ("delete", self._delete)) if f is not _always]  # fmt: skip
        return f"Predicate({', '.join(given)})"

    def create(self, obj: KubeObject) -> bool:
        """Whether an added object passes."""
        return bool(self._create(obj))

    def update(self, old: KubeObject, new: KubeObject) -> bool:
        """Whether an update from ``old`` to ``new`` passes."""
        return bool(self._update(old, new))

    def delete(self, obj: KubeObject) -> bool:
        """Whether a deleted object (its last known state) passes."""
        return bool(self._delete(obj))

    def __and__(self, other: Predicate) -> Predicate:
        """Passes what both pass (controller-runtime's ``predicate.And``)."""
        if not isinstance(other, Predicate):
            return NotImplemented
        a, b = self, other
        return Predicate(
            create=lambda o: a.create(o) and b.create(o),
            update=lambda old, new: a.update(old, new) and b.update(old, new),
            delete=lambda o: a.delete(o) and b.delete(o),
            name=f"({a!r} & {b!r})",
        )

    def __or__(self, other: Predicate) -> Predicate:
        """Passes what either passes (controller-runtime's ``predicate.Or``)."""
        if not isinstance(other, Predicate):
            return NotImplemented
        a, b = self, other
        return Predicate(
            create=lambda o: a.create(o) or b.create(o),
            update=lambda old, new: a.update(old, new) or b.update(old, new),
            delete=lambda o: a.delete(o) or b.delete(o),
            name=f"({a!r} | {b!r})",
        )

    def __invert__(self) -> Predicate:
        """Passes what this one rejects, for every kind of notification (controller-runtime's
        ``predicate.Not``): the negation of a predicate that passes every add rejects every
        add."""
        a = self
        return Predicate(
            create=lambda o: not a.create(o),
            update=lambda old, new: not a.update(old, new),
            delete=lambda o: not a.delete(o),
            name=f"~{a!r}",
        )


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def _generation(obj: KubeObject) -> int:
    generation = _metadata(obj).get("generation")
    return generation if isinstance(generation, int) else 0


#: Updates that changed ``metadata.generation`` — the spec, for most kinds (a status or
#: metadata-only change does not bump it). Adds and deletes pass. controller-runtime's
#: ``GenerationChangedPredicate``; an object without a generation counts as generation 0.
generation_changed: Final = Predicate(
    update=lambda old, new: _generation(new) != _generation(old), name="generation_changed"
)
#: Updates that changed ``metadata.labels`` (a missing map equals an empty one). Adds and
#: deletes pass. controller-runtime's ``LabelChangedPredicate``.
labels_changed: Final = Predicate(
    update=lambda old, new: dict(labels_of(new)) != dict(labels_of(old)), name="labels_changed"
)
#: Updates that changed ``metadata.annotations`` (a missing map equals an empty one). Adds and
#: deletes pass. controller-runtime's ``AnnotationChangedPredicate``.
annotations_changed: Final = Predicate(
    update=lambda old, new: dict(annotations_of(new)) != dict(annotations_of(old)),
    name="annotations_changed",
)
#: Updates that changed ``metadata.resourceVersion``: every real change, but no resync.
#: Adds and deletes pass. controller-runtime's ``ResourceVersionChangedPredicate``.
resource_version_changed: Final = Predicate(
    update=lambda old, new: try_resource_version(new) != try_resource_version(old),
    name="resource_version_changed",
)
