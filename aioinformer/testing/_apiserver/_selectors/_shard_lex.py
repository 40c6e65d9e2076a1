"""The fake API server's CEL lexer and literal decoding (see :mod:`._shard`).

:class:`ShardSelectorRefused` (the error every stage raises, carrying ``Parse``'s message), the
lexer (CEL.g4's token rules of cel-go v0.26.0 as regular expressions, tried in the grammar's
order; the longest match wins and the earlier rule on ties, like ANTLR) and ``_unquote``, which
decodes a string or bytes literal like cel-go's ``unescape``. Written independently of the
client's :mod:`aioinformer._sharding`.
"""

from __future__ import annotations

import re
from typing import Any, Final


class ShardSelectorRefused(Exception):
    """``Parse`` failed; ``reason`` is its message (the HTTP message adds the prefix)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    @property
    def http_message(self) -> str:
        """The ``message`` of the server's 500 Status."""
        return f"invalid shard selector: {self.reason}"


# ---- lexer: CEL.g4's token rules as regular expressions ------------------------------------------

_ESC = r"""\\(?:[abfnrtv"'\\?`]|[xX][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2})"""
_STRING_FORMS = [
    rf'"(?:{_ESC}|[^\\"\n\r])*"',
    rf"'(?:{_ESC}|[^\\'\n\r])*'",
    rf'"""(?:{_ESC}|[^\\])*?"""',
    rf"'''(?:{_ESC}|[^\\])*?'''",
    r'[rR]"[^"\n\r]*"',
    r"[rR]'[^'\n\r]*'",
    r'[rR]"""[\s\S]*?"""',
    r"[rR]'''[\s\S]*?'''",
]
# (token type, pattern), in the grammar's order: on equal length the earlier rule wins.
_LEXER_RULES: Final = [
    *((op, re.escape(op)) for op in ["==", "!=", "in", "<", "<=", ">=", ">", "&&", "||"]),
    *((op, re.escape(op)) for op in "[]{}().,-!?:+*/%"),
    ("true", "true"),
    ("false", "false"),
    ("null", "null"),
    ("skip", r"[\t \r\n\f]+"),
    ("skip", r"//[^\n]*"),
    ("float", r"\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?"),
    ("int", r"\d+"),
    ("int", r"0x[0-9a-fA-F]+"),
    ("uint", r"\d+[uU]"),
    ("uint", r"0x[0-9a-fA-F]+[uU]"),
    *(("string", form) for form in _STRING_FORMS),
    *(("bytes", "[bB]" + form) for form in _STRING_FORMS),
    ("ident", r"[A-Za-z_][A-Za-z0-9_]*"),
    ("escident", r"`[A-Za-z0-9_.\-/ ]+`"),
]
_COMPILED: Final = [(kind, re.compile(pattern)) for kind, pattern in _LEXER_RULES]

Token = tuple[str, str]  # (type, text)


def _lex(source: str) -> list[Token]:
    tokens: list[Token] = []
    at = 0
    while at < len(source):
        best: Token | None = None
        for kind, pattern in _COMPILED:
            found = pattern.match(source, at)
            if found and found.end() > at and (best is None or len(found.group()) > len(best[1])):
                best = (kind, found.group())
        if best is None:
            raise _cel_error(f"Syntax error: token recognition error at: '{source[at]}'")
        if best[0] != "skip":
            tokens.append(best)
        at += len(best[1])
    tokens.append(("EOF", "<EOF>"))
    return tokens


def _cel_error(message: str) -> ShardSelectorRefused:
    return ShardSelectorRefused(f"CEL parse error: {message}")


# ---- literal values --------------------------------------------------------------------------

_SIMPLE = dict(zip("abfnrtv\"'\\?`", "\a\b\f\n\r\t\v\"'\\?`", strict=True))
_ESCAPE_RE: Final = re.compile(_ESC)


def _unquote(text: str, as_bytes: bool) -> Any:
    """cel-go ``unescape``: newlines normalised, quotes removed, escapes decoded."""
    text = re.sub(r"\r\n?", "\n", text)
    raw = text[0] in "rR"
    if raw:
        text = text[1:]
    quote = text[:3] if text[:3] in ("'''", '"""') and len(text) >= 6 else text[0]
    body = text[len(quote) : len(text) - len(quote)]
    if raw:
        return body.encode() if as_bytes else body
    problems: list[str] = []

    def decode(found: re.Match[str]) -> str:
        seq = found.group()
        letter = seq[1]
        if letter in _SIMPLE:
            return _SIMPLE[letter]
        if letter in "uU" and as_bytes:
            problems.append("unable to unescape string")
            return ""
        number = int(seq[2:], 16) if letter in "xXuU" else int(seq[1:], 8)
        if letter in "uU" and (number > 0x10FFFF or 0xD800 <= number < 0xE000):
            problems.append("invalid unicode code point")
            return ""
        # A byte escape in a bytes literal is one raw byte: carried as a lone surrogate here.
        if as_bytes and number >= 0x80:
            return chr(0xDC00 + number)
        return chr(number)

    value = _ESCAPE_RE.sub(decode, body)
    if problems:
        raise _cel_error(problems[0])
    if as_bytes:
        return value.encode("utf-8", "surrogateescape")
    return value
