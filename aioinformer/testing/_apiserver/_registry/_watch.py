"""Watchers and the hub that fans writes out to them.

A :class:`Watcher` is one open watch stream: a buffer of encoded lines plus a wake event,
drained by the HTTP handler that owns the connection. Every write reaches every watcher of
its resource synchronously (:meth:`WatchHub.dispatch`), filtered by namespace and selectors
with the real server's transitions: an object entering the selector arrives as ``ADDED``,
one leaving it as ``DELETED`` (its previous state at the new RV). Encoded lines are shared
by all watchers; nothing is created per event besides list appends.

Opening a watch computes its initial lines (synthetic ``ADDED`` events, or the history
replay after the requested RV) and registers it in one synchronous step, so no write can
fall between the two.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .._api import _status as status
from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo
from .._selectors._matching import Matcher
from ._history import ADDED, DELETED, ERROR, StoredEvent, encode_event
from ._storage import Storage, storage_key

#: CustomResourceDefinitions: deleting one ends the watches of its resource.
_CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")

__all__ = ["Watcher", "WatchHub", "parse_resource_version"]

OPEN = "open"
STALLED = "stalled"
ENDING = "ending"
DROPPED = "dropped"

_INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class _Transport(Protocol):
    def abort(self) -> None: ...


class _Writer(Protocol):
    async def write(self, data: bytes) -> None: ...


def parse_resource_version(value: str) -> int:
    """An RV from a query parameter.

    :raises StatusFailure: 400, when it is not a non-negative integer.
    """
    try:
        rv = int(value)
    except ValueError:
        rv = -1
    if rv < 0:
        raise status.bad_request(f"invalid resource version: {value!r}")
    return rv


def _bookmark_object(info: ResourceInfo, rv: int, *, initial_end: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        metadata["annotations"] = {_INITIAL_EVENTS_END: "true"}
    return {"kind": info.kind, "apiVersion": info.api_version, "metadata": metadata}


class Watcher:
    """One open watch stream.

    :ivar info: the resource watched.
    :ivar namespace: the namespace watched, ``""`` for all.
    :ivar state: ``open``, ``stalled``, ``ending`` or ``dropped``.
    """

    def __init__(
        self,
        info: ResourceInfo,
        *,
        namespace: str,
        matcher: Matcher | None,
        allow_bookmarks: bool,
        bookmark_interval: float,
        timeout_seconds: float | None,
        current_rv: Callable[[], int],
        transport: _Transport | None,
        convert: Callable[[bytes], bytes] | None = None,
    ) -> None:
        self.info = info
        self._convert = convert
        self.namespace = namespace
        self.matcher = matcher
        self.state = OPEN
        self._allow_bookmarks = allow_bookmarks
        self._interval = bookmark_interval
        self._current_rv = current_rv
        self._transport = transport
        self._buffer: list[bytes] = []
        self._wake = asyncio.Event()
        now = asyncio.get_running_loop().time()
        self._next_bookmark = now + bookmark_interval if allow_bookmarks else math.inf
        self._deadline = now + timeout_seconds if timeout_seconds else math.inf

    def visible(self, obj: Mapping[str, Any]) -> bool:
        """Whether an object is inside this watch's namespace and selectors."""
        if self.namespace and obj["metadata"].get("namespace") != self.namespace:
            return False
        return self.matcher is None or self.matcher(obj)

    def deliver(self, event: StoredEvent) -> None:
        """Queue the line this watcher sees for a write, if any (the hot path)."""
        if self.state != OPEN or (self.namespace and event.namespace != self.namespace):
            return
        matcher = self.matcher
        if matcher is None:
            line = event.line()
        else:
            old_ok = event.old is not None and matcher(event.old)
            if event.type == DELETED:
                if not old_ok:
                    return
                line = event.line()
            elif matcher(event.obj):
                line = event.line() if old_ok or event.type == ADDED else event.entering_line()
            elif old_ok:
                line = event.leaving_line()
            else:
                return
        self._buffer.append(line)
        self._wake.set()

    def push(self, line: bytes) -> None:
        """Queue a raw line (a fault or a synthetic event) unless the watch is silent."""
        if self.state == OPEN:
            self._buffer.append(line)
            self._wake.set()

    def bookmark(self, rv: int, *, initial_end: bool = False) -> None:
        """Queue a ``BOOKMARK`` at ``rv``."""
        self.push(
            encode_event("BOOKMARK", _bookmark_object(self.info, rv, initial_end=initial_end))
        )

    def end(self, last_line: bytes | None = None) -> None:
        """Finish cleanly after the queued lines (and ``last_line``)."""
        if self.state == OPEN and last_line is not None:
            self._buffer.append(last_line)
        if self.state in (OPEN, STALLED):
            self.state = ENDING
            self._wake.set()

    def stall(self) -> None:
        """Go silent: queued lines are discarded and nothing more is sent."""
        if self.state == OPEN:
            self.state = STALLED
            self._buffer.clear()

    def drop(self) -> None:
        """Close the connection abruptly (the client sees an incomplete response)."""
        self.state = DROPPED
        self._buffer.clear()
        self._wake.set()
        if self._transport is not None:
            self._transport.abort()

    def _on_timer(self, now: float) -> None:
        if now >= self._deadline:
            if self._allow_bookmarks:
                self.bookmark(self._current_rv())
            self.end()
        elif now >= self._next_bookmark:
            self.bookmark(self._current_rv())
            self._next_bookmark = now + self._interval

    async def serve(self, response: _Writer) -> None:
        """Write queued lines as they come until the watch ends; returns on a clean end."""
        loop = asyncio.get_running_loop()
        buffer = self._buffer
        while True:
            if buffer and self.state in (OPEN, ENDING):
                if self._convert is not None:
                    buffer[:] = [self._convert(line) for line in buffer]
                chunk = b"".join(buffer) if len(buffer) > 1 else buffer[0]
                buffer.clear()
                await response.write(chunk)
                continue
            if self.state in (ENDING, DROPPED):
                return
            self._wake.clear()
            if self.state == STALLED:
                await self._wake.wait()
                continue
            when = min(self._deadline, self._next_bookmark)
            try:
                async with asyncio.timeout_at(None if when == math.inf else when):
                    await self._wake.wait()
            except TimeoutError:
                self._on_timer(loop.time())


