"""``server.objects``: the fake API server's objects, read and written in process."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

import orjson

from ..objects import KubeObject
from ._boundary import client_errors
from ._collections import delete_collection, matching
from ._selectors import compile_selectors
from .resources import ResourceInfo, ResourceRegistry
from .storage import Storage

__all__ = ["ServerObjects"]

_T = TypeVar("_T")

#: The patch types :meth:`ServerObjects.patch` takes.
PATCH_TYPES = ("merge", "strategic", "json", "apply")

ObjectList = list[KubeObject]


def _copy(obj: _T) -> _T:
    """A deep copy (JSON round trip: objects are JSON anyway, and it is fast)."""
    return cast(_T, orjson.loads(orjson.dumps(obj)))


class ServerObjects:
    """The objects of a fake API server (``server.objects``), for seeding and checking state.

    Every method writes or reads exactly as the matching HTTP request would: the same resource
    versions, the same watch events, the same validation and the same failures. The methods are
    **synchronous**: the fake's storage is synchronous (a write and the watch events it causes
    happen in one step), so there is nothing to await, and a test can seed objects before the
    server starts. Objects passed in and handed out are copies.

    A resource is a :class:`~aioinformer.testing.ResourceInfo` or any spelling
    :meth:`FakeApiServer.resource <aioinformer.testing.FakeApiServer.resource>` accepts
    (``"pods"``, ``"deployments.apps"``, ``"example.com/v1/widgets"``...).

    Failures are raised as the exceptions the client raises for the same answer over HTTP:
    the :class:`~aioinformer.errors.ApiError` subclass of the ``Status`` the server would send
    (:class:`~aioinformer.errors.NotFoundError`, :class:`~aioinformer.errors.ConflictError`,
    :class:`~aioinformer.errors.UnprocessableEntityError`, ...), whose ``status`` is that
    ``Status``. So a test handles a refusal the same way in process and over the wire.
    """

    def __init__(self, registry: ResourceRegistry, storage: Storage) -> None:
        self._registry = registry
        self._storage = storage

    @property
    def resource_version(self) -> str:
        """The current global resource version (that of the latest write)."""
        return str(self._storage.resource_version)

    @client_errors
    def create(
        self,
        resource: str | ResourceInfo,
        obj: Mapping[str, Any],
        *,
        namespace: str = "",
        field_manager: str = "",
    ) -> KubeObject:
        """Create an object as ``POST`` would; returns the stored object.

        :param namespace: overrides ``metadata.namespace`` (default: from the object, else
            ``default``).
        :param field_manager: the manager ``managedFields`` name (default ``""``: ``unknown``,
            as for a request with neither ``fieldManager`` nor User-Agent).
        """
        info = self._registry.resolve(resource)
        created = self._storage.create(
            info, _copy(obj), namespace=namespace, field_manager=field_manager
        )
        return _copy(created)

    @client_errors
    def get(self, resource: str | ResourceInfo, name: str, *, namespace: str = "") -> KubeObject:
        """One object (``namespace`` default: ``default``, ignored when cluster-scoped).

        :raises NotFoundError: when it does not exist.
        """
        info = self._registry.resolve(resource)
        return _copy(self._storage.get(info, name, namespace or "default"))

    @client_errors
    def update(
        self,
        resource: str | ResourceInfo,
        obj: Mapping[str, Any],
        *,
        namespace: str = "",
        subresource: str = "",
        field_manager: str = "",
    ) -> KubeObject:
        """Replace an object as ``PUT`` would (409 on a stale ``metadata.resourceVersion``).

        :param subresource: ``"status"`` to change only ``status``.
        :param field_manager: the manager ``managedFields`` name (default: ``unknown``).
        """
        updated = self._storage.update(
            self._registry.resolve(resource),
            _copy(obj),
            namespace=namespace,
            subresource=subresource,
            field_manager=field_manager,
        )
        return _copy(updated)

    @client_errors
    def patch(
        self,
        resource: str | ResourceInfo,
        name: str,
        patch: Any,
        *,
        namespace: str = "",
        patch_type: str = "merge",
        subresource: str = "",
        field_manager: str = "",
        force: bool | None = None,
    ) -> KubeObject:
        """Patch an object as ``PATCH`` would.

        :param patch_type: ``"merge"`` (default, RFC 7386), ``"strategic"`` (strategic merge
            patch, by the kind's schema), ``"json"`` (RFC 6902) or ``"apply"`` (server-side
            apply, creating when missing).
        :param field_manager: the manager ``managedFields`` name; required for ``"apply"``
            (else 422, as real), default ``unknown`` for the others.
        :param force: for ``"apply"``: take fields other managers own instead of a 409.
        :raises ValueError: for another ``patch_type``.
        """
        if patch_type not in PATCH_TYPES:
            raise ValueError(f"unknown patch type {patch_type!r}")
        patched = self._storage.patch(
            self._registry.resolve(resource),
            _copy(patch),
            name=name,
            namespace=namespace,
            patch_type=patch_type,
            subresource=subresource,
            field_manager=field_manager,
            force=force,
        )
        return _copy(patched)

    @client_errors
    def delete(
        self,
        resource: str | ResourceInfo,
        name: str,
        *,
        namespace: str = "",
        preconditions: Mapping[str, Any] | None = None,
    ) -> KubeObject:
        """Delete an object (or mark it, when it has finalizers); returns its final state.

        :param preconditions: ``{"uid": ..., "resourceVersion": ...}`` that must match (409).
        """
        obj, _ = self._storage.delete(
            self._registry.resolve(resource),
            name=name,
            namespace=namespace,
            preconditions=preconditions,
        )
        return _copy(obj)

    @client_errors
    def delete_collection(
        self,
        resource: str | ResourceInfo,
        *,
        namespace: str = "",
        label_selector: str = "",
        field_selector: str = "",
    ) -> ObjectList:
        """Delete every matching object (in one namespace); returns their final states.

        :raises BadRequestError: for an invalid selector (the server's 400).
        """
        info = self._registry.resolve(resource)
        matcher = compile_selectors(label_selector, field_selector, info)
        return _copy(delete_collection(self._storage, info, namespace=namespace, matcher=matcher))

    @client_errors
    def list(
        self,
        resource: str | ResourceInfo,
        *,
        namespace: str = "",
        label_selector: str = "",
        field_selector: str = "",
    ) -> ObjectList:
        """The current objects of a resource (in one namespace; default: all), in storage-key
        order (namespace, then name), with the server's selector semantics.

        :raises BadRequestError: for an invalid selector (the server's 400).
        """
        info = self._registry.resolve(resource)
        matcher = compile_selectors(label_selector, field_selector, info)
        return _copy(matching(self._storage, info, namespace=namespace, matcher=matcher))
