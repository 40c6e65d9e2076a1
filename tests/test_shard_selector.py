"""Shard selectors (KEP-5866) on the client: build, parse, render, hash and match.

Sources: ``shared/reference/state-of-the-art-2026.md`` (SOTA) §1.3-1.7; each vector row in
``tests/shard_vectors.py`` names its own section.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aioinformer._sharding import (
    FIELD_NAMESPACE,
    FIELD_UID,
    HASH_SPACE,
    ShardField,
    ShardSelector,
    equal_shards,
    hash_field,
    parse_shard_selector,
    shard,
    shard_boundary,
    shard_range,
    union,
)
from aioinformer.errors import InformerError, InvalidShardSelectorError

from .shard_vectors import (
    ACCEPTED,
    BOUNDARIES,
    HASH_VECTORS,
    REJECTED,
    ROUND_TRIP,
    Accepted,
    Rejected,
)

FIELDS: list[ShardField] = [FIELD_UID, FIELD_NAMESPACE]


def _pod(uid: Any = None, namespace: Any = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "p"}
    if uid is not None:
        metadata["uid"] = uid
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"metadata": metadata}


# ---- SOTA §1.4 hash, §1.7 vectors -------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected", "of2", "of4"), HASH_VECTORS, ids=repr)
def test_hash_vectors(value: str, expected: str, of2: int, of4: int) -> None:
    """SOTA §1.7 test vectors (FNV-1a 64 of the UTF-8 bytes, §1.4) and their 2- and 4-way shards."""
    assert f"{hash_field(value):016x}" == expected
    obj = _pod(uid=value, namespace=value)
    for n, expected_shard in ((2, of2), (4, of4)):
        for field in FIELDS:
            owners = [i for i, s in enumerate(equal_shards(n, field=field)) if s.matches(obj)]
            assert owners == [expected_shard]


def test_hash_of_non_ascii_is_over_utf8_bytes() -> None:
    """SOTA §1.4 "A Python port hashes value.encode('utf-8')"."""
    manual = 0xCBF29CE484222325
    for byte in "é-ü".encode():
        manual = ((manual ^ byte) * 0x100000001B3) % HASH_SPACE
    assert hash_field("é-ü") == manual


@pytest.mark.parametrize(
    "obj",
    [
        {"metadata": {"name": "node-1"}},  # cluster-scoped: no namespace
        {"metadata": {"name": "x", "namespace": ""}},
        {"metadata": {"name": "x", "namespace": 7}},  # not a string
        {"metadata": None},
        {"kind": "NoMetadata"},
    ],
)
def test_missing_field_hashes_as_empty(obj: dict[str, Any]) -> None:
    """SOTA §1.4 "Field resolution": the accessor returns "" for an unset field, so every
    cluster-scoped object hashes to the offset basis 0xcbf29ce484222325 under namespace sharding
    (§1.8 item 6). Dicts are read like unstructured objects (apimachinery unstructured
    ``getNestedString``: missing or mistyped is "")."""
    for field in FIELDS:
        selector = shard_range(field, 0xCBF29CE484222325, 0xCBF29CE484222326)
        assert selector.hash_of(obj) == 0xCBF29CE484222325
        assert selector.matches(obj)
        assert not shard_range(field, 0, 0xCBF29CE484222325).matches(obj)


def test_matches_reads_the_selected_field() -> None:
    """SOTA §1.4: uid sharding hashes metadata.uid, namespace sharding metadata.namespace."""
    obj = _pod(uid="ab", namespace="a")  # "ab" is in 4-way shard 0, "a" in shard 2
    assert shard(0, 4, field=FIELD_UID).matches(obj)
    assert not shard(0, 4, field=FIELD_NAMESPACE).matches(obj)
    assert shard(2, 4, field=FIELD_NAMESPACE).matches(obj)


def test_ranges_are_half_open() -> None:
    """SOTA §1.5: [Start, End): a hash equal to the start matches, one equal to the end does not."""
    h = hash_field("abc")
    obj = _pod(uid="abc")
    assert shard_range(FIELD_UID, h, h + 1).matches(obj)
    assert not shard_range(FIELD_UID, h - 1, h).matches(obj)
    assert shard_range(FIELD_UID, 0, HASH_SPACE).matches(obj)  # §1.5 "Full space"
    assert shard_range(FIELD_UID, h, h + 1).contains(h)
    assert not shard_range(FIELD_UID, h, h + 1).contains(h + 1)


def test_union_matches_any_range() -> None:
    """SOTA §1.5 "Union": a selector matches if any requirement contains the hash."""
    selector = shard(0, 4) | shard(3, 4)
    assert selector.matches(_pod(uid="ab"))  # shard 0
    assert selector.matches(_pod(uid="abc"))  # shard 3
    assert not selector.matches(_pod(uid="a"))  # shard 2


# ---- SOTA §1.7 "Shard boundaries for N equal ranges" -----------------------------------------


@pytest.mark.parametrize(("n", "bounds"), sorted(BOUNDARIES.items()))
def test_boundaries(n: int, bounds: list[int]) -> None:
    """SOTA §1.7: boundary(i) = floor(i * 2^64 / N), boundary(N) = 2^64."""
    assert [shard_boundary(i, n) for i in range(n + 1)] == bounds
    assert [s.ranges for s in equal_shards(n)] == [((bounds[i], bounds[i + 1]),) for i in range(n)]


def test_boundaries_rounding_differs_from_floor_times_i() -> None:
    """SOTA §1.7 "Rounding matters": floor(2^64/N)*i differs for N=7 at boundaries 4-6."""
    naive = [(HASH_SPACE // 7) * i for i in range(8)]
    formula = [shard_boundary(i, 7) for i in range(8)]
    assert [i for i in range(8) if naive[i] != formula[i]] == [4, 5, 6, 7]
    assert f"{formula[4]:016x}".endswith("49") and f"{naive[4]:016x}".endswith("48")


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 10, 16, 100, 1000])
def test_equal_shards_cover_the_space_exactly_once(n: int) -> None:
    """SOTA §1.7 N-equal-ranges formula: the N shards are contiguous, disjoint and cover
    [0, 2^64); their canonical forms all parse back."""
    shards = equal_shards(n)
    assert shards[0].ranges[0][0] == 0
    assert shards[-1].ranges[0][1] == HASH_SPACE
    for left, right in itertools.pairwise(shards):
        assert left.ranges[0][1] == right.ranges[0][0]
    assert union(*shards).normalized().ranges == ((0, HASH_SPACE),)
    assert sum(s.ranges[0][1] - s.ranges[0][0] for s in shards) == HASH_SPACE
    assert all(parse_shard_selector(str(s)) == s for s in shards)


@given(n=st.integers(1, 2**20), h=st.integers(0, HASH_SPACE - 1))
def test_every_hash_has_exactly_one_equal_shard(n: int, h: int) -> None:
    """SOTA §1.7: with the shared formula there are no gaps and no overlaps."""
    owner = h * n >> 64  # the shard whose [floor(i*2^64/n), floor((i+1)*2^64/n)) holds h
    start, end = shard(owner, n).ranges[0]
    assert start <= h < end
    if owner > 0:
        assert not shard(owner - 1, n).contains(h)
    if owner < n - 1:
        assert not shard(owner + 1, n).contains(h)


# ---- SOTA §1.3 grammar and validation, §1.7 parser vectors ------------------------------------


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda c: c.ref)
def test_parse_accepts(case: Accepted) -> None:
    """The accepted vectors (each cites its SOTA section) give the expected ranges, and render as
    the canonical form (SOTA §1.3 "Canonical form"), which parses back to the same value."""
    selector = parse_shard_selector(case.text)
    assert selector.field == case.field
    assert selector.ranges == case.ranges
    assert str(selector) == selector.canonical == case.canonical
    assert parse_shard_selector(case.canonical) == selector


@pytest.mark.parametrize("case", REJECTED, ids=lambda c: c.ref)
def test_parse_rejects(case: Rejected) -> None:
    """The rejected vectors raise the typed error with the server's message (SOTA §1.3 "Error
    response": the server answers ``invalid shard selector: <parser message>``)."""
    with pytest.raises(InvalidShardSelectorError) as caught:
        parse_shard_selector(case.text)
    error = caught.value
    if case.prefix:
        assert error.reason.startswith(case.reason)
    else:
        assert error.reason == case.reason
    assert str(error) == f"invalid shard selector: {error.reason}"
    assert error.selector == case.text
    assert isinstance(error, ValueError) and isinstance(error, InformerError)


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip_byte_for_byte(text: str) -> None:
    """SOTA §1.3: parser_test.go TestParseRoundTrip, Parse(s).String() == s."""
    assert str(parse_shard_selector(text)) == text


