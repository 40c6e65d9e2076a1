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
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...._objects import KubeObject
from .._api import _status as status
from .._api._failure import StatusFailure
from .._api._resources import ResourceInfo
from .._apply._writes import applied_object, managed_fields_after_update, patched_object
from .._crd._controller import CrdController
from .._crd._rules import (
    create_rules,
    decode_body,
    is_crd,
    status_update_rules,
    stored,
    update_rules,
    view,
)
from ._deletion import DeleteOptions, delete_object, deleted_by_update, terminating_namespace
from ._gc import Controllers
from ._history import ADDED, DELETED, MODIFIED
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
from ._rest_types import WriteOptions, Written
from ._scale import patch_scale, update_scale
from ._storage import Storage
from ._strategy import generate_name
from ._strategy_service import ServiceAllocator

__all__ = ["RestStorage"]

#: Sentinel: compute the managed fields of a write (rather than take them as given).
_TRACK: Any = object()
_DEFAULT = WriteOptions()


class RestStorage:
    """Creates, updates, patches, applies and deletes objects as the real registry does.

    :param storage: where objects are kept.
    :param services: the cluster IPs and node ports in use (default: a fresh allocator).
    """

    def __init__(self, storage: Storage, *, services: ServiceAllocator | None = None) -> None:
        self.storage = storage
        self.registry = storage.registry
        self.services = services or ServiceAllocator()
        self._namespaces = storage.registry.resolve("v1/namespaces")
        self.crds = CrdController(self)
        #: The garbage collector and the namespace controller (:mod:`._gc`).
        self.controllers = Controllers(self)
        #: The containers' logs ``pods/log`` serves (:mod:`._podlog`).
        self.pod_logs = PodLogs()

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
        meta = check_body(info, body)
        meta.pop("resourceVersion", None)
        ns = namespace_for(info, meta, namespace)
        obj, warnings = decode_body(
            info, {**body, "metadata": meta}, options, operation=operation, raw=options.raw
        )
        table = self.storage.objects(info)
        dry = options.dry

        def fresh(prefix: str) -> str:
            """``generateName``, retried while the name is taken (``RetryGenerateName``)."""
            for _ in range(8):
                name = generate_name(prefix)
                if object_key(ns, name) not in table:
                    break
            return name

        warnings += create_rules(
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
        if managed_fields is _TRACK:
            managed_fields = managed_fields_after_update(
                info, None, new, manager=options.field_manager
            )
        set_managed_fields(new["metadata"], managed_fields)
        if dry:
            return Written(new, tuple(warnings))
        new["metadata"]["resourceVersion"] = str(self.storage.next_resource_version())
        self.storage.commit(info, ADDED, key, ns, stored(info, new), None)
        self.crds.written(info, new, gone=False)
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
        if (info.group, info.kind) == ("", "Service"):
            self.services.release(dict(obj))

    # -- update and patch ------------------------------------------------------------------

    def _locate(self, info: ResourceInfo, name: str, namespace: str) -> tuple[str, str, KubeObject]:
        ns = (namespace or "default") if info.namespaced else ""
        key = object_key(ns, name)
        old = self.storage.objects(info).get(key)
        if old is None:
            raise status.not_found(info, name)
        return ns, key, view(info, old)

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
        obj, warnings = decode_body(
            info, {**body, "metadata": meta}, options, operation="update", raw=options.raw
        )
        in_body = str(obj["metadata"].get("name") or "")
        if name and in_body != name:
            raise status.bad_request(
                f"the name of the object ({in_body}) does not match the name on the URL ({name})"
            )
        ns, key, old = self._locate(info, name or in_body, ns)
        check_resource_version(info, old, obj["metadata"].get("resourceVersion"))
        return self._replace(info, key, ns, old, obj, subresource, options, warnings)

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
        ns, key, old = self._locate(info, name, namespace)
        patched = patched_object(info, old, patch, patch_type)
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
            raise status.status_error(422, "Invalid", "the patched object is not a valid object")
        obj, warnings = decode_body(info, patched, options, operation=patch_type, patch=patch)
        check_name(obj, name)
        check_resource_version(info, old, obj["metadata"].get("resourceVersion"))
        return self._replace(info, key, ns, old, obj, subresource, options, warnings)

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
        old = self.storage.objects(info).get(key)
        old = None if old is None else view(info, old)
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
        obj, warnings = decode_body(
            info, dict(old) if new is None else new, options, operation="apply"
        )
        check_resource_version(info, old, obj["metadata"].get("resourceVersion"))
        return self._replace(info, key, ns, old, obj, subresource, options, warnings, managed)

    def _replace(
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
        """``BeforeUpdate`` and the store: no-ops keep the stored object and its RV; an
        object left with a ``deletionTimestamp`` and no finalizers is gone."""
        dry = options.dry
        if subresource == "status":
            warnings += status_update_rules(info, new, old)
        else:
            warnings += update_rules(info, new, old, services=self.services, dry_run=dry)
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
        self.storage.commit(info, event, key, namespace, stored(info, new), old)
        if gone:
            self.release(info, new)
        self.crds.written(info, new, gone=gone)
        self.controllers.changed(info, new, gone=gone, previous=old)
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
        if is_crd(info) and not options.dry:
            options.check()
            return self.crds.delete(name, options.preconditions or {})
        return delete_object(self, info, name, namespace, options)
