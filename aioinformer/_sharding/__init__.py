"""Sharding (KEP-5866 server-side sharded list and watch): shard selectors as values."""

from ._selector import (
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