_bound = st.integers(0, HASH_SPACE)


@st.composite
def selectors(draw: st.DrawFn) -> ShardSelector:
    field = draw(st.sampled_from(FIELDS))
    pairs = draw(
        st.lists(st.tuples(_bound, _bound).filter(lambda p: p[0] != p[1]), min_size=1, max_size=5)
    )
    return ShardSelector(field, tuple((min(p), max(p)) for p in pairs))


@given(selectors())
def test_render_then_parse_is_identity(selector: ShardSelector) -> None:
    """SOTA §1.3 canonical form: parse(str(s)) == s and rendering is stable."""
    parsed = parse_shard_selector(str(selector))
    assert parsed == selector
    assert str(parsed) == str(selector)


_SPACE = st.text(alphabet=" \t\n\r\f", max_size=3)


def _literal(draw: st.DrawFn, value: str) -> str:
    style = draw(st.sampled_from(["'{}'", '"{}"', "'''{}'''", '"""{}"""', "r'{}'", 'R"{}"']))
    return style.format(value)


def _bound_text(value: int) -> str:
    return "0x10000000000000000" if value == HASH_SPACE else f"0x{value:016x}"


@st.composite
def spellings(draw: st.DrawFn) -> tuple[ShardSelector, str]:
    """A selector and one of the many texts the server accepts for it (SOTA §1.3: CEL syntax,
    whitespace, quotes, parentheses, comments)."""
    selector = draw(selectors())
    parts = []
    for start, end in selector.ranges:
        sp = [draw(_SPACE) for _ in range(8)]
        path = f"object{sp[0]}.{sp[1]}metadata{sp[2]}.{sp[3]}{selector.field.rsplit('.', 1)[1]}"
        call = (
            f"shardRange{sp[4]}({sp[5]}{path},{sp[6]}{_literal(draw, _bound_text(start))}"
            f",{sp[7]}{_literal(draw, _bound_text(end))})"
        )
        if draw(st.booleans()):
            call = f"({draw(_SPACE)}{call}{draw(_SPACE)})"
        parts.append(call)
    separator = draw(st.sampled_from(["||", " || ", "\n|| // next\n", "\t||\t"]))
    return selector, draw(_SPACE) + separator.join(parts) + draw(_SPACE)


