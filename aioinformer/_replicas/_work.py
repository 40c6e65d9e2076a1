"""The work layer of a sharded controller: which keys it may reconcile, and draining.

:class:`ShardWork` carries out the membership's work actions (``_handover``) on a controller's
queue and reconciles:

* ``taking``: the ranges whose objects may start a reconcile (:class:`~._handover.Start`,
  :class:`~._handover.Resume` add; :class:`~._handover.StopTaking` removes). Keys of other
  ranges are not queued, and a key handed out for a range not taken is dropped unreconciled
  (:meth:`ShardWork.admit`): the queue carries only this replica's ranges, and no reconcile
  starts outside them.
* ``stopping``: ranges stopped but not reported drained. A reconcile running on one finishes;
  once none runs on a range, it is reported with ``report_drained`` (the membership then
  releases it).
* :class:`~._handover.StopAll` cancels every running reconcile at once (their cancel group)
  and takes nothing any more; it also moves the ``epoch``, so a reconcile that began before
  it can never write after it (the controller's write fence compares them), even if its
  cancellation is late or ignored.

Each object's hash is remembered by key when the informer delivers it (the key of a deleted
object still knows its hash), so admitting a key costs no lookup in the cache.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from .._lifecycle import CancelGroup
from .._objects import deletion_handling_meta_namespace_key as object_key
from .._sharding._ranges import EMPTY, HashRanges
from .._sharding._selector import ShardField, hash_field
from ._handover import Action, RangeExit, Resume, Start, StopAll, StopTaking

__all__ = ["ShardWork"]

logger = logging.getLogger(__name__)

_METADATA_KEY = {"object.metadata.uid": "uid", "object.metadata.namespace": "namespace"}


class ShardWork:
    """The gate between a sharded controller's queue and its reconciles (module docs).

    :param name: for logs.
    :param field: the metadata field objects are hashed by.
    :param enqueue: puts a key in the controller's queue.
    :param report_drained: tells the membership that ranges are drained.
    """

    def __init__(
        self,
        *,
        name: str,
        field: ShardField,
        enqueue: Callable[[str], None],
        report_drained: Callable[[HashRanges], None],
    ) -> None:
        self.name = name
        self._metadata_key = _METADATA_KEY[field]
        self._enqueue = enqueue
        self._report_drained = report_drained
        self.taking: HashRanges = EMPTY
        self.stopping: HashRanges = EMPTY
        self._hashes: dict[str, int] = {}
        self._running: dict[str, int] = {}  # key -> hash of the reconciles running
        self.cancel_group = CancelGroup()
        #: Ranges started (hand-overs in) and drained (hand-overs out), StopAll decisions.
        self.starts = 0
        self.drains = 0
        self.stop_alls = 0
        #: Keys handed out for a range not taken: dropped unreconciled.
        self.skipped = 0
        #: StopAll decisions so far: the epoch a reconcile began in.
        self.epoch = 0

    # -- objects -----------------------------------------------------------------------------

    def hash_of(self, obj: Any) -> int:
        metadata = obj.get("metadata") if isinstance(obj, dict) else None
        value = metadata.get(self._metadata_key) if isinstance(metadata, dict) else None
        return hash_field(value if isinstance(value, str) else "")

    def offer(self, obj: Any) -> None:
        """An informer delivered ``obj`` (or a tombstone): queue its key if its range is taken."""
        inner = getattr(obj, "obj", obj)  # a DeletedFinalStateUnknown carries the object
        try:
            key = object_key(obj)
        except Exception:  # a malformed object: nothing to reconcile
            return
        h = self.hash_of(inner)
        self._hashes[key] = h
        if h in self.taking:
            self._enqueue(key)

    def exits(self, objects: Iterable[Any], kept: HashRanges) -> list[RangeExit]:
        """The objects of a cache being replaced that leave it: their range is not ``kept``."""
        out = []
        for obj in objects:
            h = self.hash_of(obj)
            if h not in kept:
                key = object_key(obj)
                if self._hashes.get(key) == h:
                    del self._hashes[key]
                out.append(RangeExit(key, obj))
        return out

    # -- reconciles --------------------------------------------------------------------------

    def admit(self, key: Hashable) -> int | None:
        """The hash of ``key``'s object if a reconcile of it may start now (then
        :meth:`finish` must follow), else None."""
        h = self._hashes.get(key) if isinstance(key, str) else None
        if h is None or h not in self.taking:
            self.skipped += 1
            return None
        self._running[key] = h  # type: ignore[index]
        return h

    def finish(self, key: Hashable) -> None:
        """A reconcile admitted by :meth:`admit` ended (returned, raised or was cancelled)."""
        self._running.pop(key, None)  # type: ignore[call-overload]
        self._report_idle()

    @property
    def running(self) -> int:
        return len(self._running)

    def _report_idle(self) -> None:
        if not self.stopping:
            return
        busy = list(self._running.values())
        idle = HashRanges(
            (start, end) for start, end in self.stopping if not any(start <= h < end for h in busy)
        )
        if idle:
            self.stopping -= idle
            self.drains += 1
            self._report_drained(idle)

    # -- the membership's actions ------------------------------------------------------------

    def on_action(self, action: Action, requeue: Callable[[HashRanges], None]) -> None:
        """Carry out one work action; ``requeue(ranges)`` queues the cached keys of ranges."""
        if isinstance(action, Start | Resume):
            self.taking |= action.ranges
            self.stopping -= action.ranges
            self.starts += isinstance(action, Start)
            logger.info("%s: taking work for %s", self.name, action.ranges)
            requeue(action.ranges)
        elif isinstance(action, StopTaking):
            self.taking -= action.ranges
            self.stopping |= action.ranges
            logger.info("%s: stopping work for %s", self.name, action.ranges)
            self._report_idle()
        elif isinstance(action, StopAll):
            self.stop_alls += 1
            self.epoch += 1
            logger.warning("%s: the lease may be lost: stopping every reconcile", self.name)
            self.taking = self.stopping = EMPTY
            self._running.clear()
            self.cancel_group.cancel()
            self.cancel_group = CancelGroup()

    def requeue_from(self, objects: Iterable[Any], ranges: HashRanges) -> None:
        """Queue the keys of ``objects`` whose hash is in ``ranges`` (and taken)."""
        for obj in objects:
            if self.hash_of(obj) in ranges:
                self.offer(obj)
