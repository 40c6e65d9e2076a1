"""Names Kubernetes validates: DNS subdomains and qualified names (apimachinery
``pkg/util/validation``: ``IsDNS1123Subdomain``, ``IsQualifiedName``), with its messages.

Qualified names are what label keys, condition types, finalizers and an Event's
``reportingController`` are: an optional DNS-subdomain prefix and ``/``, then a name of 1 to 63
alphanumerics, ``-``, ``_`` or ``.`` that starts and ends with an alphanumeric.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["is_dns_subdomain", "qualified_name_problems"]

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN: Final = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_NAME_PART: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def is_dns_subdomain(value: str) -> bool:
    """Whether ``value`` is a lowercase RFC 1123 subdomain of at most 253 characters."""
    return len(value) <= 253 and bool(_DNS_SUBDOMAIN.fullmatch(value))


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
