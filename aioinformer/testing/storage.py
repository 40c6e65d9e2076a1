"""Objects, the global resource version, and write semantics (the fake's etcd + registry).

One global integer counts writes, like an etcd revision; every successful write takes the
next value and produces one :class:`~.history.StoredEvent`, handed synchronously to every
subscriber (the watch hub). All methods are synchronous and never await, so a reader that
snapshots state and subscribes in one step cannot miss or duplicate an event.

Stored objects are never mutated in place: a write builds a new dict. Callers must not
mutate what they get back either (the in-process API of the server copies for its callers).

Deliberate simplifications, compared with the real API server:

* ``status`` is an ordinary part of the object for main-resource writes (create, update and
  patch keep what they are given); writes to the ``status`` subresource change only ``status``.
* ``generation`` starts at 1 and grows when anything outside ``metadata`` and ``status``
  changes; deletes are immediate (no grace periods).

* Deleting a namespace deletes its contents at once (finalizers on them are honoured).

Every create and update keeps ``metadata.managedFields`` as the real field manager does,
patches follow the schema of the kind (:mod:`._writes`); the rules on an object's shape and
metadata are :mod:`._object_rules`', the operations on whole collections :mod:`._collections`'.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from ..objects import KubeObject
from . import status
from ._collections import delete_namespace_contents
from ._object_rules import (
    check_body,
    check_name,
    check_preconditions,
    check_resource_version,
    name_for_create,
    namespace_for,
    now,
    object_key,
    set_managed_fields,
    shape,
    spec_part,
    updated_metadata,
    validate_name,
)
from ._schema import require_schemas
from ._writes import (
    applied_object,
    managed_fields_after_update,
    patched_object,
    validate_patch_options,
)
from .history import ADDED, DELETED, MODIFIED, ResourceHistory, StoredEvent, with_resource_version
from .resources import ResourceInfo, ResourceRegistry

__all__ = ["Storage"]

#: Called synchronously for every write.
Subscriber = Callable[[ResourceInfo, StoredEvent], None]


def _gvr(info: ResourceInfo) -> tuple[str, str, str]:
    return (info.group, info.version, info.plural)


#: Sentinel: compute the managed fields of a write (rather than take them as given).
_TRACK: Any = object()


class Storage:
    """All objects of all resources, their histories and the global resource version.

    :param registry: the resources served.
    :param history_limit: events kept per resource for resuming watches (at least this many).
    :param auto_create_namespaces: create a missing namespace on a namespaced create instead
        of answering 404.
    :raises ImportError: when the Kubernetes schemas (the ``testing`` extra) are missing.
    """

    def __init__(
        self,
        registry: ResourceRegistry,
        *,
        history_limit: int,
        auto_create_namespaces: bool,
    ) -> None:
        require_schemas()
        self.registry = registry
        self.history_limit = history_limit
        self.auto_create_namespaces = auto_create_namespaces
        self._rv = 1
        self._tables: dict[tuple[str, str, str], dict[str, KubeObject]] = {}
        self._histories: dict[tuple[str, str, str], ResourceHistory] = {}
        self._subscribers: list[Subscriber] = []
        self._namespaces = registry.resolve("v1/namespaces")

    # -- reading ---------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        """The RV of the latest write (the whole server's, like an etcd revision)."""
        return self._rv

    def subscribe(self, subscriber: Subscriber) -> None:
        """Call ``subscriber(resource, event)`` synchronously after every write."""
        self._subscribers.append(subscriber)

    def objects(self, info: ResourceInfo) -> dict[str, KubeObject]:
        """The live table of one resource, key → object. Do not mutate it."""
        return self._tables.setdefault(_gvr(info), {})

    def history(self, info: ResourceInfo) -> ResourceHistory:
        """The history window of one resource."""
        history = self._histories.get(_gvr(info))
        if history is None:
            history = self._histories[_gvr(info)] = ResourceHistory(limit=self.history_limit)
        return history

    def get(self, info: ResourceInfo, name: str, namespace: str = "") -> KubeObject:
        """One object.

        :raises StatusFailure: 404, when it does not exist.
        """
        obj = self.objects(info).get(object_key(namespace if info.namespaced else "", name))
        if obj is None:
            raise status.not_found(info, name)
        return obj

    def state_at(self, info: ResourceInfo, rv: int) -> dict[str, KubeObject]:
        """The table of one resource as it was at ``rv``, rebuilt from the history window.

        :raises StatusFailure: 504 (too large RV), when ``rv`` is in the future.
        :raises StatusFailure: 410, when ``rv`` is older than the history window.
        """
        if rv > self._rv:
            raise status.too_large_resource_version(rv, self._rv)
        history = self.history(info)
        events = history.since(rv)
        if events is None:
            raise status.expired(f"too old resource version: {rv} ({history.floor})")
        state = dict(self.objects(info))
        for event in reversed(events):
            if event.old is None:
                state.pop(event.key, None)
            else:
                state[event.key] = event.old
        return state

    # -- writing ---------------------------------------------------------------------------

    def _commit(
        self,
        info: ResourceInfo,
        event_type: str,
        key: str,
        namespace: str,
        obj: KubeObject,
        old: KubeObject | None,
    ) -> StoredEvent:
        table = self.objects(info)
        if event_type == DELETED:
            del table[key]
        else:
            table[key] = obj
        event = StoredEvent(self._rv, event_type, key, namespace, obj, old)
        self.history(info).append(event)
        for subscriber in self._subscribers:
            subscriber(info, event)
        return event

    def _require_namespace(self, namespace: str) -> None:
        existing = self.objects(self._namespaces).get(namespace)
        if existing is None:
            if not self.auto_create_namespaces:
                raise status.not_found(self._namespaces, namespace)
            self.create(self._namespaces, {"metadata": {"name": namespace}})
        elif existing["metadata"].get("deletionTimestamp"):
            raise status.status_error(
                403,
                "Forbidden",
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated",
            )

    def create(
        self,
        info: ResourceInfo,
        obj: Any,
        *,
        namespace: str = "",
        field_manager: str = "",
        managed_fields: Any = _TRACK,
    ) -> KubeObject:
        """Create an object; the server sets uid, creationTimestamp, resourceVersion, generation.

        :param namespace: the namespace from the URL (``""``: from the object, else default).
        :param field_manager: who writes (``""``: ``unknown``), for ``managedFields``.
        :param managed_fields: the ``managedFields`` to store instead of tracking this write.
        :raises StatusFailure: 409 AlreadyExists.
        :raises StatusFailure: 404, the namespace does not exist (and is not auto-created).
        :raises StatusFailure: 422, no name and no generateName, or an invalid name.
        :raises StatusFailure: 400, a body of the wrong kind or namespace.
        """
        meta = check_body(info, obj)
        ns = namespace_for(info, meta, namespace)
        if info.namespaced:
            self._require_namespace(ns)
        table = self.objects(info)
        name = name_for_create(info, meta, taken=lambda n: object_key(ns, n) in table)
        validate_name(info, name, dns_label=info == self._namespaces)
        key = object_key(ns, name)
        if key in table:
            raise status.already_exists(info, name)
        self._rv += 1
        for field in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(field, None)
        meta.update(
            name=name,
            uid=str(uuid.uuid4()),
            creationTimestamp=now(),
            resourceVersion=str(self._rv),
            generation=1,
        )
        new = shape(info, meta, obj)
        if info == self._namespaces and not isinstance(new.get("status"), dict):
            new["status"] = {"phase": "Active"}
        if managed_fields is _TRACK:
            managed_fields = managed_fields_after_update(info, None, new, manager=field_manager)
        set_managed_fields(meta, managed_fields)
        self._commit(info, ADDED, key, ns, new, None)
        return new

    def _locate(self, info: ResourceInfo, name: str, namespace: str) -> tuple[str, str, KubeObject]:
        ns = (namespace or "default") if info.namespaced else ""
        key = object_key(ns, name)
        old = self.objects(info).get(key)
        if old is None:
            raise status.not_found(info, name)
        return ns, key, old

    def _write(
        self,
        info: ResourceInfo,
        key: str,
        namespace: str,
        old: KubeObject,
        body: Mapping[str, Any],
        *,
        subresource: str,
        field_manager: str = "",
        managed_fields: Any = _TRACK,
    ) -> KubeObject:
        """Replace ``old`` by ``body``, keeping the server-owned metadata; no-ops are skipped.

        ``managedFields`` follow the write (``field_manager``), unless ``managed_fields`` are
        given (an apply computed them).
        """
        old_meta = old["metadata"]
        if subresource == "status":
            new = {k: v for k, v in old.items() if k != "status"}
            if "status" in body:
                new["status"] = body["status"]
            meta = dict(old_meta)
        else:
            meta = updated_metadata(old_meta, body.get("metadata") or {}, namespace)
            new = dict(body)
        meta["resourceVersion"] = old_meta["resourceVersion"]
        new = shape(info, meta, new)
        if managed_fields is _TRACK:
            managed_fields = managed_fields_after_update(
                info, old, new, manager=field_manager, subresource=subresource
            )
        set_managed_fields(meta, managed_fields)
        if new == old:
            return old
        if spec_part(new) != spec_part(old):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._commit(info, DELETED, key, namespace, new, old)
        else:
            self._commit(info, MODIFIED, key, namespace, new, old)
        return new

    def update(
        self,
        info: ResourceInfo,
        obj: Any,
        *,
        name: str = "",
        namespace: str = "",
        subresource: str = "",
        field_manager: str = "",
    ) -> KubeObject:
        """Replace an object (PUT); a set ``metadata.resourceVersion`` must be the current one.

        :param name: the name from the URL (``""``: from the object).
        :param subresource: ``"status"`` to change only ``status``.
        :param field_manager: who writes (``""``: ``unknown``), for ``managedFields``.
        :raises StatusFailure: 404, it does not exist.
        :raises StatusFailure: 409, stale ``metadata.resourceVersion``.
        """
        meta = check_body(info, obj)
        ns = namespace_for(info, meta, namespace)
        in_body = str(meta.get("name") or "")
        if name and in_body and in_body != name:
            raise status.bad_request(
                f"the name of the object ({in_body}) does not match the name on the URL ({name})"
            )
        ns, key, old = self._locate(info, name or in_body, ns)
        check_resource_version(info, old, meta.get("resourceVersion"))
        body = {**obj, "metadata": meta}
        return self._write(
            info, key, ns, old, body, subresource=subresource, field_manager=field_manager
        )

    def patch(
        self,
        info: ResourceInfo,
        patch: Any,
        *,
        name: str,
        namespace: str = "",
        patch_type: str = "merge",
        subresource: str = "",
        field_manager: str = "",
        force: bool | None = None,
    ) -> KubeObject:
        """Patch an object: ``merge``, ``strategic``, ``json`` or ``apply`` (server-side apply).

        A ``metadata.resourceVersion`` in the patched result that differs from the stored one
        is a precondition failure (409), as on the real server. ``apply`` creates the object
        when it does not exist, needs a ``field_manager`` and may ``force`` conflicts.

        :raises StatusFailure: 422, invalid options (``fieldManager`` missing for apply,
            ``force`` for another patch type).
        :raises StatusFailure: 409, apply conflicts with another manager's fields.
        """
        validate_patch_options(patch_type, field_manager, force)
        if patch_type == "apply":
            return self._apply(info, patch, name, namespace, subresource, field_manager, force)
        ns, key, old = self._locate(info, name, namespace)
        patched = patched_object(info, old, patch, patch_type)
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
            raise status.status_error(422, "Invalid", "the patched object is not a valid object")
        check_name(patched, name)
        check_resource_version(info, old, patched["metadata"].get("resourceVersion"))
        return self._write(
            info, key, ns, old, patched, subresource=subresource, field_manager=field_manager
        )

    def _apply(
        self,
        info: ResourceInfo,
        config: Any,
        name: str,
        namespace: str,
        subresource: str,
        field_manager: str,
        force: bool | None,
    ) -> KubeObject:
        ns = (namespace or "default") if info.namespaced else ""
        old = self.objects(info).get(object_key(ns, name))
        new, managed = applied_object(
            info, old, config, manager=field_manager, force=bool(force), subresource=subresource
        )
        check_name(new or old or {}, name)
        if old is None:
            if subresource:
                raise status.not_found(info, name)
            base: dict[str, Any] = new or {"apiVersion": info.api_version, "kind": info.kind}
            meta = dict(base.get("metadata") or {}, name=name)
            meta.pop("managedFields", None)
            return self.create(
                info, {**base, "metadata": meta}, namespace=ns, managed_fields=managed
            )
        if new is None:
            new = old
        check_resource_version(info, old, new.get("metadata", {}).get("resourceVersion"))
        key = object_key(ns, name)
        return self._write(info, key, ns, old, new, subresource=subresource, managed_fields=managed)

    def delete(
        self,
        info: ResourceInfo,
        *,
        name: str,
        namespace: str = "",
        preconditions: Mapping[str, Any] | None = None,
    ) -> tuple[KubeObject, bool]:
        """Delete an object, or mark it (``deletionTimestamp``) when it has finalizers.

        :param preconditions: ``{"uid": ..., "resourceVersion": ...}`` that must match.
        :returns: the final (or marked) object, and whether it is gone.
        :raises StatusFailure: 404, it does not exist.
        :raises StatusFailure: 409, a precondition failed.
        """
        ns, key, old = self._locate(info, name, namespace)
        meta = old["metadata"]
        check_preconditions(info, meta, preconditions or {})
        if info == self._namespaces:
            delete_namespace_contents(self, name)
        if meta.get("finalizers"):
            if meta.get("deletionTimestamp"):
                return old, False
            self._rv += 1
            new_meta = {
                **meta,
                "deletionTimestamp": now(),
                "deletionGracePeriodSeconds": 0,
                "generation": int(meta.get("generation") or 0) + 1,
                "resourceVersion": str(self._rv),
            }
            marked = {**old, "metadata": new_meta}
            self._commit(info, MODIFIED, key, ns, marked, old)
            return marked, False
        self._rv += 1
        final = with_resource_version(old, self._rv)
        self._commit(info, DELETED, key, ns, final, old)
        return final, True

    def compact(self, rv: int | None = None) -> None:
        """Make every RV below ``rv`` (default: the current RV) unavailable to every resource."""
        target = self._rv if rv is None else min(rv, self._rv)
        for info in self.registry:
            self.history(info).compact(target)
