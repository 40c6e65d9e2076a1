"""The lister-watcher over HTTP: a :class:`~aioinformer.listwatch.ListerWatcher` through a
:class:`~aioinformer.KubeClient`.

Responses are read as raw bytes and decoded with orjson into plain dicts — no model objects.
The watch stream is framed from the chunks as they arrive, so one event may be many megabytes
long.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import aiohttp
import orjson

from ._http import decode_body, map_errors, read
from ._listwatch import (
    ListOptions,
    ListResult,
    Resource,
    WatchEvent,
    WatchEventType,
    list_result_from_body,
)
from .errors import (
    MalformedWatchEventError,
    TransportError,
    WatchIdleTimeoutError,
    api_error_from_status,
)

if TYPE_CHECKING:
    from ._client import KubeClient

__all__ = ["DEFAULT_MAX_EVENT_SIZE", "KubeListerWatcher", "KubeWatchStream"]

logger = logging.getLogger(__name__)

#: The largest watch event (one JSON line) accepted by default: 64 MiB.
DEFAULT_MAX_EVENT_SIZE = 64 * 1024 * 1024

_KNOWN_TYPES = frozenset(
    (WatchEventType.ADDED, WatchEventType.MODIFIED, WatchEventType.DELETED, WatchEventType.BOOKMARK)
)

#: Watches (streaming lists included) ask for an uncompressed stream. From Kubernetes 1.37 a
#: gzip-encoded watch-list answer is a stream of many gzip members, and aiohttp before 3.14
#: silently drops everything after the first one (the initial-events-end bookmark with it);
#: watch events are small and frequent, so compression gains little there anyway.
_WATCH_HEADERS = {"Accept-Encoding": "identity"}


class KubeWatchStream:
    """An open watch over HTTP: frames JSON lines from chunks and decodes them with orjson.

    See :class:`~aioinformer.listwatch.WatchStream` for what iteration raises. A malformed line
    raises :class:`~aioinformer.errors.MalformedWatchEventError` and the next read continues
    with the next line.
    """

    def __init__(
        self,
        response: aiohttp.ClientResponse,
        *,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        idle_timeout: float | None = None,
    ) -> None:
        self._response = response
        self._max_event_size = max_event_size
        self._idle_timeout = idle_timeout
        # Complete lines not yet decoded, in order; None stands for a line over max_event_size.
        self._pending: list[bytes | None] = []
        self._pending_pos = 0
        self._partial = bytearray()  # the start of a line whose end has not arrived
        self._skipping = False  # inside a line over max_event_size, dropping until its end
        self._eof = False
        self._closed = False
        #: Bytes received so far (for metrics).
        self.bytes_received = 0

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self

    async def __anext__(self) -> WatchEvent:
        while True:
            if self._pending_pos < len(self._pending):
                line = self._pending[self._pending_pos]
                self._pending_pos += 1
                if line is None:
                    raise MalformedWatchEventError(
                        f"event larger than max_event_size ({self._max_event_size} bytes) skipped"
                    )
                if line.strip():
                    return self._decode(line)
                continue
            self._pending.clear()
            self._pending_pos = 0
            if self._eof or self._closed:
                raise StopAsyncIteration
            await self._fill()

    async def aclose(self) -> None:
        """Close the connection (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._response.close()

    async def _fill(self) -> None:
        with map_errors("watch stream broke", on_timeout=self._idle):
            chunk = await self._response.content.readany()
        if not chunk:
            self._eof = True
            if self._partial and not self._skipping:
                self._pending.append(bytes(self._partial))
            self._partial.clear()
            return
        self.bytes_received += len(chunk)
        self._split(chunk)

    def _idle(self) -> WatchIdleTimeoutError:
        return WatchIdleTimeoutError(f"no bytes received on the watch for {self._idle_timeout} s")

    def _split(self, chunk: bytes) -> None:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                if not self._skipping:
                    self._partial += chunk[start:]
                    if len(self._partial) > self._max_event_size:
                        self._partial.clear()
                        self._skipping = True
                return
            if self._skipping:
                self._skipping = False
                self._pending.append(None)
            elif self._partial:
                self._partial += chunk[start:newline]
                if len(self._partial) > self._max_event_size:
                    self._pending.append(None)
                else:
                    self._pending.append(bytes(self._partial))
                self._partial.clear()
            else:
                if newline - start > self._max_event_size:
                    self._pending.append(None)
                else:
                    self._pending.append(chunk[start:newline])
            start = newline + 1

    def _decode(self, line: bytes) -> WatchEvent:
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise MalformedWatchEventError(f"not JSON ({exc})", line) from exc
        if not isinstance(event, dict):
            raise MalformedWatchEventError("not a JSON object", line)
        event_type = event.get("type")
        obj = event.get("object")
        if not isinstance(event_type, str) or not isinstance(obj, dict):
            raise MalformedWatchEventError("missing 'type' or 'object'", line)
        if event_type == WatchEventType.ERROR:
            self._eof = True
            raise api_error_from_status(obj)
        if event_type in _KNOWN_TYPES:
            return WatchEvent(WatchEventType(event_type), obj)
        return WatchEvent(event_type, obj)


class KubeListerWatcher:
    """Lists and watches one resource through a :class:`~aioinformer.KubeClient`.

    Its requests are not repeated after a 401: the reflector's retry policy decides, and calls
    :meth:`refresh_credentials` first.

    :param client: the connection; the caller owns and closes it.
    :param resource: what to list and watch.
    :param namespace: restrict to one namespace (None: all namespaces).
    :param label_selector: always applied, ANDed with a selector in the options.
    :param field_selector: always applied, ANDed with a selector in the options.
    :param tweak_list_options: applied to the options of every list and watch request (for
        example to set selectors); returns the options to use.
    :param max_event_size: the largest watch event accepted; bigger ones are skipped with a
        :class:`~aioinformer.errors.MalformedWatchEventError`. Default 64 MiB.

    Each running watch holds one connection of the client's pool; lists give up after the
    client's ``request_timeout`` without a byte.
    """

    def __init__(
        self,
        client: KubeClient,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        tweak_list_options: Callable[[ListOptions], ListOptions] | None = None,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
    ) -> None:
        self._client = client
        self.resource = resource
        self.namespace = namespace or None
        self._url = resource.path(namespace=self.namespace)
        self._label_selector = label_selector or None
        self._field_selector = field_selector or None
        self._tweak = tweak_list_options
        self._max_event_size = max_event_size

    def __repr__(self) -> str:
        where = f"namespace={self.namespace!r}" if self.namespace else "all namespaces"
        return f"<KubeListerWatcher {self.resource} {where}>"

    async def list(self, options: ListOptions) -> ListResult:
        """Fetch one page (see :meth:`ListerWatcher.list`)."""
        what = f"list of {self.resource}"
        response = await self._client._transport.open(
            "GET", self._url, what=what, query=self._options(options)
        )
        body = decode_body(await read(response, what), what)
        try:
            return list_result_from_body(body)
        except ValueError as exc:
            raise TransportError(f"{what}: unexpected response ({exc})") from exc

    async def watch(
        self, options: ListOptions, *, idle_timeout: float | None = None
    ) -> KubeWatchStream:
        """Open a watch (see :meth:`ListerWatcher.watch`)."""
        query = self._options(options)
        query["watch"] = "1"
        response = await self._client._transport.open(
            "GET",
            self._url,
            what=f"watch of {self.resource}",
            query=query,
            headers=_WATCH_HEADERS,
            read_timeout=idle_timeout,
        )
        return KubeWatchStream(
            response, max_event_size=self._max_event_size, idle_timeout=idle_timeout
        )

    async def refresh_credentials(self) -> None:
        """Reload the client's credentials after a 401 (the reflector calls this)."""
        await self._client.refresh_credentials()

    def _options(self, options: ListOptions) -> dict[str, str]:
        if self._tweak is not None:
            options = self._tweak(options)
        label = _and(self._label_selector, options.label_selector)
        field = _and(self._field_selector, options.field_selector)
        if label != options.label_selector or field != options.field_selector:
            options = replace(options, label_selector=label, field_selector=field)
        return options.to_query()


def _and(first: str | None, second: str | None) -> str | None:
    if first and second:
        return f"{first},{second}"
    return first or second
