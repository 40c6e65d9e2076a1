"""Validation of ``metadata`` and of the shared structures: labels, annotations, selectors.

Ports of the behaviour of apimachinery's ``pkg/api/validation/objectmeta.go``
(``ValidateObjectMetaAccessor``, ``ValidateObjectMetaAccessorUpdate``, ``ValidateAnnotations``,
``ValidateOwnerReferences``, ``ValidateFinalizers``, ``ValidateImmutableField``) and
``pkg/apis/meta/v1/validation`` (``ValidateLabels``, ``ValidateLabelSelector``). Objects are
plain decoded JSON; absent and empty values count alike, as they do for Go's zero values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._content import (
    NameFunc,
    is_label_value,
    is_qualified_name,
    name_is_dns_label,
    name_is_dns_subdomain,
)
from ._fielderrors import FieldError, forbidden, invalid, not_supported, required, too_long

__all__ = [
    "as_list",
    "as_map",
    "FIELD_IMMUTABLE",
    "IS_NEGATIVE",
    "immutable",
    "label_selector_matches",
    "nonnegative",
    "one_of",
    "semantic",
    "validate_annotations",
    "validate_label_selector",
    "validate_labels",
    "validate_object_meta",
    "validate_object_meta_update",
]

#: ``apivalidation.FieldImmutableErrorMsg``.
FIELD_IMMUTABLE = "field is immutable"
#: ``IsNegativeErrorMsg``.
IS_NEGATIVE = "must be greater than or equal to 0"
_ANNOTATIONS_LIMIT = 256 * 1024
_ORPHAN, _FOREGROUND = "orphan", "foregroundDeletion"


def as_map(value: Any) -> Mapping[str, Any]:
    """The value when it is an object, else an empty one (absent and null count as empty)."""
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    """The value when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


_map, _list = as_map, as_list


def one_of(value: Any, path: str, valid: list[str]) -> list[FieldError]:
    """The common enum check: ``Required value`` when unset, ``Unsupported value: …:
    supported values: …`` when not one of ``valid`` (listed in the order given)."""
    if not value:
        return [required(path)]
    if value not in valid:
        return [not_supported(path, value, valid)]
    return []


def nonnegative(value: Any, path: str) -> list[FieldError]:
    """``ValidateNonnegativeField``."""
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [invalid(path, value, IS_NEGATIVE)]
    return []


def immutable(new: Any, old: Any, path: str) -> list[FieldError]:
    """``ValidateImmutableField``: ``Invalid value: <new>: field is immutable``."""
    if semantic(new) != semantic(old):
        return [invalid(path, new, FIELD_IMMUTABLE)]
    return []


def semantic(value: Any) -> Any:
    """A value as ``apiequality.Semantic.DeepEqual`` compares it: null, empty lists and empty
    maps equal absence (objects are compared as the server encodes them, without zero-valued
    plain fields)."""
    if isinstance(value, Mapping):
        cleaned = {k: semantic(v) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if v is not None} or None
    if isinstance(value, list):
        return [semantic(v) for v in value] or None
    return value


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    """``ValidateLabels``: every key a qualified name, every value a label value."""
    errors: list[FieldError] = []
    for key, value in _map(labels).items():
        errors.extend(invalid(path, key, msg) for msg in is_qualified_name(key))
        text = value if isinstance(value, str) else ""
        errors.extend(invalid(path, text, msg) for msg in is_label_value(text))
    return errors


def validate_annotations(annotations: Any, path: str) -> list[FieldError]:
    """``ValidateAnnotations``: qualified-name keys (any case), 256 KiB in total."""
    errors: list[FieldError] = []
    total = 0
    for key, value in _map(annotations).items():
        errors.extend(invalid(path, key, msg) for msg in is_qualified_name(key.lower()))
        total += len(key.encode()) + len(str(value or "").encode())
    if total > _ANNOTATIONS_LIMIT:
        errors.append(too_long(path, _ANNOTATIONS_LIMIT))
    return errors


