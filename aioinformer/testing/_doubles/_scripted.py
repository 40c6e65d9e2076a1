"""A lister-watcher that answers from scripts and records every request (httpx's
``MockTransport``, for the list/watch seam): what a test of a reflector's or an informer's
protocol behaviour needs (backoff, relists, resource versions, watch restarts), on virtual
time.

::

    lw = ScriptedListerWatcher(clock=clock, default_list=ListResult([pod_a], "10"))
    lw.list_script.append(InternalServerError(code=500, reason="InternalError"))
    async with SharedIndexInformer(lw, clock=clock) as informer:
        (backoff_ends,) = await clock.wait_for_timers()  # the first list failed
        await clock.advance(backoff_ends - clock.now())
        await informer.wait_for_cache_sync()  # the second one answered default_list
        watch = await lw.wait_for_request("watch")
        assert watch.options.resource_version == "10"
        lw.streams[0].push(WatchEvent("ADDED", pod_b))

Unlike :class:`~aioinformer.testing.MemorySource` (a small API server in memory, answering
from the objects it holds), nothing here is computed: each answer is what the test scripted.
"""

from __future__ import annotations

import builtins
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import anyio

from ..._clock import SYSTEM_CLOCK, Clock
from ..._listwatch import ListOptions, ListResult, Resource, WatchEvent, as_resource

__all__ = ["ScriptedListerWatcher", "ScriptedRequest", "ScriptedWatchStream"]


class ScriptedWatchStream:
    """A watch stream the test feeds (a :class:`~aioinformer.lowlevel.WatchStream`).

    Iteration hands out what was pushed, in order, waiting while nothing is queued:
    :meth:`push` delivers events, :meth:`fail` an error (raised by the iteration, as a real
    stream raises an ``ERROR`` event or a broken connection), :meth:`end` a clean end.
    """

    def __init__(self, events: Iterable[WatchEvent] = ()) -> None:
        self._items: deque[WatchEvent | Exception | None] = deque(events)
        self._arrived: anyio.Event | None = None
        #: True once the consumer closed the stream (:meth:`aclose`).
        self.closed = False

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<ScriptedWatchStream [{state}] {len(self._items)} queued>"

    def push(self, *events: WatchEvent) -> None:
        """Deliver events."""
        for item in events:
            self._put(item)

    def fail(self, error: Exception) -> None:
        """Deliver an error: the iteration raises it. After an error that ends a real stream
        (an :class:`~aioinformer.errors.ApiError`, a
        :class:`~aioinformer.errors.TransportError`) a reflector opens a new watch; after a
        :class:`~aioinformer.errors.MalformedWatchEventError` it keeps reading this one."""
        self._put(error)

    def end(self) -> None:
        """End the stream cleanly (the server's watch timeout)."""
        self._put(None)

    def __aiter__(self) -> ScriptedWatchStream:
        return self

    async def __anext__(self) -> WatchEvent:
        while not self._items:
            if self._arrived is None:
                self._arrived = anyio.Event()
            await self._arrived.wait()
        item = self._items.popleft()
        if item is None:
            raise StopAsyncIteration
        if isinstance(item, Exception):
            raise item
        return item

    async def aclose(self) -> None:
        """Close the stream (sets :attr:`closed`)."""
        self.closed = True

    def _put(self, item: WatchEvent | Exception | None) -> None:
        self._items.append(item)
        arrived, self._arrived = self._arrived, None
        if arrived is not None:
            arrived.set()


@dataclass(frozen=True, slots=True)
class ScriptedRequest:
    """One request a :class:`ScriptedListerWatcher` answered."""

    #: ``"list"`` or ``"watch"``.
    verb: Literal["list", "watch"]
    #: The options it was made with (resource version, limit, continue token, timeout...).
    options: ListOptions
    #: When it was made, on the lister-watcher's clock.
    at: float


