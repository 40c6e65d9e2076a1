"""``server.objects``: the fake API server's objects, read and written in process."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, TypeVar, cast

import orjson

from ._api._objects import KubeObject
from ._api._resources import ResourceInfo, ResourceRegistry
from ._boundary import client_errors
from ._registry._collections import delete_collection, matching
from ._registry._deletion import DeleteOptions
from ._registry._podlog import pick_container
from ._registry._rest import RestStorage
from ._registry._rest_types import WriteOptions, Written
from ._selectors._matching import compile_selectors

__all__ = ["ServerObjects"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

#: The patch types :meth:`ServerObjects.patch` takes.
PATCH_TYPES = ("merge", "strategic", "json", "apply")

ObjectList = list[KubeObject]


def _copy(obj: _T) -> _T:
    """A deep copy (JSON round trip: objects are JSON anyway, and it is fast)."""
    return cast(_T, orjson.loads(orjson.dumps(obj)))


def _options(
    field_manager: str, field_validation: str, dry_run: bool, force: bool | None = None
) -> WriteOptions:
    return WriteOptions(
        field_manager=field_manager,
        field_validation=field_validation,
        dry_run=("All",) if dry_run else (),
        force=force,
    )


def _answer(written: Written, what: str) -> KubeObject:
    """The object of a write, copied; its warnings go to the log (as a client prints them)."""
    for warning in written.warnings:
        logger.warning("%s: warning from the fake API server: %s", what, warning)
    return _copy(written.obj)


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

    Writes run the real server's rules (see :mod:`aioinformer.testing`): objects come back
    decoded and **defaulted** as a real server stores them (a Pod gets ``restartPolicy``,
    ``status.phase: Pending``...), invalid ones are refused (422), ``status`` is reset on
    create and kept on main-resource writes of kinds with a status subresource (write it
    with ``subresource="status"``). Unlike an HTTP request, which defaults to ``Warn``,
    ``field_validation`` defaults to ``"Strict"`` (what kubectl sends): an unknown or
    duplicated field is a 400 rather than silently dropped, so a typo in seeded test data
    shows at once. With ``"Warn"`` the warnings are logged. ``dry_run=True`` runs every rule
    and returns the would-be object, storing nothing.
    """

    def __init__(self, registry: ResourceRegistry, rest: RestStorage) -> None:
        self._registry = registry
        self._rest = rest
        self._storage = rest.storage

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
        field_validation: str = "Strict",
        dry_run: bool = False,
    ) -> KubeObject:
        """Create an object as ``POST`` would; returns the stored object.

        :param namespace: overrides ``metadata.namespace`` (default: from the object, else
            ``default``).
        :param field_manager: the manager ``managedFields`` name (default ``""``: ``unknown``,
            as for a request with neither ``fieldManager`` nor User-Agent).
        :param field_validation: ``"Strict"`` (default), ``"Warn"`` or ``"Ignore"``.
        :param dry_run: validate and default, store nothing (``dryRun=All``).
        """
        info = self._registry.resolve(resource)
        written = self._rest.create(
            info,
            _copy(obj),
            namespace=namespace,
            options=_options(field_manager, field_validation, dry_run),
        )
        return _answer(written, f"create {info}")

    @client_errors
    def get(self, resource: str | ResourceInfo, name: str, *, namespace: str = "") -> KubeObject:
        """One object (``namespace`` default: ``default``, ignored when cluster-scoped).

        :raises NotFoundError: when it does not exist.
        """
        info = self._registry.resolve(resource)
        return _copy(self._rest.view(info, self._storage.get(info, name, namespace or "default")))

    @client_errors
    def update(
        self,
        resource: str | ResourceInfo,
        obj: Mapping[str, Any],
        *,
        namespace: str = "",
        subresource: str = "",
        field_manager: str = "",
        field_validation: str = "Strict",
        dry_run: bool = False,
    ) -> KubeObject:
        """Replace an object as ``PUT`` would (409 on a stale ``metadata.resourceVersion``;
        without one the update is unconditional).

        :param subresource: ``"status"`` to change only ``status`` (kinds that have one).
        :param field_manager: the manager ``managedFields`` name (default: ``unknown``).
        :param field_validation: ``"Strict"`` (default), ``"Warn"`` or ``"Ignore"``.
        :param dry_run: validate and default, store nothing (``dryRun=All``).
        """
        info = self._registry.resolve(resource)
        written = self._rest.update(
            info,
            _copy(obj),
            namespace=namespace,
            subresource=subresource,
            options=_options(field_manager, field_validation, dry_run),
        )
        return _answer(written, f"update {info}")

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
        field_validation: str = "Strict",
        dry_run: bool = False,
    ) -> KubeObject:
        """Patch an object as ``PATCH`` would.

        :param patch_type: ``"merge"`` (default, RFC 7386), ``"strategic"`` (strategic merge
            patch, by the kind's schema), ``"json"`` (RFC 6902) or ``"apply"`` (server-side
            apply, creating when missing).
        :param field_manager: the manager ``managedFields`` name; required for ``"apply"``
            (else 422, as real), default ``unknown`` for the others.
        :param force: for ``"apply"``: take fields other managers own instead of a 409.
        :param field_validation: ``"Strict"`` (default), ``"Warn"`` or ``"Ignore"``.
        :param dry_run: validate and default, store nothing (``dryRun=All``).
        :raises ValueError: for another ``patch_type``.
        """
        if patch_type not in PATCH_TYPES:
            raise ValueError(f"unknown patch type {patch_type!r}")
        info = self._registry.resolve(resource)
        written = self._rest.patch(
            info,
            _copy(patch),
            name=name,
            namespace=namespace,
            patch_type=patch_type,
            subresource=subresource,
            options=_options(field_manager, field_validation, dry_run, force),
        )
        return _answer(written, f"patch {info}")

    @client_errors
    def delete(
        self,
        resource: str | ResourceInfo,
        name: str,
        *,
        namespace: str = "",
        preconditions: Mapping[str, Any] | None = None,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """Delete an object as ``DELETE`` would; returns its final state, or its marked
        state when it stays (finalizers, a pod's grace period, a terminating namespace).

        What follows is the cluster's controllers' work, done as on a cluster right after
        this returns (or before it returns, with ``FakeApiServer(sync_gc=True)``):
        dependents are garbage-collected, a namespace is emptied and removed (see
        :mod:`._registry._gc`); :meth:`wait_idle` waits until they are done.

        :param preconditions: ``{"uid": ..., "resourceVersion": ...}`` that must match (409).
        :param grace_period_seconds: a pod's grace period (default: its
            ``terminationGracePeriodSeconds``; 0 removes it at once; unscheduled pods go at
            once anyway, as real).
        :param propagation_policy: ``"Background"`` (default), ``"Foreground"`` or
            ``"Orphan"``.
        :param dry_run: answer what would happen, delete nothing (``dryRun=All``).
        """
        written = self._rest.delete(
            self._registry.resolve(resource),
            name=name,
            namespace=namespace,
            options=DeleteOptions(
                preconditions=preconditions,
                dry_run=("All",) if dry_run else (),
                grace_period_seconds=grace_period_seconds,
                propagation_policy=propagation_policy,
            ),
        )
        return _copy(written.obj)

    async def wait_idle(self) -> None:
        """Wait until the garbage collector and the namespace controller have nothing left
        to do: every dependent of a deleted owner is gone (or marked, when finalizers or a
        pod's grace period keep it), and every terminating namespace has been emptied as
        far as it can be. Returns at once when they are idle (always, with
        ``FakeApiServer(sync_gc=True)``). Takes no timeout: bound it with
        :func:`anyio.fail_after`. Work queued before the server runs is done once it
        starts."""
        await self._rest.controllers.wait_idle()

    @client_errors
    def finish_deletion(
        self, resource: str | ResourceInfo, name: str, *, namespace: str = ""
    ) -> KubeObject:
        """End a graceful deletion now, as the kubelet does once a pod's containers have
        stopped: ``DELETE`` with ``gracePeriodSeconds=0`` and the object's uid as
        precondition. The object is gone unless finalizers keep it; returns its final state.

        :raises NotFoundError: when it does not exist.
        """
        info = self._registry.resolve(resource)
        uid = self._storage.get(info, name, namespace or "default")["metadata"].get("uid")
        written = self._rest.delete(
            info,
            name=name,
            namespace=namespace,
            options=DeleteOptions(grace_period_seconds=0, preconditions={"uid": uid}),
        )
        return _copy(written.obj)

    @client_errors
    def append_pod_log(
        self,
        name: str,
        text: str,
        *,
        namespace: str = "",
        container: str = "",
        finished: bool = False,
    ) -> None:
        """Add lines to a pod container's log, which ``GET pods/<name>/log`` serves (and
        ``follow=true`` streams as they come).

        :param container: the container (default: the pod's only one).
        :param finished: the container has ended: following streams end after these lines.
        :raises NotFoundError: when the pod does not exist.
        :raises BadRequestError: when ``container`` is missing or not the pod's.
        """
        ns = namespace or "default"
        pod = self._storage.get(self._registry.resolve("v1/pods"), name, ns)
        chosen = pick_container(pod, container)
        self._rest.pod_logs.append(ns, name, chosen, text, finished=finished)

    @client_errors
    def delete_collection(
        self,
        resource: str | ResourceInfo,
        *,
        namespace: str = "",
        label_selector: str = "",
        field_selector: str = "",
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
    ) -> ObjectList:
        """Delete every matching object (in one namespace), each as :meth:`delete` does;
        returns their final states.

        :raises BadRequestError: for an invalid selector (the server's 400).
        """
        info = self._registry.resolve(resource)
        matcher = compile_selectors(label_selector, field_selector, info)
        options = DeleteOptions(
            grace_period_seconds=grace_period_seconds, propagation_policy=propagation_policy
        )
        return _copy(
            delete_collection(
                self._rest, info, namespace=namespace, matcher=matcher, options=options
            )
        )

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
        found = matching(self._storage, info, namespace=namespace, matcher=matcher)
        return [self._rest.view(info, obj) for obj in _copy(found)]
