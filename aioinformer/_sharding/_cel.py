"""The API server's shard selector parser (apiserver ``pkg/sharding/parser.go`` ``Parse``).

``Parse`` trims the text (Go ``strings.TrimSpace``), parses it with the cel-go parser without
macros (cel-go v0.26.0, the one Kubernetes 1.36 uses: ``parser/gen/CEL.g4`` and
``parser/parser.go``) and walks the syntax tree: ``shardRange(path, 'start', 'end')`` calls
joined by ``||``. To refuse exactly what the server refuses, this module parses the whole CEL
grammar (lists, maps, messages, operators, every string literal form) with a hand-written
scanner and a recursive-descent parser, one method per grammar rule, and applies cel-go's
limits: 100,000 code points, 250 nested levels of any one rule (counted like ANTLR counts them,
left-recursion steps included) and 250 levels of its visitor. ANTLR's syntax-error wording is
not reproduced (the ``CEL parse error: Syntax error:`` prefix is); every other message is the
server's.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Final, TypeVar, cast

__all__ = ["Refused", "go_quote", "parse_requirements"]

_FIELDS: Final = ("object.metadata.uid", "object.metadata.namespace")


def parse_requirements(text: str) -> list[tuple[str, int, int]]:
    """``Parse``: the ``(path, start, end)`` requirements of a selector, in order.

    :raises Refused: with the server's message.
    """
    expr = _go_trim_space(text)
    if not expr:
        raise Refused(
            "empty shard selector is not allowed; omit the parameter for unfiltered lists"
        )
    requirements: list[tuple[str, int, int]] = []
    _walk(_parse_cel(expr), requirements)
    first = requirements[0][0]
    for other, _, _ in requirements[1:]:
        if other != first:
            raise Refused(
                "all shard ranges must use the same field, got "
                f"{go_quote(first)} and {go_quote(other)}"
            )
    return requirements


def _format_bound(value: int) -> str:
    return f"0x{value:016x}"


class Refused(Exception):
    """The server refuses the selector; ``reason`` is its message."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# Go's unicode.IsSpace, which strings.TrimSpace uses (not Python's str.isspace: no \x1c-\x1f).
