"""The registry: what a write does to an object before it is stored.

kube-apiserver's generic ``registry.Store`` with the kinds' strategies, over the fake's etcd
(:class:`~._storage.Storage`). Every write path (HTTP and ``server.objects``) comes here and
runs the real steps, in the real order (:mod:`._writerules`):

* options (``dryRun``, ``fieldValidation``, ``fieldManager``, ``force``): 422 when invalid;
* decoding: the body as its Go type decodes it (400 for wrong types), unknown and duplicate
  fields pruned and reported by ``fieldValidation`` (``Strict``: 400, or 422 on a patch;
  ``Warn``, the default: ``Warning`` texts; ``Ignore``), then the kind's defaults;
* ``PrepareForCreate``/``PrepareForUpdate``: system metadata, ``status`` reset on create and
  kept on main-resource writes of kinds with a status subresource (status writes keep
  everything else), ``metadata.generation`` where and when the kind has one, a Service's
  cluster IP and node ports;
* validation and immutable fields: 422 ``Invalid`` with the causes and the Kind;
* admission (the namespace exists and is not terminating), then the store: 409 when the
  name is taken or the ``resourceVersion`` is stale;
* ``dryRun=All``: all of the above runs and the answer is the would-be object, but nothing is
  stored, no resource version is taken and no watcher hears of it.

Decoding, the strategy steps, the storage version and ``/scale`` are the resource's
:class:`._rest_types.ResourceStrategy`: the built-in kinds' (:mod:`._writerules`), or one a
delegate serves. The CRD package registers as such a delegate (:meth:`RestStorage.add_delegate`,
wired by the server), as kube-apiserver delegates to apiextensions-apiserver: it provides the
strategies of CustomResourceDefinitions and of their custom resources, deletes CRDs itself, and
hears of every committed write.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import orjson

from ...._clock import Clock
from .._api import _status as status
from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo, ResourceRegistry
from .._apply._writes import applied_object, managed_fields_after_update, patched_object
from ._deletion import DeleteOptions, delete_object, deleted_by_update, terminating_namespace
from ._gc import Controllers
from ._history import ADDED, DELETED, MODIFIED
from ._kubelet import Kubelet
from ._object_rules import (
    check_body,
    check_name,
    check_resource_version,
    namespace_for,
    now,
    object_key,
    set_managed_fields,
    shape,
)
from ._podlog import PodLogs
from ._rest_types import ResourceStrategy, RestDelegate, WriteOptions, Written
from ._scale import patch_scale, update_scale
from ._storage import Storage
from ._strategy import generate_name
from ._strategy_service import ServiceAllocator
from ._writerules import BUILTIN

__all__ = ["RestStorage"]

#: Sentinel: compute the managed fields of a write (rather than take them as given).
_TRACK: Any = object()
_DEFAULT = WriteOptions()


def _without_reset_fields(info: ResourceInfo, obj: KubeObject) -> KubeObject:
    """A copy of a decoded object without its kind's reset fields (``GetResetFields`` of the
    main strategy: ``status`` for every kind with a status subresource, the Namespace
    included), as the field manager sees it on create."""
    tracked: KubeObject = orjson.loads(orjson.dumps(obj))
    if "status" in info.subresources or (info.group, info.kind) == ("", "Namespace"):
        tracked.pop("status", None)
    return tracked


class RestStorage:
    """Creates, updates, patches, applies and deletes objects as the real registry does.

    :param storage: where objects are kept.
    :param services: the cluster IPs and node ports in use (default: a fresh allocator).
    :param sync_gc: the garbage collector and the namespace controller work inside the write
        that concerns them, rather than in a task of the running server after it.
    """

    def __init__(
        self,
        storage: Storage,
        *,
        services: ServiceAllocator | None = None,
        sync_gc: bool = False,
    ) -> None:
        self.storage = storage
        self.services = services or ServiceAllocator()
        self._namespaces = storage.registry.resolve("v1/namespaces")
        self._delegates: list[RestDelegate] = []
        #: The garbage collector and the namespace controller (:mod:`._gc`).
        self.controllers = Controllers(self, sync=sync_gc)
        #: The containers' logs ``pods/log`` serves (:mod:`._podlog`).
        self.pod_logs = PodLogs()
        #: The nodes' kubelet (:mod:`._kubelet`), when the server runs one.
        self.kubelet: Kubelet | None = None

    def start_kubelet(
        self, *, clock: Clock, start_delay: float, stop_delay: float | None
    ) -> Kubelet:
        """Run a kubelet for every node (see :class:`._kubelet.Kubelet`); its ``run``
        is the server's to run."""
        self.kubelet = Kubelet(self, clock=clock, start_delay=start_delay, stop_delay=stop_delay)
        return self.kubelet

    @property
    def registry(self) -> ResourceRegistry:
        """The resources served."""
        return self.storage.registry

    # -- delegates and strategies ----------------------------------------------------------

    def add_delegate(self, delegate: RestDelegate) -> None:
        """Serve the resources ``delegate`` claims with its strategies, and tell it of every
        committed write (the delegates added first are asked first)."""
        self._delegates.append(delegate)

    def strategy(self, info: ResourceInfo) -> ResourceStrategy:
        """How the objects of ``info`` are written and read: a delegate's strategy, else the
        built-in kinds'."""
        for delegate in self._delegates:
            found = delegate.strategy(info)
            if found is not None:
                return found
        return BUILTIN

    def view(self, info: ResourceInfo, obj: KubeObject) -> Any:
        """A stored object as a read of ``info`` answers it."""
        return self.strategy(info).view(info, obj)

    def view_result(self, info: ResourceInfo, result: KubeObject) -> Any:
        """An object or a list of ``info`` as a read answers it (a ``Status`` unchanged)."""
        return self.strategy(info).view_result(info, result)

    def _written(self, info: ResourceInfo, obj: KubeObject, *, gone: bool) -> None:
        for delegate in self._delegates:
            delegate.written(info, obj, gone=gone)

    def committed(
        self,
        info: ResourceInfo,
        obj: KubeObject,
        *,
        gone: bool = False,
        previous: KubeObject | None = None,
    ) -> None:
        """An update or a deletion of ``obj`` was committed (from ``previous``; ``gone``: the
        object left storage): the delegates hear of it, then the garbage collector and the
        namespace controller."""
        self._written(info, obj, gone=gone)
        self.controllers.changed(info, obj, gone=gone, previous=previous)

    # -- create ----------------------------------------------------------------------------

    def create(
        self,
        info: ResourceInfo,
        body: Any,
        *,
        namespace: str = "",
        options: WriteOptions = _DEFAULT,
    ) -> Written:
        """POST: create an object.

        :param namespace: the namespace of the URL (``""``: the body's, else ``default``).
        :raises StatusFailure: 400 (body), 404 (namespace), 409 (name taken), 422 (invalid).
        """
        options.check("CreateOptions")
        return self._create(info, body, namespace, options, _TRACK, "create")

    def _create(
        self,
        info: ResourceInfo,
        body: Any,
        namespace: str,
        options: WriteOptions,
        managed_fields: Any,
        operation: str,
    ) -> Written:
        strategy = self.strategy(info)
        meta = check_body(info, body)
        meta.pop("resourceVersion", None)
        ns = namespace_for(info, meta, namespace)
        obj, warnings = strategy.decode(
            info, {**body, "metadata": meta}, options, operation=operation, raw=options.raw
        )
        table = self.storage.objects(info)
        dry = options.dry
        # The create handler runs the field manager on the decoded, defaulted object before
        # the strategy's ``PrepareForCreate`` (``handlers/create.go``), with the strategy's
        # reset fields filtered out: what the strategy sets is owned by no one.
        tracked = _without_reset_fields(info, obj) if managed_fields is _TRACK else None

        def fresh(prefix: str) -> str:
            """``generateName``, retried while the name is taken (``RetryGenerateName``)."""
            for _ in range(8):
                name = generate_name(prefix)
                if object_key(ns, name) not in table:
                    break
            return name

        warnings += strategy.before_create(
            info,
            obj,
            uid=str(uuid.uuid4()),
            now=now(),
            name=fresh,
            services=self.services,
            dry_run=dry,
        )
        name = str(obj["metadata"].get("name") or "")
        key = object_key(ns, name)
        try:
            if info.namespaced:
                self._admit_namespace(info, name, ns, dry)
            if key in table:
                raise status.already_exists(info, name)
        except StatusFailure:
            if not dry:
                self.release(info, obj)
            raise
        new = shape(info, obj["metadata"], obj)
        if tracked is not None:
            managed_fields = managed_fields_after_update(
                info, None, tracked, manager=options.field_manager
            )
        set_managed_fields(new["metadata"], managed_fields)
        if dry:
            return Written(new, tuple(warnings))
        new["metadata"]["resourceVersion"] = str(self.storage.next_resource_version())
        self.storage.commit(info, ADDED, key, ns, strategy.stored(info, new), None)
        self._written(info, new, gone=False)
        return Written(new, tuple(warnings), created=True)

    def _admit_namespace(self, info: ResourceInfo, name: str, namespace: str, dry: bool) -> None:
        """``NamespaceLifecycle`` admission: the namespace exists and is not terminating."""
        existing = self.storage.objects(self._namespaces).get(namespace)
        if existing is None:
            if not self.storage.auto_create_namespaces:
                raise status.not_found(self._namespaces, namespace)
            if not dry:
                self.create(self._namespaces, {"metadata": {"name": namespace}})
        elif (existing.get("status") or {}).get("phase") == "Terminating":
            raise terminating_namespace(info, name, namespace)

    def release(self, info: ResourceInfo, obj: Mapping[str, Any]) -> None:
        """Give back what an object that is gone (or was refused) held: a Service's cluster
        IPs and node ports."""
        if (info.group, info.kind) == ("", "Service"):
            self.services.release(dict(obj))

    # -- update and patch ------------------------------------------------------------------

    def locate(self, info: ResourceInfo, name: str, namespace: str) -> tuple[str, str, KubeObject]:
        """The namespace, storage key and current object (as a read answers it) of a write's
        target.

        :raises StatusFailure: 404.
        """
        ns = (namespace or "default") if info.namespaced else ""
        key = object_key(ns, name)
        old = self.storage.objects(info).get(key)
        if old is None:
            raise status.not_found(info, name)
        return ns, key, self.view(info, old)

    @staticmethod
    def _check_subresource(info: ResourceInfo, subresource: str) -> None:
        if subresource and subresource not in info.subresources:
            raise status.status_error(404, "NotFound")

    def update(
        self,
        info: ResourceInfo,
        body: Any,
        *,
        name: str = "",
        namespace: str = "",
        subresource: str = "",
        options: WriteOptions = _DEFAULT,
    ) -> Written:
        """PUT: replace an object (``subresource="status"``: its status).

        :param name: the name of the URL (``""``: the body's); the body must carry it.
        :raises StatusFailure: 400 (body, name), 404, 409 (stale ``resourceVersion``), 422.
        """
        self._check_subresource(info, subresource)
        if subresource == "scale":
            return update_scale(self, info, body, name=name, namespace=namespace, options=options)
        options.check("UpdateOptions")
        meta = check_body(info, body)
        ns = namespace_for(info, meta, namespace)
        obj, warnings = self.strategy(info).decode(
            info, {**body, "metadata": meta}, options, operation="update", raw=options.raw
        )
        in_body = str(obj["metadata"].get("name") or "")
        if name and in_body != name:
            raise status.bad_request(
                f"the name of the object ({in_body}) does not match the name on the URL ({name})"
            )
        ns, key, old = self.locate(info, name or in_body, ns)
        check_resource_version(info, old, obj["metadata"].get("resourceVersion"))
        return self.replace(info, key, ns, old, obj, subresource, options, warnings)

    def patch(
        self,
        info: ResourceInfo,
        patch: Any,
        *,
        name: str,
        namespace: str = "",
        patch_type: str = "merge",
        subresource: str = "",
        options: WriteOptions = _DEFAULT,
    ) -> Written:
        """PATCH: ``merge``, ``strategic``, ``json`` or ``apply`` (server-side apply, which
        creates a missing object; :attr:`Written.created` says so).

        :raises StatusFailure: 422 for invalid options or a patched object the decoder or
            the validation refuses, 409 for a stale ``resourceVersion`` or apply conflicts.
        """
        self._check_subresource(info, subresource)
        if subresource == "scale":
            return patch_scale(self, info, patch, name, namespace, patch_type, options)
        options.check("PatchOptions", patch_type)
        if patch_type == "apply":
            return self._apply(info, patch, name, namespace, subresource, options)
        ns, key, old = self.locate(info, name, namespace)
        patched = patched_object(info, old, patch, patch_type)
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
            raise status.status_error(422, "Invalid", "the patched object is not a valid object")
        obj, warnings = self.strategy(info).decode(
            info, patched, options, operation=patch_type, patch=patch
        )
        check_name(obj, name)
        check_resource_version(info, old, obj["metadata"].get("resourceVersion"))
        return self.replace(info, key, ns, old, obj, subresource, options, warnings)

    def _apply(
        self,
        info: ResourceInfo,
        config: Any,
        name: str,
        namespace: str,
        subresource: str,
        options: WriteOptions,
    ) -> Written:
        ns = (namespace or "default") if info.namespaced else ""
        key = object_key(ns, name)
        strategy = self.strategy(info)
        old = self.storage.objects(info).get(key)
        old = None if old is None else strategy.view(info, old)
        new, managed = applied_object(
            info,
            old,
            config,
            manager=options.field_manager,
            force=bool(options.force),
            subresource=subresource,
        )
        check_name(new or old or {}, name)
        if old is None:
            if subresource:
                raise status.not_found(info, name)
            base: dict[str, Any] = new or {"apiVersion": info.api_version, "kind": info.kind}
            meta = dict(base.get("metadata") or {}, name=name)
            meta.pop("managedFields", None)
            created = self._create(info, {**base, "metadata": meta}, ns, options, managed, "apply")
            return replace(created, created=True)
        obj, warnings = strategy.decode(
            info, dict(old) if new is None else new, options, operation="apply"
        )
        check_resource_version(info, old, obj["metadata"].get("resourceVersion"))
        return self.replace(info, key, ns, old, obj, subresource, options, warnings, managed)

    def replace(
        self,
        info: ResourceInfo,
        key: str,
        namespace: str,
        old: KubeObject,
        new: dict[str, Any],
        subresource: str,
        options: WriteOptions,
        warnings: list[str],
        managed_fields: Any = _TRACK,
    ) -> Written:
        """``BeforeUpdate`` and the store of a located object (``old`` as :meth:`locate`
        answered it, ``new`` decoded): no-ops keep the stored object and its RV; an object left
        with a ``deletionTimestamp`` and no finalizers is gone.

        :param subresource: ``"status"`` (the status strategy), ``"scale"`` (the main
            resource's rules; managed fields name the subresource) or ``""``.
        :param managed_fields: the ``managedFields`` to store (default: computed for the
            request's field manager).
        """
        dry = options.dry
        strategy = self.strategy(info)
        if subresource == "status":
            warnings += strategy.before_status_update(info, new, old)
        else:
            warnings += strategy.before_update(info, new, old, services=self.services, dry_run=dry)
        new = shape(info, new["metadata"], new)
        meta = new["metadata"]
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        if managed_fields is _TRACK:
            managed_fields = managed_fields_after_update(
                info, old, new, manager=options.field_manager, subresource=subresource
            )
        set_managed_fields(meta, managed_fields)
        if new == old:
            return Written(old, tuple(warnings))
        if dry:
            return Written(new, tuple(warnings))
        meta["resourceVersion"] = str(self.storage.next_resource_version())
        gone = deleted_by_update(info, new, old)
        event = DELETED if gone else MODIFIED
        self.storage.commit(info, event, key, namespace, strategy.stored(info, new), old)
        if gone:
            self.release(info, new)
        self.committed(info, new, gone=gone, previous=old)
        return Written(new, tuple(warnings), gone=gone)

    # -- delete ----------------------------------------------------------------------------

    def delete(
        self,
        info: ResourceInfo,
        *,
        name: str,
        namespace: str = "",
        preconditions: Mapping[str, Any] | None = None,
        dry_run: Sequence[str] = (),
        options: DeleteOptions | None = None,
    ) -> Written:
        """DELETE: remove an object, or mark it (``deletionTimestamp``) when it has
        finalizers or a grace period; a namespace becomes ``Terminating`` (see
        :mod:`._deletion`).

        :param preconditions: ``{"uid": ..., "resourceVersion": ...}`` that must match.
        :param dry_run: ``("All",)``: answer what would happen, change nothing.
        :param options: every ``DeleteOptions`` (they win over the two above).
        :raises StatusFailure: 404, 409 (a precondition failed), 422 (invalid options).
        """
        if options is None:
            options = DeleteOptions(preconditions=preconditions, dry_run=tuple(dry_run))
        if not options.dry:
            for delegate in self._delegates:
                if delegate.deletes(info):
                    options.check()
                    return delegate.delete(info, name, options.preconditions or {})
        return delete_object(self, info, name, namespace, options)
