"""Turning an informer's notifications into work-queue keys (what controllers watch).

:func:`enqueue_keys` registers an :class:`EnqueueHandler` on an informer: every add, update and
delete (tombstones included) adds the object's key — or the keys ``map_func`` maps it to — to a
queue. :meth:`~aioinformer.Controller.watch` uses it.

``filter=`` is either a plain function of one object (on update it passes if either state
passes) or a :class:`~aioinformer.predicates.Predicate`, which is asked about the add, the
update (old and new) or the delete as controller-runtime asks its predicates.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from .._objects import (
    DeletedFinalStateUnknown,
    KubeObject,
    deletion_handling_meta_namespace_key,
    try_resource_version,
)
from ..workqueue._queue import WorkQueue
from ._predicates import Predicate

if TYPE_CHECKING:
    from .._informer._event_stream import Registration
    from .._informer._informer import SharedIndexInformer

__all__ = ["EnqueueHandler", "enqueue_keys"]

logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)

#: What ``filter=`` takes: a function of one object, or a Predicate.
Filter = Callable[[KubeObject], bool] | Predicate


class EnqueueHandler(Generic[K]):
    """An informer event handler that adds keys to a work queue (see :func:`enqueue_keys`).

    :param queue: where the keys go.
    :param key_func: the key of an object or tombstone. Default
        :func:`~aioinformer._objects.deletion_handling_meta_namespace_key`.
    :param map_func: the keys an object maps to, instead of its own key.
    :param filter: only objects for which it returns True are enqueued; or a
        :class:`~aioinformer.predicates.Predicate`.
    :param skip_resync: ignore updates that did not change the resource version.
    """

    __slots__ = ("_filter", "_key_func", "_map_func", "_queue", "_skip_resync")

    def __init__(
        self,
        queue: WorkQueue[K],
        *,
        key_func: Callable[[Any], K] | None = None,
        map_func: Callable[[KubeObject], Iterable[K]] | None = None,
        filter: Filter | None = None,
        skip_resync: bool = False,
    ) -> None:
        if key_func is not None and map_func is not None:
            raise ValueError("pass key_func or map_func, not both")
        self._queue = queue
        self._key_func = key_func or cast(Callable[[Any], K], deletion_handling_meta_namespace_key)
        self._map_func = map_func
        self._filter = filter
        self._skip_resync = skip_resync

    def enqueue(self, obj: KubeObject | DeletedFinalStateUnknown) -> None:
        """Add the keys of ``obj`` (an object or a tombstone) if it passes the filter (a
        predicate's ``create`` question).

        The filter and ``map_func`` see a tombstone's last known state. A tombstone without one
        is enqueued by its key (deletes are never filtered away), or skipped with a debug log
        when keys come from ``map_func``.
        """
        self._enqueue(obj, delete=False)

    def _enqueue(self, obj: KubeObject | DeletedFinalStateUnknown, *, delete: bool) -> None:
        state = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if state is None:
            if self._map_func is None:
                self._queue.add(self._key_func(obj))
            else:
                logger.debug("tombstone %r has no last state to map to keys", obj)
            return
        test = self._filter
        if isinstance(test, Predicate):
            if not (test.delete(state) if delete else test.create(state)):
                return
        elif test is not None and not test(state):
            return
        self._add_keys(obj, state)

    def _add_keys(self, obj: KubeObject | DeletedFinalStateUnknown, state: KubeObject) -> None:
        if self._map_func is None:
            self._queue.add(self._key_func(obj))
        else:
            for key in self._map_func(state):
                self._queue.add(key)

    def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> None:
        """Enqueue an added object."""
        self._enqueue(obj, delete=False)

    def on_update(self, old: KubeObject, new: KubeObject) -> None:
        """Enqueue an updated object: with ``map_func``, the keys of the old and new states.

        A plain filter passes the update if it passes either state (each state mapped with
        ``map_func`` must pass on its own); a predicate is asked ``update(old, new)`` once,
        and then both states are mapped.
        """
        if self._skip_resync:
            version = try_resource_version(new)
            if version and version == try_resource_version(old):
                return
        test = self._filter
        if isinstance(test, Predicate):
            if test.update(old, new):
                if self._map_func is None:
                    self._queue.add(self._key_func(new))
                else:
                    self._add_keys(old, old)
                    self._add_keys(new, new)
            return
        if self._map_func is None:
            passes = test is None or test(new) or test(old)
            if passes:
                self._queue.add(self._key_func(new))
            return
        self._enqueue(old, delete=False)
        self._enqueue(new, delete=False)

    def on_delete(self, obj: KubeObject | DeletedFinalStateUnknown) -> None:
        """Enqueue a deleted object or tombstone (a predicate's ``delete`` question)."""
        self._enqueue(obj, delete=True)


def enqueue_keys(
    informer: SharedIndexInformer,
    queue: WorkQueue[K],
    *,
    key_func: Callable[[Any], K] | None = None,
    map_func: Callable[[KubeObject], Iterable[K]] | None = None,
    filter: Filter | None = None,
    skip_resync: bool = False,
    resync_period: float | None = None,
) -> Registration:
    """Register a handler on ``informer`` that adds keys to ``queue`` on every add, update and
    delete (tombstones included).

    :param informer: the informer to follow.
    :param queue: where the keys go.
    :param key_func: the key of an object or tombstone. Default
        :func:`~aioinformer._objects.deletion_handling_meta_namespace_key`.
    :param map_func: ``map_func(obj) -> Iterable[key]``: the keys to enqueue instead of the
        object's own (owner-style mapping: e.g. a Pod event enqueues its namespace). On update
        both the old and the new state are mapped. Not together with ``key_func``. Default None.
    :param filter: ``filter(obj) -> bool``: only matching objects are enqueued (on update, if
        either state matches); or a :class:`~aioinformer.predicates.Predicate`, asked about
        each add, update (old and new) and delete with controller-runtime's semantics (e.g.
        ``predicates.generation_changed``). Default None: every object.
    :param skip_resync: ignore resync updates (same resource version before and after).
        Default False: resyncs enqueue too, which is what resync is for.
    :param resync_period: the handler's resync period (None: the informer's). Default None.
    :returns: the registration (``await registration.wait_for_cache_sync()``; remove it with
        ``informer.remove_event_handler``).
    """
    handler = EnqueueHandler(
        queue, key_func=key_func, map_func=map_func, filter=filter, skip_resync=skip_resync
    )
    return informer.add_event_handler(handler, resync_period=resync_period)
