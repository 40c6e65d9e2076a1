"""Custom resources through a real API server's write and read path.

Ports of the behaviour of apiextensions-apiserver: the handler's codecs
(``customresource_handler.go``: ``schemaCoercingDecoder``, ``unstructuredSchemaCoercer``,
``unstructuredDefaulter``, the storage codec), the registry's strategies
(``registry/customresource``: ``strategy.go``, ``status_strategy.go``, ``validator.go``) and
``pkg/apiserver/schema/listtype``. One request goes through:

* :func:`decode_custom`: the body in the request's version: ``metadata`` through Go's
  ``ObjectMeta``, unknown fields pruned, non-nullable ``null`` s without default dropped,
  embedded resources coerced, defaults applied; unknown fields are answered per
  ``fieldValidation`` (``Strict``: 400 ``strict decoding error: unknown field "spec.foo"``;
  ``Warn``: warnings; ``Ignore``: nothing);
* :func:`before_custom_create` / :func:`before_custom_update` /
  :func:`before_custom_status_update`: system metadata, the strategy (``status`` dropped on
  create and kept on update when ``/status`` is served; a status write keeps all but
  ``status``; ``generation`` 1, then bumped by any change outside ``metadata`` and, with
  ``/status``, ``status``), validation: type meta, metadata (names are DNS subdomains), the
  schema (with ratcheting on update), the scale paths' values, embedded resources, list
  types ``set``/``map``, then the CEL rules of ``x-kubernetes-validations`` (:mod:`._cel`;
  on update and status update with ``oldSelf``), all answered as 422
  ``CronTab.stable.example.com "x" is invalid: …``;
* :func:`to_storage`: the storage version (``strategy: None`` changes only ``apiVersion``),
  pruned by its schema;
* :func:`read_custom`: what a read answers: pruned and defaulted by the storage version's
  schema, then converted to the requested version and pruned by its schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._api._failure import StatusFailure
from .._registry._strategy import (
    begin_create,
    begin_update,
    generate_name,
    prepare_create,
    prepare_status_update,
    prepare_update,
)
from .._registry._writerules import strict_failure_for_patch
from .._validation._content import is_path_segment_name, is_qualified_name
from .._validation._fielderrors import FieldError, duplicate, go_json, invalid, invalid_failure
from .._validation._fieldvalidation import duplicate_fields, strict_outcome
from .._validation._meta import validate_object_meta, validate_object_meta_update
from ._cel import BLOCKING_TYPES, blocking_error
from ._cel import validate as validate_rules
from ._kind import CustomKind, nested_value
from ._meta import DecodeError, coerce_embedded, decode_meta, validate_embedded
from ._schema import Schema, apply_defaults, json_copy, prune, prune_nulls
from ._values import validate_value

__all__ = [
    "before_custom_create",
    "before_custom_status_update",
    "before_custom_update",
    "decode_custom",
    "list_type_errors",
    "read_custom",
    "to_storage",
]

_STANDARD_FINALIZERS = ("orphan", "foregroundDeletion", "kubernetes")


def _coerce(
    kind: CustomKind,
    version: str,
    obj: dict[str, Any],
    *,
    strict: bool = False,
    drop_invalid: bool = False,
) -> list[str]:
    """``unstructuredSchemaCoercer.apply`` with ``version``'s schema: the unknown fields.

    :raises DecodeError: what makes the decoder refuse the object.
    """
    for key in ("kind", "apiVersion"):
        if key in obj and not isinstance(obj[key], str):
            _, _, problem = nested_value(obj, f".{key}", str)
            raise DecodeError(problem)
    unknown: list[str] = []
    has_meta = "metadata" in obj
    meta: dict[str, Any] = {}
    if has_meta:
        meta, unknown = decode_meta(obj["metadata"], strict=strict, drop_invalid=drop_invalid)
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    if group == kind.group and obj.get("kind") == kind.kind:
        schema = _schema(kind, version)
        if not kind.preserve_unknown:
            prune(obj, schema, root=True, found=unknown if strict else None)
            prune_nulls(obj, schema)
        found: list[str] | None = [] if strict else None
        refused = coerce_embedded(obj, schema, drop_invalid=drop_invalid, found=found)
        if refused is not None:
            raise DecodeError(str(refused))
        unknown += sorted(found or ())
        if drop_invalid and not meta.get("generation"):
            meta["generation"] = 1
    if has_meta:
        obj["metadata"] = meta
    return unknown


def _schema(kind: CustomKind, version: str) -> Schema | None:
    entry = kind.versions.get(version)
    return None if entry is None else entry.schema


def decode_custom(
    kind: CustomKind,
    version: str,
    body: Any,
    *,
    raw: bytes | str | None = None,
    directive: str = "Warn",
    operation: str = "create",
    patch: Any = None,
) -> tuple[dict[str, Any], list[str]]:
    """A request body (or a patched object) decoded in ``version`` and defaulted.

    :param raw: the body as sent, to find repeated keys (not for patches' results).
    :param directive: ``fieldValidation`` (``Strict``, ``Warn``, ``Ignore``).
    :param operation: ``create``/``update``, or the patch type (``json``, ``merge``,
        ``apply``), which decides how failures are answered.
    :param patch: the patch as sent (shown in a patch's failure).
    :returns: the object and the ``Warning`` texts to send.
    :raises StatusFailure: 400 for a body Go refuses or ``Strict`` problems (422 for patches).
    """
    if not isinstance(body, dict):
        raise StatusFailure.bad_request("the body of the request must be a JSON object")
    obj = json_copy(body)
    strict = directive != "Ignore"
    problems = duplicate_fields(raw) if raw is not None and strict else []
    try:
        unknown = _coerce(kind, version, obj, strict=strict)
    except DecodeError as error:
        if operation in ("create", "update"):
            raise StatusFailure.bad_request(
                f'{kind.kind} in version "{version}" cannot be handled as a {kind.kind}: {error}'
            ) from None
        raise strict_failure_for_patch(str(error), body, operation) from None
    problems += [f'unknown field "{path}"' for path in unknown]
    warnings = strict_outcome(
        problems,
        directive=directive,
        operation=operation,
        kind=kind.kind,
        version=version,
        patched=patch if patch is not None else body,
    )
    apply_defaults(obj, _schema(kind, version))
    return obj, warnings


def _type_meta(kind: CustomKind, version: str, obj: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateTypeMeta``."""
    errors = []
    if obj.get("kind") != kind.kind:
        errors.append(invalid("kind", obj.get("kind") or "", f"must be {kind.kind}"))
    wanted = kind.api_version(version)
    if obj.get("apiVersion") != wanted:
        errors.append(invalid("apiVersion", obj.get("apiVersion") or "", f"must be {wanted}"))
    return errors


def _scale_errors(
    kind: CustomKind, version: str, obj: Mapping[str, Any], spec: bool
) -> list[FieldError]:
    """``ValidateScaleSpec`` (``spec``) and ``ValidateScaleStatus``."""
    paths = kind.version(version).scale
    if paths is None:
        return []
    errors: list[FieldError] = []
    checks = [paths.status_replicas] if not spec else [paths.spec_replicas]
    for path in checks:
        value, _, problem = nested_value(obj, path, int)
        if problem:
            errors.append(invalid(path, 0, problem))
        elif isinstance(value, int) and value < 0:
            errors.append(invalid(path, value, "should be a non-negative integer"))
        elif isinstance(value, int) and value > 2**31 - 1:
            errors.append(invalid(path, value, "should be less than or equal to 2147483647"))
    if not spec and paths.label_selector:
        _, _, problem = nested_value(obj, paths.label_selector, str)
        if problem:
            errors.append(invalid(paths.label_selector, "", problem))
    return errors


def _set_key(value: Any) -> Any:
    if isinstance(value, dict | list):
        return ("json", go_json(value))
    return (type(value).__name__, value)


def _set_duplicates(values: list[Any]) -> list[int]:
    """``validateListSet``: the index of each value's second occurrence."""
    seen: dict[Any, int] = {}
    found = []
    for i, value in enumerate(values):
        key = _set_key(value)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            found.append(i)
    return found


def _map_list_errors(schema: Schema, items: list[Any], path: str) -> list[FieldError]:
    """``validateListMap``."""
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            return [
                invalid(f"{path}[{i}]", item, "must be an object for an array of list-type map")
            ]
    keys = schema.list_keys
    shown = []
    for item in items:
        present = {k: item[k] for k in keys if isinstance(item, dict) and k in item}
        shown.append(present)
    if len(keys) == 1:
        marks = [next(iter(s.values())) if s else ("unset",) for s in shown]
        return [duplicate(f"{path}[{i}]", shown[i]) for i in _set_duplicates(marks)]
    return [duplicate(f"{path}[{i}]", shown[i]) for i in _set_duplicates(shown)]


def _list_types(schema: Schema | None, value: Any, path: str) -> list[FieldError]:
    if schema is None:
        return []
    if isinstance(value, dict):
        return list_type_errors(schema, value, path)
    if not isinstance(value, list):
        return []
    errors: list[FieldError] = []
    if schema.list_type == "set":
        errors += [duplicate(f"{path}[{i}]", value[i]) for i in _set_duplicates(value)]
    elif schema.list_type == "map":
        errors += _map_list_errors(schema, value, path)
    for i, item in enumerate(value):
        errors += _list_types(schema.items, item, f"{path}[{i}]")
    return errors


def list_type_errors(
    schema: Schema | None, obj: Mapping[str, Any], path: str = ""
) -> list[FieldError]:
    """``ValidateListSetsAndMaps``: duplicates in lists of type ``set`` and ``map``."""
    if schema is None:
        return []
    errors: list[FieldError] = []
    if schema.additional is not None:
        for key, value in obj.items():
            errors += _list_types(schema.additional, value, f"{path}[{key}]")
    for key, value in obj.items():
        prop = (schema.properties or {}).get(key)
        if prop is not None:
            errors += _list_types(prop, value, f"{path}.{key}" if path else key)
    return errors


def _cel(
    kind: CustomKind,
    version: str,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    errors: list[FieldError],
    warnings: list[str],
) -> list[FieldError]:
    """The ``x-kubernetes-validations`` step of the strategies: the rules' errors, or (when
    ``errors`` already holds a blocking one, ``hasBlockingErr``) the note that they did not
    run. Errors ratcheted on unchanged values are added to ``warnings``."""
    rules = kind.version(version).rules
    if rules is None:
        return []
    if any(error.type in BLOCKING_TYPES for error in errors):
        return [blocking_error()]
    return validate_rules(rules, obj, old, warnings=warnings)


def _validate(
    kind: CustomKind,
    version: str,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    warnings: list[str],
) -> list[FieldError]:
    """``customResourceStrategy.Validate`` (``old`` None) or ``ValidateUpdate``."""
    errors = _type_meta(kind, version, obj)
    if errors:
        return errors
    schema = _schema(kind, version)
    if old is None:
        errors = validate_object_meta(obj.get("metadata"), namespaced=kind.namespaced)
        errors += validate_value(schema, obj)
    else:
        errors = validate_object_meta_update(obj.get("metadata"), old.get("metadata"))
        errors += validate_value(schema, obj, old=old)
    errors += _scale_errors(kind, version, obj, True) + _scale_errors(kind, version, obj, False)
    errors += validate_embedded(obj, schema)
    if old is None or not list_type_errors(schema, old):
        errors += list_type_errors(schema, obj)
    return errors + _cel(kind, version, obj, old, errors, warnings)


def _finalizer_warnings(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[str]:
    """``generateWarningsFromObj``: new finalizers that are not domain-qualified."""
    found = set((obj.get("metadata") or {}).get("finalizers") or ())
    if old is not None:
        found -= set((old.get("metadata") or {}).get("finalizers") or ())
    warnings = []
    for name in sorted(str(f) for f in found):
        prefix = f'metadata.finalizers: "{name}": '
        warnings += [prefix + problem for problem in is_qualified_name(name)]
        if "/" not in name and name not in _STANDARD_FINALIZERS:
            tail = " including a path (/)" if "." in name else ""
            warnings.append(
                f"{prefix}prefer a domain-qualified finalizer name{tail} to avoid accidental "
                "conflicts with other finalizer writers"
            )
    return warnings


def _fail(kind: CustomKind, obj: Mapping[str, Any], errors: list[FieldError]) -> StatusFailure:
    """422 ``Invalid`` for the object's own group and kind (``strategy.ObjectKinds``)."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    api_version, obj_kind = obj.get("apiVersion"), obj.get("kind")
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else kind.group
    shown = obj_kind if isinstance(obj_kind, str) else kind.kind
    return invalid_failure(group, shown, name, errors)


def _path_segment(name: str, prefix: bool) -> list[str]:
    return is_path_segment_name(name, prefix)


def _common(kind: CustomKind, new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``validateCommonFields`` of ``rest.BeforeUpdate``."""
    meta = new.get("metadata")
    errors = validate_object_meta(meta, namespaced=kind.namespaced, name_fn=_path_segment)
    return errors + validate_object_meta_update(meta, old.get("metadata"))


def before_custom_create(
    kind: CustomKind,
    version: str,
    obj: dict[str, Any],
    *,
    uid: str,
    now: str,
    name: Callable[[str], str] = generate_name,
) -> list[str]:
    """``rest.BeforeCreate`` with the custom resource strategy, in place.

    :returns: the warnings to send (finalizers that are not domain-qualified).
    :raises StatusFailure: 422 ``Invalid``.
    """
    begin_create(obj, uid=uid, now=now, name=name)
    status = kind.version(version).status
    prepare_create(kind.group, kind.kind, obj, builtin=False, status=status)
    warnings: list[str] = []
    errors = _validate(kind, version, obj, None, warnings)
    if errors:
        raise _fail(kind, obj, errors)
    return warnings + _finalizer_warnings(obj, None)


def _require_version(kind: CustomKind, obj: Mapping[str, Any]) -> None:
    """Custom resources allow no unconditional update."""
    if not (obj.get("metadata") or {}).get("resourceVersion"):
        errors = [invalid("metadata.resourceVersion", "", "must be specified for an update")]
        raise _fail(kind, obj, errors)


def before_custom_update(
    kind: CustomKind, version: str, new: dict[str, Any], old: dict[str, Any]
) -> list[str]:
    """``rest.BeforeUpdate`` for the main resource, in place (``old`` as read in ``version``).

    :raises StatusFailure: 422 ``Invalid`` (also for an update without ``resourceVersion``).
    """
    _require_version(kind, new)
    begin_update(new, old)
    status = kind.version(version).status
    prepare_update(kind.group, kind.kind, new, old, builtin=False, status=status)
    warnings: list[str] = []
    errors = _common(kind, new, old) + _validate(kind, version, new, old, warnings)
    if errors:
        raise _fail(kind, new, errors)
    return warnings + _finalizer_warnings(new, old)


def before_custom_status_update(
    kind: CustomKind, version: str, new: dict[str, Any], old: dict[str, Any]
) -> list[str]:
    """``rest.BeforeUpdate`` with the status strategy, in place: everything but ``status``
    (and ``managedFields``) comes from ``old``.

    :raises StatusFailure: 422 ``Invalid``.
    """
    _require_version(kind, new)
    begin_update(new, old)
    prepare_status_update(kind.group, kind.kind, new, old, builtin=False)
    warnings: list[str] = []
    errors = _common(kind, new, old)
    type_errors = _type_meta(kind, version, new)
    if type_errors:
        errors += type_errors
    else:
        errors += validate_object_meta_update(new.get("metadata"), old.get("metadata"))
        if "status" in new:
            entry = kind.version(version)
            errors += validate_value(
                entry.status_schema, new["status"], prefix="status", old=old.get("status")
            )
        errors += _scale_errors(kind, version, new, False)
        schema = _schema(kind, version)
        found = list_type_errors(schema, new)
        if found and not list_type_errors(schema, old):
            errors += found
        errors += _cel(kind, version, new, old, errors, warnings)
    if errors:
        raise _fail(kind, new, errors)
    return warnings


def to_storage(kind: CustomKind, obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object as stored: in the storage version, pruned by its schema."""
    stored: dict[str, Any] = json_copy(dict(obj))
    stored["apiVersion"] = kind.api_version(kind.storage)
    _coerce(kind, kind.storage, stored)
    return stored


def read_custom(kind: CustomKind, stored: Mapping[str, Any], version: str) -> dict[str, Any]:
    """What a read in ``version`` answers for a stored object: decoded with the storage
    version's schema (malformed metadata fields dropped, defaults applied), converted (only
    ``apiVersion`` changes) and pruned by ``version``'s schema."""
    obj: dict[str, Any] = json_copy(dict(stored))
    source = str(obj.get("apiVersion") or "").rpartition("/")[2] or kind.storage
    _coerce(kind, source, obj, drop_invalid=True)
    apply_defaults(obj, _schema(kind, source))
    if source != version:
        obj["apiVersion"] = kind.api_version(version)
        _coerce(kind, version, obj)
    return obj
