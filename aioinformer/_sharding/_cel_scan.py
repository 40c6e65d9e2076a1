"""The tree and the scanner of the client's CEL parser (see :mod:`._cel`).

The syntax-tree nodes (only what the walk and the recursion limits need, with cel-go's
``ast.ExprKind`` numbers), :class:`Refused` (the error every stage raises, carrying the server's
message), the hand-written scanner of CEL.g4's token rules (cel-go v0.26.0; longest match,
earlier rule on ties) and ``_unescape``, which computes a string or bytes literal's value like
cel-go's ``unescape``.
"""

from __future__ import annotations

from typing import Final


class Refused(Exception):
    """The server refuses the selector; ``reason`` is its message."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# ---- the syntax tree (only what the walk and the recursion limits need) ---------------------

# cel-go's ast.ExprKind values; Go prints them as numbers in the server's messages.
_CALL_KIND: Final = 1
_IDENT_KIND: Final = 3
_LIST_KIND: Final = 4
_LITERAL_KIND: Final = 5
_MAP_KIND: Final = 6
_SELECT_KIND: Final = 7
_STRUCT_KIND: Final = 8


class _Node:
    """``depth``: nesting of the nodes cel-go's visitor counts against its recursion limit."""

    __slots__ = ("depth", "kind")

    def __init__(self, kind: int, depth: int) -> None:
        self.kind = kind
        self.depth = depth


class _Call(_Node):
    __slots__ = ("args", "function")

    def __init__(self, function: str, args: list[_Node], *, counted: bool) -> None:
        super().__init__(_CALL_KIND, max((a.depth for a in args), default=0) + counted)
        self.function = function
        self.args = args


class _Ident(_Node):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        super().__init__(_IDENT_KIND, 0)
        self.name = name


class _Select(_Node):
    __slots__ = ("name", "operand")

    def __init__(self, operand: _Node, name: str) -> None:
        super().__init__(_SELECT_KIND, operand.depth + 1)
        self.operand = operand
        self.name = name


class _Literal(_Node):
    """``go_type`` is what Go's ``%T`` prints for the literal's value."""

    __slots__ = ("go_type", "value")

    def __init__(self, value: object, go_type: str) -> None:
        super().__init__(_LITERAL_KIND, 0)
        self.value = value
        self.go_type = go_type


# ---- scanner ---------------------------------------------------------------------------------


class _Tok:
    __slots__ = ("kind", "text", "value")

    def __init__(self, kind: str, text: str, value: object = None) -> None:
        self.kind = kind  # "ident", "escident", "int", "uint", "float", "string", "bytes",
        self.text = text  # "true", "false", "null", "in", an operator's own text, or "eof"
        self.value = value  # a literal's value, or a Refused the visitor reports later


_LETTERS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_DIGITS: Final = frozenset("0123456789")
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_IDENT_CHARS: Final = _LETTERS | _DIGITS
_ESC_IDENT_CHARS: Final = _IDENT_CHARS | frozenset(".-/ ")
_KEYWORDS: Final = frozenset(("true", "false", "null", "in"))
_STRING_PREFIXES: Final = {
    "r": (True, False),
    "R": (True, False),
    "b": (False, True),
    "B": (False, True),
    "br": (True, True),
    "bR": (True, True),
    "Br": (True, True),
    "BR": (True, True),
}
_TWO_CHAR_OPS: Final = frozenset(("==", "!=", "<=", ">=", "&&", "||"))
_ONE_CHAR_OPS: Final = frozenset("<>[]{}().,-!?:+*/%")
_SIMPLE_ESCAPES: Final = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}


