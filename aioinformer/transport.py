"""The HTTP transport: a :class:`~aioinformer.listwatch.ListerWatcher` over kubernetes_asyncio.

kubernetes_asyncio supplies the configuration (kubeconfig or in-cluster), TLS and credentials;
its aiohttp session carries the requests. Responses are read as raw bytes and decoded with
orjson into plain dicts — no model objects. The watch stream is framed from the chunks as they
arrive, so one event may be many megabytes long.
"""

from __future__ import annotations

import errno
import gc
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

from ._version import __version__
from .errors import (
    ApiError,
    ConnectionRefused,
    MalformedWatchEventError,
    TransportError,
    WatchIdleTimeoutError,
    api_error_from_status,
)
from .listwatch import (
    ListOptions,
    ListResult,
    Resource,
    WatchEvent,
    WatchEventType,
    list_result_from_body,
)

if TYPE_CHECKING:
    from kubernetes_asyncio.client import ApiClient

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "KubeListerWatcher",
    "KubeWatchStream",
    "error_from_body",
    "get_json",
    "request",
    "transport_error",
]

logger = logging.getLogger(__name__)

#: The largest watch event (one JSON line) accepted by default: 64 MiB.
DEFAULT_MAX_EVENT_SIZE = 64 * 1024 * 1024

_USER_AGENT = f"aioinformer/{__version__}"
_ERROR_BODY_LIMIT = 1024 * 1024
_KNOWN_TYPES = frozenset(
    (WatchEventType.ADDED, WatchEventType.MODIFIED, WatchEventType.DELETED, WatchEventType.BOOKMARK)
)

CredentialRefresher = Callable[[], Awaitable[None]]

#: Watches (streaming lists included) ask for an uncompressed stream. From Kubernetes 1.37 a
#: gzip-encoded watch-list answer is a stream of many gzip members, and aiohttp before 3.14
#: silently drops everything after the first one (the initial-events-end bookmark with it);
#: watch events are small and frequent, so compression gains little there anyway.
_WATCH_HEADERS = {"Accept-Encoding": "identity"}

#: List bodies larger than this are decoded with the cyclic GC paused (see ``_decode_body``).
GC_PAUSE_THRESHOLD = 1024 * 1024


def _decode_body(body: bytes) -> Any:
    """Decode a response body; a large one with the cyclic garbage collector paused.

    Decoding a big list allocates millions of containers in one C call, and CPython's GC would
    rescan them (and everything else alive) several times on the way — measured 3.5-4.5x slower
    for a 66 MB list of 10,000 Pods. Pausing it for the duration of the call, and only that,
    is safe: no Python code runs inside ``orjson.loads``; the previous state is restored.
    """
    if len(body) < GC_PAUSE_THRESHOLD or not gc.isenabled():
        return orjson.loads(body)
    gc.disable()
    try:
        return orjson.loads(body)
    finally:
        gc.enable()


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date: rare from the API server; fall back to backoff
    return seconds if seconds >= 0 else None


def error_from_body(response: aiohttp.ClientResponse, body: bytes) -> ApiError:
    """The typed error of a failed response: its ``Status`` body (or a Status built from the
    text), the HTTP status and ``Retry-After``."""
    try:
        decoded = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        decoded = None
    status = decoded if isinstance(decoded, dict) and decoded.get("kind") == "Status" else None
    if status is None:
        text = body[:500].decode("utf-8", "replace").strip()
        status = {"kind": "Status", "code": response.status, "message": text or response.reason}
    return api_error_from_status(
        status, http_status=response.status, retry_after=_retry_after(response.headers)
    )


async def _error_from_response(response: aiohttp.ClientResponse) -> ApiError:
    return error_from_body(response, await response.content.read(_ERROR_BODY_LIMIT))