class WatchHub:
    """Every open watcher, by resource; subscribes to the storage's writes.

    :param storage: the storage whose writes are fanned out.
    :param bookmark_interval: seconds between bookmarks on watches that allow them.
    """

    def __init__(self, storage: Storage, *, bookmark_interval: float) -> None:
        self._storage = storage
        self.bookmark_interval = bookmark_interval
        self._watchers: dict[tuple[str, str, str], set[Watcher]] = {}
        self._changed = asyncio.Event()
        storage.subscribe(self.dispatch)

    def dispatch(self, info: ResourceInfo, event: StoredEvent) -> None:
        """Hand one write to every watcher of its resource."""
        watchers = self._watchers.get(storage_key(info))
        if watchers:
            for watcher in watchers:
                watcher.deliver(event)
        if event.type == DELETED and (info.group, info.plural) == _CRDS:
            self._end_custom(event.obj)

    def _end_custom(self, crd: Mapping[str, Any]) -> None:
        """A CRD is gone: the watches of its resource end cleanly, as its storage is
        destroyed (apiextensions-apiserver ``crdHandler.removeStorage``)."""
        group = str((crd.get("spec") or {}).get("group") or "")
        plural = str(((crd.get("status") or {}).get("acceptedNames") or {}).get("plural") or "")
        for watcher in list(self._watchers.get((group, "", plural), ())):
            watcher.end()
            self.close(watcher)

    def open(
        self,
        info: ResourceInfo,
        *,
        namespace: str,
        matcher: Matcher | None,
        resource_version: str,
        send_initial_events: bool | None,
        allow_bookmarks: bool,
        timeout_seconds: float | None,
        transport: _Transport | None,
        convert: Callable[[bytes], bytes] | None = None,
    ) -> Watcher:
        """Open a watch: queue its initial lines and register it, atomically.

        :param convert: rewrites each line as it is sent (``as=Table`` watches).

        A watch from an RV older than the history window is returned already ending with one
        ``ERROR`` line (410 Expired), as the real server does.

        :raises StatusFailure: 504 (too large RV), an RV newer than the server's.
        :raises StatusFailure: 400, an RV that is not an integer.
        """
        storage = self._storage
        watcher = Watcher(
            info,
            namespace=namespace,
            matcher=matcher,
            allow_bookmarks=allow_bookmarks,
            bookmark_interval=self.bookmark_interval,
            timeout_seconds=timeout_seconds,
            current_rv=lambda: storage.resource_version,
            transport=transport,
            convert=convert,
        )
        current = storage.resource_version
        from_state = resource_version in ("", "0")
        if not from_state:
            requested = parse_resource_version(resource_version)
            if requested > current:
                raise status.too_large_resource_version(requested, current)
        if send_initial_events or (from_state and send_initial_events is None):
            objects: dict[str, KubeObject] = storage.objects(info)
            for key in sorted(objects):
                obj = objects[key]
                if watcher.visible(obj):
                    watcher.push(encode_event(ADDED, obj))
            if send_initial_events and allow_bookmarks:
                watcher.bookmark(current, initial_end=True)
        elif not from_state:
            history = storage.history(info)
            events = history.since(requested)
            if events is None:
                error = status.expired(f"too old resource version: {requested} ({history.floor})")
                watcher.end(encode_event(ERROR, error.status))
                return watcher
            for event in events:
                watcher.deliver(event)
        self._watchers.setdefault(storage_key(info), set()).add(watcher)
        self._notify()
        return watcher

    def close(self, watcher: Watcher) -> None:
        """Unregister a watcher (idempotent)."""
        watchers = self._watchers.get(storage_key(watcher.info))
        if watchers is not None and watcher in watchers:
            watchers.discard(watcher)
            self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def watchers(self, info: ResourceInfo | None = None) -> list[Watcher]:
        """The registered watchers (of one resource)."""
        if info is not None:
            return list(self._watchers.get(storage_key(info), ()))
        return [w for group in self._watchers.values() for w in group]

    def count(self, info: ResourceInfo | None = None) -> int:
        """How many watches are open (on one resource), stalled ones included."""
        return len(self.watchers(info))

    async def wait_for_count(
        self, n: int, info: ResourceInfo | None = None, *, exactly: bool = False
    ) -> None:
        """Until at least (or exactly) ``n`` watches are open (on one resource)."""
        while (self.count(info) != n) if exactly else (self.count(info) < n):
            await self._changed.wait()

    def drop(self, info: ResourceInfo | None = None) -> int:
        """Abruptly close watches (of one resource); returns how many."""
        dropped = self.watchers(info)
        for watcher in dropped:
            watcher.drop()
            self.close(watcher)
        return len(dropped)

    def stall(self, info: ResourceInfo | None = None) -> int:
        """Silence the open watches (of one resource); returns how many."""
        open_ones = [w for w in self.watchers(info) if w.state == OPEN]
        for watcher in open_ones:
            watcher.stall()
        return len(open_ones)

    def push(self, line: bytes, info: ResourceInfo | None = None) -> None:
        """Queue a raw line on every open (not stalled) watch."""
        for watcher in self.watchers(info):
            watcher.push(line)

    def fail(self, error: StatusFailure, info: ResourceInfo | None = None) -> int:
        """Send an ``ERROR`` event with the error's Status to every open watch and end them."""
        line = encode_event(ERROR, error.status)
        ended = [w for w in self.watchers(info) if w.state == OPEN]
        for watcher in ended:
            watcher.end(line)
            self.close(watcher)
        return len(ended)

    def end_all(self) -> None:
        """End every watch cleanly (shutdown)."""
        for watcher in self.watchers():
            watcher.end()
            self.close(watcher)
