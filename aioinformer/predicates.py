"""Predicates for the ``filter=`` of :meth:`~aioinformer.Controller.watch` and
:func:`~aioinformer.enqueue_keys`: which adds, updates and deletes become keys.

controller-runtime's ``predicate`` package: a :class:`Predicate` is asked about each add, each
update (old and new state) and each delete, and a question it leaves open passes. The built-in
ones look at updates only, so adds and deletes always pass::

    from aioinformer import predicates

    controller.watch(widgets, filter=predicates.generation_changed)
    controller.watch(
        configmaps,
        owner=WIDGETS,
        filter=predicates.labels_changed | predicates.annotations_changed,
    )

``&``, ``|`` and ``~`` combine them (controller-runtime's ``And``, ``Or`` and ``Not``).
"""

from ._control._predicates import Predicate as Predicate
from ._control._predicates import annotations_changed as annotations_changed
from ._control._predicates import generation_changed as generation_changed
from ._control._predicates import labels_changed as labels_changed
from ._control._predicates import resource_version_changed as resource_version_changed
from ._exports import publish as _publish

__all__ = (
    "Predicate",
    "generation_changed",
    "labels_changed",
    "annotations_changed",
    "resource_version_changed",
)

_publish(__name__, __all__, globals())
