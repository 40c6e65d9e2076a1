"""KEP-5866 shard selector vectors, shared by the client's tests and the fake server's.

Every row cites its source: ``SOTA §x`` is ``shared/reference/state-of-the-art-2026.md``;
``parser_test.go`` is apiserver ``pkg/sharding/parser_test.go`` (v1.36), whose cases the
reference copies in §1.7; ``parser.go`` is the server's ``Parse`` (§1.3), whose messages the
expected reasons reproduce; ``cel-go`` is the CEL parser ``Parse`` runs (v0.26.0, used by
Kubernetes 1.36), read for the cases the reference marks [derived] or does not list.

Data only: the two implementations under test import nothing from each other.
"""

from __future__ import annotations

from dataclasses import dataclass

UID = "object.metadata.uid"
NS = "object.metadata.namespace"
TOP = 1 << 64

# ---- SOTA §1.7 "Test vectors": (input, HashField, 2-way shard, 4-way shard) ---------------------
HASH_VECTORS: list[tuple[str, str, int, int]] = [
    ("", "cbf29ce484222325", 1, 3),
    ("a", "af63dc4c8601ec8c", 1, 2),
    ("ab", "089c4407b545986a", 0, 0),
    ("abc", "e71fa2190541574b", 1, 3),
    ("foobar", "85944171f73967e8", 1, 2),
    ("test", "f9e6e6ef197c2b25", 1, 3),
    ("different", "88f38c6c33321162", 1, 2),
    ("test-uid-123", "d0ba679834556c0b", 1, 3),
    ("test-uid-12345", "d4c53b72f9287c28", 1, 3),
    ("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "93754b7248a00eb9", 1, 2),
    ("uid-a", "8a6b4025215ee3d3", 1, 2),
    ("uid-b", "8a6b4125215ee586", 1, 2),
    ("default", "ebada5168620c5fe", 1, 3),
    ("kube-system", "df65c7bc1d82b35e", 1, 3),
    ("123e4567-e89b-12d3-a456-426614174000", "8da4bf2f8d2be9bf", 1, 2),
    ("00000000-0000-0000-0000-000000000000", "7c384c6218f299f1", 0, 1),
]

# ---- SOTA §1.7 "Shard boundaries for N equal ranges" -------------------------------------------
BOUNDARIES: dict[int, list[int]] = {
    2: [0x0, 0x8000000000000000, TOP],
    3: [0x0, 0x5555555555555555, 0xAAAAAAAAAAAAAAAA, TOP],
    4: [0x0, 0x4000000000000000, 0x8000000000000000, 0xC000000000000000, TOP],
    7: [
        0x0,
        0x2492492492492492,
        0x4924924924924924,
        0x6DB6DB6DB6DB6DB6,
        0x9249249249249249,
        0xB6DB6DB6DB6DB6DB,
        0xDB6DB6DB6DB6DB6D,
        TOP,
    ],
}


@dataclass(frozen=True)
class Accepted:
    """``text`` parses to ``ranges`` of ``field`` and renders as ``canonical``."""

    ref: str
    text: str
    field: str
    ranges: tuple[tuple[int, int], ...]

    @property
    def canonical(self) -> str:
        return " || ".join(
            f"shardRange({self.field}, '0x{s:016x}', '{_end(e)}')" for s, e in self.ranges
        )


def _end(value: int) -> str:
    return "0x10000000000000000" if value == TOP else f"0x{value:016x}"


@dataclass(frozen=True)
class Rejected:
    """``text`` is refused; ``reason`` is the server's message, or its start (``prefix=True``)
    where the message comes from ANTLR's error reporting, which is not reproduced word for word."""

    ref: str
    text: str
    reason: str
    prefix: bool = False


R0 = "'0x0000000000000000'"
R8 = "'0x8000000000000000'"
R16 = "'0x10000000000000000'"
HALF = ((0, 1 << 63),)


def _uid(start: str = R0, end: str = R8) -> str:
    return f"shardRange(object.metadata.uid, {start}, {end})"


ACCEPTED: list[Accepted] = [
    # SOTA §1.7 "Parser vectors" (parser_test.go TestParse, accepted rows)
    Accepted("SOTA §1.7; parser_test.go 'single requirement with uid'", _uid(), UID, HALF),
    Accepted(
        "SOTA §1.7; parser_test.go 'full range with 2^64 end'", _uid(R0, R16), UID, ((0, TOP),)
    ),
    Accepted(
        "SOTA §1.7; parser_test.go 'namespace field'",
        "shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
        NS,
        ((0xAA, 0xFF),),
    ),
    Accepted(
        "SOTA §1.7; parser_test.go 'two requirements with ||'",
        f"{_uid()} || {_uid(R8, R16)}",
        UID,
        ((0, 1 << 63), (1 << 63, TOP)),
    ),
    Accepted(
        "SOTA §1.7; parser_test.go 'three requirements with ||'",
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000005') || "
        "shardRange(object.metadata.uid, '0x0000000000000005', '0x000000000000000a') || "
        "shardRange(object.metadata.uid, '0x000000000000000a', '0x000000000000000f')",
        UID,
        ((0, 5), (5, 10), (10, 15)),
    ),
    Accepted(
        "SOTA §1.7; parser_test.go 'no spaces'",
        "shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')",
        UID,
        HALF,
    ),
    Accepted(
        "SOTA §1.7; parser_test.go 'extra whitespace'",
        "  shardRange( object.metadata.uid ,  '0x0000000000000000' ,  '0x8000000000000000' )  ",
        UID,
        HALF,
    ),
    # SOTA §1.3 rule 5 [derived]: double-quoted and raw CEL strings are Go strings too.
    Accepted(
        "SOTA §1.3 rule 5: double quotes",
        'shardRange(object.metadata.uid, "0x0000000000000000", "0x8000000000000000")',
        UID,
        HALF,
    ),
    Accepted(
        "SOTA §1.3 rule 5: raw strings",
        _uid("r'0x0000000000000000'", 'R"0x8000000000000000"'),
        UID,
        HALF,
    ),
    # SOTA §1.3: "parentheses are allowed by CEL"; overlaps, duplicates, any order (not checked).
    Accepted("SOTA §1.3 grammar: parentheses", f"(({_uid()}))", UID, HALF),
    Accepted(
        "SOTA §1.3 grammar: parenthesised || groups keep their order",
        f"{_uid(R8, R16)} || ({_uid()} || {_uid()})",
        UID,
        ((1 << 63, TOP), (0, 1 << 63), (0, 1 << 63)),
    ),
    Accepted(
        "SOTA §1.3 'What is not checked': overlapping ranges",
        f"{_uid(R0, R16)} || {_uid()}",
        UID,
        ((0, TOP), (0, 1 << 63)),
    ),
    Accepted(
        "SOTA §1.3: the 17-digit bound is also a valid start (then no end is greater)",
        _uid("'0xffffffffffffffff'", R16),
        UID,
        ((TOP - 1, TOP),),
    ),
    # SOTA §1.3 "Leading and trailing whitespace is trimmed first": Go's strings.TrimSpace
    # trims Unicode White_Space (\v, NBSP, U+3000, ...), beyond CEL's own whitespace.
    Accepted("SOTA §1.3: Go TrimSpace", f"\v\u00a0\u3000{_uid()}\u2029\x85", UID, HALF),
    # cel-go lexer (CEL.g4 WHITESPACE, COMMENT): newlines, tabs, form feeds and // comments.
    Accepted(
        "cel-go CEL.g4: comments and newlines",
        f"// shard 0\n{_uid()}\t// the lower half\n",
        UID,
        HALF,
    ),
    Accepted(
        "cel-go CEL.g4: whitespace inside the field path",
        "shardRange(object . metadata\n.uid, '0x0000000000000000', '0x8000000000000000')",
        UID,
        HALF,
    ),
    # cel-go CEL.g4 STRING and unescape.go: the bound is the literal's value after unescaping.
    Accepted(
        "cel-go unescape.go: escapes in a bound",
        _uid(r"'\x30x0000000000000000'", r"'\060\x78\u0038000000000000000'"),
        UID,
        HALF,
    ),
    Accepted(
        "cel-go CEL.g4: triple-quoted strings",
        _uid("'''0x0000000000000000'''", '"""0x8000000000000000"""'),
        UID,
        HALF,
    ),
    # cel-go parser.go VisitLogicalNot/VisitNegate drop an even number of ! or -.
    Accepted("cel-go parser.go VisitLogicalNot: !! is dropped", f"!!{_uid()}", UID, HALF),
    Accepted(
        "cel-go parser.go VisitNegate: -- is dropped", f"--{_uid()} || !!!!{_uid()}", UID, HALF * 2
    ),
    Accepted(
        "cel-go parser.go VisitNegate: -- before an argument is dropped",
        "shardRange(!!object.metadata.uid, --'0x0000000000000000', '0x8000000000000000')",
        UID,
        HALF,
    ),
    # parser.go walkExpr checks call.FunctionName() and call.Args(); a receiver-style call's
    # target is not an argument, so the server ignores it (the canonical form drops it).
    Accepted("parser.go walkExpr: receiver-style call, target ignored", f"x.{_uid()}", UID, HALF),
    Accepted(
        "parser.go walkExpr: any receiver expression",
        f"[1, {{'a': 2}}, a.b{{c: 3}}][0].{_uid()}",
        UID,
        HALF,
    ),
    Accepted(
        # ANTLR counts each rule's depth, left-recursion steps included: at 246 parentheses the
        # path's two selects take the member rule to 250 (cel-go's maximum).
        "cel-go parser.go: 246 nested parentheses are within the recursion limit",
        "(" * 246 + _uid() + ")" * 246,
        UID,
        HALF,
    ),
]

# Where a receiver, comment or escape differs from the canonical form, the canonical rendering
# still round-trips (checked in the tests by parsing ``canonical`` again).

ROUND_TRIP: list[str] = [
    # SOTA §1.3 "Canonical form"; parser_test.go TestParseRoundTrip, byte for byte.
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
    "shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || "
    "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
]

_FIELDS_HINT = "supported: object.metadata.uid, object.metadata.namespace"
_ONLY = "only shardRange() and || are allowed"

REJECTED: list[Rejected] = [
    # SOTA §1.7 "Parser vectors", rejected rows (parser_test.go TestParse error cases), with
    # parser.go's messages (SOTA §1.3 rules 1-8).
    Rejected(
        "SOTA §1.3 rule 1; parser_test.go 'empty string'",
        "",
        "empty shard selector is not allowed; omit the parameter for unfiltered lists",
    ),
    Rejected(
        "SOTA §1.3 rule 6; parser_test.go 'missing 0x prefix on start'",
        _uid("'0000000000000000'"),
        "hexStart must have '0x' prefix, got \"0000000000000000\"",
    ),
    Rejected(
        "SOTA §1.3 rule 6; parser_test.go 'missing 0x prefix on end'",
        _uid(R0, "'8000000000000000'"),
        "hexEnd must have '0x' prefix, got \"8000000000000000\"",
    ),
    Rejected(
        "SOTA §1.3 rule 6; parser_test.go 'empty after 0x prefix'",
        _uid("'0x'"),
        "hexStart: hex value is required after '0x'",
    ),
    Rejected(
        "SOTA §1.3 rule 4; parser_test.go 'name field unsupported'",
        "shardRange(object.metadata.name, '0x00', '0x80')",
        f'unsupported field path "object.metadata.name"; {_FIELDS_HINT}',
    ),
    Rejected(
        "SOTA §1.3 rule 4; parser_test.go 'unsupported field'",
        "shardRange(object.metadata.labels, '0x00', '0x80')",
        f'unsupported field path "object.metadata.labels"; {_FIELDS_HINT}',
    ),
    Rejected(
        "SOTA §1.3 rule 2; parser_test.go 'unknown function'",
        "invalidFunc(object.metadata.uid, '0x00', '0x80')",
        f'unsupported function "invalidFunc"; {_ONLY}',
    ),
    Rejected(
        "SOTA §1.3 rule 6; parser_test.go 'hex too long (18 chars)'",
        "shardRange(object.metadata.uid, '0x000000000000000000', '0x80')",
        'hexStart: hex value too long (18 chars, max 17): "000000000000000000"',
    ),
    Rejected(
        "SOTA §1.3 rule 6; parser_test.go 'invalid hex char'",
        "shardRange(object.metadata.uid, '0x0g', '0x80')",
        'hexStart: invalid hex character "g" in "0x0g"',
    ),
    Rejected(
        "SOTA §1.3 rule 2; parser_test.go '&& operator not allowed'",
        "shardRange(object.metadata.uid, '0x0', '0x8') && "
        "shardRange(object.metadata.uid, '0x8', '0xf')",
        f'unsupported function "_&&_"; {_ONLY}',
    ),
    Rejected(
        "SOTA §1.3 rule 5; parser_test.go 'integer literal instead of string'",
        "shardRange(object.metadata.uid, 0, 8)",
        "hexStart must be a string literal, got int64",
    ),
    Rejected(
        "SOTA §1.3 rule 2; parser_test.go 'comparison operator'",
        "object.metadata.uid > '0x0'",
        f'unsupported function "_>_"; {_ONLY}',
    ),
    Rejected(
        "SOTA §1.3 rule 3; parser_test.go 'wrong number of arguments'",
        "shardRange(object.metadata.uid, '0x0')",
        "shardRange() requires exactly 3 arguments, got 2",
    ),
    Rejected(
        "SOTA §1.3 rule 5; parser_test.go 'nested function call'",
        "shardRange(object.metadata.uid, hex(0), '0x8')",
        "hexStart must be a string literal (e.g. '0xff'), got expression kind 1",
    ),
    Rejected(
        "SOTA §1.3 rule 8; parser_test.go 'mixed field keys'",
        f"{_uid()} || shardRange(object.metadata.namespace, {R8}, {R16})",
        'all shard ranges must use the same field, got "object.metadata.uid" and '
        '"object.metadata.namespace"',
    ),
    Rejected(
        "SOTA §1.3 rule 6 (the godoc example); parser_test.go 'short hex rejected'",
        _uid("'0x0'"),
        'hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" '
        '(did you mean "0x0000000000000000"?)',
    ),
    Rejected(
        "SOTA §1.3 rule 6; parser_test.go 'short hex rejected on end'",
        _uid(R0, "'0xff'"),
        'hexEnd must be a 0x-prefixed 16-digit hex value, got "0xff" '
        '(did you mean "0x00000000000000ff"?)',
    ),
    Rejected(
        "SOTA §1.3 rule 7; parser_test.go 'start equals end'",
        _uid(R8, R8),
        "shard range start 0x8000000000000000 must be less than end 0x8000000000000000",
    ),
    Rejected(
        "SOTA §1.3 rule 7; parser_test.go 'start greater than end'",
        _uid("'0xffffffffffffffff'", R0),
        "shard range start 0xffffffffffffffff must be less than end 0x0000000000000000",
    ),
    # SOTA §1.3 rules, cases the reference states but parser_test.go does not list.
    Rejected(
        "SOTA §1.3 rule 1 [derived]: whitespace-only",
        " \t\n ",
        "empty shard selector is not allowed; omit the parameter for unfiltered lists",
    ),
    Rejected(
        "SOTA §1.3 rule 6: uppercase hex",
        _uid("'0xABCDEF0000000000'", R16),
        'hexStart: invalid hex character "A" in "0xABCDEF0000000000"',
    ),
    Rejected(
        "SOTA §1.3 rule 6: 17 digits other than 2^64",
        _uid(R0, "'0x10000000000000001'"),
        "hexEnd: 17-digit hex value must be '0x10000000000000000' (2^64), got "
        '"0x10000000000000001"',
    ),
    Rejected(
        "SOTA §1.3 rule 7: 2^64 as the start",
        _uid(R16, "'0xffffffffffffffff'"),
        "shard range start 0x10000000000000000 must be less than end 0xffffffffffffffff",
    ),
    Rejected(
        "SOTA §1.3 rule 4: fieldSelector-style path",
        "shardRange(metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        f'unsupported field path "metadata.uid"; {_FIELDS_HINT}',
    ),
    Rejected(
        "SOTA §1.3 rule 4: a string, not a path",
        _uid().replace("object.metadata.uid", "'object.metadata.uid'"),
        "shardRange() first argument: expected field path (e.g. object.metadata.uid), "
        "got expression kind 5",
    ),
    Rejected(
        "SOTA §1.3 rule 2: index syntax object['metadata']",
        "shardRange(object['metadata'].uid, '0x0000000000000000', '0x8000000000000000')",
        "shardRange() first argument: expected field path (e.g. object.metadata.uid), "
        "got expression kind 1",
    ),
    Rejected(
        "SOTA §1.3 rule 2: has()",
        "has(object.metadata.uid)",
        f'unsupported function "has"; {_ONLY}',
    ),
    Rejected("SOTA §1.3 rule 2: negation", f"!{_uid()}", f'unsupported function "!_"; {_ONLY}'),
    Rejected(
        "SOTA §1.3 rule 2: a bare path",
        "object.metadata.uid",
        "unexpected expression kind 7; expected shardRange() call or || operator",
    ),
    Rejected(
        "SOTA §1.3 rule 2: a literal",
        "'0x0000000000000000'",
        "unexpected expression kind 5; expected shardRange() call or || operator",
    ),
    Rejected(
        "SOTA §1.3 rule 2: || with a non-range",
        f"{_uid()} || true",
        "unexpected expression kind 5; expected shardRange() call or || operator",
    ),
    Rejected(
        "SOTA §1.3 rule 3: four arguments",
        _uid(R0, f"{R8}, {R16}"),
        "shardRange() requires exactly 3 arguments, got 4",
    ),
    Rejected(
        "SOTA §1.3 rule 5: bytes literal",
        _uid("b'0x0000000000000000'"),
        "hexStart must be a string literal, got []uint8",
    ),
    Rejected(
        "SOTA §1.3 rule 5: uint literal",
        _uid(R0, "8u"),
        "hexEnd must be a string literal, got uint64",
    ),
    Rejected(
        "SOTA §1.3 rule 5: double literal",
        _uid("0.5"),
        "hexStart must be a string literal, got float64",
    ),
    Rejected(
        "SOTA §1.3 rule 5: bool literal",
        _uid("true"),
        "hexStart must be a string literal, got bool",
    ),
    Rejected(
        "SOTA §1.3 rule 5: null literal",
        _uid("null"),
        "hexStart must be a string literal, got structpb.NullValue",
    ),
    Rejected(
        "SOTA §1.3 rule 5: a list",
        _uid("['0x0000000000000000']"),
        "hexStart must be a string literal (e.g. '0xff'), got expression kind 4",
    ),
    Rejected(
        "SOTA §1.3 rule 5: an identifier",
        _uid("start"),
        "hexStart must be a string literal (e.g. '0xff'), got expression kind 3",
    ),
    Rejected(
        "SOTA §1.3 rule 6: a non-ASCII digit (Go counts bytes)",
        _uid("'0x000000000000000\u0660'"),
        'hexStart: invalid hex character "\u0660" in "0x000000000000000\u0660"',
    ),
    Rejected(
        "cel-go parser.go: a leading-dot function name is not shardRange",
        f".{_uid()}",
        f'unsupported function ".shardRange"; {_ONLY}',
    ),
    Rejected(
        "cel-go parser.go: a leading-dot path",
        "shardRange(.object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        f'unsupported field path ".object.metadata.uid"; {_FIELDS_HINT}',
    ),
    Rejected(
        "cel-go parser.go VisitConditional: the ternary operator",
        f"true ? {_uid()} : {_uid()}",
        f'unsupported function "_?_:_"; {_ONLY}',
    ),
    Rejected(
        "cel-go parser.go: an odd number of - is a negation",
        f"---{_uid()}",
        f'unsupported function "-_"; {_ONLY}',
    ),
    # cel-go visitor errors (SOTA §1.3: "CEL parse error: %s").
    Rejected(
        "cel-go parser.go: reserved identifier",
        f"namespace.{_uid()}",
        "CEL parse error: reserved identifier: namespace",
    ),
    Rejected(
        "cel-go v0.26 parser.go: backtick field names are off by default (Kubernetes 1.36)",
        "shardRange(object.metadata.`uid`, '0x0000000000000000', '0x8000000000000000')",
        "CEL parse error: unsupported syntax: '`'",
    ),
    Rejected(
        "cel-go parser.go: optional field selection",
        f"a.?b.{_uid()}",
        "CEL parse error: unsupported syntax '.?'",
    ),
    Rejected(
        "cel-go parser.go: optional index",
        f"a[?0].{_uid()}",
        "CEL parse error: unsupported syntax '[?'",
    ),
    Rejected(
        "cel-go parser.go VisitInt: int64 overflow",
        f"9223372036854775808.{_uid()}",
        "CEL parse error: invalid int literal",
    ),
    Rejected(
        "cel-go parser.go VisitDouble: out of range",
        f"1e999.{_uid()}",
        "CEL parse error: invalid double literal",
    ),
    Rejected(
        "cel-go unescape.go: a surrogate code point",
        _uid(r"'\ud800'"),
        "CEL parse error: invalid unicode code point",
    ),
    Rejected(
        "cel-go parser.go: expression size limit (100,000 code points)",
        _uid() + " " * 50_000 + "|| " + _uid() + "//" + "x" * 50_000,
        "CEL parse error: expression code point size exceeds limit: size: 100155, limit 100000",
    ),
    Rejected(
        "cel-go parser.go: recursion limit (250 levels of one rule)",
        "(" * 260 + _uid() + ")" * 260,
        "CEL parse error: expression recursion limit exceeded: 250",
    ),
    Rejected(
        "cel-go parser.go: recursion limit, one level past the accepted 246 parentheses",
        "(" * 247 + _uid() + ")" * 247,
        "CEL parse error: expression recursion limit exceeded: 250",
    ),
    Rejected(
        "cel-go parser.go: recursion limit in a long operator chain",
        "1" + " + 1" * 300,
        "CEL parse error: expression recursion limit exceeded: 250",
    ),
    # Syntax errors: ANTLR's wording is not reproduced; the prefix is.
    Rejected(
        "cel-go CEL.g4: unbalanced parenthesis",
        _uid() + ")",
        "CEL parse error: Syntax error:",
        True,
    ),
    Rejected(
        "cel-go CEL.g4: missing parenthesis", _uid()[:-1], "CEL parse error: Syntax error:", True
    ),
    Rejected(
        "cel-go CEL.g4: a single |", _uid() + " | " + _uid(), "CEL parse error: Syntax error:", True
    ),
    Rejected(
        "cel-go CEL.g4: unterminated string",
        _uid(R0, "'0x8000000000000000"),
        "CEL parse error: Syntax error:",
        True,
    ),
    Rejected(
        "cel-go CEL.g4: unknown escape", _uid(r"'\q'"), "CEL parse error: Syntax error:", True
    ),
    Rejected(
        "cel-go CEL.g4: newline in a string",
        _uid("'0x00000000\n00000000'"),
        "CEL parse error: Syntax error:",
        True,
    ),
    Rejected(
        "cel-go CEL.g4: trailing comma in a call",
        _uid(R0, R8 + ","),
        "CEL parse error: Syntax error:",
        True,
    ),
    Rejected("cel-go CEL.g4: ! before -", f"!-{_uid()}", "CEL parse error: Syntax error:", True),
    Rejected(
        "cel-go CEL.g4: keyword as a field",
        "shardRange(object.metadata.in, '0x0', '0x8')",
        "CEL parse error: Syntax error:",
        True,
    ),
    Rejected("cel-go CEL.g4: # is no token", "#" + _uid(), "CEL parse error: Syntax error:", True),
    Rejected(
        "cel-go CEL.g4: two selectors side by side",
        _uid() + " " + _uid(),
        "CEL parse error: Syntax error:",
        True,
    ),
]
