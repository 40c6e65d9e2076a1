"""The fake API server's shard selectors (KEP-5866 ``shardSelector``), written on its own.

This is the server's side, kept apart from the client's :mod:`aioinformer._sharding` on
purpose (the fake is an oracle): it shares no code with it and is built differently — a
regular-expression lexer that picks the longest match like ANTLR, a table-driven parser into
tuples, and bounds kept as the hex strings the server compares with ``HexLess``.

Behaviour, from Kubernetes 1.36 (apiserver ``pkg/sharding/parser.go`` ``Parse``; apimachinery
``pkg/sharding`` ``selector.go``, ``hash.go``, ``accessor.go``; cel-go v0.26.0 ``parser``):

* the value is trimmed with Go's ``strings.TrimSpace`` and parsed as CEL without macros;
  the tree must be ``shardRange(<path>, '<start>', '<end>')`` calls joined by ``||``;
* ``<path>`` is ``object.metadata.uid`` or ``object.metadata.namespace``; bounds are string
  literals ``0x`` + 16 lowercase hex digits, or ``0x10000000000000000``; start < end; one path;
* a refusal is a plain Go error, which the handler turns into HTTP 500 with the message
  ``invalid shard selector: <reason>`` (registry ``store.go``; ``ErrorToAPIStatus``);
* an object matches when ``"0x" + HashField(value)`` is in any ``[start, end)``, compared with
  ``HexLess`` (shorter string is smaller, else lexicographic); a missing field is ``""``.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["ShardFilter", "ShardSelectorRefused", "ShardingGate", "parse_shard_filter"]


@dataclass(slots=True)
class ShardingGate:
    """The ``ShardedListAndWatch`` feature gate of one fake server (mutable at run time).

    Off, the server behaves like Kubernetes before 1.36 or with the gate off: the
    ``shardSelector`` parameter is ignored (not even parsed) and lists carry no ``shardInfo``.
    """

    enabled: bool = True


class ShardSelectorRefused(Exception):
    """``Parse`` failed; ``reason`` is its message (the HTTP message adds the prefix)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    @property
    def http_message(self) -> str:
        """The ``message`` of the server's 500 Status."""
        return f"invalid shard selector: {self.reason}"


def hash_field(value: str) -> str:
    """apimachinery ``HashField``: FNV-1a 64 of the bytes, 16 lowercase hex digits, no ``0x``."""
    digest = functools.reduce(
        lambda h, byte: ((h ^ byte) * 1099511628211) % 18446744073709551616,
        value.encode("utf-8"),
        14695981039346656037,
    )
    return format(digest, "016x")


def hex_less(a: str, b: str) -> bool:
    """apimachinery ``HexLess``."""
    return len(a) < len(b) if len(a) != len(b) else a < b


_PATHS: Final = {"object.metadata.uid": "uid", "object.metadata.namespace": "namespace"}


@dataclass(frozen=True)
class ShardFilter:
    """A parsed selector: ``(path, start, end)`` requirements with hex-string bounds."""

    requirements: tuple[tuple[str, str, str], ...]

    def string(self) -> str:
        """``Selector.String()``: what ``metadata.shardInfo.selector`` carries."""
        return " || ".join("shardRange({}, '{}', '{}')".format(*req) for req in self.requirements)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """``Selector.Matches`` on a stored object (read like an unstructured object)."""
        path = self.requirements[0][0]
        meta = obj.get("metadata")
        value = meta.get(_PATHS[path], "") if isinstance(meta, dict) else ""
        hashed = "0x" + hash_field(value if isinstance(value, str) else "")
        return any(
            not hex_less(hashed, start) and hex_less(hashed, end)
            for _, start, end in self.requirements
        )


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


# ---- parser: CEL.g4 into tuples ----------------------------------------------------------------
# Nodes: ("call", function, args, target|None), ("ident", name), ("select", operand, name),
# ("literal", go_type, value), ("list" | "map" | "struct", children).
Node = tuple[Any, ...]
_KINDS: Final = {
    "call": 1,
    "ident": 3,
    "list": 4,
    "literal": 5,
    "map": 6,
    "select": 7,
    "struct": 8,
}
_LIMIT: Final = 250
_BINARY: Final = {
    # token: (function, ANTLR rule, precedence inside the rule)
    "<": ("_<_", "relation", 1),
    "<=": ("_<=_", "relation", 1),
    ">=": ("_>=_", "relation", 1),
    ">": ("_>_", "relation", 1),
    "==": ("_==_", "relation", 1),
    "!=": ("_!=_", "relation", 1),
    "in": ("@in", "relation", 1),
    "*": ("_*_", "calc", 2),
    "/": ("_/_", "calc", 2),
    "%": ("_%_", "calc", 2),
    "+": ("_+_", "calc", 1),
    "-": ("_-_", "calc", 1),
}
_RESERVED: Final = frozenset(
    re.findall(
        r"\w+",
        "as break const continue else false for function if import in let loop package "
        "namespace null return true var void while",
    )
)
_LITERAL_TYPES: Final = {
    "int": "int64",
    "uint": "uint64",
    "float": "float64",
    "string": "string",
    "bytes": "[]uint8",
    "true": "bool",
    "false": "bool",
    "null": "structpb.NullValue",
}