_GO_SPACE: Final = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _go_trim_space(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in _GO_SPACE:
        start += 1
    while end > start and text[end - 1] in _GO_SPACE:
        end -= 1
    return text[start:end]


def go_quote(s: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote), for messages identical to the server's."""
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in _GO_SHORT_ESCAPES:
            out.append(_GO_SHORT_ESCAPES[ch])
        elif ch.isprintable() and not 0xD800 <= code <= 0xDFFF:
            out.append(ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_SHORT_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}

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
_MAX_CODE_POINTS: Final = 100_000
_MAX_RECURSION: Final = 250


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


# ---- parser ----------------------------------------------------------------------------------

# CEL.g4's rules that can nest; ANTLR counts how deep each one is entered (cel-go refuses more
# than 250 levels of any one rule: "expression recursion limit exceeded: 250").
_RULES: Final = (
    "expr",
    "conditionalOr",
    "conditionalAnd",
    "relation",
    "calc",
    "unary",
    "member",
    "primary",
    "exprList",
    "listInit",
    "fieldInitializerList",
    "optField",
    "mapInitializerList",
    "escapeIdent",
    "optExpr",
    "literal",
)
(
    _EXPR,
    _OR,
    _AND,
    _RELATION,
    _CALC,
    _UNARY,
    _MEMBER,
    _PRIMARY,
    _EXPR_LIST,
    _LIST_INIT,
    _FIELD_INITS,
    _OPT_FIELD,
    _MAP_INITS,
    _ESC_IDENT,
    _OPT_EXPR,
    _LITERAL,
) = range(len(_RULES))

_RELATION_OPS: Final = {
    "<": "_<_",
    "<=": "_<=_",
    ">=": "_>=_",
    ">": "_>_",
    "==": "_==_",
    "!=": "_!=_",
    "in": "@in",
}
_MUL_OPS: Final = {"*": "_*_", "/": "_/_", "%": "_%_"}
_ADD_OPS: Final = {"+": "_+_", "-": "_-_"}
_RESERVED: Final = frozenset(
    {
        *("as", "break", "const", "continue", "else", "false", "for", "function", "if"),
        *("import", "in", "let", "loop", "package", "namespace", "null", "return", "true"),
        *("var", "void", "while"),
    }
)
_INT64: Final = 1 << 63


class _Parser:
    """Recursive descent over CEL.g4, one method per rule, counting rule depth like ANTLR."""

    def __init__(self, tokens: list[_Tok]) -> None:
        self.tokens = tokens
        self.i = 0
        self.depth = [0] * len(_RULES)
        # Errors cel-go's visitor reports after a successful parse, in visiting order.
        self.late: list[Refused] = []

    # -- helpers
    def peek(self, ahead: int = 0) -> _Tok:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def take(self) -> _Tok:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, kind: str) -> _Tok:
        tok = self.peek()
        if tok.kind != kind:
            raise self.syntax(f"mismatched input '{tok.text}' expecting '{kind}'")
        return self.take()

    @staticmethod
    def syntax(message: str) -> Refused:
        return Refused(f"CEL parse error: Syntax error: {message}")

    def enter(self, rule: int) -> None:
        depth = self.depth[rule] + 1
        if depth > _MAX_RECURSION:
            raise Refused(f"CEL parse error: expression recursion limit exceeded: {_MAX_RECURSION}")
        self.depth[rule] = depth

    def leave(self, rule: int, times: int = 1) -> None:
        self.depth[rule] -= times

    def later(self, message: str) -> None:
        self.late.append(Refused(f"CEL parse error: {message}"))

    # -- rules
    def start(self) -> _Node:
        node = self.expr()
        if self.peek().kind != "eof":
            raise self.syntax(f"extraneous input '{self.peek().text}' expecting <EOF>")
        return node

    def expr(self) -> _Node:
        self.enter(_EXPR)
        node = self.conditional_or()
        if self.peek().kind == "?":
            self.take()
            if_true = self.conditional_or()
            self.expect(":")
            if_false = self.expr()
            node = _Call("_?_:_", [node, if_true, if_false], counted=True)
        self.leave(_EXPR)
        return node

    def conditional_or(self) -> _Node:
        self.enter(_OR)
        terms = [self.conditional_and()]
        while self.peek().kind == "||":
            self.take()
            terms.append(self.conditional_and())
        self.leave(_OR)
        return terms[0] if len(terms) == 1 else _Call("_||_", terms, counted=False)

    def conditional_and(self) -> _Node:
        self.enter(_AND)
        terms = [self.relation()]
        while self.peek().kind == "&&":
            self.take()
            terms.append(self.relation())
        self.leave(_AND)
        return terms[0] if len(terms) == 1 else _Call("_&&_", terms, counted=False)

    def relation(self) -> _Node:
        # relation[0]: calc ( relop relation[2] )*, left-recursive: each operator pushes a
        # new relation context; the right operand is a fresh relation[2] holding one calc.
        self.enter(_RELATION)
        node = self.calc(0)
        pushed = 0
        while self.peek().kind in _RELATION_OPS:
            function = _RELATION_OPS[self.take().kind]
            self.enter(_RELATION)
            pushed += 1
            self.enter(_RELATION)
            right = self.calc(0)
            self.leave(_RELATION)
            node = _Call(function, [node, right], counted=True)
        self.leave(_RELATION, 1 + pushed)
        return node

    def calc(self, precedence: int) -> _Node:
        # calc[p]: unary ( {2>=p}? mulop calc[3] | {1>=p}? addop calc[2] )*
        self.enter(_CALC)
        node = self.unary()
        pushed = 0
        while True:
            kind = self.peek().kind
            if kind in _MUL_OPS and precedence <= 2:
                function, right_precedence = _MUL_OPS[kind], 3
            elif kind in _ADD_OPS and precedence <= 1:
                function, right_precedence = _ADD_OPS[kind], 2
            else:
                break
            self.take()
            self.enter(_CALC)
            pushed += 1
            node = _Call(function, [node, self.calc(right_precedence)], counted=True)
        self.leave(_CALC, 1 + pushed)
        return node

    def unary(self) -> _Node:
        self.enter(_UNARY)
        kind = self.peek().kind
        # One '-' before a number is a signed literal (ANTLR prefers MemberExpr, the first
        # alternative); otherwise every '!' or '-' is an operator.
        signed_literal = kind == "-" and self.peek(1).kind in ("int", "float")
        if kind in ("!", "-") and not signed_literal:
            count = 0
            while self.peek().kind == kind:
                self.take()
                count += 1
            node = self.member()
            if count % 2:  # cel-go drops an even number of ! or -
                node = _Call("!_" if kind == "!" else "-_", [node], counted=False)
        else:
            node = self.member()
        self.leave(_UNARY)
        return node

    def member(self) -> _Node:
        # member[0]: primary ( '.' '?'? escapeIdent | '.' IDENT '(' exprList? ')' |
        # '[' '?'? expr ']' )*, left-recursive like relation.
        self.enter(_MEMBER)
        node = self.primary()
        pushed = 0
        while self.peek().kind in (".", "["):
            op = self.take().kind
            self.enter(_MEMBER)
            pushed += 1
            optional = self.peek().kind == "?"
            if optional:
                self.take()
            if op == "[":
                index = self.expr()
                self.expect("]")
                if optional:
                    self.later("unsupported syntax '[?'")
                node = _Call("_[_]", [node, index], counted=True)
            elif not optional and self.peek().kind == "ident" and self.peek(1).kind == "(":
                name = self.take().text
                self.take()
                args = self.expr_list(")")
                self.expect(")")
                call = _Call(name, args, counted=True)
                call.depth = max(call.depth, node.depth + 1)  # the visitor visits the target too
                node = call
            else:
                name = self.escape_ident()
                if optional:
                    self.later("unsupported syntax '.?'")
                node = _Select(node, name)
        self.leave(_MEMBER, 1 + pushed)
        return node

    def escape_ident(self) -> str:
        self.enter(_ESC_IDENT)
        tok = self.peek()
        if tok.kind == "escident":
            self.take()
            self.later("unsupported syntax: '`'")
        elif tok.kind == "ident":
            self.take()
        else:
            raise self.syntax(f"mismatched input '{tok.text}' expecting IDENTIFIER")
        self.leave(_ESC_IDENT)
        return tok.text

    def expr_list(self, closing: str) -> list[_Node]:
        if self.peek().kind == closing:
            return []
        self.enter(_EXPR_LIST)
        args = [self.expr()]
        while self.peek().kind == ",":
            self.take()
            args.append(self.expr())
        self.leave(_EXPR_LIST)
        return args

    def primary(self) -> _Node:
        self.enter(_PRIMARY)
        tok = self.peek()
        kind = tok.kind
        if kind == "ident" or (kind == "." and self.peek(1).kind == "ident"):
            node = self.name_or_call()
        elif kind == "(":
            self.take()
            node = self.expr()
            self.expect(")")
        elif kind == "[":
            self.take()
            node = self.aggregate("]", _LIST_INIT, _LIST_KIND)
        elif kind == "{":
            self.take()
            node = self.aggregate("}", _MAP_INITS, _MAP_KIND)
        elif kind in ("int", "uint", "float", "string", "bytes", "true", "false", "null") or (
            kind == "-" and self.peek(1).kind in ("int", "float")
        ):
            node = self.literal()
        else:
            raise self.syntax(f"mismatched input '{tok.text}' expecting an expression")
        self.leave(_PRIMARY)
        return node

    def name_or_call(self) -> _Node:
        leading_dot = ""
        if self.peek().kind == ".":
            self.take()
            leading_dot = "."
        # CreateMessage: '.'? IDENT ('.' IDENT)* '{' ... '}'
        j = 1
        while self.peek(j).kind == "." and self.peek(j + 1).kind == "ident":
            j += 2
        if self.peek(j).kind == "{":
            self.i += j + 1
            return self.aggregate("}", _FIELD_INITS, _STRUCT_KIND)
        name = self.take().text
        if name in _RESERVED:
            self.later(f"reserved identifier: {name}")
        if self.peek().kind == "(":
            self.take()
            args = self.expr_list(")")
            self.expect(")")
            return _Call(leading_dot + name, args, counted=False)
        return _Ident(leading_dot + name)

    def aggregate(self, closing: str, rule: int, kind: int) -> _Node:
        """List, map or message literal after its opening bracket, up to ``closing``."""
        children: list[_Node] = []
        if self.peek().kind not in (closing, ","):
            self.enter(rule)
            while True:
                children.extend(self.entry(rule))
                if self.peek().kind == "," and self.peek(1).kind != closing:
                    self.take()
                    continue
                break
            self.leave(rule)
        if self.peek().kind == ",":
            self.take()
        self.expect(closing)
        node = _Node(kind, max((c.depth for c in children), default=0))
        return node

    def entry(self, rule: int) -> list[_Node]:
        if rule == _FIELD_INITS:
            self.enter(_OPT_FIELD)
            optional = self.peek().kind == "?"
            if optional:
                self.take()
                self.later("unsupported syntax '?'")
            self.escape_ident()
            self.leave(_OPT_FIELD)
            self.expect(":")
            return [self.expr()]
        self.enter(_OPT_EXPR)
        if self.peek().kind == "?":
            self.take()
            self.later("unsupported syntax '?'")
        key = self.expr()
        self.leave(_OPT_EXPR)
        if rule == _LIST_INIT:
            return [key]
        self.expect(":")
        return [key, self.expr()]

    def literal(self) -> _Node:
        self.enter(_LITERAL)
        sign = ""
        if self.peek().kind == "-":
            self.take()
            sign = "-"
        tok = self.take()
        kind, text = tok.kind, tok.text
        node: _Node
        if kind == "int":
            hexadecimal = text.startswith("0x")
            value = int(sign + (text[2:] if hexadecimal else text), 16 if hexadecimal else 10)
            if not -_INT64 <= value < _INT64:
                self.later("invalid int literal")
            node = _Literal(value, "int64")
        elif kind == "uint":
            digits = text[:-1]
            value = int(digits[2:], 16) if digits.startswith("0x") else int(digits)
            if value >= 1 << 64:
                self.later("invalid uint literal")
            node = _Literal(value, "uint64")
        elif kind == "float":
            number = float(sign + text)
            if number in (float("inf"), float("-inf")):
                self.later("invalid double literal")
            node = _Literal(number, "float64")
        elif kind in ("string", "bytes"):
            if isinstance(tok.value, Refused):
                self.late.append(tok.value)
            node = _Literal(tok.value, "string" if kind == "string" else "[]uint8")
        elif kind == "null":
            node = _Literal(None, "structpb.NullValue")
        else:
            node = _Literal(kind == "true", "bool")
        self.leave(_LITERAL)
        return node