class ScriptedListerWatcher:
    """A :class:`~aioinformer.lowlevel.ListerWatcher` answering from scripts; it records
    every request with the time it was made.

    A list takes the next answer of :attr:`list_script` (a
    :class:`~aioinformer.lowlevel.ListResult`, or an exception to raise), else answers
    :attr:`default_list`. A watch takes the next answer of :attr:`watch_script` (a
    :class:`ScriptedWatchStream`, or an exception to raise), else opens a new, empty
    :class:`ScriptedWatchStream`; every stream handed out is appended to :attr:`streams`, for
    the test to feed. The scripts are plain :class:`collections.deque` s: append to them at
    any time.

    :param clock: the clock the request times are read from (a
        :class:`~aioinformer.testing.FakeClock` for exact virtual times). Default the system
        clock.
    :param default_list: the answer to a list when nothing is scripted. Default an empty list
        at resource version ``"10"``.
    :param resource: the resource it serves, for whoever asks (``informer.lister()`` checks
        its ``get(name, namespace)`` calls against the resource's scope). Default None.
    """

    def __init__(
        self,
        *,
        clock: Clock = SYSTEM_CLOCK,
        default_list: ListResult | None = None,
        resource: Resource | str | None = None,
    ) -> None:
        #: The clock request times are read from.
        self.clock = clock
        #: The answer to a list when :attr:`list_script` is empty.
        self.default_list = default_list if default_list is not None else ListResult([], "10")
        #: The resource it serves, or None.
        self.resource = as_resource(resource) if resource is not None else None
        #: The next answers to lists, in order.
        self.list_script: deque[ListResult | Exception] = deque()
        #: The next answers to watches, in order.
        self.watch_script: deque[ScriptedWatchStream | Exception] = deque()
        #: Every request, in order: each has ``verb`` (``"list"`` or ``"watch"``),
        #: ``options`` (the :class:`~aioinformer.ListOptions` it was made with) and ``at``
        #: (when it was made, on :attr:`clock`).
        self.requests: builtins.list[ScriptedRequest] = []
        #: Every stream a watch returned, in order.
        self.streams: builtins.list[ScriptedWatchStream] = []
        #: How many times the credentials were reloaded (after a 401).
        self.refreshes = 0
        self._changed: anyio.Event | None = None

    def __repr__(self) -> str:
        lists, watches = len(self.made("list")), len(self.made("watch"))
        return f"<ScriptedListerWatcher {lists} lists, {watches} watches>"

    async def list(self, options: ListOptions) -> ListResult:
        """Answer the next scripted list (or :attr:`default_list`)."""
        self._record("list", options)
        answer = self.list_script.popleft() if self.list_script else self.default_list
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def watch(
        self, options: ListOptions, *, idle_timeout: float | None = None
    ) -> ScriptedWatchStream:
        """Answer the next scripted watch (or a new stream). ``idle_timeout`` is ignored: fail
        a stream with :class:`~aioinformer.errors.WatchIdleTimeoutError` to act it out."""
        self._record("watch", options)
        answer = self.watch_script.popleft() if self.watch_script else ScriptedWatchStream()
        if isinstance(answer, Exception):
            raise answer
        self.streams.append(answer)
        return answer

    async def refresh_credentials(self) -> None:
        """Count a credential reload (a reflector asks for one after a 401)."""
        self.refreshes += 1

    def made(self, verb: Literal["list", "watch"]) -> builtins.list[ScriptedRequest]:
        """The requests of one verb, in order."""
        return [r for r in self.requests if r.verb == verb]

    async def wait_for_request(
        self, verb: Literal["list", "watch"], count: int = 1
    ) -> ScriptedRequest:
        """Wait until ``count`` requests of ``verb`` were made (at once if they were); returns
        the ``count``-th. Takes no timeout: bound it with :func:`anyio.fail_after`."""
        while len(self.made(verb)) < count:
            if self._changed is None:
                self._changed = anyio.Event()
            await self._changed.wait()
        return self.made(verb)[count - 1]

    def _record(self, verb: Literal["list", "watch"], options: ListOptions) -> None:
        self.requests.append(ScriptedRequest(verb, options, self.clock.now()))
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()