class _Cel:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.at = 0
        self.active: dict[str, int] = {}  # ANTLR rule -> contexts open (its listener's count)
        self.deferred: list[str] = []  # errors cel-go's visitor reports after parsing

    def open(self, rule: str, count: int = 1) -> None:
        for _ in range(count):
            self.active[rule] = self.active.get(rule, 0) + 1
            if self.active[rule] > _LIMIT:
                raise _cel_error(f"expression recursion limit exceeded: {_LIMIT}")

    def close(self, rule: str, count: int = 1) -> None:
        self.active[rule] -= count

    def type_at(self, offset: int = 0) -> str:
        return self.tokens[min(self.at + offset, len(self.tokens) - 1)][0]

    def eat(self, wanted: str | None = None) -> str:
        kind, text = self.tokens[self.at]
        if wanted is not None and kind != wanted:
            raise _cel_error(f"Syntax error: mismatched input '{text}' expecting '{wanted}'")
        self.at += 1
        return text

    def whole(self) -> Node:
        tree = self.expr()
        if self.type_at() != "EOF":
            raise _cel_error(f"Syntax error: extraneous input '{self.tokens[self.at][1]}'")
        return tree

    def expr(self) -> Node:
        self.open("expr")
        node = self.logical("||")
        if self.type_at() == "?":
            self.eat()
            middle = self.logical("||")
            self.eat(":")
            node = ("call", "_?_:_", [node, middle, self.expr()], None)
        self.close("expr")
        return node

    def logical(self, op: str) -> Node:
        rule, inner = ("conditionalOr", "&&") if op == "||" else ("conditionalAnd", None)
        self.open(rule)
        terms = [self.logical(inner) if inner else self.binary("relation", 0)]
        while self.type_at() == op:
            self.eat()
            terms.append(self.logical(inner) if inner else self.binary("relation", 0))
        self.close(rule)
        return terms[0] if len(terms) == 1 else ("call", f"_{op}_", terms, None)

    def binary(self, rule: str, floor: int) -> Node:
        """ANTLR's rewrite of a left-recursive rule: one context when entered, one more per
        operator taken at this level; the right side is the rule again at a higher floor."""
        self.open(rule)
        node = self.binary("calc", 0) if rule == "relation" else self.unary()
        steps = 0
        while self.type_at() in _BINARY:
            function, op_rule, precedence = _BINARY[self.type_at()]
            if op_rule != rule or precedence < floor:
                break
            self.eat()
            self.open(rule)
            steps += 1
            node = ("call", function, [node, self.binary(rule, precedence + 1)], None)
        self.close(rule, 1 + steps)
        return node

    def unary(self) -> Node:
        self.open("unary")
        first = self.type_at()
        ops = 0
        if first == "!" or (first == "-" and self.type_at(1) not in ("int", "float")):
            while self.type_at() == first:
                self.eat()
                ops += 1
        node = self.member()
        if ops % 2:
            node = ("call", "!_" if first == "!" else "-_", [node], None)
        self.close("unary")
        return node

    def member(self) -> Node:
        self.open("member")
        node = self.primary()
        steps = 0
        while self.type_at() in (".", "["):
            self.open("member")
            steps += 1
            if self.eat() == "[":
                optional = self.type_at() == "?" and bool(self.eat())
                node = ("call", "_[_]", [node, self.expr()], None)
                self.eat("]")
                if optional:
                    self.deferred.append("unsupported syntax '[?'")
            elif self.type_at() == "ident" and self.type_at(1) == "(":
                name = self.eat()
                self.eat("(")
                node = ("call", name, self.arguments(")"), node)
                self.eat(")")
            else:
                optional = self.type_at() == "?" and bool(self.eat())
                node = ("select", node, self.field_name())
                if optional:
                    self.deferred.append("unsupported syntax '.?'")
        self.close("member", 1 + steps)
        return node

    def field_name(self) -> str:
        self.open("escapeIdent")
        kind = self.type_at()
        if kind not in ("ident", "escident"):
            raise _cel_error(f"Syntax error: mismatched input '{self.tokens[self.at][1]}'")
        if kind == "escident":
            self.deferred.append("unsupported syntax: '`'")  # off before cel-go v0.28
        name = self.eat()
        self.close("escapeIdent")
        return name

    def arguments(self, closer: str) -> list[Node]:
        if self.type_at() == closer:
            return []
        self.open("exprList")
        args = [self.expr()]
        while self.type_at() == ",":
            self.eat()
            args.append(self.expr())
        self.close("exprList")
        return args

    def primary(self) -> Node:
        self.open("primary")
        kind = self.type_at()
        if kind == "(":
            self.eat()
            node = self.expr()
            self.eat(")")
        elif kind in ("[", "{"):
            self.eat()
            node = self.collection("list" if kind == "[" else "map", "]" if kind == "[" else "}")
        elif kind in _LITERAL_TYPES or (kind == "-" and self.type_at(1) in ("int", "float")):
            node = self.literal()
        elif kind == "ident" or (kind == "." and self.type_at(1) == "ident"):
            node = self.named()
        else:
            raise _cel_error(f"Syntax error: mismatched input '{self.tokens[self.at][1]}'")
        self.close("primary")
        return node

    def named(self) -> Node:
        dot = "." if self.type_at() == "." and self.eat() else ""
        look = 1
        while self.type_at(look) == "." and self.type_at(look + 1) == "ident":
            look += 2
        if self.type_at(look) == "{":  # a message: a.b.C{field: value}
            self.at += look + 1
            return self.collection("struct", "}")
        name = self.eat("ident")
        if name in _RESERVED:
            self.deferred.append(f"reserved identifier: {name}")
        if self.type_at() != "(":
            return ("ident", dot + name)
        self.eat("(")
        node = ("call", dot + name, self.arguments(")"), None)
        self.eat(")")
        return node

    def collection(self, shape: str, closer: str) -> Node:
        rule = {"list": "listInit", "map": "mapInitializerList", "struct": "fieldInitializerList"}
        children: list[Node] = []
        if self.type_at() not in (closer, ","):
            self.open(rule[shape])
            while True:
                if shape == "struct":
                    self.open("optField")
                    if self.type_at() == "?":
                        self.eat()
                        self.deferred.append("unsupported syntax '?'")
                    self.field_name()
                    self.close("optField")
                else:
                    self.open("optExpr")
                    if self.type_at() == "?":
                        self.eat()
                        self.deferred.append("unsupported syntax '?'")
                    children.append(self.expr())
                    self.close("optExpr")
                if shape != "list":
                    self.eat(":")
                    children.append(self.expr())
                if self.type_at() != "," or self.type_at(1) == closer:
                    break
                self.eat()
            self.close(rule[shape])
        if self.type_at() == ",":
            self.eat()
        self.eat(closer)
        return (shape, children)

    def literal(self) -> Node:
        self.open("literal")
        sign = self.eat() if self.type_at() == "-" else ""
        kind, text = self.tokens[self.at]
        self.at += 1
        value: Any = None
        if kind == "int":
            value = int(sign + text.removeprefix("0x"), 16 if text.startswith("0x") else 10)
            if not -(2**63) <= value < 2**63:
                self.deferred.append("invalid int literal")
        elif kind == "uint":
            value = int(text[:-1], 0) if text.startswith("0x") else int(text[:-1])
            if value >= 2**64:
                self.deferred.append("invalid uint literal")
        elif kind == "float":
            value = float(sign + text)
            if abs(value) == float("inf"):
                self.deferred.append("invalid double literal")
        elif kind in ("string", "bytes"):
            try:
                value = _unquote(text[1:] if kind == "bytes" else text, kind == "bytes")
            except ShardSelectorRefused as refused:
                self.deferred.append(refused.reason.removeprefix("CEL parse error: "))
        self.close("literal")
        return ("literal", _LITERAL_TYPES[kind], value)


