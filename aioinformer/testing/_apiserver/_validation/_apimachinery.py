"""The texts of apimachinery's validation errors, as a real API server writes them.

Selector errors reach clients word for word in a 400's message, so the fake words them the
same way: Go's ``%q`` quoting, ``field.Error`` (``<path>: Invalid value: "<v>": <detail>``),
aggregated errors (``[a, b]``), and the label key and value rules with their messages
(``k8s.io/apimachinery/pkg/api/validate/content``: ``IsLabelKey``, ``IsLabelValue``,
``IsDNS1123Subdomain``). Also ``strconv.ParseInt(s, 10, 64)``, which the ``<`` and ``>``
label operators use.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "aggregate",
    "go_quote",
    "invalid_value",
    "label_key_problems",
    "label_value_problems",
    "parse_int64",
]

_LABEL_FORMAT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FORMAT = f"({_LABEL_FORMAT})?"
_SUBDOMAIN_FORMAT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_LABEL_NAME = re.compile(_LABEL_FORMAT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FORMAT)
_SUBDOMAIN = re.compile(_SUBDOMAIN_FORMAT)
_INT = re.compile(r"[+-]?[0-9]+")

_KEY_TEXT = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_VALUE_TEXT = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)
_SUBDOMAIN_TEXT = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t"}
_ESCAPES |= {"\v": r"\v", '"': r"\"", "\\": r"\\"}


def go_quote(text: str) -> str:
    """``text`` as Go's ``%q`` (``strconv.Quote``) writes it: printable characters as they
    are, the usual backslash escapes, others as ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


def invalid_value(path: str, value: str, detail: str) -> str:
    """A ``field.Invalid`` error's text (``<nil>`` is how Go prints a missing path)."""
    return f"{path}: Invalid value: {go_quote(value)}: {detail}"


def aggregate(messages: Sequence[str]) -> str:
    """An aggregate of errors as text: the one message, or ``[a, b]`` without repeats."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _pattern_problem(text: str, pattern: str, *examples: str) -> str:
    shown = "".join(f"{' or ' if i else ''}'{example}', " for i, example in enumerate(examples))
    return f"{text} (e.g. {shown}regex used for validation is '{pattern}')"


def _too_long(limit: int) -> str:
    return f"must be no more than {limit} bytes"


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _subdomain_problems(text: str) -> list[str]:
    problems = [_too_long(253)] if _size(text) > 253 else []
    if not _SUBDOMAIN.fullmatch(text):
        problems.append(_pattern_problem(_SUBDOMAIN_TEXT, _SUBDOMAIN_FORMAT, "example.com"))
    return problems


def label_key_problems(key: str) -> list[str]:
    """What is wrong with a label key (none: it is valid): an optional DNS subdomain prefix
    and ``/``, then a name of at most 63 bytes."""
    parts = key.split("/")
    if len(parts) > 2:
        rule = _pattern_problem(_KEY_TEXT, _LABEL_FORMAT, "MyName", "my.name", "123-abc")
        return [
            f"a valid label key {rule} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    problems: list[str] = []
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems.extend(f"prefix part {p}" for p in _subdomain_problems(prefix))
    name = parts[-1]
    if not name:
        problems.append("name part must be non-empty")
    elif _size(name) > 63:
        problems.append(f"name part {_too_long(63)}")
    if not _LABEL_NAME.fullmatch(name):
        rule = _pattern_problem(_KEY_TEXT, _LABEL_FORMAT, "MyName", "my.name", "123-abc")
        problems.append(f"name part {rule}")
    return problems


def label_value_problems(value: str) -> list[str]:
    """What is wrong with a label value (none: it is valid; the empty value is)."""
    problems = [_too_long(63)] if _size(value) > 63 else []
    if not _LABEL_VALUE.fullmatch(value):
        problems.append(
            _pattern_problem(_VALUE_TEXT, _LABEL_VALUE_FORMAT, "MyValue", "my_value", "12345")
        )
    return problems


def parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: an optional sign and ASCII digits in the int64
    range, else None."""
    if not _INT.fullmatch(text):
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None
