"""Sets of hashes as values: unions of half-open ranges of the 64-bit hash space.

:class:`HashRanges` is what the membership protocol computes with: the share a ring gives a
member, the ranges a replica serves, claims, releases. Unlike a
:class:`~aioinformer.ShardSelector` (a wire value: one field, at least one range, the
order the caller gave) it may be empty, has no field, and is always normalized: sorted,
disjoint, non-adjacent ``[start, end)`` ranges within ``[0, 2**64)``, so equal sets compare
equal. Union, intersection and difference are exact set operations.

It also has a compact text form for a Lease annotation (:meth:`HashRanges.encode`): ranges as
``<start>-<end>`` in the selector's hex digits (16 lowercase digits, or ``10000000000000000``
for the end of the space) joined by ``,``; the empty set is the empty string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from ._selector import HASH_SPACE, ShardField, ShardSelector

__all__ = ["EMPTY", "FULL", "HashRanges"]

_Range = tuple[int, int]
_ENCODED_RANGE: Final = re.compile(r"([0-9a-f]{16})-([0-9a-f]{16}|10000000000000000)")


def _normalize(ranges: Iterable[_Range]) -> tuple[_Range, ...]:
    merged: list[_Range] = []
    for start, end in sorted(ranges):
        if type(start) is not int or type(end) is not int or not 0 <= start <= end <= HASH_SPACE:
            raise ValueError(f"not a range of the hash space: [{start!r}, {end!r})")
        if start == end:
            continue
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return tuple(merged)


@dataclass(frozen=True, slots=True, init=False)
class HashRanges:
    """A set of 64-bit hashes: sorted, disjoint, non-adjacent ``[start, end)`` ranges.

    Build one with ``HashRanges([(start, end), ...])`` (any order, overlaps and empty ranges
    allowed: the value is normalized), :meth:`of` for a selector, or :data:`EMPTY` /
    :data:`FULL`. Immutable, hashable; ``a | b``, ``a & b``, ``a - b``, ``~a``; ``h in a``.
    """

    ranges: tuple[_Range, ...]

    def __init__(self, ranges: Iterable[_Range] = ()) -> None:
        object.__setattr__(self, "ranges", _normalize(ranges))

    @classmethod
    def _trusted(cls, ranges: tuple[_Range, ...]) -> HashRanges:
        value = object.__new__(cls)
        object.__setattr__(value, "ranges", ranges)
        return value

    @classmethod
    def of(cls, selector: ShardSelector) -> HashRanges:
        """The hashes a selector matches."""
        return cls(selector.ranges)

    def selector(self, field: ShardField) -> ShardSelector | None:
        """The canonical selector of these hashes for ``field`` (None for the empty set)."""
        return ShardSelector(field, self.ranges) if self.ranges else None

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def __iter__(self) -> Iterator[_Range]:
        return iter(self.ranges)

    def __len__(self) -> int:
        """The number of ranges (not of hashes: see :attr:`size`)."""
        return len(self.ranges)

    def __contains__(self, hash_value: object) -> bool:
        return isinstance(hash_value, int) and any(
            start <= hash_value < end for start, end in self.ranges
        )

    @property
    def size(self) -> int:
        """How many hashes the set holds."""
        return sum(end - start for start, end in self.ranges)

    @property
    def fraction(self) -> float:
        """The share of the hash space the set covers."""
        return self.size / HASH_SPACE

    def __or__(self, other: HashRanges) -> HashRanges:
        a, b = self.ranges, other.ranges
        if not b:
            return self
        if not a:
            return other
        merged: list[_Range] = []
        i = j = 0
        na, nb = len(a), len(b)
        while i < na or j < nb:
            if j >= nb or (i < na and a[i][0] <= b[j][0]):
                start, end = a[i]
                i += 1
            else:
                start, end = b[j]
                j += 1
            if merged and start <= merged[-1][1]:
                if end > merged[-1][1]:
                    merged[-1] = (merged[-1][0], end)
            else:
                merged.append((start, end))
        return HashRanges._trusted(tuple(merged))

    def __and__(self, other: HashRanges) -> HashRanges:
        a, b = self.ranges, other.ranges
        if not a or not b:
            return EMPTY
        out: list[_Range] = []
        i = j = 0
        na, nb = len(a), len(b)
        while i < na and j < nb:
            a_start, a_end = a[i]
            b_start, b_end = b[j]
            start = a_start if a_start > b_start else b_start
            end = a_end if a_end < b_end else b_end
            if start < end:
                out.append((start, end))
            if a_end < b_end:
                i += 1
            else:
                j += 1
        return HashRanges._trusted(tuple(out))

    def __invert__(self) -> HashRanges:
        out: list[_Range] = []
        position = 0
        for start, end in self.ranges:
            if position < start:
                out.append((position, start))
            position = end
        if position < HASH_SPACE:
            out.append((position, HASH_SPACE))
        return HashRanges._trusted(tuple(out))

    def __sub__(self, other: HashRanges) -> HashRanges:
        a, b = self.ranges, other.ranges
        if not a or not b:
            return self
        out: list[_Range] = []
        j, nb = 0, len(b)
        for start, end in a:
            while j < nb and b[j][1] <= start:
                j += 1
            k = j
            while k < nb and b[k][0] < end:
                b_start, b_end = b[k]
                if b_start > start:
                    out.append((start, b_start))
                start = b_end
                if start >= end:
                    break
                k += 1
            if start < end:
                out.append((start, end))
        return HashRanges._trusted(tuple(out))

    def isdisjoint(self, other: HashRanges) -> bool:
        """Whether no hash is in both sets."""
        return not self & other

    def issubset(self, other: HashRanges) -> bool:
        """Whether every hash of this set is in ``other``."""
        return not self - other

    def encode(self) -> str:
        """The compact annotation form: ``<start>-<end>`` ranges joined by ``,``."""
        return ",".join(f"{start:016x}-{end:016x}" for start, end in self.ranges)

    @classmethod
    def decode(cls, text: str) -> HashRanges:
        """Parse :meth:`encode`'s form strictly: normalized ranges only.

        :raises ValueError: for anything :meth:`encode` would not have written.
        """
        if text == "":
            return EMPTY
        ranges: list[_Range] = []
        for part in text.split(","):
            match = _ENCODED_RANGE.fullmatch(part)
            if match is None:
                raise ValueError(f"not an encoded hash range: {part[:60]!r}")
            ranges.append((int(match[1], 16), int(match[2], 16)))
        value = cls(ranges)
        if list(value.ranges) != ranges:
            raise ValueError("encoded hash ranges are not sorted, disjoint and non-adjacent")
        return value

    def __repr__(self) -> str:
        inner = ", ".join(f"[{start:#x}, {end:#x})" for start, end in self.ranges)
        return f"HashRanges({inner})"


EMPTY: Final = HashRanges()
"""No hash at all."""
FULL: Final = HashRanges([(0, HASH_SPACE)])
"""The whole hash space ``[0, 2**64)``."""