_recursion_lock = threading.Lock()
_T = TypeVar("_T")


def _with_stack(frames: int, fn: Callable[[], _T]) -> _T:
    """Run ``fn`` with room for ``frames`` more Python frames (deeply nested input only)."""
    if frames < 200:
        return fn()
    with _recursion_lock:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(old + frames)
        try:
            return fn()
        finally:
            sys.setrecursionlimit(old)


def _parse_cel(expr: str) -> _Node:
    if len(expr) > _MAX_CODE_POINTS:
        raise Refused(
            "CEL parse error: expression code point size exceeds limit: "
            f"size: {len(expr)}, limit {_MAX_CODE_POINTS}"
        )
    tokens = _Scanner(expr).scan()
    nesting = deepest = 0
    for tok in tokens:
        if tok.kind in ("(", "[", "{", "?"):
            nesting += 1
            deepest = max(deepest, nesting)
        elif tok.kind in (")", "]", "}"):
            nesting -= 1
    parser = _Parser(tokens)
    # Each nesting level costs about a dozen Python frames; ANTLR's limit caps it at 250.
    tree = _with_stack(12 * min(deepest, _MAX_RECURSION + 1), parser.start)
    if parser.late:
        raise parser.late[0]
    if tree.depth > _MAX_RECURSION:
        raise Refused("CEL parse error: max recursion depth exceeded")
    return tree


