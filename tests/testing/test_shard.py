"""The fake API server's shard selectors (KEP-5866), and agreement with the client's.

Golden tables: ``tests/shard_vectors.py`` (each row cites its section of
``shared/reference/state-of-the-art-2026.md``, SOTA), run here against the fake server's own
implementation and compared with the client's, which shares no code with it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aioinformer._sharding import parse_shard_selector
from aioinformer.errors import InvalidShardSelectorError
from aioinformer.testing._apiserver._selectors._shard import (
    ShardFilter,
    ShardSelectorRefused,
    hash_field,
    hex_less,
    parse_shard_filter,
)

from ..shard_vectors import (
    ACCEPTED,
    BOUNDARIES,
    HASH_VECTORS,
    REJECTED,
    ROUND_TRIP,
    Accepted,
    Rejected,
)


def _bound(value: int) -> str:
    return "0x10000000000000000" if value == 1 << 64 else f"0x{value:016x}"


def _shard(i: int, n: int, path: str = "object.metadata.uid") -> ShardFilter:
    bounds = BOUNDARIES[n]
    return ShardFilter(((path, _bound(bounds[i]), _bound(bounds[i + 1])),))


@pytest.mark.parametrize(("value", "expected", "of2", "of4"), HASH_VECTORS, ids=repr)
def test_hash_vectors(value: str, expected: str, of2: int, of4: int) -> None:
    """SOTA §1.7 vectors: HashField, and the shard of N=2 and N=4 (boundaries from §1.7)."""
    assert hash_field(value) == expected
    for path in ("object.metadata.uid", "object.metadata.namespace"):
        obj = {"metadata": {"uid": value, "namespace": value}}
        assert [i for i in range(2) if _shard(i, 2, path).matches(obj)] == [of2]
        assert [i for i in range(4) if _shard(i, 4, path).matches(obj)] == [of4]


def test_hex_less() -> None:
    """SOTA §1.5 HexLess: a shorter string is smaller, else lexicographic."""
    assert hex_less("0xffffffffffffffff", "0x10000000000000000")
    assert not hex_less("0x10000000000000000", "0xffffffffffffffff")
    assert hex_less("0x0000000000000000", "0x0000000000000001")
    assert not hex_less("0x8000000000000000", "0x8000000000000000")


def test_missing_field_is_empty() -> None:
    """SOTA §1.4: an unset field resolves to "" (cluster-scoped objects: 0xcbf29ce484222325)."""
    exact = ShardFilter(
        (("object.metadata.namespace", "0xcbf29ce484222325", "0xcbf29ce484222326"),)
    )
    assert exact.matches({"metadata": {"name": "node-1"}})
    assert exact.matches({"kind": "NoMetadata"})


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda c: c.ref)
def test_accepted(case: Accepted) -> None:
    """Accepted vectors: the fake echoes the canonical form (SOTA §1.3 "Canonical form"), as the
    client renders it."""
    parsed = parse_shard_filter(case.text)
    assert parsed.string() == case.canonical
    assert parsed.string() == str(parse_shard_selector(case.text))
    assert parse_shard_filter(parsed.string()) == parsed


@pytest.mark.parametrize("case", REJECTED, ids=lambda c: c.ref)
def test_rejected(case: Rejected) -> None:
    """Rejected vectors: the fake refuses with Parse's message; the HTTP message has the prefix
    ``invalid shard selector:`` (SOTA §1.3 "Error response"); the client says the same."""
    with pytest.raises(ShardSelectorRefused) as caught:
        parse_shard_filter(case.text)
    reason = caught.value.reason
    assert reason.startswith(case.reason) if case.prefix else reason == case.reason
    assert caught.value.http_message == f"invalid shard selector: {reason}"
    with pytest.raises(InvalidShardSelectorError) as client:
        parse_shard_selector(case.text)
    if not case.prefix:
        assert client.value.reason == reason


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip(text: str) -> None:
    """SOTA §1.3: parser_test.go TestParseRoundTrip."""
    assert parse_shard_filter(text).string() == text


# ---- the two implementations agree on generated input ----------------------------------------


def _outcome(text: str) -> tuple[str, str]:
    """("ok", canonical) or ("error", reason) from the fake, checked against the client."""
    try:
        fake = ("ok", parse_shard_filter(text).string())
    except ShardSelectorRefused as refused:
        fake = ("error", refused.reason)
    try:
        client = ("ok", str(parse_shard_selector(text)))
    except InvalidShardSelectorError as error:
        client = ("error", error.reason)
    if "Syntax error" in fake[1] or "Syntax error" in client[1]:
        # ANTLR's syntax messages are not reproduced; both must refuse as a syntax error.
        assert fake[0] == client[0] == "error", text
        assert "Syntax error" in fake[1] and "Syntax error" in client[1], (text, fake, client)
    else:
        assert fake == client, text
    return fake


_PIECES = [
    *("shardRange", "object", "metadata", "uid", "namespace", "a", "_x", "in", "true", "null"),
    *("'0x0000000000000000'", "'0x8000000000000000'", "'0x10000000000000000'", "'0x0'"),
    *("(", ")", "[", "]", "{", "}", ".", ",", ":", "?", "!", "-", "+", "*", "||", "&&", "=="),
    *("1", "1u", "1.5", "0x1f", ".5", "e5", "9223372036854775808", "1e999"),
    *("'", '"', "'''", "r", "b", "`", "`uid`", "\\", "\\x41", "\\ud800", "\\101"),
    *(" ", "\n", "\r", "\v", "\u3000", "//", "é"),
]


@settings(max_examples=400)
@given(st.lists(st.sampled_from(_PIECES), max_size=30))
def test_agree_on_token_soup(pieces: list[str]) -> None:
    """Random token sequences: the same verdict and the same message (syntax errors aside)."""
    _outcome("".join(pieces))


_RANGE = "shardRange({}, {}, {})"
_paths = st.sampled_from(
    ["object.metadata.uid", "object.metadata.namespace", "object.metadata.name", "x", "a.b"]
)
_hex = st.sampled_from(
    [
        "'0x0000000000000000'",
        '"0x8000000000000000"',
        "r'0x10000000000000000'",
        "'''0xffffffffffffffff'''",
        r"'\x30x4000000000000000'",
        "'0x0'",
        "1",
        "b'0x0000000000000000'",
    ]
)


def _cel(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """One level of CEL syntax around smaller expressions."""
    return st.one_of(
        st.tuples(children, st.sampled_from([" || ", " && ", " + ", " == ", " in "]), children).map(
            "".join
        ),
        children.map(lambda c: f"({c})"),
        children.map(lambda c: f"!!{c}"),
        children.map(lambda c: f"-{c}"),
        st.tuples(children, children).map(lambda p: f"true ? {p[0]} : {p[1]}"),
        st.lists(children, max_size=3).map(lambda cs: f"[{', '.join(cs)}]"),
        st.tuples(children, children).map(lambda p: f"{{{p[0]}: {p[1]}}}"),
        st.tuples(children, children).map(lambda p: f"{p[0]}.{p[1]}"),
        children.map(lambda c: f"{c}[0]"),
        children.map(lambda c: f"a.b{{f: {c}}}"),
        children.map(lambda c: f"f({c})"),
    )


_leaves: st.SearchStrategy[Any] = st.one_of(
    st.tuples(_paths, _hex, _hex).map(lambda a: _RANGE.format(*a)),
    st.sampled_from(["x", "1", "'s'", "null", "object.metadata.uid", "has(x)"]),
)


@settings(max_examples=300)
@given(st.recursive(_leaves, _cel, max_leaves=8))
def test_agree_on_generated_cel(text: str) -> None:
    """Random CEL expressions built around shardRange calls: the same verdict, canonical form
    and message from both implementations."""
    _outcome(text)


@given(st.text(max_size=40))
def test_agree_on_any_text(text: str) -> None:
    _outcome(text)
