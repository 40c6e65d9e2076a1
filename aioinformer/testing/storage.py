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

Every create and update keeps ``metadata.managedFields`` as the real field manager does,
patches follow the schema of the kind (:mod:`._writes`).
* Deleting a namespace deletes its contents at once (finalizers on them are honoured).
"""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from ..errors import ApiError
from ..objects import KubeObject
from . import status
from ._failure import StatusFailure
from ._schema import require_schemas
from ._writes import (
    applied_object,
    managed_fields_after_update,
    patched_object,
    validate_patch_options,
)
from .history import ADDED, DELETED, MODIFIED, ResourceHistory, StoredEvent, with_resource_version
from .resources import ResourceInfo, ResourceRegistry

__all__ = ["Storage", "object_key"]

#: Called synchronously for every write.
Subscriber = Callable[[ResourceInfo, StoredEvent], None]

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SERVER_OWNED = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
)


def object_key(namespace: str, name: str) -> str:
    """The storage key: ``namespace/name``, or ``name`` when cluster-scoped (etcd order)."""
    return f"{namespace}/{name}" if namespace else name


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _spec_part(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _gvr(info: ResourceInfo) -> tuple[str, str, str]:
    return (info.group, info.version, info.plural)


def _refusal(failure: StatusFailure) -> ApiError:
    """The answer for a request the write machinery refused."""
    return status.status_error(
        failure.code, failure.reason, failure.message, details=failure.details
    )


def _set_managed_fields(meta: dict[str, Any], managed: list[dict[str, Any]] | None) -> None:
    if managed is None:
        meta.pop("managedFields", None)
    else:
        meta["managedFields"] = managed


def _check_name(obj: Mapping[str, Any], name: str) -> None:
    """A patch may not rename the object (``checkName`` in apiserver ``handlers/rest.go``)."""
    meta = obj.get("metadata")
    in_object = str((meta if isinstance(meta, dict) else {}).get("name") or "")
    if in_object != name:
        raise status.bad_request(
            f"the name of the object ({in_object}) does not match the name on the URL ({name})"
        )


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

        :raises NotFoundError: when it does not exist.
        """
        obj = self.objects(info).get(object_key(namespace if info.namespaced else "", name))
        if obj is None:
            raise status.not_found(info, name)
        return obj

    def state_at(self, info: ResourceInfo, rv: int) -> dict[str, KubeObject]:
        """The table of one resource as it was at ``rv``, rebuilt from the history window.

        :raises TooLargeResourceVersionError: when ``rv`` is in the future.
        :raises ExpiredError: when ``rv`` is older than the history window.
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

    def _check_body(self, info: ResourceInfo, obj: Any) -> dict[str, Any]:
        if not isinstance(obj, dict):
            raise status.bad_request(f"the body of a {info.kind} must be a JSON object")
        kind = obj.get("kind")
        api_version = obj.get("apiVersion")
        if (kind and kind != info.kind) or (api_version and api_version != info.api_version):
            raise status.bad_request(
                f"the object provided is unrecognized (must be of type {info.kind}): "
                f"{api_version}, Kind={kind}"
            )
        metadata = obj.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise status.bad_request("metadata must be a JSON object")
        return dict(metadata or {})

    def _namespace_for(self, info: ResourceInfo, meta: dict[str, Any], namespace: str) -> str:
        if not info.namespaced:
            meta.pop("namespace", None)
            return ""
        in_body = str(meta.get("namespace") or "")
        if namespace and in_body and in_body != namespace:
            raise status.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
        resolved = namespace or in_body or "default"
        meta["namespace"] = resolved
        return resolved

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

    def _validate_name(self, info: ResourceInfo, name: str) -> None:
        pattern, limit = (_LABEL, 63) if info == self._namespaces else (_SUBDOMAIN, 253)
        if len(name) > limit or not pattern.match(name):
            raise status.invalid(
                info,
                name,
                "metadata.name",
                f'Invalid value: "{name}": a lowercase RFC 1123 name must consist of lower case '
                "alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character",
            )

    def _shape(
        self, info: ResourceInfo, meta: dict[str, Any], body: Mapping[str, Any]
    ) -> KubeObject:
        obj: KubeObject = {"kind": info.kind, "apiVersion": info.api_version, "metadata": meta}
        for key, value in body.items():
            if key not in obj:
                obj[key] = value
        return obj

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
        :raises ConflictError: AlreadyExists.
        :raises NotFoundError: the namespace does not exist (and is not auto-created).
        :raises UnprocessableEntityError: no name and no generateName, or an invalid name.
        :raises BadRequestError: a body of the wrong kind or namespace.
        """
        meta = self._check_body(info, obj)
        ns = self._namespace_for(info, meta, namespace)
        if info.namespaced:
            self._require_namespace(ns)
        table = self.objects(info)
        name = str(meta.get("name") or "")
        if not name:
            prefix = str(meta.get("generateName") or "")
            if not prefix:
                raise status.invalid(
                    info, "", "metadata.name", "Required value: name or generateName is required"
                )
            for _ in range(8):
                suffix = "".join(secrets.choice(_GENERATE_ALPHABET) for _ in range(5))
                name = prefix + suffix
                if object_key(ns, name) not in table:
                    break
        self._validate_name(info, name)
        key = object_key(ns, name)
        if key in table:
            raise status.already_exists(info, name)
        self._rv += 1
        for field in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(field, None)
        meta.update(
            name=name,
            uid=str(uuid.uuid4()),
            creationTimestamp=_now(),
            resourceVersion=str(self._rv),
            generation=1,
        )
        new = self._shape(info, meta, obj)
        if info == self._namespaces and not isinstance(new.get("status"), dict):
            new["status"] = {"phase": "Active"}
        if managed_fields is _TRACK:
            managed_fields = managed_fields_after_update(info, None, new, manager=field_manager)
        _set_managed_fields(meta, managed_fields)
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
            meta = dict(body.get("metadata") or {})
            for field in _SERVER_OWNED:
                if field in old_meta:
                    meta[field] = old_meta[field]
                else:
                    meta.pop(field, None)
            meta["name"] = old_meta["name"]
            if namespace:
                meta["namespace"] = namespace
            new = dict(body)
        meta["resourceVersion"] = old_meta["resourceVersion"]
        new = self._shape(info, meta, new)
        if managed_fields is _TRACK:
            managed_fields = managed_fields_after_update(
                info, old, new, manager=field_manager, subresource=subresource
            )
        _set_managed_fields(meta, managed_fields)
        if new == old:
            return old
        if _spec_part(new) != _spec_part(old):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._commit(info, DELETED, key, namespace, new, old)
        else:
            self._commit(info, MODIFIED, key, namespace, new, old)
        return new

    def _check_rv(self, info: ResourceInfo, old: KubeObject, wanted: Any) -> None:
        if wanted and str(wanted) != old["metadata"]["resourceVersion"]:
            raise status.conflict(
                info,
                old["metadata"]["name"],
                "the object has been modified; please apply your changes to the latest version "
                "and try again",
            )

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
        :raises NotFoundError: it does not exist.
        :raises ConflictError: stale ``metadata.resourceVersion``.
        """
        meta = self._check_body(info, obj)
        ns = self._namespace_for(info, meta, namespace)
        in_body = str(meta.get("name") or "")
        if name and in_body and in_body != name:
            raise status.bad_request(
                f"the name of the object ({in_body}) does not match the name on the URL ({name})"
            )
        ns, key, old = self._locate(info, name or in_body, ns)
        self._check_rv(info, old, meta.get("resourceVersion"))
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

        :raises UnprocessableEntityError: invalid options (``fieldManager`` missing for apply,
            ``force`` for another patch type).
        :raises ConflictError: apply conflicts with another manager's fields.
        """
        try:
            validate_patch_options(patch_type, field_manager, force)
            if patch_type == "apply":
                return self._apply(info, patch, name, namespace, subresource, field_manager, force)
            ns, key, old = self._locate(info, name, namespace)
            patched = patched_object(info, old, patch, patch_type)
        except StatusFailure as failure:
            raise _refusal(failure) from None
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
            raise status.status_error(422, "Invalid", "the patched object is not a valid object")
        _check_name(patched, name)
        self._check_rv(info, old, patched["metadata"].get("resourceVersion"))
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
        _check_name(new or old or {}, name)
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
        self._check_rv(info, old, new.get("metadata", {}).get("resourceVersion"))
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
        :raises NotFoundError: it does not exist.
        :raises ConflictError: a precondition failed.
        """
        ns, key, old = self._locate(info, name, namespace)
        meta = old["metadata"]
        for field in ("uid", "resourceVersion"):
            wanted = (preconditions or {}).get(field)
            if wanted and str(wanted) != str(meta.get(field)):
                label = "UID" if field == "uid" else "ResourceVersion"
                raise status.conflict(
                    info,
                    name,
                    f"Precondition failed: {label} in precondition: {wanted}, "
                    f"{label} in object meta: {meta.get(field)}",
                )
        if info == self._namespaces:
            self._delete_namespace_contents(name)
        if meta.get("finalizers"):
            if meta.get("deletionTimestamp"):
                return old, False
            self._rv += 1
            new_meta = {
                **meta,
                "deletionTimestamp": _now(),
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

    def _delete_namespace_contents(self, namespace: str) -> None:
        for info in self.registry:
            if not info.namespaced:
                continue
            prefix = f"{namespace}/"
            for key in [k for k in self.objects(info) if k.startswith(prefix)]:
                obj = self.objects(info)[key]
                self.delete(info, name=obj["metadata"]["name"], namespace=namespace)

    def delete_collection(
        self,
        info: ResourceInfo,
        *,
        namespace: str = "",
        matcher: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> list[KubeObject]:
        """Delete every object of a resource (in ``namespace``) that ``matcher`` accepts."""
        prefix = f"{namespace}/" if namespace and info.namespaced else ""
        doomed = [
            obj
            for key, obj in sorted(self.objects(info).items())
            if key.startswith(prefix) and (matcher is None or matcher(obj))
        ]
        out: list[KubeObject] = []
        for obj in doomed:
            meta = obj["metadata"]
            try:
                final, _ = self.delete(
                    info, name=meta["name"], namespace=str(meta.get("namespace") or "")
                )
            except ApiError:
                continue
            out.append(final)
        return out

    def compact(self, rv: int | None = None) -> None:
        """Make every RV below ``rv`` (default: the current RV) unavailable to every resource."""
        target = self._rv if rv is None else min(rv, self._rv)
        for info in self.registry:
            self.history(info).compact(target)
