"""Isomorphic events become series: the bookkeeping of client-go's events.k8s.io/v1 broadcaster
(``tools/events/event_broadcaster.go``: ``recordToSink``, ``finishSeries``,
``refreshExistingEventSeries``), without I/O.

Two occurrences are isomorphic when they agree on ``type``, ``action``, ``reason``,
``reportingController``, ``reportingInstance``, ``regarding`` and ``related`` (client-go's
``getKey``; the ``note`` is not part of it, and ``regarding`` includes the object's
``resourceVersion``):

1. the first occurrence is created (``POST``);
2. the second turns the cached event into a series — ``series: {count: 2, lastObservedTime}``
   — sent as a ``PATCH``;
3. later ones only count (``series.count += 1``, ``lastObservedTime`` moves): no request;
4. every :data:`REFRESH` seconds every series is sent again (its current count);
5. every :data:`FINISH` seconds, a series last observed more than :data:`FINISH` seconds ago
   is sent a last time and forgotten, and a single event older than that is forgotten (so
   its next occurrence is a new event).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Final

from ._model import Occurrence, micro_time, reference_key

__all__ = ["FINISH", "REFRESH", "SeriesCache", "SeriesSend", "event_body"]

#: client-go's ``finishTime``: 6 minutes.
FINISH: Final = 6 * 60.0
#: client-go's ``refreshTime``: 30 minutes.
REFRESH: Final = 30 * 60.0

_Key = tuple[Any, ...]


@dataclass(slots=True)
class _Entry:
    event: dict[str, Any]  # as created: without series
    event_time: float  # monotonic
    count: int | None = None  # the series count; None for a single event
    last_observed: str = ""  # MicroTime of the last occurrence
    last_observed_at: float = 0.0  # monotonic
    version: int = 0  # bumped by every occurrence (snapshot checks)
    sent_count: int | None = None  # the series count the server was last sent

    def body(self) -> dict[str, Any]:
        """The event to send: with its series when it has one."""
        body = copy.deepcopy(self.event)
        if self.count is not None:
            body["series"] = {"count": self.count, "lastObservedTime": self.last_observed}
        return body


@dataclass(frozen=True, slots=True)
class SeriesSend:
    """A request the cache asks for: ``body`` to create (``series`` False) or to patch with
    its series (``series`` True); ``key`` and ``version`` identify the entry it was taken from.
    """

    key: _Key
    version: int
    body: dict[str, Any]
    series: bool


def event_body(occurrence: Occurrence, *, controller: str, instance: str) -> dict[str, Any]:
    """The events.k8s.io/v1 Event of one occurrence (client-go's ``makeEvent``)."""
    body: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": occurrence.name, "namespace": occurrence.namespace},
        "eventTime": micro_time(occurrence.wall),
        "reportingController": controller,
        "reportingInstance": instance,
        "action": occurrence.action,
        "reason": occurrence.reason,
        "regarding": dict(occurrence.regarding),
        "type": occurrence.type,
    }
    if occurrence.related is not None:
        body["related"] = dict(occurrence.related)
    if occurrence.note:
        body["note"] = occurrence.note
    return body


class SeriesCache:
    """The events sent recently, by isomorphism key (see the module docs)."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[_Key, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def key_of(event: dict[str, Any]) -> _Key:
        """client-go's ``getKey``: type, action, reason, reporter, regarding and related."""
        return (
            event.get("type", ""),
            event.get("action", ""),
            event.get("reason", ""),
            event.get("reportingController", ""),
            event.get("reportingInstance", ""),
            reference_key(event.get("regarding")),
            reference_key(event.get("related")),
        )

    def observe(self, event: dict[str, Any], *, now: float) -> SeriesSend | None:
        """Account for one occurrence (``event`` as :func:`event_body` made it, recorded at
        monotonic ``now``); the request to send, or None when it only counted."""
        key = self.key_of(event)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry(event=event, event_time=now)
            return SeriesSend(key, entry.version, copy.deepcopy(event), series=False)
        entry.version += 1
        entry.last_observed = event["eventTime"]
        entry.last_observed_at = now
        if entry.count is not None:
            entry.count += 1
            return None
        entry.count = 2
        return SeriesSend(key, entry.version, entry.body(), series=True)

    def due_to_finish(self, now: float) -> list[SeriesSend | tuple[_Key, int]]:
        """What :data:`FINISH` seconds of quiet end: a series' last send (a
        :class:`SeriesSend`), or a single event to forget (``(key, version)``)."""
        due: list[SeriesSend | tuple[_Key, int]] = []
        for key, entry in self._entries.items():
            if entry.count is not None:
                if entry.last_observed_at < now - FINISH:
                    due.append(SeriesSend(key, entry.version, entry.body(), series=True))
            elif entry.event_time < now - FINISH:
                due.append((key, entry.version))
        return due

    def series(self) -> list[SeriesSend]:
        """Every series, to send again (the refresh)."""
        return [
            SeriesSend(key, entry.version, entry.body(), series=True)
            for key, entry in self._entries.items()
            if entry.count is not None
        ]

    def unsent(self) -> list[SeriesSend]:
        """The series whose current count the server has not been sent (flushed on close)."""
        return [
            SeriesSend(key, entry.version, entry.body(), series=True)
            for key, entry in self._entries.items()
            if entry.count is not None and entry.count != entry.sent_count
        ]

    def sent(self, send: SeriesSend) -> None:
        """``send`` reached the server."""
        entry = self._entries.get(send.key)
        series = send.body.get("series")
        if entry is not None and isinstance(series, dict):
            count = series.get("count")
            if isinstance(count, int) and (entry.sent_count is None or count > entry.sent_count):
                entry.sent_count = count

    def forget(self, key: _Key, version: int) -> bool:
        """Drop the entry ``key`` unless an occurrence changed it since ``version``."""
        entry = self._entries.get(key)
        if entry is None or entry.version != version:
            return False
        del self._entries[key]
        return True