# ---- the walk of sharding.Parse ---------------------------------------------------------------


def _walk(node: _Node, out: list[tuple[str, int, int]]) -> None:
    if isinstance(node, _Call):
        if node.function == "_||_":
            for arg in node.args:
                _walk(arg, out)
            return
        if node.function == "shardRange":
            out.append(_requirement(node))
            return
        raise Refused(
            f"unsupported function {go_quote(node.function)}; only shardRange() and || are allowed"
        )
    raise Refused(
        f"unexpected expression kind {node.kind}; expected shardRange() call or || operator"
    )


def _requirement(call: _Call) -> tuple[str, int, int]:
    if len(call.args) != 3:
        raise Refused(f"shardRange() requires exactly 3 arguments, got {len(call.args)}")
    path = _field_path(call.args[0])
    if path not in _FIELDS:
        raise Refused(f"unsupported field path {go_quote(path)}; supported: {', '.join(_FIELDS)}")
    start = _hex_bound(call.args[1], "hexStart")
    end = _hex_bound(call.args[2], "hexEnd")
    if start >= end:
        raise Refused(
            f"shard range start {_format_bound(start)} must be less than end {_format_bound(end)}"
        )
    return path, start, end


def _field_path(node: _Node) -> str:
    if isinstance(node, _Ident):
        return node.name
    if isinstance(node, _Select):
        return _field_path(node.operand) + "." + node.name
    raise Refused(
        "shardRange() first argument: expected field path (e.g. object.metadata.uid), "
        f"got expression kind {node.kind}"
    )


