"""The REST layer's vocabulary (:mod:`._rest`): the options and the answer of one write, the
strategy each resource is written and read with, and the hook through which a delegate API
server (apiextensions-apiserver, :mod:`.._crd`) registers into the registry.

kube-apiserver builds each resource's REST storage from a ``registry.Store`` and the kind's
strategy (``pkg/registry/<group>/<resource>/strategy.go``); the resources of a CRD are served
by a delegate, apiextensions-apiserver, with strategies of its own
(``apiextensions-apiserver/pkg/registry/customresource``). Here the registry asks every
:class:`RestDelegate` for the :class:`ResourceStrategy` of a resource, and falls back on the
built-in kinds' (:class:`._writerules.BuiltinStrategy`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .._api._objects import KubeObject
from .._api._resources import ResourceInfo
from .._validation._fieldvalidation import validate_options
from ._strategy_service import ServiceAllocator

__all__ = ["ResourceStrategy", "RestDelegate", "WriteOptions", "Written", "dry_run"]


def dry_run(values: Sequence[str]) -> bool:
    """Whether ``dryRun`` (validated with the options) asks not to store."""
    return "All" in values


@dataclass(frozen=True, kw_only=True, slots=True)
class WriteOptions:
    """The options of one write (a request's query parameters).

    :param field_manager: ``fieldManager`` (``""``: ``unknown``; required for apply).
    :param field_validation: ``fieldValidation``: ``Strict``, ``Warn``, ``Ignore`` or ``""``
        (``Warn``).
    :param dry_run: the ``dryRun`` values (``("All",)`` to store nothing).
    :param force: ``force`` (apply only).
    :param raw: the JSON body as sent, to find duplicate fields.
    """

    field_manager: str = ""
    field_validation: str = ""
    dry_run: tuple[str, ...] = ()
    force: bool | None = None
    raw: bytes | None = None

    @property
    def dry(self) -> bool:
        """``dryRun=All``: answer, store nothing."""
        return dry_run(self.dry_run)

    def check(self, kind: str, patch_type: str = "") -> None:
        """``Validate{Create,Update,Patch}Options`` (``kind``: ``CreateOptions``...).

        :raises StatusFailure: 422.
        """
        validate_options(
            kind,
            dry_run=self.dry_run,
            field_validation=self.field_validation,
            field_manager=self.field_manager,
            patch_type=patch_type,
            force=self.force,
        )


@dataclass(frozen=True, slots=True)
class Written:
    """The answer to a write.

    :ivar obj: the stored (or, for a dry run, the would-be) object.
    :ivar warnings: the ``Warning`` texts to send.
    :ivar created: an apply created the object (HTTP 201).
    :ivar gone: a delete removed the object (rather than marking it).
    """

    obj: KubeObject
    warnings: tuple[str, ...] = ()
    created: bool = False
    gone: bool = False


class ResourceStrategy(Protocol):
    """How the registry writes and reads the objects of one resource: its codec and its
    ``rest.RESTCreateStrategy``/``RESTUpdateStrategy`` (with the status strategy), its storage
    version, and its ``/scale`` subresource.

    The ``before_*`` steps work in place and return the ``Warning`` texts to send; each
    raises :class:`.._api._failure.StatusFailure` with the real answer (422 ``Invalid``...).
    """

    def decode(
        self,
        info: ResourceInfo,
        body: Any,
        options: WriteOptions,
        *,
        operation: str,
        raw: bytes | None = None,
        patch: Any = None,
    ) -> tuple[dict[str, Any], list[str]]:
        """A body (or a patched object) decoded and defaulted by the request's
        ``fieldValidation``, and the warnings; the object is the caller's to change.

        :param operation: ``create``/``update``/``apply`` or the patch type, which decides
            how ``Strict`` problems are answered.
        :param raw: the JSON body as sent, to find duplicate fields.
        :param patch: a patch as sent (a strategic patch's ``Strict`` error prints it).
        """
        ...

    def before_create(
        self,
        info: ResourceInfo,
        obj: dict[str, Any],
        *,
        uid: str,
        now: str,
        name: Callable[[str], str],
        services: ServiceAllocator,
        dry_run: bool,
    ) -> list[str]:
        """``rest.BeforeCreate``: system metadata, a generated name (``name(prefix)``),
        ``PrepareForCreate``, validation."""
        ...

    def before_update(
        self,
        info: ResourceInfo,
        new: dict[str, Any],
        old: dict[str, Any],
        *,
        services: ServiceAllocator,
        dry_run: bool,
    ) -> list[str]:
        """``rest.BeforeUpdate`` of the main resource (``old`` as a read answers it)."""
        ...

    def before_status_update(
        self, info: ResourceInfo, new: dict[str, Any], old: dict[str, Any]
    ) -> list[str]:
        """``rest.BeforeUpdate`` with the status strategy."""
        ...

    def stored(self, info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
        """The object as storage keeps it (a custom resource: in its storage version)."""
        ...

    def view(self, info: ResourceInfo, obj: Mapping[str, Any]) -> Any:
        """A stored object as a read in the resource's version answers it."""
        ...

    def view_result(self, info: ResourceInfo, result: Mapping[str, Any]) -> Any:
        """An object or a list of the resource as a read in its version answers it
        (``Status`` and other kinds unchanged)."""
        ...

    def scale(self, info: ResourceInfo, obj: Mapping[str, Any], *, for_update: bool) -> Any:
        """The ``autoscaling/v1`` ``Scale`` of an object (as a read answers it).

        :param for_update: the old Scale an update or patch starts from.
        """
        ...

    def scaled(
        self, info: ResourceInfo, old: dict[str, Any], scale: dict[str, Any]
    ) -> dict[str, Any]:
        """A copy of ``old`` with a ``Scale``'s replicas written into it, its
        ``resourceVersion`` the Scale's (a precondition; none: unconditional); the main
        resource's update rules run on the result."""
        ...


class RestDelegate(Protocol):
    """An API server the registry delegates resources to (kube-apiserver's delegation chain:
    apiextensions-apiserver serves CRDs and their custom resources). Registered with
    :meth:`._rest.RestStorage.add_delegate`."""

    def strategy(self, info: ResourceInfo) -> ResourceStrategy | None:
        """The strategy of a resource this delegate serves; None for the others."""
        ...

    def deletes(self, info: ResourceInfo) -> bool:
        """Whether this delegate deletes the objects of a resource itself (:meth:`delete`),
        for a DELETE that is not a dry run."""
        ...

    def delete(self, info: ResourceInfo, name: str, preconditions: Mapping[str, Any]) -> Written:
        """DELETE one object of a resource it :meth:`deletes` (options checked).

        :raises StatusFailure: 404, 409 (a precondition failed).
        """
        ...

    def written(self, info: ResourceInfo, obj: Mapping[str, Any], *, gone: bool) -> None:
        """An object of ``info`` was stored (``gone``: deleted); runs after every committed
        write of any resource, before the garbage collector hears of it."""
        ...