def _visit_depth(node: Node) -> int:
    """How deep cel-go's visitor nests: binary and ternary operators, selects, member calls and
    indexes count a level (its limit is 250: "max recursion depth exceeded")."""
    if node[0] == "call":
        _, function, args, target = node
        below = max((_visit_depth(n) for n in [*args, *([target] if target else [])]), default=0)
        counted = target is not None or function in _COUNTED
        return below + counted
    if node[0] == "select":
        return _visit_depth(node[1]) + 1
    if node[0] in ("list", "map", "struct"):
        return max((_visit_depth(n) for n in node[1]), default=0)
    return 0


_COUNTED: Final = frozenset(f for f, _, _ in _BINARY.values()) | {"_?_:_", "_[_]"}

_stack_lock = threading.Lock()


def _parse_cel(source: str) -> Node:
    size = len(source)
    if size > 100_000:
        raise _cel_error(f"expression code point size exceeds limit: size: {size}, limit 100000")
    tokens = _lex(source)
    with _stack_lock:  # deep nesting (up to the 250 limit) needs more Python frames
        previous = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous, 10_000))
        try:
            cel = _Cel(tokens)
            tree = cel.whole()
            if cel.deferred:
                raise _cel_error(cel.deferred[0])
            if _visit_depth(tree) > _LIMIT:
                raise _cel_error("max recursion depth exceeded")
        finally:
            sys.setrecursionlimit(previous)
    return tree


