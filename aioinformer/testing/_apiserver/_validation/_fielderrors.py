"""Field errors as the API server reports them, and the 422 ``Invalid`` Status built of them.

A port of the behaviour of apimachinery's ``pkg/util/validation/field`` (``Error``,
``ErrorBody``, ``ErrorList.ToAggregate``) and of ``errors.NewInvalid``:

* a cause is ``{"reason": <type>, "message": <body>, "field": <path>}``;
* the body of ``Required``/``Forbidden``/``TooLong``/``Internal`` is the type's text (and the
  detail); other types show the bad value: numbers and booleans as Go's ``%v``, strings as Go's
  ``%q``, anything else as Go's ``json.Marshal`` (sorted map keys, HTML-escaped);
* the message is ``<Kind>[.<group>] "<name>" is invalid: <aggregate>``, where the aggregate is
  the one error or ``[e1, e2, ...]``, duplicates removed (the causes keep them).

Field paths are plain strings in Go's ``field.Path`` spelling: ``spec.containers[0].name``,
``metadata.annotations[key]``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._api._failure import StatusFailure

__all__ = [
    "OMIT",
    "FieldError",
    "Printed",
    "aggregate",
    "duplicate",
    "forbidden",
    "go_json",
    "go_quote",
    "go_value",
    "internal",
    "invalid",
    "invalid_failure",
    "invalid_status",
    "not_found",
    "not_supported",
    "required",
    "too_long",
    "too_many",
]

#: A bad value that is not shown (``field.OmitValueType``).
OMIT: Any = object()

_TITLES = {
    "FieldValueNotFound": "Not found",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
    "FieldValueTooFew": "Too few",
    "InternalError": "Internal error",
    "FieldValueTypeInvalid": "Invalid value",
}
_NO_VALUE = frozenset(
    {"FieldValueRequired", "FieldValueForbidden", "FieldValueTooLong", "InternalError"}
)
_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPES |= {"\v": "\\v", '"': '\\"', "\\": "\\\\"}


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote``: printable characters kept, the others escaped."""
    out = ['"']
    for ch in text:
        escaped = _ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def go_json(value: Any) -> str:
    """Go's ``json.Marshal`` of a decoded JSON value: compact, map keys sorted, ``<``, ``>``
    and ``&`` escaped (objects print as maps do: a struct's fields come out sorted too)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True, default=str)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _go_float(value: float) -> str:
    if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, _, exponent = text.partition("e")
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa}e{sign}{exponent.lstrip('+-').zfill(2)}"
    return text


class Printed(str):
    """A bad value given as Go prints it, shown as is (a struct's ``%#v``, such as the
    ``apiextensions.ValidationRule{...}`` of a CEL rule that does not compile)."""

    __slots__ = ()


def go_value(value: Any) -> str:
    """A bad value as ``ErrorBody`` prints it."""
    if isinstance(value, Printed):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_json(value)


@dataclass(frozen=True, slots=True)
class FieldError:
    """One validation error (``field.Error``).

    :param type: the cause type, e.g. ``FieldValueRequired`` (a cause's ``reason``).
    :param field: the field path, e.g. ``spec.template.metadata.labels``.
    :param bad_value: the offending value (:data:`OMIT`: not shown).
    :param detail: the explanation after the value.
    """

    type: str
    field: str
    bad_value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        """The message without the field (``ErrorBody``)."""
        title = _TITLES.get(self.type, f"<unknown error {go_quote(self.type)}>")
        if self.type in _NO_VALUE or self.bad_value is OMIT:
            text = title
        else:
            text = f"{title}: {go_value(self.bad_value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def cause(self) -> dict[str, Any]:
        """The Status cause of this error."""
        cause: dict[str, Any] = {"reason": self.type, "message": self.body()}
        if self.field:
            cause["field"] = self.field
        return cause

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def required(field: str, detail: str = "") -> FieldError:
    """``field.Required``."""
    return FieldError("FieldValueRequired", field, "", detail)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    """``field.Invalid``."""
    return FieldError("FieldValueInvalid", field, value, detail)


def not_supported(field: str, value: Any, valid: Sequence[str]) -> FieldError:
    """``field.NotSupported``: the detail lists the quoted supported values, in order."""
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return FieldError("FieldValueNotSupported", field, value, detail)


def duplicate(field: str, value: Any) -> FieldError:
    """``field.Duplicate``."""
    return FieldError("FieldValueDuplicate", field, value)


def forbidden(field: str, detail: str) -> FieldError:
    """``field.Forbidden``."""
    return FieldError("FieldValueForbidden", field, "", detail)


def not_found(field: str, value: Any) -> FieldError:
    """``field.NotFound``."""
    return FieldError("FieldValueNotFound", field, value)


def too_long(field: str, max_length: int) -> FieldError:
    """``field.TooLong``: ``may not be more than N bytes``."""
    unit = "byte" if max_length == 1 else "bytes"
    return FieldError(
        "FieldValueTooLong", field, "<value omitted>", f"may not be more than {max_length} {unit}"
    )


def too_many(field: str, actual: int, maximum: int) -> FieldError:
    """``field.TooMany``: ``must have at most N items``."""
    unit = "item" if maximum == 1 else "items"
    return FieldError("FieldValueTooMany", field, actual, f"must have at most {maximum} {unit}")


def internal(field: str, detail: str) -> FieldError:
    """``field.InternalError``."""
    return FieldError("InternalError", field, OMIT, detail)


def aggregate(errors: Iterable[FieldError]) -> str:
    """``ErrorList.ToAggregate().Error()``: one message, or ``[m1, m2]`` without repeats."""
    messages: list[str] = []
    seen: set[str] = set()
    for error in errors:
        text = str(error)
        if text not in seen:
            seen.add(text)
            messages.append(text)
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def invalid_status(
    group: str, kind: str, name: str, errors: Sequence[FieldError]
) -> tuple[str, dict[str, Any]]:
    """The ``message`` and ``details`` of ``errors.NewInvalid(GroupKind{group, kind}, name,
    errors)`` (``details.kind`` is the Kind; every error is a cause)."""
    qualified = f"{kind}.{group}" if group else kind
    message = f"{qualified} {go_quote(name)} is invalid"
    if errors:
        message += f": {aggregate(errors)}"
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if kind:
        details["kind"] = kind
    details["causes"] = [error.cause() for error in errors]
    return message, details


def invalid_failure(
    group: str, kind: str, name: str, errors: Sequence[FieldError]
) -> StatusFailure:
    """422 ``Invalid`` as ``errors.NewInvalid`` builds it, ready to be answered."""
    message, details = invalid_status(group, kind, name, errors)
    return StatusFailure(422, "Invalid", message, details=details)
