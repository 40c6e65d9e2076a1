"""The controllers of CustomResourceDefinitions: what makes a CRD's resource served, and gone.

Ports of the behaviour of apiextensions-apiserver's controllers, run synchronously after each
write of a CRD (a real server runs them moments later; a client that waits for
``Established`` sees it at once):

* ``controller/status`` (naming), ``controller/establish``, ``controller/apiapproval``: the
  CRD's ``status.acceptedNames`` and conditions ``NamesAccepted``/``Established`` are written
  as a status update (:func:`~._lifecycle.accepted_status`); an established CRD's served
  versions are then served (``customresource_handler.go``, discovery from
  ``customresource_discovery_controller.go``), each version a :class:`.ResourceInfo` whose
  ``custom`` is the CRD's serving view (:class:`~._kind.CustomKind`);
* ``registry/customresourcedefinition/etcd.go`` and ``controller/finalizer``: a DELETE marks
  the CRD (``deletionTimestamp``, the ``customresourcecleanup.apiextensions.k8s.io`` finalizer,
  ``Terminating``; discovery then lists only delete, get, list and watch), deletes every
  object of the resource, then removes the finalizer, and the CRD and its resource are gone.
  Objects held by their own finalizers keep the CRD terminating until they go.

The controller is the registry's delegate for all of this
(:class:`~.._registry._rest_types.RestDelegate`, registered by the server as kube-apiserver
registers apiextensions-apiserver): it hands the registry the strategies of CRDs and custom
resources (:mod:`._strategy`), deletes CRDs itself, and hears of every committed write.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Protocol

from .._api import _status as status
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo, ResourceRegistry
from .._registry._history import DELETED, MODIFIED
from .._registry._object_rules import check_preconditions, now
from .._registry._rest_types import ResourceStrategy, Written
from .._registry._storage import Storage
from ._kind import CustomKind
from ._lifecycle import (
    accepted_status,
    begin_crd_deletion,
    discovery_resources,
    finish_crd_deletion,
    group_versions,
    is_established,
)
from ._strategy import CRD_GROUP, CRD_PLURAL, CRDS, CUSTOM_RESOURCES, is_crd

__all__ = ["CrdController", "CrdHost"]


class CrdHost(Protocol):
    """What the CRD controllers need of the REST layer (:class:`~.._registry._rest.RestStorage`):
    the storage and the served resources, and DELETE for a CRD's objects."""

    @property
    def storage(self) -> Storage: ...

    @property
    def registry(self) -> ResourceRegistry: ...

    def delete(self, info: ResourceInfo, *, name: str, namespace: str = "") -> Written: ...


