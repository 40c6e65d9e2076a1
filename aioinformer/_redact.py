"""Text from the network made safe to log: one bounded line, credentials masked.

An error body is whatever answered: a Kubernetes ``Status``, or a proxy's multi-line HTML
page, some of which echo the request's headers — the bearer token with them. Everything that
ends up in an exception message (and so in logs) passes through :func:`excerpt`.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MASK", "excerpt", "redact"]

#: What replaces a credential.
MASK: Final = "<redacted>"

_RULES: Final = (
    # An Authorization (or Proxy-Authorization, Cookie, X-...-Token) header, echoed as text:
    # everything up to the end of the line or of the quoted value.
    (
        re.compile(
            r"(?i)\b((?:proxy-)?authorization|cookie|set-cookie|x-[\w-]*token)"
            r"(\"?\s*[:=]\s*\[?\s*\"?)[^\"\r\n<]*"
        ),
        rf"\1\2{MASK}",
    ),
    # An authentication scheme with its credential, wherever it appears.
    (re.compile(r"(?i)\b(bearer|basic|negotiate)\s+[\w\-.~+/]+=*"), rf"\1 {MASK}"),
    # A JSON Web Token (service-account and OIDC tokens are JWTs).
    (re.compile(r"\beyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*"), MASK),
    # token=..., password: ..., "client-key-data": "..." and friends.
    (
        re.compile(
            r"(?i)\b([\w-]*(?:token|password|passwd|secret|api[_-]?key|key-data|"
            r"certificate-data)[\w-]*)(\"?\s*[:=]\s*\"?)[^\s\"',;&<]+"
        ),
        rf"\1\2{MASK}",
    ),
)
_TAG: Final = re.compile(r"<[^>]{0,2000}>")
_SPACE: Final = re.compile(r"\s+")


def redact(text: str) -> str:
    """``text`` with credentials (authorization headers, bearer and basic credentials, JSON
    Web Tokens, ``token=``/``password:``-like values) replaced by :data:`MASK`."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def excerpt(text: str | bytes, *, limit: int = 200, markup: bool = False) -> str:
    """One line of at most ``limit`` characters of ``text``, credentials masked.

    :param markup: the text may be HTML: tags are dropped first.
    """
    if isinstance(text, bytes):
        text = text[: limit * 20].decode("utf-8", "replace")
    else:
        text = text[: limit * 20]
    if markup:
        text = _TAG.sub(" ", text)
    text = _SPACE.sub(" ", redact(text)).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text
