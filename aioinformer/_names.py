"""Names Kubernetes validates, with the API server's rules and messages (apimachinery
``pkg/util/validation/validation.go``).

* a **DNS-1123 subdomain** (``IsDNS1123Subdomain``: a Lease's name, a finalizer's or a
  qualified name's prefix): at most 253 characters, lowercase letters, digits, ``-`` and ``.``,
  starting and ending with a letter or a digit, each dot-separated part too;
* a **DNS-1123 label** (``IsDNS1123Label``: a namespace's name): the same without dots, at most
  63 characters;
* a **label value** (``IsValidLabelValue``: a sharded group's name is one, on every member's
  Lease): at most 63 characters, empty or letters, digits, ``-``, ``_`` and ``.``, starting
  and ending with a letter or a digit;
* a **qualified name** (``IsQualifiedName``: label keys, condition types, finalizers, an
  Event's ``reportingController``): an optional DNS-subdomain prefix and ``/``, then a name of 1
  to 63 alphanumerics, ``-``, ``_`` or ``.`` that starts and ends with an alphanumeric.

The ``check_*`` functions raise :class:`~aioinformer.errors.InvalidNameError` naming the value,
what it is for and the rule, where a name is given, instead of letting every write that carries
it fail with 422 Invalid.
"""

from __future__ import annotations

import re
from typing import Final

from .errors import InvalidNameError

__all__ = [
    "check_label_value",
    "check_namespace",
    "check_subdomain",
    "is_dns_subdomain",
    "qualified_name_problems",
]

_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_RE: Final = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_LABEL_RE: Final = re.compile(_LABEL)
_LABEL_VALUE_RE: Final = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_NAME_PART: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def is_dns_subdomain(value: str) -> bool:
    """Whether ``value`` is a lowercase RFC 1123 subdomain of at most 253 characters."""
    return len(value) <= 253 and bool(_SUBDOMAIN_RE.fullmatch(value))


def qualified_name_problems(value: str) -> list[str]:
    """What is wrong with ``value`` as a qualified name (empty when nothing is)."""
    parts = value.split("/")
    if len(parts) > 2:
        return ["a qualified name must have at most one '/'"]
    name = parts[-1]
    problems: list[str] = []
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        elif not is_dns_subdomain(prefix):
            problems.append(
                "prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters "
                "(e.g. 'example.com')"
            )
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > 63:
        problems.append("name part must be no more than 63 characters")
    elif not _NAME_PART.fullmatch(name):
        problems.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyName', 'my.name' or "
            "'123-abc')"
        )
    return problems


SUBDOMAIN_RULE: Final = (
    "a DNS-1123 subdomain (at most 253 characters: lowercase letters, digits, '-' and '.',"
    " starting and ending with a letter or digit, e.g. 'replica-1' or 'web-0.shards')"
)
LABEL_RULE: Final = (
    "a DNS-1123 label (at most 63 characters: lowercase letters, digits and '-', starting and"
    " ending with a letter or digit, e.g. 'kube-system')"
)
LABEL_VALUE_RULE: Final = (
    "a valid label value (at most 63 characters: letters, digits, '-', '_' and '.', starting"
    " and ending with a letter or digit, e.g. 'my-controller')"
)


def _problem(value: str, *, limit: int, allowed: str, dots: bool) -> str:
    """What is wrong with ``value``, in words (the first thing found)."""
    if not value:
        return "it is empty"
    if len(value) > limit:
        return f"it has {len(value)} characters, more than {limit}"
    if value != value.lower() and "A" not in allowed:
        return "it has uppercase letters (use lowercase)"
    bad = sorted({c for c in value if c not in allowed})
    if bad:
        return "it has " + ", ".join(repr(c) for c in bad) + " in it"
    parts = value.split(".") if dots else [value]
    if any(not part for part in parts):
        return "it has an empty part between dots"
    if any(not part[0].isalnum() or not part[-1].isalnum() for part in parts):
        return "it does not start and end with a letter or digit" + (" (each part)" if dots else "")
    return "it does not match the rule"


_LOWER: Final = "abcdefghijklmnopqrstuvwxyz0123456789"
_MIXED: Final = _LOWER + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def check_subdomain(value: object, *, what: str) -> str:
    """``value`` if it is a DNS-1123 subdomain (a Lease name).

    :raises InvalidNameError: naming ``value``, ``what`` it is and the rule.
    """
    if isinstance(value, str) and len(value) <= 253 and _SUBDOMAIN_RE.fullmatch(value):
        return value
    problem = (
        _problem(value, limit=253, allowed=_LOWER + "-.", dots=True)
        if isinstance(value, str)
        else f"it is a {type(value).__name__}, not a string"
    )
    raise InvalidNameError(value, what=what, rule=SUBDOMAIN_RULE, problem=problem)


def check_namespace(value: object, *, what: str = "namespace") -> str:
    """``value`` if it is a DNS-1123 label (a namespace's name).

    :raises InvalidNameError: naming ``value``, ``what`` it is and the rule.
    """
    if isinstance(value, str) and len(value) <= 63 and _LABEL_RE.fullmatch(value):
        return value
    problem = (
        _problem(value, limit=63, allowed=_LOWER + "-", dots=False)
        if isinstance(value, str)
        else f"it is a {type(value).__name__}, not a string"
    )
    raise InvalidNameError(value, what=what, rule=LABEL_RULE, problem=problem)


def check_label_value(value: object, *, what: str, allow_empty: bool = False) -> str:
    """``value`` if it is a label value (non-empty unless ``allow_empty``).

    :raises InvalidNameError: naming ``value``, ``what`` it is and the rule.
    """
    if (
        isinstance(value, str)
        and (value or allow_empty)
        and len(value) <= 63
        and _LABEL_VALUE_RE.fullmatch(value)
    ):
        return value
    problem = (
        _problem(value, limit=63, allowed=_MIXED + "-_.", dots=False)
        if isinstance(value, str)
        else f"it is a {type(value).__name__}, not a string"
    )
    raise InvalidNameError(value, what=what, rule=LABEL_VALUE_RULE, problem=problem)
