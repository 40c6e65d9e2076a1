"""The controllers a deletion sets off on a real cluster: the garbage collector and the
namespace controller (both in kube-controller-manager).

The real controllers work from watches, a little after the write that concerns them: the
DELETE has answered before any dependent goes ("the Kubernetes API server deletes the owner
object immediately and the garbage collector controller cleans up the dependent objects in
the background", Garbage Collection concept page). The fake does the same by default: each
write that concerns them queues work, which a task of the running server does at once after
the write, one item at a time with a checkpoint between items, so a request can see the
namespace ``Terminating`` with its content still there, or the owner gone and its dependents
not yet (:meth:`Controllers.wait_idle` waits until the queue is empty). Work queued while the
server is not running is done when it starts. With ``sync=True`` the work is done inside the
write instead, before it returns (the fake's former behaviour). Either way the order of
events a watcher sees is a real cluster's (the owner first, then its dependents; a
foreground owner last):

* **garbage collector** (``pkg/controller/garbagecollector``, and the "Garbage Collection"
  concept page): when an owner is gone, each dependent (an object whose
  ``metadata.ownerReferences`` names the owner's ``uid``) that has no other owner left is
  deleted (``Background``, or as its own finalizers say); a dependent that still has a
  living owner only loses the reference. An owner marked with the ``orphan`` finalizer gets
  its references removed from every dependent, then the finalizer. An owner marked with
  ``foregroundDeletion`` has its dependents deleted (in foreground when they have dependents
  of their own) and keeps the finalizer while a dependent with ``blockOwnerDeletion: true``
  exists; then the finalizer goes and with it (when it was the last one) the owner.
  Dependents whose owners never existed are left alone (the real collector would delete
  them when it next looks at them);
* **namespace controller** (``pkg/controller/namespace/deletion``): a ``Terminating``
  namespace has everything in it deleted (``Background``); once nothing is left its
  ``kubernetes`` finalizer is dropped and the namespace is gone. Objects that stay (pods in
  their grace period, objects with finalizers) keep it ``Terminating``.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any, Protocol

import anyio
import anyio.lowlevel

from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo, ResourceRegistry
from ._deletion import (
    FOREGROUND,
    ORPHAN,
    DeleteOptions,
    DeletionHost,
    delete_object,
    is_namespace,
    remove,
)
from ._history import DELETED, MODIFIED, StoredEvent
from ._namespaces import namespace_conditions, same_conditions
from ._object_rules import now, object_key
from ._rest_types import WriteOptions, Written

__all__ = ["Controllers", "ControllersHost"]

logger = logging.getLogger(__name__)

#: The field manager of the controllers' writes.
MANAGER = "kube-controller-manager"
_KUBERNETES = "kubernetes"


class ControllersHost(DeletionHost, Protocol):
    """What the controllers need of the REST layer (:class:`._rest.RestStorage`): deletions,
    and the patches they write as ``kube-controller-manager``."""

    @property
    def registry(self) -> ResourceRegistry: ...

    def patch(
        self, info: ResourceInfo, patch: Any, *, name: str, namespace: str, options: WriteOptions
    ) -> Written: ...


def _meta(obj: KubeObject) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _owner_refs(obj: KubeObject) -> list[dict[str, Any]]:
    refs = _meta(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


class Controllers:
    """The garbage collector and the namespace controller of one fake server.

    :meth:`changed` is told of every stored change that may concern them (a deletion, an
    object marked for deletion); the work it causes is queued. Asynchronous (the default),
    :meth:`run` does it, after the write; with ``sync`` it is done before the outer call
    returns. Either way a chain of deletions never recurses deeply.

    :param sync: do the work inside the write that caused it.
    """

    def __init__(self, rest: ControllersHost, *, sync: bool = False) -> None:
        self._rest = rest
        self._queue: deque[tuple[ResourceInfo, KubeObject, KubeObject | None, bool]] = deque()
        self._busy = False
        self.sync = sync
        #: Set by :meth:`run` (made in its task: writes may come before any event loop runs).
        self._wake: anyio.Event | None = None
        self._idle_waiters: list[anyio.Event] = []
        #: uid → where the object is; owner uid → where its dependents are.
        self._uids: dict[str, tuple[ResourceInfo, str]] = {}
        self._owned: dict[str, set[tuple[ResourceInfo, str]]] = {}
        rest.storage.subscribe(self._observe)

    def changed(
        self,
        info: ResourceInfo,
        obj: KubeObject,
        *,
        gone: bool = False,
        previous: KubeObject | None = None,
    ) -> None:
        """An object was deleted (``gone``), marked or updated (from ``previous``)."""
        if not (
            gone
            or _meta(obj).get("deletionTimestamp")
            or _owner_refs(obj)
            or (previous is not None and _owner_refs(previous))
        ):
            return
        self._queue.append((info, obj, previous, gone))
        if self._busy:
            return
        if not self.sync:
            if self._wake is not None:
                self._wake.set()
            return
        self._busy = True
        try:
            while self._queue:
                self._process(*self._queue.popleft())
        finally:
            self._busy = False

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing being done."""
        return not self._queue and not self._busy

    async def wait_idle(self) -> None:
        """Return once the queue is empty and no item is being worked on (at once when it
        is: synchronous controllers always are). Work queued before the server runs is done
        when it starts."""
        while not self.idle:
            waiter = anyio.Event()
            self._idle_waiters.append(waiter)
            await waiter.wait()

    def _became_idle(self) -> None:
        waiters, self._idle_waiters = self._idle_waiters, []
        for waiter in waiters:
            waiter.set()

    async def run(self) -> None:
        """Do the queued work, one item at a time with a checkpoint in between, until
        cancelled (the server runs this in its task group). An item that fails is logged and
        dropped, as a controller's failed sync is; the others go on."""
        try:
            await self._work()
        finally:
            self._wake = None

    async def _work(self) -> None:
        while True:
            self._wake = anyio.Event()
            if not self._queue:
                self._became_idle()
                await self._wake.wait()
                continue
            self._busy = True
            try:
                self._process(*self._queue.popleft())
            except Exception:
                logger.exception("fake API server: the garbage collector failed on an item")
            finally:
                self._busy = False
            await anyio.lowlevel.checkpoint()

    # -- lookups ---------------------------------------------------------------------------

    def _observe(self, info: ResourceInfo, event: StoredEvent) -> None:
        """Keep the indexes by uid and by owner uid (a storage subscriber)."""
        place = (info, event.key)
        if event.old is not None:
            for ref in _owner_refs(event.old):
                self._owned.get(str(ref.get("uid")), set()).discard(place)
            if event.type == DELETED:
                self._uids.pop(str(_meta(event.old).get("uid")), None)
        if event.type != DELETED:
            self._uids[str(_meta(event.obj).get("uid"))] = place
            for ref in _owner_refs(event.obj):
                self._owned.setdefault(str(ref.get("uid")), set()).add(place)

    def _at(self, place: tuple[ResourceInfo, str]) -> KubeObject | None:
        return self._rest.storage.objects(place[0]).get(place[1])

    def _by_uid(self, uid: str) -> tuple[ResourceInfo, KubeObject] | None:
        place = self._uids.get(uid)
        obj = None if place is None else self._at(place)
        if place is None or obj is None or _meta(obj).get("uid") != uid:
            return None
        return place[0], obj

    def _dependents(self, uid: str) -> list[tuple[ResourceInfo, KubeObject]]:
        out = []
        for place in sorted(self._owned.get(uid, ()), key=lambda p: (str(p[0]), p[1])):
            obj = self._at(place)
            if obj is not None and any(r.get("uid") == uid for r in _owner_refs(obj)):
                out.append((place[0], obj))
        return out

    def _current(self, info: ResourceInfo, obj: KubeObject) -> KubeObject | None:
        meta = _meta(obj)
        ns = str(meta.get("namespace") or "") if info.namespaced else ""
        return self._rest.storage.objects(info).get(object_key(ns, str(meta.get("name"))))

    # -- the work --------------------------------------------------------------------------

    def _process(
        self, info: ResourceInfo, obj: KubeObject, previous: KubeObject | None, gone: bool
    ) -> None:
        meta = _meta(obj)
        uid = str(meta.get("uid") or "")
        if gone:
            for dep_info, dep in self._dependents(uid):
                self._owner_gone(dep_info, dep, uid)
            namespace = str(meta.get("namespace") or "") if info.namespaced else ""
            if namespace:
                self._sync_namespace(namespace)
        else:
            current = self._current(info, obj)
            if current is None or _meta(current).get("uid") != uid:
                return
            finalizers = _meta(current).get("finalizers") or []
            if _meta(current).get("deletionTimestamp"):
                if ORPHAN in finalizers:
                    self._orphan(info, current)
                elif FOREGROUND in finalizers:
                    self._foreground(info, current)
                if is_namespace(info):
                    self._sync_namespace(str(meta.get("name")))
        refs = _owner_refs(obj) + (_owner_refs(previous) if previous is not None else [])
        for uid in dict.fromkeys(str(ref.get("uid") or "") for ref in refs):
            owner = self._by_uid(uid)
            if owner is not None and self._waiting(_meta(owner[1])):
                self._queue.append((owner[0], owner[1], None, False))

    @staticmethod
    def _waiting(meta: dict[str, Any]) -> bool:
        """Whether an owner waits for its dependents (deleted in foreground)."""
        return bool(meta.get("deletionTimestamp")) and FOREGROUND in (meta.get("finalizers") or [])

    def _living(self, ref: dict[str, Any]) -> bool:
        """Whether a reference names an owner that exists and is not deleted in foreground."""
        found = self._by_uid(str(ref.get("uid") or ""))
        if found is None:
            return False
        return not self._waiting(_meta(found[1]))

    def _owner_gone(
        self, info: ResourceInfo, dep: KubeObject, uid: str, *, waiting: bool = False
    ) -> None:
        """``attemptToDeleteItem`` for a dependent of an owner that is gone or (``waiting``)
        deleted in foreground: a dependent that owns others then goes in foreground too."""
        if _meta(dep).get("deletionTimestamp"):
            return
        refs = _owner_refs(dep)
        others = [r for r in refs if r.get("uid") != uid]
        if any(self._living(r) for r in others):
            self._set_refs(info, dep, [r for r in refs if r.get("uid") != uid])
            return
        policy = None
        if waiting and self._dependents(str(_meta(dep).get("uid"))):
            policy = "Foreground"
        finalizers = _meta(dep).get("finalizers") or []
        if ORPHAN in finalizers or FOREGROUND in finalizers:
            policy = None
        elif policy is None:
            policy = "Background"
        self._delete(info, dep, policy)

    def _orphan(self, info: ResourceInfo, owner: KubeObject) -> None:
        """``orphanDependents``, then the ``orphan`` finalizer goes."""
        uid = _meta(owner).get("uid")
        for dep_info, dep in self._dependents(str(uid)):
            self._set_refs(dep_info, dep, [r for r in _owner_refs(dep) if r.get("uid") != uid])
        self._drop_finalizer(info, owner, ORPHAN)

    def _foreground(self, info: ResourceInfo, owner: KubeObject) -> None:
        """``processDeletingDependentsItem``: delete the dependents; drop the finalizer when
        no dependent blocks the owner any more."""
        uid = str(_meta(owner).get("uid"))
        blocking = False
        for dep_info, dep in self._dependents(uid):
            self._owner_gone(dep_info, dep, uid, waiting=True)
            current = self._current(dep_info, dep)
            if current is None:
                continue
            if any(
                r.get("uid") == uid and r.get("blockOwnerDeletion") is True
                for r in _owner_refs(current)
            ):
                blocking = True
        if not blocking:
            latest = self._current(info, owner)
            if latest is not None and _meta(latest).get("uid") == uid:
                self._drop_finalizer(info, latest, FOREGROUND)

    def _delete(self, info: ResourceInfo, obj: KubeObject, policy: str | None) -> None:
        meta = _meta(obj)
        try:
            delete_object(
                self._rest,
                info,
                str(meta.get("name")),
                str(meta.get("namespace") or ""),
                DeleteOptions(propagation_policy=policy, preconditions={"uid": meta.get("uid")}),
            )
        except StatusFailure:
            pass  # gone or replaced meanwhile: the collector moves on, as the real one does

    def _patch_meta(self, info: ResourceInfo, obj: KubeObject, patch: dict[str, Any]) -> None:
        meta = _meta(obj)
        try:
            self._rest.patch(
                info,
                {"metadata": {**patch, "resourceVersion": meta.get("resourceVersion")}},
                name=str(meta.get("name")),
                namespace=str(meta.get("namespace") or ""),
                options=WriteOptions(field_manager=MANAGER),
            )
        except StatusFailure:
            pass

    def _set_refs(self, info: ResourceInfo, obj: KubeObject, refs: list[dict[str, Any]]) -> None:
        self._patch_meta(info, obj, {"ownerReferences": refs or None})

    def _drop_finalizer(self, info: ResourceInfo, obj: KubeObject, name: str) -> None:
        left = [f for f in _meta(obj).get("finalizers") or [] if f != name]
        self._patch_meta(info, obj, {"finalizers": left or None})

    # -- namespaces ------------------------------------------------------------------------

    def _sync_namespace(self, name: str) -> None:
        """The namespace controller: empty a terminating namespace, then finalize it."""
        rest = self._rest
        namespaces = rest.registry.resolve("v1/namespaces")
        ns = rest.storage.objects(namespaces).get(name)
        if ns is None or not _meta(ns).get("deletionTimestamp"):
            return
        if _KUBERNETES not in ((ns.get("spec") or {}).get("finalizers") or []):
            return
        prefix = f"{name}/"
        for info in self._tables():
            table = rest.storage.objects(info)
            for obj in [o for k, o in table.items() if k.startswith(prefix)]:
                if not _meta(obj).get("deletionTimestamp"):
                    self._delete(info, obj, "Background")
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        for info in self._tables():
            for key, obj in rest.storage.objects(info).items():
                if key.startswith(prefix):
                    resource = f"{info.plural}.{info.group}"
                    remaining[resource] = remaining.get(resource, 0) + 1
                    for finalizer in _meta(obj).get("finalizers") or []:
                        finalizers[finalizer] = finalizers.get(finalizer, 0) + 1
        self._report(namespaces, name, remaining, finalizers)
        if not remaining:
            self._finalize(namespaces, rest.storage.objects(namespaces)[name])

    def _tables(self) -> list[ResourceInfo]:
        """One namespaced resource per table (the versions of a custom resource share one)."""
        seen: set[int] = set()
        out = []
        for info in self._rest.registry:
            table = self._rest.storage.objects(info)
            if info.namespaced and id(table) not in seen:
                seen.add(id(table))
                out.append(info)
        return out

    def _report(
        self,
        info: ResourceInfo,
        name: str,
        remaining: dict[str, int],
        finalizers: dict[str, int],
    ) -> None:
        """Write the namespace controller's conditions when they change."""
        ns = self._rest.storage.objects(info)[name]
        conditions = namespace_conditions(remaining, finalizers, now())
        if same_conditions((ns.get("status") or {}).get("conditions"), conditions):
            return
        new: KubeObject = {**ns, "status": {**(ns.get("status") or {}), "conditions": conditions}}
        new["metadata"] = {**_meta(ns)}
        storage = self._rest.storage
        new["metadata"]["resourceVersion"] = str(storage.next_resource_version())
        storage.commit(info, MODIFIED, name, "", new, ns)

    def _finalize(self, info: ResourceInfo, ns: KubeObject) -> None:
        """``PUT namespaces/<name>/finalize`` without ``kubernetes``: gone when nothing else
        holds the namespace (``ShouldDeleteNamespaceDuringUpdate``)."""
        spec = dict(ns.get("spec") or {})
        spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != _KUBERNETES]
        if not spec["finalizers"]:
            del spec["finalizers"]
        new: KubeObject = {**ns, "spec": spec, "metadata": dict(_meta(ns))}
        if not _meta(ns).get("finalizers"):
            remove(self._rest, info, new)
            return
        storage = self._rest.storage
        new["metadata"]["resourceVersion"] = str(storage.next_resource_version())
        storage.commit(info, MODIFIED, str(_meta(ns).get("name")), "", new, ns)
