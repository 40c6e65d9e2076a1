"""The fake API server's shard selectors (KEP-5866 ``shardSelector``), written on its own.

This is the server's side, kept apart from the client's :mod:`aioinformer._sharding` on
purpose (the fake is an oracle): it shares no code with it and is built differently — a
regular-expression lexer that picks the longest match like ANTLR (:mod:`._shard_lex`), a
table-driven parser into tuples (:mod:`._shard_cel`), and bounds kept as the hex strings the
server compares with ``HexLess``. This module holds the feature gate, the parsed filter and
its matching, and ``Parse``'s walk over the tree.

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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._shard_cel import _KINDS, Node, _parse_cel
from ._shard_lex import ShardSelectorRefused

__all__ = ["ShardFilter", "ShardSelectorRefused", "ShardingGate", "parse_shard_filter"]


@dataclass(slots=True)
class ShardingGate:
    """The ``ShardedListAndWatch`` feature gate of one fake server (mutable at run time).

    Off, the server behaves like Kubernetes before 1.36 or with the gate off: the
    ``shardSelector`` parameter is ignored (not even parsed) and lists carry no ``shardInfo``.
    """

    enabled: bool = True


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