def transport_error(exc: BaseException, what: str) -> TransportError:
    """The transport error for an aiohttp/OS failure (``ConnectionRefused`` when refused)."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        os_error = exc.os_error
        if isinstance(os_error, ConnectionRefusedError) or (
            getattr(os_error, "errno", None) == errno.ECONNREFUSED
        ):
            return ConnectionRefused(f"{what}: connection refused ({exc})")
    return TransportError(f"{what}: {type(exc).__name__}: {exc}")


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
        try:
            chunk = await self._response.content.readany()
        except TimeoutError as exc:
            raise WatchIdleTimeoutError(
                f"no bytes received on the watch for {self._idle_timeout} s"
            ) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise transport_error(exc, "watch stream broke") from exc
        if not chunk:
            self._eof = True
            if self._partial and not self._skipping:
                self._pending.append(bytes(self._partial))
            self._partial.clear()
            return
        self.bytes_received += len(chunk)
        self._split(chunk)

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
    """Lists and watches one resource through a kubernetes_asyncio ``ApiClient``.

    Uses the client's configuration (host, credentials, TLS, proxy) and its aiohttp session.

    :param api_client: a ``kubernetes_asyncio.client.ApiClient``; the caller owns and closes it.
    :param resource: what to list and watch.
    :param namespace: restrict to one namespace (None: all namespaces).
    :param label_selector: always applied, ANDed with a selector in the options.
    :param field_selector: always applied, ANDed with a selector in the options.
    :param tweak_list_options: applied to the options of every list and watch request (for
        example to set selectors); returns the options to use.
    :param credential_refresher: awaited after a 401 to reload credentials (for example
        ``lambda: loader.load_and_set(configuration)`` for a kubeconfig with an exec plugin).
        Without one, the configuration's ``refresh_api_key_hook`` (in-cluster token file) is
        the only refresh.
    :param max_event_size: the largest watch event accepted; bigger ones are skipped with a
        :class:`~aioinformer.errors.MalformedWatchEventError`. Default 64 MiB.
    :param connect_timeout: seconds to get a connection: to wait for a free one in the
        client's pool, then to establish it. Default 30. Each informer's watch holds one
        connection of the ``ApiClient``'s pool (kubernetes_asyncio's
        ``configuration.connection_pool_maxsize``, 100 by default) for as long as it runs.
    :param request_timeout: seconds without bytes before a list response is abandoned.
        Default 60.
    """

    def __init__(
        self,
        api_client: ApiClient,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        tweak_list_options: Callable[[ListOptions], ListOptions] | None = None,
        credential_refresher: CredentialRefresher | None = None,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        connect_timeout: float = 30.0,
        request_timeout: float = 60.0,
    ) -> None:
        self._api_client = api_client
        self.resource = resource
        self.namespace = namespace or None
        self._url = resource.path(namespace=self.namespace)
        self._label_selector = label_selector or None
        self._field_selector = field_selector or None
        self._tweak = tweak_list_options
        self._credential_refresher = credential_refresher
        self._max_event_size = max_event_size
        self._connect_timeout = connect_timeout
        self._request_timeout = request_timeout

    def __repr__(self) -> str:
        where = f"namespace={self.namespace!r}" if self.namespace else "all namespaces"
        return f"<KubeListerWatcher {self.resource} {where}>"

    async def list(self, options: ListOptions) -> ListResult:
        """Fetch one page (see :meth:`ListerWatcher.list`)."""
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=self._connect_timeout,
            sock_connect=self._connect_timeout,
            sock_read=self._request_timeout,
        )
        response = await self._request(self._options(options), timeout, "list")
        try:
            body = await response.read()
        except TimeoutError as exc:
            raise TransportError(f"list of {self.resource}: read timed out") from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise transport_error(exc, f"list of {self.resource}") from exc
        finally:
            response.release()
        try:
            return list_result_from_body(_decode_body(body))
        except (orjson.JSONDecodeError, ValueError) as exc:
            raise TransportError(f"list of {self.resource}: undecodable response ({exc})") from exc

    async def watch(
        self, options: ListOptions, *, idle_timeout: float | None = None
    ) -> KubeWatchStream:
        """Open a watch (see :meth:`ListerWatcher.watch`)."""
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=self._connect_timeout,
            sock_connect=self._connect_timeout,
            sock_read=idle_timeout,
        )
        query = self._options(options)
        query["watch"] = "1"
        response = await self._request(query, timeout, "watch", headers=_WATCH_HEADERS)
        return KubeWatchStream(
            response, max_event_size=self._max_event_size, idle_timeout=idle_timeout
        )

    async def refresh_credentials(self) -> None:
        """Reload credentials after a 401 (the reflector calls this)."""
        if self._credential_refresher is not None:
            await self._credential_refresher()
            return
        configuration = self._api_client.configuration
        hook = getattr(configuration, "refresh_api_key_hook", None)
        if hook is not None:
            result = hook(configuration)
            if isinstance(result, Awaitable):
                await result

    def _options(self, options: ListOptions) -> dict[str, str]:
        if self._tweak is not None:
            options = self._tweak(options)
        label = _and(self._label_selector, options.label_selector)
        field = _and(self._field_selector, options.field_selector)
        if label != options.label_selector or field != options.field_selector:
            options = replace(options, label_selector=label, field_selector=field)
        return options.to_query()

    async def _request(
        self,
        query: dict[str, str],
        client_timeout: aiohttp.ClientTimeout,
        verb: str,
        *,
        headers: dict[str, str] | None = None,
    ) -> aiohttp.ClientResponse:
        return await request(
            self._api_client,
            self._url,
            query=query,
            client_timeout=client_timeout,
            what=f"{verb} of {self.resource}",
            headers=headers,
        )


async def _headers(api_client: ApiClient) -> dict[str, str]:
    headers = {"Accept": "application/json", "User-Agent": _USER_AGENT}
    auth = await api_client.configuration.auth_settings()
    for setting in auth.values():
        if setting.get("in") == "header" and setting.get("value"):
            headers[setting["key"]] = setting["value"]
    return headers


async def request(
    api_client: ApiClient,
    path: str,
    *,
    query: dict[str, str] | None = None,
    client_timeout: aiohttp.ClientTimeout | None = None,
    what: str = "request",
    headers: dict[str, str] | None = None,
) -> aiohttp.ClientResponse:
    """``GET path`` through the client's session, configuration and credentials.

    The caller reads and releases the response.

    :param headers: extra request headers (e.g. ``Accept-Encoding``).

    :raises ApiError: for an error status (the Status decoded into the most specific class).
    :raises TransportError: when no response arrived (``ConnectionRefused`` when refused).
    """
    configuration = api_client.configuration
    rest = api_client.rest_client
    session: aiohttp.ClientSession = rest.pool_manager
    kwargs: dict[str, Any] = {"params": query or {}}
    if client_timeout is not None:
        kwargs["timeout"] = client_timeout
    if configuration.proxy:
        kwargs["proxy"] = configuration.proxy
    server_hostname = getattr(rest, "server_hostname", None)
    if server_hostname:
        kwargs["server_hostname"] = server_hostname
    url = str(configuration.host).rstrip("/") + path
    try:
        request_headers = await _headers(api_client)
        if headers:
            request_headers.update(headers)
        response = await session.get(url, headers=request_headers, **kwargs)
    except TimeoutError as exc:
        raise TransportError(f"{what}: connect timed out") from exc
    except (aiohttp.ClientError, OSError) as exc:
        raise transport_error(exc, what) from exc
    if response.status >= 400:
        try:
            error = await _error_from_response(response)
        except (aiohttp.ClientError, OSError, TimeoutError):
            error = api_error_from_status(None, http_status=response.status)
        finally:
            response.release()
        raise error
    return response


async def get_json(api_client: ApiClient, path: str, *, timeout: float = 30.0) -> Any:
    """``GET path`` and decode the JSON body (for discovery and other small reads).

    :raises ApiError: for an error status.
    :raises TransportError: when no (decodable) response arrived.
    """
    client_timeout = aiohttp.ClientTimeout(total=timeout)
    response = await request(api_client, path, client_timeout=client_timeout, what=f"GET {path}")
    try:
        body = await response.read()
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise transport_error(exc, f"GET {path}") from exc
    finally:
        response.release()
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise TransportError(f"GET {path}: undecodable response ({exc})") from exc


def _and(first: str | None, second: str | None) -> str | None:
    if first and second:
        return f"{first},{second}"
    return first or second
