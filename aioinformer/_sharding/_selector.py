"""Shard selectors (KEP-5866 ``shardSelector``) as immutable values.

A shard selector asks the API server for the objects whose FNV-1a 64 hash of one metadata field
(``object.metadata.uid`` or ``object.metadata.namespace``) falls in a union of half-open ranges
``[start, end)`` of the hash space ``[0, 2**64)``. On the wire it is a CEL-shaped expression::

    shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
        || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')

Rules followed here, from the Kubernetes sources (apiserver ``pkg/sharding/parser.go`` ``Parse``,
apimachinery ``pkg/sharding`` ``selector.go``/``hash.go``/``accessor.go``, v1.36):

* :func:`parse_shard_selector` accepts and rejects exactly what the API server's ``Parse`` does
  (the parser is in :mod:`._cel`, :mod:`._cel_scan` and :mod:`._cel_parse`):
  the text is trimmed (Go ``strings.TrimSpace``) and parsed as a CEL expression by the cel-go
  parser without macros (so comments, parentheses, double-quoted, triple-quoted, raw and escaped
  string literals are all accepted); its syntax tree must be ``shardRange(field, 'start', 'end')``
  calls joined by ``||``; bounds are ``0x`` plus exactly 16 lowercase hex digits, or
  ``0x10000000000000000``; ``start < end``; one field for every range. Refusals raise
  :class:`~aioinformer.errors.InvalidShardSelectorError` with the server's message.
* ``str(selector)`` is the canonical form the server echoes in ``metadata.shardInfo.selector``:
  ``shardRange(<field>, '<start>', '<end>')`` joined by ``" || "``, in the order given.
* :meth:`ShardSelector.matches` hashes the field's UTF-8 bytes once (FNV-1a 64). Objects are
  dicts, read like the API server reads unstructured objects: a missing or non-string field is
  ``""``, which hashes to the FNV offset basis ``0xcbf29ce484222325`` (so every cluster-scoped
  object lands in one shard under namespace sharding).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as _dataclass_field
from typing import Any, Final, Literal, cast

from ..errors import InvalidShardSelectorError
from ._cel import Refused, go_quote, parse_requirements

__all__ = [
    "FIELD_NAMESPACE",
    "FIELD_UID",
    "HASH_SPACE",
    "ShardField",
    "ShardSelector",
    "equal_shards",
    "hash_field",
    "parse_shard_selector",
    "shard",
    "shard_boundary",
    "shard_range",
    "union",
]

ShardField = Literal["object.metadata.uid", "object.metadata.namespace"]
FIELD_UID: Final = "object.metadata.uid"
FIELD_NAMESPACE: Final = "object.metadata.namespace"
_METADATA_KEY: Final[dict[str, str]] = {FIELD_UID: "uid", FIELD_NAMESPACE: "namespace"}

HASH_SPACE: Final = 1 << 64
"""The size of the hash space: ranges are within ``[0, HASH_SPACE)``."""

_FNV_OFFSET: Final = 0xCBF29CE484222325
_FNV_PRIME: Final = 0x100000001B3
_MASK64: Final = HASH_SPACE - 1


def hash_field(value: str) -> int:
    """FNV-1a 64 of ``value``'s UTF-8 bytes, as the API server hashes a shard field."""
    h = _FNV_OFFSET
    for byte in value.encode():
        h = ((h ^ byte) * _FNV_PRIME) & _MASK64
    return h


def _format_bound(value: int) -> str:
    return f"0x{value:016x}"


def _invalid(reason: str, text: str = "") -> InvalidShardSelectorError:
    return InvalidShardSelectorError(reason, text)


