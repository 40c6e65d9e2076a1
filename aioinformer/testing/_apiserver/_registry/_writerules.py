"""The write path of the built-in kinds: their :class:`._rest_types.ResourceStrategy`.

One request goes through these steps (``…`` marks what the caller, :mod:`._rest`, does):

* create: … the options checked → :func:`decode` of the body → :func:`before_create` →
  (``dryRun=All``: answer the result, store nothing) → store;
* update: … the options → :func:`decode` → … preconditions → :func:`before_update` → store;
* patch: … the options → … apply the patch to the stored object → :func:`decode` of the
  result (``operation`` the patch type) → :func:`before_update`;
* status update or patch: as above with :func:`before_status_update`.

Each function raises :class:`~._api._failure.StatusFailure` with the real answer (400 for bodies
the Go decoder refuses and for ``fieldValidation=Strict`` problems, 422 ``Invalid`` with the
causes) and returns the ``Warning`` texts to send
(:func:`.._validation._fieldvalidation.warning_header`). Kinds without a built-in schema (custom
resources served with ``FakeApiServer.register_resource``) skip decoding and defaulting.
:data:`BUILTIN` is these steps as the registry's strategy, with the built-in kinds' ``/scale``
(:mod:`._scale`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import orjson

from .._api._failure import StatusFailure
from .._api._resources import ResourceInfo
from .._schema._decode import DecodeError, decode_object
from .._schema._published import schemas
from .._validation._fielderrors import go_json, invalid, invalid_failure
from .._validation._fieldvalidation import directive as field_directive
from .._validation._fieldvalidation import duplicate_fields, go_format, strict_outcome
from .._validation._kinds import (
    validate_create,
    validate_status_update,
    validate_update,
    warnings_on_create,
)
from ._defaults import apply_defaults
from ._defaults_pod import admit_pod
from ._rest_types import WriteOptions
from ._scale import builtin_scale, builtin_scaled
from ._strategy import (
    begin_create,
    begin_update,
    generate_name,
    prepare_create,
    prepare_status_update,
    prepare_update,
)
from ._strategy_service import ServiceAllocator, keep_allocated

__all__ = [
    "BUILTIN",
    "BuiltinStrategy",
    "Kind",
    "before_create",
    "before_status_update",
    "before_update",
    "copy_json",
    "decode",
    "decoded",
    "kind_of",
    "stored_form",
    "strict_failure_for_patch",
]


@dataclass(frozen=True, slots=True)
class Kind:
    """What the write rules need to know of a resource.

    :param status_subresource: for custom resources: the CRD enables ``/status``.
    """

    group: str
    version: str
    kind: str
    namespaced: bool
    status_subresource: bool = False

    @property
    def builtin(self) -> bool:
        """Whether the kind has a built-in schema (else: a custom resource)."""
        return schemas().root(self.group, self.version, self.kind) is not None


def decode(
    kind: Kind,
    body: Any,
    *,
    raw: bytes | str | None = None,
    directive: str = "Warn",
    operation: str = "create",
    patch: Any = None,
) -> tuple[dict[str, Any], list[str]]:
    """Decode a body (or a patched object) into the kind, then default it.

    :param raw: the request body as sent, to find duplicate keys (not for patches' results).
    :param operation: ``create``/``update`` (a body) or the patch type (``json``, ``merge``,
        ``strategic``, ``apply``), which decides how ``Strict`` problems are answered.
    :param patch: a strategic patch as sent (its ``Strict`` error prints it).
    :returns: the object and the warnings to send.
    """
    if not kind.builtin:
        if not isinstance(body, dict):
            raise StatusFailure.bad_request("the body of the request must be a JSON object")
        return body, []
    problems = duplicate_fields(raw) if raw is not None and directive != "Ignore" else []
    try:
        decoded = decode_object(
            kind.group, kind.version, kind.kind, body, strict=directive != "Ignore"
        )
    except DecodeError as error:
        if operation in ("create", "update"):
            raise StatusFailure.bad_request(
                f'{kind.kind} in version "{kind.version}" cannot be handled as a '
                f"{kind.kind}: {error}"
            ) from None
        shown = patch if operation == "strategic" else body
        raise strict_failure_for_patch(str(error), shown, operation) from None
    problems = [f'unknown field "{path}"' for path in decoded.unknown] + problems
    warnings = strict_outcome(
        problems,
        directive=directive,
        operation=operation,
        kind=kind.kind,
        version=kind.version,
        patched=patch if operation == "strategic" else body,
    )
    obj = decoded.obj
    apply_defaults(kind.group, kind.version, kind.kind, obj)
    return obj, warnings


def strict_failure_for_patch(message: str, shown: Any, operation: str) -> StatusFailure:
    """A patched object the decoder refuses: 422 on the ``patch`` field."""
    text = go_format(shown) if operation == "strategic" else go_json(shown)
    return invalid_failure("", "", "", [invalid("patch", text, message)])


def stored_form(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    """The object as a read from storage returns it: decoded and defaulted again (this is how
    a real Job gets its labels and a PVC its ``Pending`` phase after ``PrepareForCreate``)."""
    if not kind.builtin:
        return obj
    result = decode_object(kind.group, kind.version, kind.kind, obj, strict=False).obj
    apply_defaults(kind.group, kind.version, kind.kind, result)
    return result


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("name") or "") if isinstance(meta, dict) else ""


def before_create(
    kind: Kind,
    obj: dict[str, Any],
    *,
    uid: str,
    now: str,
    name: Callable[[str], str] = generate_name,
    services: ServiceAllocator | None = None,
    dry_run: bool = False,
) -> list[str]:
    """System metadata, name generation, admission, ``PrepareForCreate`` and validation, in
    place; the object ends in :func:`stored_form`.

    :param uid: the new object's uid; ``now``: its ``creationTimestamp`` (RFC 3339).
    :param services: allocates a Service's cluster IP and node ports (None: none given).
    :param dry_run: ``dryRun=All``: allocations are shown, not kept.
    :raises StatusFailure: 422 ``Invalid``.
    """
    begin_create(obj, uid=uid, now=now, name=name)
    if (kind.group, kind.kind) == ("", "Pod"):
        admit_pod(obj)
    builtin = kind.builtin
    prepare_create(kind.group, kind.kind, obj, builtin=builtin, status=kind.status_subresource)
    errors = validate_create(
        kind.group, kind.kind, obj, namespaced=kind.namespaced, builtin=builtin
    )
    if not errors and services is not None and (kind.group, kind.kind) == ("", "Service"):
        errors = services.allocate(obj, commit=not dry_run)
    if errors:
        raise invalid_failure(kind.group, kind.kind, _name(obj), errors)
    warnings = warnings_on_create(kind.group, kind.kind, obj) if builtin else []
    obj.update(stored_form(kind, obj))
    return warnings


def before_update(
    kind: Kind,
    new: dict[str, Any],
    old: dict[str, Any],
    *,
    services: ServiceAllocator | None = None,
    dry_run: bool = False,
) -> list[str]:
    """``rest.BeforeUpdate`` for the main resource, in place: metadata kept from ``old``,
    ``PrepareForUpdate`` (status kept, generation), validation (a Service first takes the
    allocations the update leaves out, and after validation gets the ones it adds).

    :raises StatusFailure: 422 ``Invalid``.
    """
    builtin = kind.builtin
    begin_update(new, old)
    service = (kind.group, kind.kind) == ("", "Service")
    if service:
        keep_allocated(new.setdefault("spec", {}), old.get("spec") or {})
    prepare_update(kind.group, kind.kind, new, old, builtin=builtin, status=kind.status_subresource)
    errors = validate_update(
        kind.group, kind.kind, new, old, namespaced=kind.namespaced, builtin=builtin
    )
    if not errors and service and services is not None:
        errors = services.allocate(new, old, commit=not dry_run)
    if errors:
        raise invalid_failure(kind.group, kind.kind, _name(new), errors)
    new.update(stored_form(kind, new))
    return []


def before_status_update(kind: Kind, new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    """``rest.BeforeUpdate`` with the kind's status strategy, in place.

    :raises StatusFailure: 422 ``Invalid``.
    """
    builtin = kind.builtin
    begin_update(new, old)
    prepare_status_update(kind.group, kind.kind, new, old, builtin=builtin)
    errors = validate_status_update(
        kind.group, kind.kind, new, old, namespaced=kind.namespaced, builtin=builtin
    )
    if errors:
        raise invalid_failure(kind.group, kind.kind, _name(new), errors)
    new.update(stored_form(kind, new))
    return []


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


class BuiltinStrategy:
    """The registry's strategy of the built-in kinds (and of custom resources served without
    a CRD): the steps above; objects are stored and read as they are."""

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
        kind = kind_of(info)
        directive = field_directive(options.field_validation)
        obj, warnings = decode(
            kind, body, raw=raw, directive=directive, operation=operation, patch=patch
        )
        return decoded(kind, obj), warnings

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
        return before_create(
            kind_of(info), obj, uid=uid, now=now, name=name, services=services, dry_run=dry_run
        )

    def before_update(
        self,
        info: ResourceInfo,
        new: dict[str, Any],
        old: dict[str, Any],
        *,
        services: ServiceAllocator,
        dry_run: bool,
    ) -> list[str]:
        return before_update(kind_of(info), new, old, services=services, dry_run=dry_run)

    def before_status_update(
        self, info: ResourceInfo, new: dict[str, Any], old: dict[str, Any]
    ) -> list[str]:
        return before_status_update(kind_of(info), new, old)

    def stored(self, info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
        return obj

    def view(self, info: ResourceInfo, obj: Mapping[str, Any]) -> Any:
        return obj

    def view_result(self, info: ResourceInfo, result: Mapping[str, Any]) -> Any:
        return result

    def scale(self, info: ResourceInfo, obj: Mapping[str, Any], *, for_update: bool) -> Any:
        return builtin_scale(info, obj)

    def scaled(
        self, info: ResourceInfo, old: dict[str, Any], scale: dict[str, Any]
    ) -> dict[str, Any]:
        return builtin_scaled(old, scale)


#: The strategy of every resource no delegate claims.
BUILTIN = BuiltinStrategy()
