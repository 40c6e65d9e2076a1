"""Finalizers: clean up before an object goes away.

A finalizer is a name in ``metadata.finalizers``; while any is there, a delete only sets
``metadata.deletionTimestamp`` and the object stays until its finalizers are removed. A
controller that must clean up (delete something outside Kubernetes, say) adds its finalizer
while the object lives, and removes it once its cleanup succeeded. :class:`Finalizer` does this
inside a reconcile, as kube-rs's ``runtime::finalizer`` does — a state machine on (finalizer
present?, being deleted?):

===============  ==================  ===========================================================
finalizer        deletionTimestamp   what :meth:`Finalizer.reconcile` does
===============  ==================  ===========================================================
absent           unset               add it, then ``apply(obj)`` with the object as written
present          unset               ``apply(obj)``
present          set                 ``cleanup(obj)``; once it succeeded, remove the finalizer
absent           set                 nothing: not ours to clean up (another finalizer holds it)
===============  ==================  ===========================================================

Writes never drop another writer's finalizers: each is a JSON merge patch of the whole
``metadata.finalizers`` list carrying the ``metadata.resourceVersion`` it was computed from,
which the API server treats as a precondition (409 Conflict if the object changed since). A
conflict re-reads the object from the server and tries again. (controller-runtime leaves this
to the caller: ``controllerutil.AddFinalizer``/``RemoveFinalizer`` edit the object in memory
and the caller's ``Update`` carries the resourceVersion; kube-rs guards its JSON patches with
``test`` operations, which fail with 422 instead of 409.)

Server-side apply is not used: an apply of only the finalizer would re-create an object deleted
meanwhile, and a field manager shared with the controller's other applies would drop their
fields.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._listwatch import Resource, as_resource
from .._names import qualified_name_problems
from .._objects import KubeObject
from .._wire._verbs import PatchType
from ..errors import ConflictError, NotFoundError
from ._workers import Result

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = ["Finalizer"]

logger = logging.getLogger(__name__)

#: ``async def apply(obj) -> Result | None`` and ``async def cleanup(obj) -> Result | None``.
Handler = Callable[[KubeObject], Awaitable[Result | None]]


def _check_name(name: str) -> None:
    """apimachinery's ``ValidateFinalizerName``: a qualified name — and domain-qualified, as
    the API server warns for any other (``example.com/cleanup``)."""
    problems = qualified_name_problems(name)
    if "/" not in name:
        problems.append("it needs a domain prefix")
    if problems:
        raise ValueError(
            f"finalizer {name!r} is not a domain-qualified name like 'example.com/cleanup': "
            + "; ".join(problems)
        )


def _finalizers(obj: Mapping[str, Any]) -> list[str]:
    metadata = obj.get("metadata")
    found = metadata.get("finalizers") if isinstance(metadata, Mapping) else None
    return [f for f in found if isinstance(f, str)] if isinstance(found, list) else []


def _deleting(obj: Mapping[str, Any]) -> bool:
    metadata = obj.get("metadata")
    return isinstance(metadata, Mapping) and bool(metadata.get("deletionTimestamp"))


def _finished(result: Result | None) -> bool:
    """Whether a cleanup's result means "done": not asking to be called again."""
    return result is None or not (
        result.requeue or (result.requeue_after is not None and result.requeue_after > 0)
    )


