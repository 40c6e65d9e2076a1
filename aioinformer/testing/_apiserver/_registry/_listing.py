"""LIST semantics: resource versions, selectors and ``limit``/``continue`` pagination.

* ``resourceVersion=""``: the current state (a consistent read).
* ``resourceVersion="0"``: the current state (the fake has no stale cache). Like the real
  server answering from its watch cache, ``limit`` is **ignored**: one page, no token.
* ``resourceVersion=N`` with ``resourceVersionMatch`` ``NotOlderThan``, or unset without a
  ``limit``: the current state when ``N`` is not in the future, else 504 "Too large resource
  version".
* ``resourceVersionMatch=Exact``, and the legacy rule (``limit`` with ``resourceVersion=N``
  and no ``resourceVersionMatch``): the state at ``N``, rebuilt from history (410 Expired
  when ``N`` is older than the history window).
* ``continue`` tokens are opaque (base64 JSON like the real ones) and pin the RV of the first
  page; once that RV leaves the history window they answer 410 Expired.
* ``metadata.remainingItemCount`` is set when more items remain and no selector was given
  (the real server leaves it out for selector lists, where it cannot count cheaply).
* ``shardSelector`` (KEP-5866, when the server's ``ShardedListAndWatch`` gate is on) narrows
  the list like another selector (checked first, then labels and fields); typed built-in lists
  echo its canonical form in ``metadata.shardInfo.selector``, custom-resource lists do not
  (``UnstructuredList`` has no ``shardInfo``). An invalid one answers 500 ``invalid shard
  selector: ...``. Sharded lists never carry ``remainingItemCount`` (as after k/k#140513).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from .._api import _status as status
from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import BUILTIN_RESOURCES, ResourceInfo
from .._selectors._matching import Matcher, compile_selectors
from .._selectors._shard import ShardFilter, ShardingGate, ShardSelectorRefused, parse_shard_filter
from ._storage import Storage
from ._watch import parse_resource_version

__all__ = [
    "ListRequest",
    "compile_matcher",
    "decode_continue",
    "encode_continue",
    "list_document",
    "shard_filter",
    "with_shard",
]

_EXPIRED_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)


def encode_continue(rv: int, start: str) -> str:
    """A continue token resuming at storage key ``start`` in the state at ``rv``."""
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """The RV and start key of a continue token.

    :raises StatusFailure: 400, when the token is not one of ours.
    """
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = orjson.loads(raw)
        rv, start = int(data["rv"]), str(data["start"])
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise status.bad_request(f"continue key is not valid: {exc}") from None
    if data.get("v") != "meta.k8s.io/v1" or rv < 0:
        raise status.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)"
        )
    return rv, start


def compile_matcher(info: ResourceInfo, query: Mapping[str, str]) -> Matcher | None:
    """The selectors of a request as one predicate (None: everything).

    :raises StatusFailure: 400, an invalid selector.
    """
    return compile_selectors(query.get("labelSelector", ""), query.get("fieldSelector", ""), info)


def with_shard(matcher: Matcher | None, shard: ShardFilter | None) -> Matcher | None:
    """``matcher`` narrowed to a shard, which is checked first (apiserver's
    ``SelectionPredicate.Matches``)."""
    if shard is None:
        return matcher
    in_shard = shard.matches
    if matcher is None:
        return in_shard
    return lambda obj: in_shard(obj) and matcher(obj)


def shard_filter(query: Mapping[str, str], gate: ShardingGate | None) -> ShardFilter | None:
    """The request's ``shardSelector``, or None when absent, empty or the gate is off.

    :raises StatusFailure: an invalid selector: 500 with reason unset and the message
        ``invalid shard selector: ...`` (apiserver's registry returns a plain error, which
        ``ErrorToAPIStatus`` answers as 500).
    """
    text = query.get("shardSelector", "")
    if not text or gate is None or not gate.enabled:
        return None
    try:
        return parse_shard_filter(text)
    except ShardSelectorRefused as refused:
        raise StatusFailure.internal(refused.http_message) from None


@dataclass(frozen=True, slots=True)
class ListRequest:
    """The list-relevant query parameters.

    :ivar limit: page size, 0 for no limit.
    """

    resource_version: str = ""
    resource_version_match: str = ""
    limit: int = 0
    continue_token: str = ""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> ListRequest:
        """Parse and validate the parameters.

        :raises StatusFailure: 400, a bad ``limit`` or a ``continue`` with a resource version.
        :raises StatusFailure: 422, an inconsistent ``resourceVersionMatch``.
        """
        raw_limit = query.get("limit", "") or "0"
        try:
            limit = int(raw_limit)
        except ValueError:
            raise status.bad_request(f"invalid limit {raw_limit!r}") from None
        request = cls(
            resource_version=query.get("resourceVersion", ""),
            resource_version_match=query.get("resourceVersionMatch", ""),
            limit=max(0, limit),
            continue_token=query.get("continue", ""),
        )
        match = request.resource_version_match
        if request.continue_token and request.resource_version not in ("", "0"):
            raise status.bad_request(
                "specifying resource version is not allowed when using continue"
            )
        if match and match not in ("NotOlderThan", "Exact"):
            raise _invalid_options(f'resourceVersionMatch: Unsupported value: "{match}"')
        if match and not request.resource_version:
            raise _invalid_options(
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless "
                "resourceVersion is provided"
            )
        if match == "Exact" and request.resource_version == "0":
            raise _invalid_options(
                'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for '
                'resourceVersion "0"'
            )
        if match and request.continue_token:
            raise _invalid_options(
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when "
                "continue is provided"
            )
        return request


def _invalid_options(why: str) -> StatusFailure:
    return status.status_error(422, "Invalid", f'ListOptions.meta.k8s.io "" is invalid: {why}')


def strip_type(obj: KubeObject) -> KubeObject:
    """A shallow copy of an object without ``kind`` and ``apiVersion``."""
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}


def list_document(
    storage: Storage,
    info: ResourceInfo,
    *,
    namespace: str,
    matcher: Matcher | None,
    request: ListRequest,
    shard: ShardFilter | None = None,
) -> dict[str, Any]:
    """The list object answering one LIST request (see the module docstring).

    ``matcher`` must already include ``shard`` (:func:`with_shard`); ``shard`` only adds
    ``metadata.shardInfo``.

    :raises StatusFailure: 410, 504, 400 as described above.
    """
    current = storage.resource_version
    start = ""
    limit = request.limit
    if request.continue_token:
        rv, start = decode_continue(request.continue_token)
        if rv > current:
            raise status.bad_request("continue key is not valid: resource version in the future")
        try:
            objects = storage.state_at(info, rv)
        except StatusFailure as failure:
            if failure.code != 410:
                raise
            token = encode_continue(current, start)
            raise status.expired(_EXPIRED_CONTINUE, continue_token=token) from None
    elif request.resource_version in ("", "0"):
        rv, objects = current, storage.objects(info)
        if request.resource_version == "0":
            limit = 0
    else:
        requested = parse_resource_version(request.resource_version)
        if requested > current:
            raise status.too_large_resource_version(requested, current)
        # "Exact", or the legacy rule: a limit with a resource version and no match is
        # served from the state at that version too (etcd3 ``GetList``, cacher
        # ``shouldDelegateList``'s ``isLegacyExactMatch``).
        legacy_exact = limit > 0 and not request.resource_version_match
        if request.resource_version_match == "Exact" or legacy_exact:
            rv, objects = requested, storage.state_at(info, requested)
        else:
            rv, objects = current, storage.objects(info)
    prefix = f"{namespace}/" if namespace and info.namespaced else ""
    keys = sorted(k for k in objects if k.startswith(prefix) and k >= start)
    items: list[KubeObject] = []
    remaining = 0
    last_key = ""
    # Like the real server: items of built-in lists carry no kind/apiVersion (the list has
    # them); custom resources' items do.
    built_in = info in BUILTIN_RESOURCES
    for index, key in enumerate(keys):
        obj = objects[key]
        if matcher is not None and not matcher(obj):
            continue
        if limit and len(items) == limit:
            if matcher is None:
                remaining = len(keys) - index
            else:
                remaining = sum(1 for k in keys[index:] if matcher(objects[k]))
            break
        items.append(strip_type(obj) if built_in else obj)
        last_key = key
    metadata: dict[str, Any] = {"resourceVersion": str(rv)}
    if remaining:
        metadata["continue"] = encode_continue(rv, last_key + "\x00")
        if matcher is None:
            metadata["remainingItemCount"] = remaining
    if shard is not None and built_in:
        metadata["shardInfo"] = {"selector": shard.string()}
    return {
        "kind": info.list_kind,
        "apiVersion": info.api_version,
        "metadata": metadata,
        "items": items,
    }
