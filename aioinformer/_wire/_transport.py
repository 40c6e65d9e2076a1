"""The lister-watcher over HTTP: a :class:`~aioinformer.lowlevel.ListerWatcher` through a
:class:`~aioinformer.KubeClient`.

Responses are read as raw bytes. Called with a ``decoder`` (a
:class:`~aioinformer._wire._slices.WireDecoder`, as the informer calls it), a LIST page is split
into per-object byte slices with only their metadata decoded (a :class:`WirePage`) and each
watch line into a :class:`WireEvent` of the same kind; called without one (the public
:class:`~aioinformer.lowlevel.ListerWatcher` protocol), they are decoded with orjson into plain
dicts — never model objects. The watch stream is framed from the chunks as they arrive (whole
chunks at a time, see :mod:`aioinformer._wire._framing`), so one event may be many megabytes
long.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import aiohttp

from .._listwatch import (
    ListOptions,
    ListResult,
    Resource,
    WatchEvent,
    WatchEventType,
    list_result_from_body,
)
from ..errors import (
    MalformedWatchEventError,
    TransportError,
    WatchIdleTimeoutError,
    api_error_from_status,
)
from ._framing import LineFramer, decode_event
from ._http import decode_body, map_errors, read
from ._slices import UndecodableBodyError, WireDecoder, WireEvent, WirePage

if TYPE_CHECKING:
    from ._client import KubeClient

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "KubeListerWatcher",
    "KubeWatchStream",
    "KubeWireStream",
]

logger = logging.getLogger(__name__)

#: The largest watch event (one JSON line) accepted by default: 64 MiB.
DEFAULT_MAX_EVENT_SIZE = 64 * 1024 * 1024
#: :meth:`KubeWatchStream.next_batch` decodes about this many bytes of events per batch.
BATCH_BYTES = 32 * 1024
#: :meth:`KubeWireStream.next_batch` hands on about this many bytes of events per batch: its
#: carriers hold nothing the garbage collector tracks, so a batch can be as large as a read
#: (fewer hand-offs and consumer wake-ups per event).
WIRE_BATCH_BYTES = 256 * 1024

_ERROR = WatchEventType.ERROR

E = TypeVar("E", WatchEvent, WireEvent)

#: Watches (streaming lists included) ask for an uncompressed stream. From Kubernetes 1.37 a
#: gzip-encoded watch-list answer is a stream of many gzip members, and aiohttp before 3.14
#: silently drops everything after the first one (the initial-events-end bookmark with it);
#: watch events are small and frequent, so compression gains little there anyway.
_WATCH_HEADERS = {"Accept-Encoding": "identity"}


class _LineStream(Generic[E]):
    """An open watch over HTTP: frames whole chunks into JSON lines and decodes each once
    (subclasses say how: :class:`KubeWatchStream` into dicts, :class:`KubeWireStream` into
    byte slices).

    See :class:`~aioinformer.lowlevel.WatchStream` for what iteration raises. A malformed line
    raises :class:`~aioinformer.errors.MalformedWatchEventError` and the next read continues
    with the next line. :meth:`next_batch` hands out every event a read completed at once
    (:class:`~aioinformer._listwatch.BatchWatchStream`).
    """

    def __init__(
        self,
        response: aiohttp.ClientResponse,
        *,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        idle_timeout: float | None = None,
    ) -> None:
        self._response = response
        self._idle_timeout = idle_timeout
        self._framer = LineFramer(max_line_size=max_event_size)
        # Lines received but not decoded yet, from position _line_pos (bytes: nothing the
        # garbage collector tracks while they wait).
        self._lines: list[bytes | MalformedWatchEventError] = []
        self._line_pos = 0
        # Events read but not handed out yet (by __anext__), from position _ready_pos.
        self._ready: list[E | MalformedWatchEventError] = []
        self._ready_pos = 0
        # An ERROR event: raised once the events before it were handed out.
        self._error: Exception | None = None
        self._eof = False
        self._closed = False
        #: Bytes received so far (for metrics).
        self.bytes_received = 0

    def __aiter__(self) -> AsyncIterator[E]:
        return self

    async def __anext__(self) -> E:
        while self._ready_pos >= len(self._ready):
            self._ready = await self.next_batch()
            self._ready_pos = 0
            if not self._ready:
                raise StopAsyncIteration
        item = self._ready[self._ready_pos]
        self._ready_pos += 1
        if isinstance(item, MalformedWatchEventError):
            raise item
        return item

    async def next_batch(self) -> list[E | MalformedWatchEventError]:
        """The events the next read completed (see
        :meth:`~aioinformer._listwatch.BatchWatchStream.next_batch`)."""
        if self._ready_pos < len(self._ready):  # left over by __anext__
            batch = self._ready[self._ready_pos :]
            self._ready, self._ready_pos = [], 0
            return batch
        while True:
            error = self._error
            if error is not None:
                self._error = None
                raise error
            if self._line_pos < len(self._lines):
                batch = self._decode_some()
                if batch:
                    return batch
                continue
            if self._eof or self._closed:
                return []
            await self._read()

    async def aclose(self) -> None:
        """Close the connection (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._response.close()

    async def _read(self) -> None:
        with map_errors("watch stream broke", on_timeout=self._idle):
            chunk = await self._response.content.readany()
        if chunk:
            self.bytes_received += len(chunk)
            self._lines = self._framer.feed(chunk)
        else:
            self._eof = True
            self._lines = self._framer.finish()
        self._line_pos = 0

    def _decode_some(self) -> list[E | MalformedWatchEventError]:
        """Decode the next received lines, about :data:`BATCH_BYTES` of them (at least one).

        On the dict path small batches, each handed through to the consumers before the next
        is decoded, keep the decoded objects in flight few (the garbage collector would scan
        them); the wire path's carriers hold nothing it tracks, so its batches are larger.
        """
        lines, position = self._lines, self._line_pos
        end = len(lines)
        batch: list[E | MalformedWatchEventError] = []
        append = batch.append
        decode = self._decode_line
        size = 0
        limit = self._batch_bytes
        while position < end and size < limit:
            line = lines[position]
            position += 1
            if line.__class__ is not bytes:
                assert isinstance(line, MalformedWatchEventError)
                append(line)
                continue
            assert isinstance(line, bytes)
            size += len(line)
            try:
                event = decode(line)
            except MalformedWatchEventError as exc:
                append(exc)
                continue
            if event.type == _ERROR:
                # The stream is over: the events before the error, then the error.
                self._eof = True
                self._error = api_error_from_status(self._document(event))
                position = end
                break
            append(event)
        if position >= end:
            self._lines, position = [], 0
        self._line_pos = position
        return batch

    #: Bytes of events per batch (see :data:`BATCH_BYTES`).
    _batch_bytes = BATCH_BYTES

    def _decode_line(self, line: bytes) -> E:
        raise NotImplementedError

    @staticmethod
    def _document(event: E) -> Any:
        """The decoded object of an ``ERROR`` event (its Status)."""
        raise NotImplementedError

    def _idle(self) -> WatchIdleTimeoutError:
        return WatchIdleTimeoutError(f"no bytes received on the watch for {self._idle_timeout} s")


class KubeWatchStream(_LineStream[WatchEvent]):
    """A watch decoded into dicts (the public :class:`~aioinformer.lowlevel.WatchStream`):
    each event's ``raw`` is the object's slice of its line (see
    :mod:`aioinformer._wire._framing`)."""

    def _decode_line(self, line: bytes) -> WatchEvent:
        return decode_event(line)

    @staticmethod
    def _document(event: WatchEvent) -> Any:
        return event.object


class KubeWireStream(_LineStream[WireEvent]):
    """A watch decoded by a :class:`~aioinformer._wire._slices.WireDecoder`: each event's
    object stays its byte slice, with only its metadata decoded."""

    _batch_bytes = WIRE_BATCH_BYTES

    def __init__(
        self,
        response: aiohttp.ClientResponse,
        decoder: WireDecoder,
        *,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        idle_timeout: float | None = None,
    ) -> None:
        super().__init__(response, max_event_size=max_event_size, idle_timeout=idle_timeout)
        self._decode_line = decoder.decode_line  # type: ignore[method-assign]

    @staticmethod
    def _document(event: WireEvent) -> Any:
        return event.document


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

    @overload
    async def list(self, options: ListOptions) -> ListResult: ...

    @overload
    async def list(self, options: ListOptions, *, decoder: WireDecoder) -> WirePage: ...

    async def list(
        self, options: ListOptions, *, decoder: WireDecoder | None = None
    ) -> ListResult | WirePage:
        """Fetch one page (see :meth:`~aioinformer.lowlevel.ListerWatcher.list`).

        :param decoder: split the page into byte slices with it (the informer's wire path);
            None (the default): decode the items into dicts.
        """
        what = f"list of {self.resource}"
        response = await self._client._transport.open(
            "GET", self._url, what=what, query=self._options(options)
        )
        body = await read(response, what)
        if decoder is not None:
            try:
                return decoder.split_list(body)
            except UndecodableBodyError as exc:
                raise TransportError(f"{what}: {exc}") from exc
        decoded = decode_body(body, what)
        try:
            return list_result_from_body(decoded)
        except ValueError as exc:
            raise TransportError(f"{what}: unexpected response ({exc})") from exc

    @overload
    async def watch(
        self, options: ListOptions, *, idle_timeout: float | None = None
    ) -> KubeWatchStream: ...

    @overload
    async def watch(
        self, options: ListOptions, *, idle_timeout: float | None = None, decoder: WireDecoder
    ) -> KubeWireStream: ...

    async def watch(
        self,
        options: ListOptions,
        *,
        idle_timeout: float | None = None,
        decoder: WireDecoder | None = None,
    ) -> KubeWatchStream | KubeWireStream:
        """Open a watch (see :meth:`~aioinformer.lowlevel.ListerWatcher.watch`).

        :param decoder: decode its lines with it into byte slices (the informer's wire path);
            None (the default): into dicts.
        """
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
        if decoder is not None:
            return KubeWireStream(
                response,
                decoder,
                max_event_size=self._max_event_size,
                idle_timeout=idle_timeout,
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