def validate_label_selector(selector: Any, path: str) -> list[FieldError]:
    """``ValidateLabelSelector`` (strict: values must be valid label values)."""
    if not isinstance(selector, Mapping):
        return []
    errors = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(_list(selector.get("matchExpressions"))):
        where = f"{path}.matchExpressions[{i}]"
        expr = _map(expr)
        operator, values = expr.get("operator") or "", _list(expr.get("values"))
        if operator in ("In", "NotIn"):
            if not values:
                errors.append(
                    required(
                        f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errors.append(
                    forbidden(
                        f"{where}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errors.append(invalid(f"{where}.operator", operator, "not a valid selector operator"))
        key = str(expr.get("key") or "")
        errors.extend(invalid(f"{where}.key", key, msg) for msg in is_qualified_name(key))
        for j, value in enumerate(values):
            text = str(value)
            errors.extend(invalid(f"{where}.values[{j}]", text, m) for m in is_label_value(text))
    return errors


def label_selector_matches(selector: Any, labels: Any) -> bool:
    """``LabelSelectorAsSelector(selector).Matches(labels)``: a null selector matches nothing,
    an empty one everything."""
    if not isinstance(selector, Mapping):
        return False
    have = _map(labels)
    for key, value in _map(selector.get("matchLabels")).items():
        if have.get(key) != value:
            return False
    for expr in _list(selector.get("matchExpressions")):
        expr = _map(expr)
        key, operator = str(expr.get("key")), expr.get("operator")
        values = _list(expr.get("values"))
        present = key in have
        if operator == "In" and not (present and have[key] in values):
            return False
        if operator == "NotIn" and present and have[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _owner_references(refs: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    controller = ""
    for i, ref in enumerate(_list(refs)):
        ref = _map(ref)
        where = f"{path}[{i}]"
        api_version = str(ref.get("apiVersion") or "")
        if not api_version:
            errors.append(required(f"{where}.apiVersion", "must not be empty"))
        elif api_version.count("/") > 1 or api_version.endswith("/"):
            errors.append(
                invalid(
                    f"{where}.apiVersion", api_version, "must be <group>/<version> or <version>"
                )
            )
        for name in ("kind", "name", "uid"):
            if not ref.get(name):
                errors.append(required(f"{where}.{name}", "must not be empty"))
        if api_version == "v1" and ref.get("kind") == "Event":
            errors.append(
                invalid(where, dict(ref), "/v1, Kind=Event is disallowed from being an owner")
            )
        if ref.get("controller") is True:
            current = f"{ref.get('kind') or ''}/{ref.get('name') or ''}"
            if controller:
                errors.append(
                    invalid(
                        path,
                        refs,
                        'Only one reference can have Controller set to true. Found "true" in '
                        f"references for {controller} and {current}",
                    )
                )
            else:
                controller = current
    return errors


def _finalizers(finalizers: Any, path: str) -> list[FieldError]:
    items = [str(f) for f in _list(finalizers)]
    errors = [invalid(path, f, msg) for f in items for msg in is_qualified_name(f)]
    if _ORPHAN in items and _FOREGROUND in items:
        errors.append(
            invalid(path, items, f"finalizer {_ORPHAN} and {_FOREGROUND} cannot be both set")
        )
    return errors


def _managed_fields(entries: Any, path: str) -> list[FieldError]:
    errors = []
    for i, entry in enumerate(_list(entries)):
        entry = _map(entry)
        where = f"{path}[{i}]"
        operation = entry.get("operation") or ""
        if not operation:
            errors.append(required(f"{where}.operation", "must not be empty"))
        elif operation not in ("Apply", "Update"):
            errors.append(not_supported(f"{where}.operation", operation, ["Apply", "Update"]))
        fields_type = entry.get("fieldsType") or ""
        if fields_type and fields_type != "FieldsV1":
            errors.append(invalid(f"{where}.fieldsType", fields_type, "must be `FieldsV1`"))
    return errors


def _common(meta: Mapping[str, Any], namespaced: bool, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    namespace = str(meta.get("namespace") or "")
    if namespaced:
        if not namespace:
            errors.append(required(f"{path}.namespace"))
        else:
            errors.extend(
                invalid(f"{path}.namespace", namespace, msg)
                for msg in name_is_dns_label(namespace, False)
            )
    elif namespace:
        errors.append(forbidden(f"{path}.namespace", "not allowed on this type"))
    errors.extend(nonnegative(meta.get("generation"), f"{path}.generation"))
    errors.extend(validate_labels(meta.get("labels"), f"{path}.labels"))
    errors.extend(validate_annotations(meta.get("annotations"), f"{path}.annotations"))
    errors.extend(_owner_references(meta.get("ownerReferences"), f"{path}.ownerReferences"))
    errors.extend(_finalizers(meta.get("finalizers"), f"{path}.finalizers"))
    errors.extend(_managed_fields(meta.get("managedFields"), f"{path}.managedFields"))
    return errors


def validate_object_meta(
    meta: Any,
    *,
    namespaced: bool,
    name_fn: NameFunc = name_is_dns_subdomain,
    path: str = "metadata",
) -> list[FieldError]:
    """``ValidateObjectMeta`` on create (after name generation): ``generateName`` and ``name``
    by the kind's rule, the namespace, labels, annotations, owners and finalizers."""
    meta = _map(meta)
    errors: list[FieldError] = []
    generate_name = str(meta.get("generateName") or "")
    if generate_name:
        errors.extend(
            invalid(f"{path}.generateName", generate_name, msg)
            for msg in name_fn(generate_name, True)
        )
    name = str(meta.get("name") or "")
    if not name:
        errors.append(required(f"{path}.name", "name or generateName is required"))
    else:
        errors.extend(invalid(f"{path}.name", name, msg) for msg in name_fn(name, False))
    return errors + _common(meta, namespaced, path)


def validate_object_meta_update(new: Any, old: Any, path: str = "metadata") -> list[FieldError]:
    """``ValidateObjectMetaAccessorUpdate``: no new finalizers while deleting, a resource
    version, no decreasing generation, immutable name, namespace, uid, creation and deletion
    times; then labels, annotations, owners and managed fields."""
    new, old = _map(new), _map(old)
    errors: list[FieldError] = []
    if old.get("deletionTimestamp"):
        added = sorted(set(_list(new.get("finalizers"))) - set(_list(old.get("finalizers"))))
        if added:
            quoted = ", ".join(f'"{f}"' for f in added)
            errors.append(
                forbidden(
                    f"{path}.finalizers",
                    "no new finalizers can be added if the object is being deleted, found new "
                    f"finalizers []string{{{quoted}}}",
                )
            )
    if not new.get("resourceVersion"):
        errors.append(invalid(f"{path}.resourceVersion", "", "must be specified for an update"))
    generation, old_generation = new.get("generation") or 0, old.get("generation") or 0
    errors.extend(nonnegative(generation, f"{path}.generation"))
    if (
        isinstance(generation, int)
        and isinstance(old_generation, int)
        and generation < old_generation
    ):
        errors.append(invalid(f"{path}.generation", generation, "must not be decremented"))
    for name in (
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ):
        errors.extend(immutable(new.get(name), old.get(name), f"{path}.{name}"))
    errors.extend(validate_labels(new.get("labels"), f"{path}.labels"))
    errors.extend(validate_annotations(new.get("annotations"), f"{path}.annotations"))
    errors.extend(_owner_references(new.get("ownerReferences"), f"{path}.ownerReferences"))
    errors.extend(_managed_fields(new.get("managedFields"), f"{path}.managedFields"))
    return errors