@given(spellings())
def test_any_accepted_spelling_parses_to_the_canonical_form(
    case: tuple[ShardSelector, str],
) -> None:
    """SOTA §1.3 "[derived] So a request written without spaces or with double quotes is echoed
    in canonical form": whatever the spelling, the value and its rendering are the same."""
    selector, text = case
    parsed = parse_shard_selector(text)
    assert parsed == selector
    assert str(parsed) == selector.canonical


@given(st.text(max_size=60))
def test_parse_never_fails_untyped(text: str) -> None:
    """Any text either parses or raises the typed error (never another exception)."""
    try:
        selector = parse_shard_selector(text)
    except InvalidShardSelectorError:
        return
    assert parse_shard_selector(str(selector)) == selector


# ---- building values -------------------------------------------------------------------------


def test_union_keeps_order_and_requires_one_field() -> None:
    """SOTA §1.3 rule 8 (one field) and the canonical order of requirements."""
    a, b = shard(1, 2), shard(0, 2)
    assert (a | b).ranges == (a.ranges[0], b.ranges[0])
    assert union(a, b) == a | b
    assert (a | b).normalized().ranges == ((0, HASH_SPACE),)
    assert (a | b).fraction == 1.0
    with pytest.raises(InvalidShardSelectorError, match="all shard ranges must use the same field"):
        _ = a | shard(0, 2, field=FIELD_NAMESPACE)


@pytest.mark.parametrize(
    ("field", "ranges", "message"),
    [
        ("object.metadata.name", ((0, 1),), "unsupported field path"),
        (FIELD_UID, (), "at least one range"),
        (FIELD_UID, ((1, 1),), "must be less than end"),
        (FIELD_UID, ((2, 1),), "must be less than end"),
        (FIELD_UID, ((-1, 1),), "not an integer in"),
        (FIELD_UID, ((0, HASH_SPACE + 1),), "not an integer in"),
        (FIELD_UID, ((False, True),), "not an integer in"),
    ],
)
def test_constructor_validates_like_the_server(
    field: Any, ranges: tuple[tuple[int, int], ...], message: str
) -> None:
    """A value can only hold what the server would accept (SOTA §1.3 rules 4, 6, 7)."""
    with pytest.raises(InvalidShardSelectorError, match=message):
        ShardSelector(field, ranges)


def test_shard_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="not in"):
        shard(2, 2)
    with pytest.raises(ValueError, match="1 <= n"):
        equal_shards(0)


def test_values_are_immutable_and_hashable() -> None:
    selector = shard(0, 2)
    assert {selector: 1}[parse_shard_selector(str(selector))] == 1
    with pytest.raises(AttributeError):
        selector.field = FIELD_NAMESPACE  # type: ignore[misc]
