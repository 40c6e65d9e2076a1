"""The options and the answer of one write to the registry (:mod:`._rest`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, cast

import orjson

from ...._objects import KubeObject
from .._api._resources import ResourceInfo
from ._writerules import Kind, check_options, dry_run

__all__ = ["WriteOptions", "Written", "copy_json", "decoded", "kind_of"]


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
        check_options(
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


@functools.lru_cache(maxsize=1024)
def kind_of(info: ResourceInfo) -> Kind:
    """What the write rules need to know of a served resource."""
    return Kind(
        info.group,
        info.version,
        info.kind,
        info.namespaced,
        status_subresource="status" in info.subresources,
    )


def copy_json(obj: Any) -> Any:
    return orjson.loads(orjson.dumps(obj))


def decoded(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    """A custom resource's body is not rebuilt by decoding: copy it before the rules write."""
    return obj if kind.builtin else cast(dict[str, Any], copy_json(obj))
