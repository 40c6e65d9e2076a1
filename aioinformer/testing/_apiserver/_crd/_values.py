"""Validation of a custom resource against its schema, with kube-openapi's messages.

A port of the behaviour of kube-openapi's ``pkg/validation/validate`` (``SchemaValidator``
and its type, ``allOf``/``anyOf``/``oneOf``/``not``, string, format, number, slice, enum and
object validators, messages from ``pkg/validation/errors``) as apiextensions-apiserver uses it
(``pkg/apiserver/validation``: ``ValidateCustomResource``, ``kubeOpenAPIResultToFieldErrors``,
the ratcheting validator of ``ratcheting.go``):

* paths are kube-openapi's (``spec.replicas``, ``spec.items[0]``, ``spec.labels.a.b``) and
  are also the field of the error; messages say ``… in body …``;
* ``spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer:
  "string"`` (the bad value of a type error is the type found, as in the real server);
* ``required`` gives ``Required value``, ``enum`` ``Unsupported value``, ``maxLength`` ``Too
  long``, ``maxItems``/``maxProperties`` ``Too many``, everything else ``Invalid value``;
  errors without a field (``"spec" must validate at least one schema (anyOf)``) are reported
  on the validator's own path: ``<nil>`` for an object, ``status`` for a status update;
* on update, a value that equals its old value (correlated by field, and by key in lists of
  type map) keeps its errors to itself (``CRDValidationRatcheting``, GA since 1.33).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, NamedTuple

from .._validation._fielderrors import (
    FieldError,
    go_json,
    go_quote,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from ._formats import check_format, known_format
from ._schema import MISSING, Schema, same

__all__ = ["go_number", "validate_value"]

_TYPE, _REQUIRED, _ENUM, _TOO_LONG, _MAX_ITEMS, _MAX_PROPS, _OTHER, _PLAIN = range(8)
_INT32 = 2**31
_FLOAT32_MAX = 3.4028234663852886e38


class _Err(NamedTuple):
    code: int
    name: str
    value: Any
    message: str
    limit: Any = None


def go_number(value: int | float) -> str:
    """Go's ``%v`` of an ``int64`` or a ``float64`` (``1e+06``, ``0.5``, ``3``)."""
    if isinstance(value, int) or value != value or value in (float("inf"), float("-inf")):
        return str(value) if isinstance(value, int) else {"inf": "+Inf"}.get(str(value), "NaN")
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    point = len(digits) + exponent - 1
    minus = "-" if sign else ""
    if point < -4 or point >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if point < 0 else '+'}{abs(point):02d}"
    if point < 0:
        return f"{minus}0.{'0' * (-point - 1)}{text}"
    whole = text[: point + 1].ljust(point + 1, "0")
    rest = text[point + 1 :]
    return f"{minus}{whole}.{rest}" if rest else f"{minus}{whole}"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _json_integer(value: float) -> bool:
    """``swag.IsFloat64AJSONInteger``."""
    if value != value or abs(value) > 2.0**53:
        return False
    return value.is_integer() or abs(value - round(value)) < 1e-15 * abs(value)


def _type_of(value: Any) -> tuple[str, str]:
    if isinstance(value, bool):
        return "boolean", ""
    if isinstance(value, str):
        return "string", ""
    if isinstance(value, int):
        return "integer", "int64"
    if isinstance(value, float):
        return "number", "float64"
    return ("array", "") if isinstance(value, list) else ("object", "")


def _type_fail(name: str, type_name: str, found: str) -> _Err:
    return _Err(
        _TYPE, name, found, f"{name} in body must be of type {type_name}: {go_quote(found)}"
    )


def _check_type(s: Schema, data: Any, name: str, out: list[_Err]) -> None:
    types = s.types
    if data is None:
        if types and not s.nullable:
            out.append(_type_fail(name, ",".join(types), "null"))
        return
    found, fmt = _type_of(data)
    float_int = found == "number" and "integer" in types and _json_integer(data)
    int_float = found == "integer" and "number" in types
    compound = isinstance(data, str | list)
    if (
        not compound
        and s.format
        and not (found in types or fmt == s.format or float_int or int_float)
    ):
        out.append(_type_fail(name, s.format, fmt))
        return
    if not ("number" in types or "integer" in types) and s.format and compound:
        return
    if not (found in types or float_int or int_float):
        out.append(_type_fail(name, ",".join(types), found))


def _range_error(value: Any, type_name: str, fmt: str, prefix: str, name: str) -> _Err | None:
    """``IsValueValidAgainstRange``: the value fits the type and format."""
    ok = True
    if type_name == "integer":
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        bound = _INT32 if fmt == "int32" else 2**63
        ok = whole and -bound <= value < bound
    elif fmt == "float":
        ok = abs(value) <= _FLOAT32_MAX
    if ok:
        return None
    kind = f"with format {fmt}" if fmt else "(default format)"
    return _Err(_PLAIN, name, "", f"{prefix} value must be of type {type_name} {kind} in {name}")