# ---- Parse: the walk over the tree --------------------------------------------------------------

_GO_SPACE: Final = "\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
    chr(c) for c in range(0x2000, 0x200B)
)


def parse_shard_filter(text: str) -> ShardFilter:
    """apiserver ``sharding.Parse``.

    :raises ShardSelectorRefused: with ``Parse``'s message.
    """
    source = text.strip(_GO_SPACE)
    if not source:
        raise ShardSelectorRefused(
            "empty shard selector is not allowed; omit the parameter for unfiltered lists"
        )
    requirements = _requirements(_parse_cel(source))
    for key, _, _ in requirements[1:]:
        if key != requirements[0][0]:
            raise ShardSelectorRefused(
                f"all shard ranges must use the same field, got {_q(requirements[0][0])} and "
                f"{_q(key)}"
            )
    return ShardFilter(tuple(requirements))


def _requirements(node: Node) -> list[tuple[str, str, str]]:
    if node[0] != "call":
        raise ShardSelectorRefused(
            f"unexpected expression kind {_KINDS[node[0]]}; "
            "expected shardRange() call or || operator"
        )
    _, function, args, _target = node
    if function == "_||_":
        return [req for arg in args for req in _requirements(arg)]
    if function != "shardRange":
        raise ShardSelectorRefused(
            f"unsupported function {_q(function)}; only shardRange() and || are allowed"
        )
    if len(args) != 3:
        raise ShardSelectorRefused(f"shardRange() requires exactly 3 arguments, got {len(args)}")
    path = _path(args[0])
    if path not in _PATHS:
        raise ShardSelectorRefused(
            f"unsupported field path {_q(path)}; supported: {', '.join(_PATHS)}"
        )
    start, end = _bound(args[1], "hexStart"), _bound(args[2], "hexEnd")
    if not hex_less(start, end):
        raise ShardSelectorRefused(f"shard range start {start} must be less than end {end}")
    return [(path, start, end)]


def _path(node: Node) -> str:
    if node[0] == "ident":
        return str(node[1])
    if node[0] == "select":
        return f"{_path(node[1])}.{node[2]}"
    raise ShardSelectorRefused(
        "shardRange() first argument: expected field path (e.g. object.metadata.uid), got "
        f"expression kind {_KINDS[node[0]]}"
    )


_BOUND: Final = re.compile(r"0x(?:[0-9a-f]{16}|10000000000000000)")


def _bound(node: Node, name: str) -> str:
    if node[0] != "literal":
        raise ShardSelectorRefused(
            f"{name} must be a string literal (e.g. '0xff'), got expression kind {_KINDS[node[0]]}"
        )
    if node[1] != "string":
        raise ShardSelectorRefused(f"{name} must be a string literal, got {node[1]}")
    value: str = node[2]
    if _BOUND.fullmatch(value):
        return value
    # Why not: the checks in Parse's order.
    if not value.startswith("0x"):
        raise ShardSelectorRefused(f"{name} must have '0x' prefix, got {_q(value)}")
    digits = value[2:]
    width = len(digits.encode("utf-8", "surrogatepass"))
    if width == 0:
        raise ShardSelectorRefused(f"{name}: hex value is required after '0x'")
    if width > 17:
        raise ShardSelectorRefused(
            f"{name}: hex value too long ({width} chars, max 17): {_q(digits)}"
        )
    bad = re.search(r"[^0-9a-f]", digits)
    if bad:
        raise ShardSelectorRefused(
            f"{name}: invalid hex character {_q(bad.group())} in {_q(value)}"
        )
    if width == 17:
        raise ShardSelectorRefused(
            f"{name}: 17-digit hex value must be '0x10000000000000000' (2^64), got {_q(value)}"
        )
    raise ShardSelectorRefused(
        f"{name} must be a 0x-prefixed 16-digit hex value, got {_q(value)} "
        f"(did you mean {_q('0x' + digits.zfill(16))}?)"
    )


def _q(text: str) -> str:
    """Go's ``%q`` (strconv.Quote) for the characters a selector can hold."""
    named = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t"}
    named |= {"\v": r"\v", '"': r"\"", "\\": r"\\"}

    def one(ch: str) -> str:
        if ch in named:
            return named[ch]
        if ch.isprintable() and not "\ud800" <= ch <= "\udfff":
            return ch
        code = ord(ch)
        if code < 0x20 or code == 0x7F:
            return f"\\x{code:02x}"
        return ("\\u{:04x}" if code <= 0xFFFF else "\\U{:08x}").format(code)

    return '"' + "".join(map(one, text)) + '"'
