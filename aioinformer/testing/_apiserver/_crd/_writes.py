"""The write path of CustomResourceDefinitions, as three calls for the fake's storage.

A CRD request goes through the steps a real server takes (apiserver ``rest.BeforeCreate``/
``rest.BeforeUpdate`` with apiextensions-apiserver's CRD strategies; ``…`` marks what the
caller does):

* create: … decode the body as the built-in kind → :func:`crd_before_create` (defaults,
  system metadata, ``PrepareForCreate``, validation, warnings) → store → the controllers:
  :func:`~._lifecycle.accepted_status` written as a status update, after which the
  resource is served (:class:`~._kind.CustomKind`, discovery from
  :func:`~._lifecycle.discovery_resources`);
* update (PUT or patched): … decode → :func:`crd_before_update` → store (and rebuild the
  serving view);
* status update: … decode → :func:`crd_before_status_update` → store;
* every read: :func:`~._lifecycle.default_crd` (defaults apply on each decode).

Each raises :class:`~._api._failure.StatusFailure` 422
``CustomResourceDefinition.apiextensions.k8s.io "<name>" is invalid: …`` and returns the ``Warning``
texts to send. CRDs, like custom resources, allow no unconditional update: an update without
``metadata.resourceVersion`` is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._api._failure import StatusFailure
from .._registry._strategy import begin_create, begin_update, generate_name
from .._validation._content import is_path_segment_name
from .._validation._fielderrors import FieldError, invalid, invalid_failure
from .._validation._meta import as_map, validate_object_meta, validate_object_meta_update
from ._lifecycle import (
    crd_warnings,
    default_crd,
    is_established,
    prepare_crd_create,
    prepare_crd_status_update,
    prepare_crd_update,
)
from ._validation import names_errors, validate_crd, validate_crd_update

__all__ = ["crd_before_create", "crd_before_status_update", "crd_before_update"]

_GROUP, _KIND = "apiextensions.k8s.io", "CustomResourceDefinition"


def _fail(crd: dict[str, Any], errors: list[FieldError]) -> StatusFailure:
    name = str(as_map(crd.get("metadata")).get("name") or "")
    return invalid_failure(_GROUP, _KIND, name, errors)


def _path_segment(name: str, prefix: bool) -> list[str]:
    return is_path_segment_name(name, prefix)


def _require_version(crd: dict[str, Any]) -> None:
    """The store's check: CRDs allow no unconditional update."""
    if not as_map(crd.get("metadata")).get("resourceVersion"):
        errors = [invalid("metadata.resourceVersion", "", "must be specified for an update")]
        raise _fail(crd, errors)


def _common(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """``validateCommonFields`` of ``rest.BeforeUpdate``."""
    meta = new.get("metadata")
    errors = validate_object_meta(meta, namespaced=False, name_fn=_path_segment)
    return errors + validate_object_meta_update(meta, old.get("metadata"))


def crd_before_create(
    crd: dict[str, Any], *, uid: str, now: str, name: Callable[[str], str] = generate_name
) -> list[str]:
    """``rest.BeforeCreate`` of a CRD, in place.

    :raises StatusFailure: 422 ``Invalid``.
    """
    default_crd(crd)
    begin_create(crd, uid=uid, now=now, name=name)
    prepare_crd_create(crd)
    errors = validate_crd(crd)
    if errors:
        raise _fail(crd, errors)
    return crd_warnings(crd)


def crd_before_update(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    """``rest.BeforeUpdate`` of a CRD's main resource, in place (``old`` as stored).

    :raises StatusFailure: 422 ``Invalid``.
    """
    _require_version(new)
    default_crd(new)
    begin_update(new, old)
    prepare_crd_update(new, old)
    errors = _common(new, old)
    errors += validate_crd_update(new, old, established=is_established(old))
    if errors:
        raise _fail(new, errors)
    return crd_warnings(new, old)


def crd_before_status_update(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    """``rest.BeforeUpdate`` with the CRD status strategy, in place: the stored spec, then
    ``ValidateUpdateCustomResourceDefinitionStatus``.

    :raises StatusFailure: 422 ``Invalid``.
    """
    _require_version(new)
    default_crd(new)
    begin_update(new, old)
    prepare_crd_status_update(new, old)
    errors = _common(new, old)
    errors += validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    status = as_map(new.get("status"))
    errors += names_errors(as_map(status.get("acceptedNames")), "status.acceptedNames")
    if errors:
        raise _fail(new, errors)
    return []
