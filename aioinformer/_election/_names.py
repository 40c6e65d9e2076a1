"""The names a Lease needs, checked where they are given instead of by every Lease write.

The rules are the API server's (apimachinery ``pkg/util/validation/validation.go``):

* a Lease's name is a **DNS-1123 subdomain** (``pkg/apis/coordination/validation``
  ``ValidateLease`` passes ``NameIsDNSSubdomain`` to ``ValidateObjectMeta``): at most 253
  characters, lowercase letters, digits, ``-`` and ``.``, starting and ending with a letter or
  a digit, each dot-separated part too (``IsDNS1123Subdomain``);
* a namespace's name is a **DNS-1123 label** (``IsDNS1123Label``): the same without dots, at
  most 63 characters;
* a label value (a sharded group's name is one, on every member's Lease) is at most 63
  characters, empty or letters, digits, ``-``, ``_`` and ``.``, starting and ending with a
  letter or a digit (``IsValidLabelValue``).

A name that breaks one raises :class:`~aioinformer.errors.InvalidNameError` naming the value,
what it is for and the rule; without the check every Lease write would fail with 422 Invalid.
"""

from __future__ import annotations

import re
from typing import Final

from ..errors import InvalidNameError

__all__ = ["check_label_value", "check_namespace", "check_subdomain"]

_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_RE: Final = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_LABEL_RE: Final = re.compile(_LABEL)
_LABEL_VALUE_RE: Final = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

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