class CrdController:
    """Serves the resources of one server's CRDs: the registry's delegate for CRDs and custom
    resources (``rest.add_delegate(CrdController(rest))``)."""

    def __init__(self, rest: CrdHost) -> None:
        self._rest = rest
        self._storage = rest.storage
        self._registry = rest.registry
        #: CRD name → the (group, plural) it serves.
        self._served: dict[str, tuple[str, str]] = {}

    # -- the delegate ----------------------------------------------------------------------

    def strategy(self, info: ResourceInfo) -> ResourceStrategy | None:
        """The strategy of CRDs and of their custom resources; None for other resources."""
        if isinstance(info.custom, CustomKind):
            return CUSTOM_RESOURCES
        if is_crd(info):
            return CRDS
        return None

    def deletes(self, info: ResourceInfo) -> bool:
        """A CRD is deleted by :meth:`delete` (its objects first)."""
        return is_crd(info)

    def _crds(self) -> ResourceInfo:
        info = self._registry.lookup(CRD_GROUP, "v1", CRD_PLURAL)
        assert info is not None
        return info

    def _commit(self, crd: dict[str, Any], old: KubeObject, event: str = MODIFIED) -> None:
        crd["metadata"]["resourceVersion"] = str(self._storage.next_resource_version())
        name = str(crd["metadata"]["name"])
        self._storage.commit(self._crds(), event, name, "", crd, old)

    # -- after every write -----------------------------------------------------------------

    def written(self, info: ResourceInfo, obj: Mapping[str, Any], *, gone: bool) -> None:
        """A write was stored: run the controllers it concerns."""
        if isinstance(info.custom, CustomKind):
            if gone:
                self._finish(info.group, info.plural)
            return
        if not is_crd(info):
            return
        name = str(obj["metadata"]["name"])
        if gone:
            self._stop(name)
            return
        stored = self._storage.objects(info).get(name)
        if stored is None:
            return
        if stored["metadata"].get("deletionTimestamp"):
            self._serve(stored)
            return
        crd = copy.deepcopy(stored)
        others = [c for key, c in self._storage.objects(info).items() if key != name]
        accepted_status(crd, others, now=now())
        if crd != stored:
            self._commit(crd, stored)
        self._serve(crd)

    def _serve(self, crd: Mapping[str, Any]) -> None:
        """Serve an established CRD's served versions (the preferred one first)."""
        name = str(crd["metadata"]["name"])
        if not is_established(crd):
            self._stop(name)
            return
        kind = CustomKind.from_crd(crd)
        self._stop(name)
        for version in group_versions(crd):
            entries = discovery_resources(crd, version)
            if not entries:
                continue
            names = {str(e["name"]) for e in entries}
            subresources = tuple(s for s in ("status", "scale") if f"{kind.plural}/{s}" in names)
            served = kind.version(version)
            self._registry.register(
                ResourceInfo(
                    kind.group,
                    version,
                    kind.plural,
                    kind.kind,
                    kind.namespaced,
                    singular=kind.singular,
                    short_names=kind.short_names,
                    selectable_fields=served.selectable,
                    delete_returns_object=True,
                    verbs=tuple(entries[0]["verbs"]),
                    subresources=subresources,
                    custom=kind,
                )
            )
        self._served[name] = (kind.group, kind.plural)

    def _stop(self, name: str) -> None:
        served = self._served.pop(name, None)
        if served is not None:
            self._registry.unregister(*served)

    # -- deletion --------------------------------------------------------------------------

    def delete(self, info: ResourceInfo, name: str, preconditions: Mapping[str, Any]) -> Written:
        """DELETE of a CRD: marked, its objects deleted, then gone (see the module)."""
        info = self._crds()
        old = self._storage.objects(info).get(name)
        if old is None:
            raise status.not_found(info, name)
        check_preconditions(info, old["metadata"], preconditions)
        if old["metadata"].get("deletionTimestamp"):
            return Written(old)
        marked = copy.deepcopy(old)
        begin_crd_deletion(marked, now=now())
        self._commit(marked, old)
        self._serve(marked)
        served = self._served.get(name)
        if served is not None:
            resource = next(r for r in self._registry if (r.group, r.plural) == served)
            for obj in list(self._storage.objects(resource).values()):
                meta = obj["metadata"]
                if not meta.get("deletionTimestamp"):
                    self._rest.delete(
                        resource, name=meta["name"], namespace=meta.get("namespace", "")
                    )
            self._finish(*served)
        return Written(marked)

    def _finish(self, group: str, plural: str) -> None:
        """The finalizer controller: once a terminating CRD has no objects, it goes."""
        name = next((n for n, served in self._served.items() if served == (group, plural)), None)
        if name is None:
            return
        info = self._crds()
        current = self._storage.objects(info).get(name)
        if current is None or not current["metadata"].get("deletionTimestamp"):
            return
        resource = next(r for r in self._registry if (r.group, r.plural) == (group, plural))
        if self._storage.objects(resource):
            return
        crd = copy.deepcopy(current)
        finish_crd_deletion(crd, now=now())
        if crd["metadata"].get("finalizers"):
            self._commit(crd, current)
            return
        self._commit(crd, current, DELETED)
        self._stop(name)