def _hex_bound(node: _Node, name: str) -> int:
    if not isinstance(node, _Literal):
        raise Refused(
            f"{name} must be a string literal (e.g. '0xff'), got expression kind {node.kind}"
        )
    if node.go_type != "string":
        raise Refused(f"{name} must be a string literal, got {node.go_type}")
    text = cast(str, node.value)
    if not text.startswith("0x"):
        raise Refused(f"{name} must have '0x' prefix, got {go_quote(text)}")
    digits = text[2:]
    if not digits:
        raise Refused(f"{name}: hex value is required after '0x'")
    size = len(digits.encode("utf-8", "surrogatepass"))  # Go's len() counts bytes
    if size > 17:
        raise Refused(f"{name}: hex value too long ({size} chars, max 17): {go_quote(digits)}")
    for ch in digits:
        if ch not in "0123456789abcdef":
            raise Refused(f"{name}: invalid hex character {go_quote(ch)} in {go_quote(text)}")
    if size == 17:
        if text != "0x10000000000000000":
            raise Refused(
                f"{name}: 17-digit hex value must be '0x10000000000000000' (2^64), "
                f"got {go_quote(text)}"
            )
    elif size != 16:
        padded = "0x" + "0" * (16 - size) + digits
        raise Refused(
            f"{name} must be a 0x-prefixed 16-digit hex value, got {go_quote(text)} "
            f"(did you mean {go_quote(padded)}?)"
        )
    return int(digits, 16)
