"""The recursive-descent parser of the client's CEL parser (see :mod:`._cel`).

``_Parser`` walks the tokens of :mod:`._cel_scan` over the whole CEL.g4 grammar (cel-go
v0.26.0, no macros), one method per rule, into the tree of :mod:`._cel_scan`. It counts how deep
each rule is entered like ANTLR does (left-recursion steps included) and refuses more than 250
levels of any one rule, records the errors cel-go's visitor reports after a successful parse
(``late``), and builds nodes that carry the visitor's nesting depth. cel-go's input limits
(``_MAX_CODE_POINTS``, ``_MAX_RECURSION``) are defined here too.
"""

from __future__ import annotations

from typing import Final

from ._cel_scan import (
    _LIST_KIND,
    _MAP_KIND,
    _STRUCT_KIND,
    Refused,
    _Call,
    _Ident,
    _Literal,
    _Node,
    _Select,
    _Tok,
)

_MAX_CODE_POINTS: Final = 100_000
_MAX_RECURSION: Final = 250

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