class Finalizer:
    """The finalizer ``name`` of one resource, added, honoured and removed inside a reconcile::

        finalizer = Finalizer(client, WIDGETS, "example.com/cleanup")

        async def reconcile(key: str) -> Result | None:
            widget = widgets.lister().get(name, namespace)
            if widget is None:
                return None
            return await finalizer.reconcile(widget, apply=configure, cleanup=tear_down)

    ``apply`` and ``cleanup`` must be idempotent: a cleanup that succeeded may run again when
    removing the finalizer failed, and either may be cancelled half-way (a controller
    stopping). An exception from either propagates, so the controller retries the key with its
    rate limiter's backoff; a failed cleanup leaves the finalizer in place, and the object with
    it. The guarantee (kube-rs's): once ``apply`` has started for an object, the object is not
    gone before a ``cleanup`` of it succeeded — unless someone else removes the finalizer.

    :param client: writes (and re-reads after a conflict) go through it.
    :param resource: the objects' resource (``Resource("example.com", "v1", "widgets")``,
        ``"deployments.apps"``).
    :param name: the finalizer, domain-qualified: ``"example.com/cleanup"``.
    :param field_manager: the field manager of the patches. Default None: the server's
        default (from the User-Agent).
    :param conflict_retries: how many times a write that met a conflict (409) re-reads the
        object and tries again before the :class:`~aioinformer.errors.ConflictError` is
        raised (to the controller, which retries the key later). Default 5, as client-go's
        ``retry.DefaultRetry``.
    :raises ValueError: for a finalizer name the API server would refuse or warn about, or a
        negative ``conflict_retries``.
    """

    def __init__(
        self,
        client: KubeClient,
        resource: Resource | str,
        name: str,
        *,
        field_manager: str | None = None,
        conflict_retries: int = 5,
    ) -> None:
        _check_name(name)
        if conflict_retries < 0:
            raise ValueError("conflict_retries must not be negative")
        self._client = client
        #: The resource whose objects carry the finalizer.
        self.resource = as_resource(resource)
        #: The finalizer's name.
        self.name = name
        self.field_manager = field_manager
        self.conflict_retries = conflict_retries

    def __repr__(self) -> str:
        return f"<Finalizer {self.name!r} of {self.resource}>"

    def present(self, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` carries this finalizer."""
        return self.name in _finalizers(obj)

    async def reconcile(
        self,
        obj: KubeObject,
        *,
        cleanup: Handler,
        apply: Handler | None = None,
    ) -> Result | None:
        """One reconcile of ``obj`` under this finalizer (the table in the module docs).

        :param obj: the object as read (from a cache: it is not changed).
        :param cleanup: ``async def cleanup(obj) -> Result | None``, called while ``obj`` is
            being deleted and still has the finalizer. Returning None or ``Result()`` means
            done: the finalizer is removed. Returning a Result that asks to be called again
            (``requeue=True`` or ``requeue_after=s``) keeps the finalizer, and that Result is
            returned (the controller calls again later). Raising keeps the finalizer too.
        :param apply: ``async def apply(obj) -> Result | None``, called while ``obj`` lives,
            once it has the finalizer (with the object as written when it was just added).
            Default None: only add the finalizer.
        :returns: what ``apply`` or ``cleanup`` returned; None otherwise.
        :raises ConflictError: a write kept meeting conflicts (``conflict_retries`` times).
        """
        if _deleting(obj):
            if not self.present(obj):
                return None
            result = await cleanup(obj)
            if not _finished(result):
                return result
            await self.remove(obj)
            return result
        if not self.present(obj):
            written = await self.add(obj)
            if written is None or _deleting(written) or not self.present(written):
                return None  # gone, or being deleted before we could hold it: nothing to do
            obj = written
        if apply is None:
            return None
        return await apply(obj)

    async def add(self, obj: KubeObject) -> KubeObject | None:
        """Add the finalizer to ``obj`` (kept last) unless it is there; returns the object as
        stored after the write (``obj`` itself when nothing was written), or None when it is
        gone. An object being deleted is not given the finalizer (the API server forbids new
        finalizers then); it is returned as read.

        :raises ConflictError: the write kept meeting conflicts.
        """
        return await self._write(obj, adding=True)

    async def remove(self, obj: KubeObject) -> KubeObject | None:
        """Remove the finalizer from ``obj`` if it is there; returns the object as stored after
        the write (``obj`` itself when nothing was written), or None when it is gone (removing
        the last finalizer of an object being deleted lets it go).

        :raises ConflictError: the write kept meeting conflicts.
        """
        return await self._write(obj, adding=False)

    async def _write(self, obj: KubeObject, *, adding: bool) -> KubeObject | None:
        attempt = 0
        current: KubeObject = obj
        uid = (obj.get("metadata") or {}).get("uid")
        while True:
            finalizers = _finalizers(current)
            if adding:
                if self.name in finalizers or _deleting(current):
                    return current
                wanted: list[str] | None = [*finalizers, self.name]
            else:
                if self.name not in finalizers:
                    return current
                wanted = [f for f in finalizers if f != self.name] or None
            metadata = current.get("metadata") or {}
            name, namespace = metadata.get("name"), metadata.get("namespace") or None
            version = metadata.get("resourceVersion")
            if not name or not version:
                raise ValueError("the object needs metadata.name and metadata.resourceVersion")
            patch = {"metadata": {"resourceVersion": version, "finalizers": wanted}}
            try:
                written = await self._client.patch(
                    self.resource,
                    name,
                    patch,
                    namespace=namespace,
                    patch_type=PatchType.MERGE,
                    field_manager=self.field_manager,
                )
            except NotFoundError:
                return None
            except ConflictError:
                if attempt >= self.conflict_retries:
                    raise
                attempt += 1
                logger.debug(
                    "finalizer %s: %s of %s/%s met a conflict; re-reading (attempt %d)",
                    self.name,
                    "adding" if adding else "removing",
                    namespace or "",
                    name,
                    attempt,
                )
                try:
                    current = await self._client.get(self.resource, name, namespace=namespace)
                except NotFoundError:
                    return None
                if uid and (current.get("metadata") or {}).get("uid") != uid:
                    return None  # deleted and created again: another object, another reconcile
                continue
            logger.debug(
                "finalizer %s %s %s/%s",
                self.name,
                "added to" if adding else "removed from",
                namespace or "",
                name,
            )
            # Removing the last finalizer of an object being deleted deletes it: the answer is
            # its final state (or a Status), not an object that still exists.
            if not adding and _deleting(current) and wanted is None:
                return None
            return written