def _number(s: Schema, data: int | float, name: str, out: list[_Err]) -> None:
    type_name = s.types[0] if len(s.types) == 1 and s.types[0] in ("integer", "number") else ""
    fmt = s.format if type_name else ""
    checked = _range_error(data, type_name, fmt, "Checked", name)
    if checked is not None:
        out.append(checked)
    if s.multiple_of is not None:
        factor = s.multiple_of
        native = _range_error(factor, type_name, fmt, "MultipleOf", name) is None
        if native and isinstance(data, int):
            whole = int(factor)
            if whole <= 0:
                out.append(_positive(name, whole))
            elif data % whole:
                out.append(_multiple(name, whole, data))
        elif factor <= 0:
            out.append(_positive(name, factor))
        elif not _json_integer(1 / factor * data if factor < 1 else data / factor):
            out.append(_multiple(name, factor, data))
    for limit, exclusive, word in (
        (s.minimum, s.exclusive_minimum, "greater"),
        (s.maximum, s.exclusive_maximum, "less"),
    ):
        if limit is None:
            continue
        native = _range_error(limit, type_name, fmt, "", name) is None
        bound: int | float = int(limit) if native and isinstance(data, int) else float(limit)
        low = word == "greater"
        bad = (
            (data <= bound if exclusive else data < bound)
            if low
            else (data >= bound if exclusive else data > bound)
        )
        if bad:
            than = f"{word} than" if exclusive else f"{word} than or equal to"
            text = f"{name} in body should be {than} {go_number(bound)}"
            out.append(_Err(_OTHER, name, data, text))


def _multiple(name: str, factor: int | float, data: Any) -> _Err:
    return _Err(_OTHER, name, data, f"{name} in body should be a multiple of {go_number(factor)}")


def _positive(name: str, factor: int | float) -> _Err:
    text = f"factor MultipleOf declared for {name} must be positive: {go_number(factor)}"
    return _Err(_OTHER, name, factor, text)


def _string(s: Schema, data: str, name: str, out: list[_Err]) -> None:
    length = len(data)
    if s.max_length is not None and length > s.max_length:
        out.append(_Err(_TOO_LONG, name, data, "", s.max_length))
    elif s.min_length is not None and length < s.min_length:
        text = f"{name} in body should be at least {s.min_length} chars long"
        out.append(_Err(_OTHER, name, data, text))
    elif s.regex is not None and s.regex.search(data) is None:
        out.append(_Err(_OTHER, name, data, f"{name} in body should match '{s.pattern}'"))
    if s.format and known_format(s.format) and not check_format(s.format, data):
        out.append(_type_fail(name, s.format, data))


def _enum_equal(data: Any, allowed: Any) -> bool:
    """``reflect`` conversion of the value to the enum value's type, then ``DeepEqual``."""
    if _is_number(data) and _is_number(allowed):
        converted = int(data) if isinstance(allowed, int) else float(data)
        return bool(converted == allowed)
    return same(data, allowed)


def _enum(s: Schema, data: Any, name: str, out: list[_Err]) -> None:
    assert s.enum is not None
    if data is not None and any(_enum_equal(data, allowed) for allowed in s.enum):
        return
    values = [v if isinstance(v, str) else go_json(v) for v in s.enum]
    out.append(_Err(_ENUM, name, "null" if data is None else data, "", values))


def _map_key(item: Any, keys: tuple[str, ...]) -> str | None:
    if not isinstance(item, dict):
        return None
    return go_json([item.get(k) for k in keys])


def _old_items(s: Schema, data: list[Any], old: Any) -> Iterator[Any]:
    """The old value correlated to each item (lists of type map only)."""
    if old is MISSING or not isinstance(old, list) or s.list_type != "map" or not s.list_keys:
        yield from (MISSING for _ in data)
        return
    by_key = {_map_key(item, s.list_keys): item for item in old}
    for item in data:
        key = _map_key(item, s.list_keys)
        yield by_key.get(key, MISSING) if key is not None else MISSING


def _slice(s: Schema, data: list[Any], name: str, old: Any, out: list[_Err]) -> None:
    if s.items is not None:
        for i, (item, was) in enumerate(zip(data, _old_items(s, data, old), strict=True)):
            _validate(s.items, item, f"{name}[{i}]", was, out)
    size = len(data)
    if s.min_items is not None and size < s.min_items:
        text = f"{name} in body should have at least {s.min_items} items"
        out.append(_Err(_OTHER, name, size, text))
    if s.max_items is not None and size > s.max_items:
        out.append(_Err(_MAX_ITEMS, name, size, "", s.max_items))
    if s.unique_items and any(same(a, b) for i, a in enumerate(data) for b in data[:i]):
        out.append(_Err(_OTHER, name, "", f"{name} in body shouldn't contain duplicates"))


