"""CEL names of schema properties (Kubernetes ``apiserver/pkg/cel/escaping.go``, behaviour only).

A property whose name is a CEL reserved word is reached as ``__{word}__``; ``__``, ``.``, ``-``
and ``/`` are spelt ``__underscores__``, ``__dot__``, ``__dash__``, ``__slash__``. Names that
start with a digit, are empty, or hold any other character are not reachable from CEL.
"""

from __future__ import annotations

import re

__all__ = ["RESERVED", "escape", "unescape"]

RESERVED = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)
_OK = re.compile(r"[A-Za-z0-9_./-]*\Z")
_PARTS = re.compile(r"__|[./-]")
_WORDS = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_BACK = {"underscores": "__", "dot": ".", "dash": "-", "slash": "/"}
_UNPARTS = re.compile(r"__[^_]+__")


def escape(name: str) -> str | None:
    """The CEL identifier of a property, or None when CEL cannot reach it."""
    if not name or (name[0].isdigit() and name[0].isascii()):
        return None
    if name in RESERVED:
        return f"__{name}__"
    if not _OK.match(name):
        return None
    return _PARTS.sub(lambda m: _WORDS[m.group(0)], name)


def unescape(ident: str) -> str | None:
    """The property name of a CEL identifier (None: not a valid escape)."""
    ok = True

    def back(m: re.Match[str]) -> str:
        nonlocal ok
        inner = m.group(0)[2:-2]
        if inner in _BACK:
            return _BACK[inner]
        if inner in RESERVED:
            if len(m.group(0)) != len(ident):
                ok = False
            return inner
        ok = False
        return ""

    out = _UNPARTS.sub(back, ident)
    return out if ok else None