@dataclass(frozen=True, slots=True)
class ShardSelector:
    """A union of ``[start, end)`` ranges of the FNV-1a 64 hash of one field.

    Immutable and hashable. Equality compares the field and the ranges in order (the wire form
    keeps the order); :meth:`normalized` sorts and merges them. Build one with
    :func:`shard_range`, :func:`shard`, :func:`equal_shards`, ``a | b`` or
    :func:`parse_shard_selector`; the constructor validates like the API server does.
    """

    field: ShardField
    ranges: tuple[tuple[int, int], ...]
    _key: str = _dataclass_field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        key = _METADATA_KEY.get(self.field)
        if key is None:
            raise _invalid(
                f"unsupported field path {go_quote(str(self.field))}; "
                f"supported: {FIELD_UID}, {FIELD_NAMESPACE}"
            )
        ranges = tuple((start, end) for start, end in self.ranges)
        if not ranges:
            raise _invalid("a shard selector needs at least one range")
        for start, end in ranges:
            for bound in (start, end):
                if type(bound) is not int or not 0 <= bound <= HASH_SPACE:
                    raise _invalid(f"shard range bound {bound!r} is not an integer in [0, 2^64]")
            if start >= end:
                raise _invalid(
                    f"shard range start {_format_bound(start)} must be less than end "
                    f"{_format_bound(end)}"
                )
        object.__setattr__(self, "ranges", ranges)
        object.__setattr__(self, "_key", key)

    @property
    def canonical(self) -> str:
        """The canonical wire form (what the server echoes in ``shardInfo.selector``)."""
        return " || ".join(
            f"shardRange({self.field}, '{_format_bound(start)}', '{_format_bound(end)}')"
            for start, end in self.ranges
        )

    def __str__(self) -> str:
        return self.canonical

    def hash_of(self, obj: Mapping[str, Any]) -> int:
        """The hash of ``obj``'s shard field (``""`` when it is missing or not a string)."""
        metadata = obj.get("metadata")
        value = metadata.get(self._key) if isinstance(metadata, Mapping) else None
        return hash_field(value if isinstance(value, str) else "")

    def contains(self, hash_value: int) -> bool:
        """Whether a hash falls in one of the ranges."""
        return any(start <= hash_value < end for start, end in self.ranges)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` (a decoded Kubernetes object) is in this shard: one hash per call."""
        metadata = obj.get("metadata")
        value = metadata.get(self._key) if isinstance(metadata, Mapping) else None
        h = _FNV_OFFSET
        if isinstance(value, str):
            for byte in value.encode():
                h = ((h ^ byte) * _FNV_PRIME) & _MASK64
        for start, end in self.ranges:  # noqa: SIM110 (a loop is faster than any() here)
            if start <= h < end:
                return True
        return False

    def __or__(self, other: ShardSelector) -> ShardSelector:
        if not isinstance(other, ShardSelector):
            return NotImplemented
        return union(self, other)

    def normalized(self) -> ShardSelector:
        """The same set of hashes as sorted, disjoint, non-adjacent ranges."""
        merged: list[tuple[int, int]] = []
        for start, end in sorted(self.ranges):
            if merged and start <= merged[-1][1]:
                if end > merged[-1][1]:
                    merged[-1] = (merged[-1][0], end)
            else:
                merged.append((start, end))
        return ShardSelector(self.field, tuple(merged))

    @property
    def fraction(self) -> float:
        """The share of the hash space covered (overlaps counted once)."""
        return sum(end - start for start, end in self.normalized().ranges) / HASH_SPACE


def shard_range(field: ShardField, start: int, end: int) -> ShardSelector:
    """One range ``[start, end)`` of the hash of ``field``; ``0 <= start < end <= 2**64``."""
    return ShardSelector(field, ((start, end),))


def shard_boundary(i: int, n: int) -> int:
    """The start of shard ``i`` of ``n`` equal shards: ``floor(i * 2**64 / n)``.

    This is kube-state-metrics' ``shardRangeBoundary``; every replica must use the same formula
    or gaps and overlaps appear (``floor(2**64 / n) * i`` differs for n = 7).
    """
    if not 1 <= n <= HASH_SPACE or not 0 <= i <= n:
        raise ValueError(f"need 0 <= i <= n and 1 <= n <= 2**64, got i={i}, n={n}")
    return (i << 64) // n


def shard(i: int, n: int, *, field: ShardField = FIELD_UID) -> ShardSelector:
    """Shard ``i`` (0-based) of ``n`` equal contiguous shards of ``field``'s hash space."""
    if not 0 <= i < n:
        raise ValueError(f"shard index {i} is not in [0, {n})")
    return shard_range(field, shard_boundary(i, n), shard_boundary(i + 1, n))


def equal_shards(n: int, *, field: ShardField = FIELD_UID) -> tuple[ShardSelector, ...]:
    """The ``n`` equal shards that together cover the hash space exactly once."""
    shard_boundary(0, n)  # validates n
    return tuple(shard(i, n, field=field) for i in range(n))


def union(*selectors: ShardSelector) -> ShardSelector:
    """The ranges of every selector, in order (``a | b`` does the same); one field for all."""
    if not selectors:
        raise _invalid("a shard selector needs at least one range")
    first = selectors[0].field
    for other in selectors[1:]:
        if other.field != first:
            raise _invalid(
                "all shard ranges must use the same field, got "
                f"{go_quote(first)} and {go_quote(other.field)}"
            )
    return ShardSelector(first, tuple(r for s in selectors for r in s.ranges))


def parse_shard_selector(text: str) -> ShardSelector:
    """Parse a ``shardSelector`` value exactly as the API server's ``sharding.Parse`` does.

    :raises InvalidShardSelectorError: for every input the server answers with HTTP 500
        ``invalid shard selector: ...``; ``reason`` carries the server's message.
    """
    try:
        requirements = parse_requirements(text)
    except Refused as exc:
        raise _invalid(exc.reason, text) from None
    field = cast(ShardField, requirements[0][0])
    return ShardSelector(field, tuple((start, end) for _, start, end in requirements))
