"""A sharded informer's lister-watcher: sends the shard selector, filters what comes back.

:class:`ShardedListerWatcher` wraps any :class:`~aioinformer.lowlevel.ListerWatcher`. It puts
the selector's canonical form in ``ListOptions.shard_selector`` of every request the reflector
makes (each LIST page, WATCH, re-watch and streaming list: the same string each time, which the
API server requires of continued lists), and applies the selector again to every listed object
and to every ADDED/MODIFIED/DELETED watch event (one FNV-1a hash per object), so the cache is
right whatever the server did (KEP-5866 client advice; SOTA §1.8):

* a server without the feature, or with the gate off, ignores the parameter;
* 1.36.0 to 1.36.3 do not filter watches served from etcd and report a wrong
  ``remainingItemCount`` on sharded pages (k/k#140510): ``remaining_item_count`` is dropped;
* bookmarks are never filtered (they carry no UID).

Whether the server filtered is read from ``metadata.shardInfo`` on LIST responses (only typed
lists carry it, and watch streams never do): :attr:`ShardStatistics.filtering` is
``"server-side"`` once a LIST carried it, ``"client-side"`` when a LIST did not (or only
watches ran), ``"unknown"`` before the first answer. The first verdict, and every change of it,
is logged once at INFO.

A selector the server refuses (HTTP 500 ``invalid shard selector:``) comes out of the wrapped
lister-watcher as :class:`~aioinformer.errors.ShardSelectorRejectedError`, which stops the
reflector (and its informer) instead of being retried.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any, Literal, overload

from .._listwatch import ListerWatcher, ListOptions, ListResult, WatchEvent, WatchStream
from .._wire._slices import WireDecoder, WireObject, WirePage, takes_decoder
from ..errors import InvalidShardSelectorError, MalformedWatchEventError
from ._selector import FIELD_UID, ShardSelector, hash_field, parse_shard_selector

__all__ = [
    "Filtering",
    "ShardSelector",
    "ShardStatistics",
    "ShardedListerWatcher",
    "as_shard_selector",
    "sharded_lister_watcher",
]

logger = logging.getLogger(__name__)

#: Who applies the shard selector: see the module docstring.
Filtering = Literal["unknown", "server-side", "client-side"]

_FILTERED_TYPES = frozenset(("ADDED", "MODIFIED", "DELETED"))


def as_shard_selector(value: ShardSelector | str) -> ShardSelector:
    """A selector value, parsing a string as the API server would.

    :raises InvalidShardSelectorError: for a string the API server would refuse.
    """
    return value if isinstance(value, ShardSelector) else parse_shard_selector(value)


@dataclass(frozen=True, kw_only=True, slots=True)
class ShardStatistics:
    """What a sharded informer's filter saw (in :class:`~aioinformer.InformerStatistics`).

    :ivar selector: the canonical selector sent on every request.
    :ivar filtering: ``"server-side"`` (the last LIST carried ``shardInfo``),
        ``"client-side"`` (it did not, or only watches ran) or ``"unknown"`` (no answer yet).
    :ivar lists_confirmed: LIST pages that carried a matching ``shardInfo``.
    :ivar lists_unconfirmed: LIST pages without it.
    :ivar kept: objects and events let through.
    :ivar dropped: objects and events outside the selector, dropped here (0 while the server
        filters, except for 1.36.0 to 1.36.3 watches served from etcd).
    """

    selector: str
    filtering: Filtering
    lists_confirmed: int
    lists_unconfirmed: int
    kept: int
    dropped: int


class ShardedListerWatcher:
    """Lists and watches through ``inner`` with ``selector`` sent and applied (module docs).

    :param inner: the lister-watcher to wrap.
    :param selector: the shard selector.
    :param name: the informer's name, for the log line.
    """

    def __init__(self, inner: ListerWatcher, selector: ShardSelector, *, name: str) -> None:
        self.inner = inner
        self.selector = selector
        self.name = name
        self._wire = selector.canonical
        self._ranges = selector.ranges
        self._by_uid = selector.field == FIELD_UID
        self._inner_decodes: bool | None = None  # found out at the first request
        self.filtering: Filtering = "unknown"
        self.lists_confirmed = 0
        self.lists_unconfirmed = 0
        self.kept = 0
        self.dropped = 0

    def __repr__(self) -> str:
        return f"<ShardedListerWatcher {self.inner!r} {self._wire}>"

    def __getattr__(self, name: str) -> Any:
        # ``resource``, ``namespace``, ``refresh_credentials``: whatever the wrapped one has.
        return getattr(self.inner, name)

    def statistics(self) -> ShardStatistics:
        """A snapshot of the counters."""
        return ShardStatistics(
            selector=self._wire,
            filtering=self.filtering,
            lists_confirmed=self.lists_confirmed,
            lists_unconfirmed=self.lists_unconfirmed,
            kept=self.kept,
            dropped=self.dropped,
        )

    def matches(self, obj: Any) -> bool:
        """Whether ``obj`` is in the shard (counted as kept or dropped): a decoded object, or a
        carrier in wire form (its uid or namespace was decoded with it; a non-string uid is
        ``""`` there, which hashes as the API server hashes a missing field)."""
        if obj.__class__ is WireObject:
            value = obj.uid if self._by_uid else obj.namespace
            h = hash_field(value)
            kept = any(start <= h < end for start, end in self._ranges)
        else:
            kept = isinstance(obj, dict) and self.selector.matches(obj)
        if kept:
            self.kept += 1
            return True
        self.dropped += 1
        return False

    def _options(self, options: ListOptions) -> ListOptions:
        return replace(options, shard_selector=self._wire)

    @overload
    async def list(self, options: ListOptions) -> ListResult: ...

    @overload
    async def list(self, options: ListOptions, *, decoder: WireDecoder) -> WirePage: ...

    async def list(
        self, options: ListOptions, *, decoder: WireDecoder | None = None
    ) -> ListResult | WirePage:
        """One page, filtered; ``remaining_item_count`` is dropped (wrong on 1.36.x).

        :param decoder: passed on to a wrapped lister-watcher that takes one (the page's
            objects then stay in wire form); one that does not returns dicts.
        """
        inner: Any = self.inner
        if decoder is not None and self._decodes():
            result: ListResult | WirePage = await inner.list(
                self._options(options), decoder=decoder
            )
        else:
            result = await inner.list(self._options(options))
        if self._confirms(result.shard_info):
            self.lists_confirmed += 1
            self._verdict("server-side")
        else:
            self.lists_unconfirmed += 1
            self._verdict("client-side")
        items: list[Any] = [obj for obj in result.items if self.matches(obj)]
        return result._replace(items=items, remaining_item_count=None)

    async def watch(
        self,
        options: ListOptions,
        *,
        idle_timeout: float | None = None,
        decoder: WireDecoder | None = None,
    ) -> _FilteredWatch:
        """A watch whose ADDED/MODIFIED/DELETED events outside the shard are dropped
        (``decoder`` as for :meth:`list`)."""
        inner: Any = self.inner
        if decoder is not None and self._decodes():
            stream = await inner.watch(
                self._options(options), idle_timeout=idle_timeout, decoder=decoder
            )
        else:
            stream = await inner.watch(self._options(options), idle_timeout=idle_timeout)
        if self.filtering == "unknown":
            self._verdict("client-side")  # watch streams never carry shardInfo
        return _FilteredWatch(stream, self)

    def _decodes(self) -> bool:
        """Whether the wrapped lister-watcher takes a ``decoder``."""
        if self._inner_decodes is None:
            self._inner_decodes = takes_decoder(self.inner)
        return self._inner_decodes

    def _confirms(self, shard_info: str | None) -> bool:
        if shard_info is None:
            return False
        if shard_info == self._wire:
            return True
        try:  # the server echoes its canonical form: compare the sets of hashes
            echoed = parse_shard_selector(shard_info)
        except InvalidShardSelectorError:
            return False
        mine = self.selector.normalized()
        echoed = echoed.normalized()
        return echoed.field == mine.field and echoed.ranges == mine.ranges

    def _verdict(self, filtering: Filtering) -> None:
        if filtering == self.filtering:
            return
        self.filtering = filtering
        if filtering == "server-side":
            logger.info(
                "%s: shard selector applied server-side (the API server's list carried"
                " shardInfo); objects are checked again here",
                self.name,
            )
        else:
            logger.info(
                "%s: shard selector applied client-side (no shardInfo: the API server may"
                " ignore it); every object is filtered here",
                self.name,
            )


class _FilteredWatch:
    """A :class:`~aioinformer.lowlevel.WatchStream` without the events outside the shard."""

    def __init__(self, stream: WatchStream, owner: ShardedListerWatcher) -> None:
        self._stream = stream
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)  # e.g. bytes_received

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self

    async def __anext__(self) -> WatchEvent:
        owner = self._owner
        while True:
            event = await self._stream.__anext__()
            if event.type not in _FILTERED_TYPES or owner.matches(event.object):
                return event

    async def next_batch(self) -> list[WatchEvent | MalformedWatchEventError]:
        """The inner stream's next batch without the events outside the shard (one event per
        batch when the inner stream has no batches); empty once the stream ended. Defined
        here so that ``__getattr__`` never hands out the inner, unfiltered ``next_batch``."""
        inner = getattr(self._stream, "next_batch", None)
        owner = self._owner
        while True:
            if inner is None:
                try:
                    batch: list[WatchEvent | MalformedWatchEventError] = [
                        await self._stream.__anext__()
                    ]
                except StopAsyncIteration:
                    return []
                except MalformedWatchEventError as exc:
                    return [exc]
            else:
                batch = await inner()
                if not batch:
                    return []
            kept = [
                item
                for item in batch
                if isinstance(item, MalformedWatchEventError)
                or item.type not in _FILTERED_TYPES
                or owner.matches(item.object)
            ]
            if kept:
                return kept

    async def aclose(self) -> None:
        await self._stream.aclose()


def sharded_lister_watcher(
    inner: ListerWatcher, selector: ShardSelector | str | None, name: str
) -> ShardedListerWatcher | None:
    """``inner`` wrapped for ``selector`` (None: no selector, nothing to wrap)."""
    if selector is None:
        return None
    return ShardedListerWatcher(inner, as_shard_selector(selector), name=name)
