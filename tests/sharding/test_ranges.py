"""HashRanges: an exact set algebra over ``[0, 2**64)``, checked against a model of points.

The model: a set of hashes is known by which of a handful of "interesting" points it contains
(every bound that occurs plus its neighbours); two normalized range sets that agree on all of
them are equal.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aioinformer._sharding import FIELD_UID, HASH_SPACE, parse_shard_selector, shard_range
from aioinformer._sharding._ranges import EMPTY, FULL, HashRanges

TOP = HASH_SPACE
_bounds = st.one_of(
    st.integers(0, 16), st.integers(TOP - 16, TOP), st.integers(0, TOP), st.just(TOP // 2)
)


@st.composite
def range_sets(draw: st.DrawFn) -> HashRanges:
    pairs = draw(st.lists(st.tuples(_bounds, _bounds), max_size=6))
    return HashRanges((min(a, b), max(a, b)) for a, b in pairs)


def _points(*sets: HashRanges) -> list[int]:
    points = {0, TOP - 1}
    for value in sets:
        for start, end in value:
            points.update(p for p in (start - 1, start, end - 1, end) if 0 <= p < TOP)
    return sorted(points)


@pytest.mark.parametrize(
    ("given_ranges", "normalized"),
    [
        ([], ()),
        ([(5, 5)], ()),
        ([(3, 7), (0, 2)], ((0, 2), (3, 7))),
        ([(0, 2), (2, 4)], ((0, 4),)),  # adjacent ranges merge
        ([(0, 10), (2, 4)], ((0, 10),)),  # a contained range disappears
        ([(TOP - 1, TOP), (0, 1)], ((0, 1), (TOP - 1, TOP))),  # no wrap-around merging
    ],
)
def test_normalization(given_ranges: list[tuple[int, int]], normalized: tuple[object, ...]) -> None:
    assert HashRanges(given_ranges).ranges == normalized


@pytest.mark.parametrize("bad", [[(2, 1)], [(-1, 3)], [(0, TOP + 1)], [(0.5, 1)]])
def test_rejects_ranges_outside_the_space(bad: list[tuple[int, int]]) -> None:
    with pytest.raises(ValueError, match="not a range of the hash space"):
        HashRanges(bad)


@given(range_sets(), range_sets())
def test_set_operations_match_the_point_model(a: HashRanges, b: HashRanges) -> None:
    for p in _points(a, b):
        assert (p in a | b) == (p in a or p in b)
        assert (p in a & b) == (p in a and p in b)
        assert (p in a - b) == (p in a and p not in b)
        assert (p in ~a) == (p not in a)
    assert (a | b).size + (a & b).size == a.size + b.size
    assert a.isdisjoint(b) == (not a & b)
    assert a.issubset(b) == ((a | b) == b)
    assert ~~a == a
    assert (a - b) | (a & b) == a


@given(range_sets())
def test_results_are_normalized(a: HashRanges) -> None:
    for value in (a, ~a, a | ~a, a & ~a):
        assert HashRanges(value.ranges).ranges == value.ranges
    assert a | ~a == FULL
    assert not a & ~a


@given(range_sets())
def test_encoding_round_trips(a: HashRanges) -> None:
    assert HashRanges.decode(a.encode()) == a


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (EMPTY, ""),
        (FULL, "0000000000000000-10000000000000000"),
        (
            HashRanges([(1, 2), (0xC << 60, TOP)]),
            "0000000000000001-0000000000000002,c000000000000000-10000000000000000",
        ),
    ],
)
def test_encoding_vectors(value: HashRanges, text: str) -> None:
    assert value.encode() == text
    assert HashRanges.decode(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "0-1",  # short bounds
        "0000000000000000-0000000000000000",  # empty range
        "0000000000000002-0000000000000001",
        "0000000000000000-0000000000000002,0000000000000002-0000000000000003",  # adjacent
        "0000000000000003-0000000000000004,0000000000000000-0000000000000001",  # unsorted
        "0000000000000000-0000000000000001,",
        "0000000000000000-10000000000000001",
        "000000000000000A-000000000000000B",  # upper case
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
    ],
)
def test_decoding_is_strict(text: str) -> None:
    with pytest.raises(ValueError):
        HashRanges.decode(text)


def test_selectors_round_trip() -> None:
    selector = shard_range(FIELD_UID, 10, 20) | shard_range(FIELD_UID, 0, 10)
    ranges = HashRanges.of(selector)
    assert ranges.ranges == ((0, 20),)
    rendered = ranges.selector(FIELD_UID)
    assert rendered is not None
    assert parse_shard_selector(rendered.canonical) == rendered
    assert EMPTY.selector(FIELD_UID) is None
    assert FULL.fraction == 1.0
    assert 5 in ranges and 20 not in ranges and "5" not in ranges
