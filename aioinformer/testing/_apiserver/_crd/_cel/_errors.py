"""The field errors of CEL rules: the fake's :mod:`..._validation._fielderrors`, plus how Go
prints the rule that failed to compile.

A rule that does not compile is reported as ``field.Invalid(path.Child("rule"), rule, msg)``
with the rule an ``apiextensions.ValidationRule`` struct, so its value prints as Go's ``%#v``
of that struct (:func:`rule_repr`), pointers included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._validation._fielderrors import (
    OMIT,
    FieldError,
    Printed,
    duplicate,
    forbidden,
    go_quote,
    internal,
    invalid,
    required,
)

__all__ = [
    "OMIT",
    "FieldError",
    "duplicate",
    "forbidden",
    "go_quote",
    "internal",
    "invalid",
    "required",
    "rule_repr",
]

#: Stands for the address Go prints for a set pointer field of ``%#v`` (never stable in Go).
POINTER = "0xc000a1b2c0"


def rule_repr(raw: Mapping[str, Any]) -> Printed:
    """Go's ``%#v`` of the internal ``apiextensions.ValidationRule`` holding ``raw``."""

    def text(key: str) -> str:
        value = raw.get(key)
        return go_quote(value if isinstance(value, str) else "")

    reason = (
        "(*apiextensions.FieldValueErrorReason)(nil)"
        if raw.get("reason") is None
        else f"(*apiextensions.FieldValueErrorReason)({POINTER})"
    )
    optional = "(*bool)(nil)" if raw.get("optionalOldSelf") is None else f"(*bool)({POINTER})"
    return Printed(
        f"apiextensions.ValidationRule{{Rule:{text('rule')}, Message:{text('message')}, "
        f"MessageExpression:{text('messageExpression')}, Reason:{reason}, "
        f"FieldPath:{text('fieldPath')}, OptionalOldSelf:{optional}}}"
    )
