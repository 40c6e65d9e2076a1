"""client-go's core/v1 ``EventCorrelator`` (``tools/record/events_cache.go``), without I/O.

Every event goes through three steps, in this order (``EventCorrelate``):

1. **aggregation** (``EventAggregator``): events that differ only in their message are
   similar (same source, involved object, type, reason, reporting controller and instance).
   When :data:`AGGREGATE_MAX_EVENTS` distinct messages of similar events were seen, each less
   than :data:`AGGREGATE_INTERVAL` seconds after the previous one, the event is replaced by an
   aggregate: a new event whose message is ``"(combined from similar events): " + message``,
   counted from then on instead of the individual ones;
2. **deduplication** (``eventLogger``): an event identical to one sent before (source, involved
   object with its ``fieldPath``, type, reason, message) reuses that event's name and
   ``firstTimestamp``, counts ``count + 1``, and is sent as a strategic merge patch of
   ``count``, ``lastTimestamp`` and ``message``;
3. **spam filter** (``EventSourceObjectSpamFilter``): a token bucket per source, involved
   object and type — :data:`SPAM_BURST` events, refilled at :data:`SPAM_QPS` per second (one
   every five minutes) — drops the event when empty. The deduplication count of a dropped
   event still moved on (as in client-go).

Each cache keeps at most :data:`LRU_SIZE` keys, least recently used out first. Keys are tuples
(client-go joins the strings, which can collide).
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Generic, TypeVar

from ._model import REFERENCE_FIELDS, rfc3339

__all__ = [
    "AGGREGATE_INTERVAL",
    "AGGREGATE_MAX_EVENTS",
    "LRU_SIZE",
    "SPAM_BURST",
    "SPAM_QPS",
    "Correlated",
    "EventCorrelator",
]

#: ``maxLruCacheEntries``.
LRU_SIZE: Final = 4096
#: ``defaultAggregateMaxEvents``: distinct messages before similar events are aggregated.
AGGREGATE_MAX_EVENTS: Final = 10
#: ``defaultAggregateIntervalInSeconds``: quiet seconds after which similar events start over.
AGGREGATE_INTERVAL: Final = 600.0
#: ``defaultSpamBurst``: events a source may send about an object at once.
SPAM_BURST: Final = 25
#: ``defaultSpamQPS``: the refill rate, one event per five minutes.
SPAM_QPS: Final = 1.0 / 300.0
#: ``EventAggregatorByReasonMessageFunc``'s prefix.
AGGREGATE_PREFIX: Final = "(combined from similar events): "

V = TypeVar("V")


class _Lru(Generic[V]):
    """A mapping that keeps its ``size`` most recently used keys (``groupcache/lru``)."""

    __slots__ = ("_items", "_size")

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[Any, V] = OrderedDict()
        self._size = size

    def get(self, key: Any) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def add(self, key: Any, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class _TokenBucket:
    """``flowcontrol.NewTokenBucketRateLimiterWithClock`` (x/time/rate): starts full."""

    __slots__ = ("_burst", "_last", "_qps", "_tokens")

    def __init__(self, qps: float, burst: int, now: float) -> None:
        self._qps, self._burst = qps, burst
        self._tokens, self._last = float(burst), now

    def try_accept(self, now: float) -> bool:
        if now > self._last:
            self._tokens = min(float(self._burst), self._tokens + (now - self._last) * self._qps)
            self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


@dataclass(slots=True)
class _Aggregate:
    local_keys: dict[str, None] = field(default_factory=dict)  # insertion-ordered set
    last: float = float("-inf")


@dataclass(frozen=True, slots=True)
class _Log:
    count: int
    first_timestamp: str
    name: str
    resource_version: str


@dataclass(frozen=True, slots=True)
class Correlated:
    """What to do with an event: send ``event`` (a create when ``patch`` is None, else the
    strategic merge ``patch`` of the event of that name), or nothing when ``skip``."""

    event: dict[str, Any]
    patch: dict[str, Any] | None
    skip: bool


def _source(event: dict[str, Any]) -> tuple[str, str]:
    source = event.get("source") or {}
    return str(source.get("component") or ""), str(source.get("host") or "")


def _involved(event: dict[str, Any], *fields: str) -> tuple[str, ...]:
    involved = event.get("involvedObject") or {}
    return tuple(str(involved.get(f) or "") for f in fields)


_OBJECT = ("kind", "namespace", "name", "uid", "apiVersion")


def event_key(event: dict[str, Any]) -> tuple[str, ...]:
    """``getEventKey``: source, involved object (with ``fieldPath``), type, reason, message."""
    return (
        *_source(event),
        *_involved(event, "kind", "namespace", "name", "fieldPath", "uid", "apiVersion"),
        str(event.get("type") or ""),
        str(event.get("reason") or ""),
        str(event.get("message") or ""),
    )


def spam_key(event: dict[str, Any]) -> tuple[str, ...]:
    """``getSpamKey``: source, involved object and type."""
    return (*_source(event), *_involved(event, *_OBJECT), str(event.get("type") or ""))


def aggregate_keys(event: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    """``EventAggregatorByReasonFunc``: the group key (all but the message) and the message."""
    group = (
        *_source(event),
        *_involved(event, *_OBJECT),
        str(event.get("type") or ""),
        str(event.get("reason") or ""),
        str(event.get("reportingComponent") or ""),
        str(event.get("reportingInstance") or ""),
    )
    return group, str(event.get("message") or "")


class EventCorrelator:
    """Filters, aggregates and counts core/v1 events (see the module docs). Time is given to
    each call: monotonic seconds for the intervals and the token buckets, wall time for the
    timestamps the aggregate events carry."""

    __slots__ = ("_aggregates", "_logs", "_spam")

    def __init__(self) -> None:
        self._spam: _Lru[_TokenBucket] = _Lru(LRU_SIZE)
        self._aggregates: _Lru[_Aggregate] = _Lru(LRU_SIZE)
        self._logs: _Lru[_Log] = _Lru(LRU_SIZE)

    def correlate(self, event: dict[str, Any], *, now: float, wall: datetime) -> Correlated:
        """Run ``event`` (a new event, ``count: 1``) through aggregation, deduplication and
        the spam filter."""
        aggregated, cache_key = self._aggregate(event, now=now, wall=wall)
        observed, patch = self._observe(aggregated, cache_key)
        bucket = self._spam.get(spam_key(observed))
        if bucket is None:
            bucket = _TokenBucket(SPAM_QPS, SPAM_BURST, now)
        accepted = bucket.try_accept(now)
        self._spam.add(spam_key(observed), bucket)
        return Correlated(observed, patch, skip=not accepted)

    def update_state(self, event: dict[str, Any]) -> None:
        """Remember the event as the server stored it (its name, count and version)."""
        self._logs.add(event_key(event), self._log_of(event))

    def _aggregate(
        self, event: dict[str, Any], *, now: float, wall: datetime
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        group, local = aggregate_keys(event)
        record = self._aggregates.get(group)
        if record is None or now - record.last > AGGREGATE_INTERVAL:
            record = _Aggregate()
        record.local_keys[local] = None
        record.last = now
        self._aggregates.add(group, record)
        if len(record.local_keys) < AGGREGATE_MAX_EVENTS:
            return event, event_key(event)
        # Do not grow the set past the maximum: drop one (client-go an arbitrary one; here the
        # oldest, so the outcome does not depend on hashing).
        del record.local_keys[next(iter(record.local_keys))]
        stamp = rfc3339(wall)
        aggregate: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": event["metadata"]["name"],
                "namespace": event["metadata"]["namespace"],
            },
            "count": 1,
            "firstTimestamp": stamp,
            "involvedObject": copy.deepcopy(event.get("involvedObject") or {}),
            "lastTimestamp": stamp,
            "message": AGGREGATE_PREFIX + str(event.get("message") or ""),
            "type": event.get("type"),
            "reason": event.get("reason"),
            "source": copy.deepcopy(event.get("source") or {}),
        }
        return aggregate, group

    def _observe(
        self, event: dict[str, Any], key: tuple[str, ...]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        observed = copy.deepcopy(event)
        last = self._logs.get(key)
        patch: dict[str, Any] | None = None
        if last is not None and last.count > 0:
            metadata = observed["metadata"]
            metadata["name"] = last.name
            if last.resource_version:
                metadata["resourceVersion"] = last.resource_version
            observed["firstTimestamp"] = last.first_timestamp
            observed["count"] = last.count + 1
            # The two-way merge patch of the event without and with count, lastTimestamp and
            # message (client-go blanks exactly those three in its "before" copy).
            patch = {"count": observed["count"], "lastTimestamp": observed["lastTimestamp"]}
            if observed.get("message"):
                patch["message"] = observed["message"]
        self._logs.add(key, self._log_of(observed))
        return observed, patch

    @staticmethod
    def _log_of(event: dict[str, Any]) -> _Log:
        metadata = event.get("metadata") or {}
        count = event.get("count")
        return _Log(
            count=count if isinstance(count, int) else 0,
            first_timestamp=str(event.get("firstTimestamp") or ""),
            name=str(metadata.get("name") or ""),
            resource_version=str(metadata.get("resourceVersion") or ""),
        )


def core_event(
    *,
    name: str,
    namespace: str,
    involved: dict[str, str],
    type: str,
    reason: str,
    message: str,
    component: str,
    wall: datetime,
) -> dict[str, Any]:
    """A new core/v1 Event as client-go's ``record`` recorder makes it (``makeEvent``), through
    the events adapter: source ``{component}``, no host, no ``eventTime``, no ``action``."""
    stamp = rfc3339(wall)
    event: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {f: involved[f] for f in REFERENCE_FIELDS if f in involved},
        "reason": reason,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "type": type,
        "source": {"component": component},
        "reportingComponent": component,
        "reportingInstance": "",
    }
    if message:
        event["message"] = message
    return event
