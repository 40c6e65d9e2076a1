"""The API server's shard selector parser (apiserver ``pkg/sharding/parser.go`` ``Parse``).

``Parse`` trims the text (Go ``strings.TrimSpace``), parses it with the cel-go parser without
macros (cel-go v0.26.0, the one Kubernetes 1.36 uses: ``parser/gen/CEL.g4`` and
``parser/parser.go``) and walks the syntax tree: ``shardRange(path, 'start', 'end')`` calls
joined by ``||``. To refuse exactly what the server refuses, the client parses the whole CEL
grammar (lists, maps, messages, operators, every string literal form) with a hand-written
scanner (:mod:`._cel_scan`, which also holds the tree) and a recursive-descent parser, one
method per grammar rule (:mod:`._cel_parse`), and applies cel-go's limits: 100,000 code points,
250 nested levels of any one rule (counted like ANTLR counts them, left-recursion steps
included) and 250 levels of its visitor. This module holds the entry point, the run of the
parser under those limits and the walk of ``Parse``. ANTLR's syntax-error wording is not
reproduced (the ``CEL parse error: Syntax error:`` prefix is); every other message is the
server's.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Final, TypeVar, cast

from ._cel_parse import _MAX_CODE_POINTS, _MAX_RECURSION, _Parser
from ._cel_scan import Refused, _Call, _Ident, _Literal, _Node, _Scanner, _Select

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

# ---- running the parser under cel-go's limits ------------------------------------------------

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
