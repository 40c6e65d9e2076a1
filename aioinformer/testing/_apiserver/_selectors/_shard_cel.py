"""The fake API server's CEL parser (see :mod:`._shard`).

A table-driven parser of CEL.g4 (cel-go v0.26.0, no macros) over the tokens of
:mod:`._shard_lex`, into tuples (``Node``). It counts open ANTLR rule contexts against cel-go's
limit of 250 per rule, defers the errors cel-go's visitor reports after parsing, measures the
visitor's nesting (``_visit_depth``, limit 250) and refuses sources over 100,000 code points.
``_KINDS`` gives each node shape cel-go's ``ExprKind`` number for the server's messages.
Written independently of the client's :mod:`aioinformer._sharding`.
"""

from __future__ import annotations

import re
import sys
import threading
from typing import Any, Final

from ._shard_lex import ShardSelectorRefused, Token, _cel_error, _lex, _unquote

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