class _Scanner:
    """CEL's lexer (ANTLR rules of CEL.g4: longest match, earlier rule on ties)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.tokens: list[_Tok] = []

    def fail(self, start: int) -> Refused:
        return Refused(
            f"CEL parse error: Syntax error: token recognition error at: "
            f"'{self.text[start : self.pos + 1]}'"
        )

    def scan(self) -> list[_Tok]:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in " \t\r\n\f":
                self.pos += 1
            elif text.startswith("//", self.pos):
                newline = text.find("\n", self.pos)
                self.pos = n if newline < 0 else newline
            elif ch in _LETTERS:
                self.word()
            elif ch in _DIGITS or (ch == "." and text[self.pos + 1 : self.pos + 2] in _DIGITS):
                self.number()
            elif ch in "'\"":
                self.string(self.pos, raw=False, is_bytes=False)
            elif ch == "`":
                end = self.pos + 1
                while end < n and text[end] in _ESC_IDENT_CHARS:
                    end += 1
                if end == self.pos + 1 or end >= n or text[end] != "`":
                    self.pos = min(end, n - 1)
                    raise self.fail(self.pos)
                self.tokens.append(_Tok("escident", text[self.pos : end + 1]))
                self.pos = end + 1
            elif text[self.pos : self.pos + 2] in _TWO_CHAR_OPS:
                self.tokens.append(
                    _Tok(text[self.pos : self.pos + 2], text[self.pos : self.pos + 2])
                )
                self.pos += 2
            elif ch in _ONE_CHAR_OPS:
                self.tokens.append(_Tok(ch, ch))
                self.pos += 1
            else:
                raise self.fail(self.pos)
        self.tokens.append(_Tok("eof", "<EOF>"))
        return self.tokens

    def word(self) -> None:
        text, start = self.text, self.pos
        end = start + 1
        while end < len(text) and text[end] in _IDENT_CHARS:
            end += 1
        word = text[start:end]
        prefix = _STRING_PREFIXES.get(word)
        if prefix is not None and text[end : end + 1] in ("'", '"'):
            self.string(end, raw=prefix[0], is_bytes=prefix[1], start=start)
            return
        self.tokens.append(_Tok(word if word in _KEYWORDS else "ident", word))
        self.pos = end

    def number(self) -> None:
        text, start = self.text, self.pos
        n = len(text)

        def digits(i: int, allowed: frozenset[str] = _DIGITS) -> int:
            while i < n and text[i] in allowed:
                i += 1
            return i

        def exponent(i: int) -> int:
            # EXPONENT : [eE] [+-]? DIGIT+ ; returns i unchanged when there is none.
            if i < n and text[i] in "eE":
                j = i + 1
                if j < n and text[j] in "+-":
                    j += 1
                k = digits(j)
                if k > j:
                    return k
            return i

        if text.startswith("0x", start) and text[start + 2 : start + 3] in _HEX:
            end = digits(start + 2, _HEX)
            kind = "int"
        elif text[start] == ".":
            end, kind = exponent(digits(start + 1)), "float"
        else:
            end = digits(start)
            kind = "int"
            if text[end : end + 1] == "." and text[end + 1 : end + 2] in _DIGITS:
                end, kind = exponent(digits(end + 1)), "float"
            elif exponent(end) > end:
                end, kind = exponent(end), "float"
        if kind == "int" and text[end : end + 1] in ("u", "U"):
            end += 1
            kind = "uint"
        token_text = text[start:end]
        self.tokens.append(_Tok(kind, token_text))
        self.pos = end

    def escape(self, i: int) -> int:
        """Check the escape sequence at ``text[i] == '\\'`` (ESC_SEQ); return its end."""
        text = self.text
        c = text[i + 1 : i + 2]
        if c and c in _SIMPLE_ESCAPES:
            return i + 2
        width = {"x": 2, "X": 2, "u": 4, "U": 8}.get(c)
        if width is not None:
            body = text[i + 2 : i + 2 + width]
            if len(body) == width and all(h in _HEX for h in body):
                return i + 2 + width
        elif c and c in "0123" and len(text) >= i + 4 and _is_octal_pair(text[i + 2 : i + 4]):
            return i + 4
        self.pos = min(i + 1, len(text) - 1)
        raise self.fail(i)

    def string(self, quote_at: int, *, raw: bool, is_bytes: bool, start: int | None = None) -> None:
        text, n = self.text, len(self.text)
        begin = quote_at if start is None else start
        q = text[quote_at]
        triple = text.startswith(q * 3, quote_at)
        i = quote_at + (3 if triple else 1)
        while True:
            if i >= n:
                self.pos = n - 1
                raise self.fail(begin)
            if triple and text.startswith(q * 3, i):
                end = i + 3
                break
            ch = text[i]
            if not triple and ch == q:
                end = i + 1
                break
            if not triple and ch in "\n\r":
                self.pos = i
                raise self.fail(begin)
            i = self.escape(i) if ch == "\\" and not raw else i + 1
        token_text = text[begin:end]
        value = _unescape(text[quote_at:end], raw=raw, is_bytes=is_bytes)
        self.tokens.append(_Tok("bytes" if is_bytes else "string", token_text, value))
        self.pos = end


def _is_octal_pair(pair: str) -> bool:
    return len(pair) == 2 and pair[0] in "01234567" and pair[1] in "01234567"


def _unescape(quoted: str, *, raw: bool, is_bytes: bool) -> str | bytes | Refused:
    """The value of a lexed string literal, as cel-go's ``unescape`` computes it."""
    quoted = quoted.replace("\r\n", "\n").replace("\r", "\n")
    width = 3 if len(quoted) >= 6 and quoted[:3] in ("'''", '"""') else 1
    body = quoted[width:-width]
    if raw or "\\" not in body:
        return body.encode("utf-8", "surrogatepass") if is_bytes else body
    out: list[str] = []
    chunks: list[bytes] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        c = body[i + 1]
        if c in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[c])
            i += 2
            continue
        if c in "xX":
            code, i = int(body[i + 2 : i + 4], 16), i + 4
        elif c in "uU":
            if is_bytes:
                return Refused("CEL parse error: unable to unescape string")
            width = 4 if c == "u" else 8
            code, i = int(body[i + 2 : i + 2 + width], 16), i + 2 + width
            if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                return Refused("CEL parse error: invalid unicode code point")
        else:
            code, i = int(body[i + 1 : i + 4], 8), i + 4
        if is_bytes and c not in "uU":
            # \x and octal escapes are raw bytes in a bytes literal.
            chunks.append("".join(out).encode("utf-8", "surrogatepass") + bytes((code,)))
            out.clear()
        else:
            out.append(chr(code))
    if is_bytes:
        return b"".join(chunks) + "".join(out).encode("utf-8", "surrogatepass")
    return "".join(out)