def _object(s: Schema, data: dict[str, Any], name: str, old: Any, out: list[_Err]) -> None:
    count = len(data)
    if s.min_properties is not None and count < s.min_properties:
        text = f"{name} in body should have at least {s.min_properties} properties"
        out.append(_Err(_OTHER, name, count, text))
    if s.max_properties is not None and count > s.max_properties:
        out.append(_Err(_MAX_PROPS, name, count, "", s.max_properties))
    properties = s.properties or {}
    olds = old if isinstance(old, dict) else {}
    if s.additional_allows is False:
        for key in data:
            if key not in properties:
                text = f"{name}.{key} in body is a forbidden property"
                out.append(_Err(_OTHER, name, key, text))
    elif s.additional is not None:
        for key, value in data.items():
            if key not in properties:
                was = olds.get(key, MISSING)
                _validate(s.additional, value, f"{name}.{key}", was, out)
    for key, prop in properties.items():
        if key in data:
            was = MISSING if not name and key in ("apiVersion", "kind") else olds.get(key, MISSING)
            _validate(prop, data[key], f"{name}.{key}" if name else key, was, out)
    for key in s.required:
        if key not in data:
            out.append(_Err(_REQUIRED, f"{name}.{key}", None, ""))


def _composite(s: Schema, data: Any, name: str, out: list[_Err]) -> None:
    """``allOf``, ``anyOf``, ``oneOf``, ``not``."""
    quoted = go_quote(name)
    if s.any_of:
        results = [_run(sub, data, name) for sub in s.any_of]
        if all(results):
            out.append(
                _Err(_PLAIN, name, "", f"{quoted} must validate at least one schema (anyOf)")
            )
            out.extend(results[0])
    if s.one_of:
        results = [_run(sub, data, name) for sub in s.one_of]
        valid = sum(1 for result in results if not result)
        if valid != 1:
            found = "Found none valid" if not valid else f"Found {valid} valid alternatives"
            text = f"{quoted} must validate one and only one schema (oneOf). {found}"
            out.append(_Err(_PLAIN, name, "", text))
            if not valid:
                out.extend(results[0])
    if s.all_of:
        results = [_run(sub, data, name) for sub in s.all_of]
        for result in results:
            out.extend(result)
        failed = sum(1 for result in results if result)
        if failed:
            tail = ". None validated" if failed == len(results) else ""
            out.append(
                _Err(_PLAIN, name, "", f"{quoted} must validate all the schemas (allOf){tail}")
            )
    if s.not_ is not None and not _run(s.not_, data, name):
        out.append(_Err(_PLAIN, name, "", f"{quoted} must not validate the schema (not)"))


def _run(s: Schema, data: Any, name: str) -> list[_Err]:
    out: list[_Err] = []
    _validate(s, data, name, MISSING, out)
    return out


def _validate(s: Schema, data: Any, name: str, old: Any, out: list[_Err]) -> None:
    if old is not MISSING and same(data, old):
        return
    if data is None:
        _check_type(s, None, name, out)
        if s.enum:
            _enum(s, None, name, out)
        return
    if s.types or s.format:
        _check_type(s, data, name, out)
    if s.all_of or s.any_of or s.one_of or s.not_ is not None:
        _composite(s, data, name, out)
    if isinstance(data, str):
        _string(s, data, name, out)
    elif _is_number(data):
        _number(s, data, name, out)
    elif isinstance(data, list):
        _slice(s, data, name, old, out)
    if s.enum:
        _enum(s, data, name, out)
    if isinstance(data, dict):
        _object(s, data, name, old, out)


def _field(prefix: str | None, name: str) -> str:
    name = name[1:] if name.startswith(".") else name
    if not name:
        return "<nil>" if prefix is None else prefix
    return f"{prefix}.{name}" if prefix else name


def _to_field_error(prefix: str | None, err: _Err) -> FieldError:
    """``kubeOpenAPIResultToFieldErrors``."""
    if err.code == _PLAIN:
        return invalid("<nil>" if prefix is None else prefix, "", err.message)
    path = _field(prefix, err.name)
    if err.code == _REQUIRED:
        return required(path)
    if err.code == _ENUM:
        return not_supported(path, err.value, err.limit)
    if err.code == _TOO_LONG:
        return too_long(path, err.limit)
    if err.code in (_MAX_ITEMS, _MAX_PROPS):
        return too_many(path, err.value, err.limit)
    value = "" if err.value is None else err.value
    if err.code == _TYPE:
        return FieldError("FieldValueTypeInvalid", path, value, err.message)
    return invalid(path, value, err.message)


def validate_value(
    schema: Schema | None, value: Any, *, prefix: str | None = None, old: Any = MISSING
) -> list[FieldError]:
    """The errors of ``value`` (``ValidateCustomResource``, or with ``old`` given
    ``ValidateCustomResourceUpdate`` with ratcheting).

    :param prefix: the field path the validator reports under (``status`` for a status
        update, a schema's ``…default`` for a default); None for a whole object.
    """
    if schema is None:
        return []
    out: list[_Err] = []
    _validate(schema, value, "", old, out)
    return [_to_field_error(prefix, err) for err in out]
