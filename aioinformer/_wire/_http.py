"""The one HTTP path to the API server: requests, credentials, the error mapping, decoding.

Everything aioinformer sends — the client's verbs, lists and watches, discovery, leases — goes
through a :class:`Transport`, and every aiohttp, OS and timeout error on the way comes out of
:func:`map_errors` as a typed error of :mod:`aioinformer.errors` (httpcore's
``map_exceptions``). This module knows nothing of kubernetes_asyncio: the session and the
credentials come from :mod:`aioinformer._wire._kube_asyncio`.
"""

from __future__ import annotations

import errno
import functools
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Protocol
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import orjson

from .._redact import excerpt
from .._version import __version__
from ..errors import (
    ApiError,
    ConnectionRefused,
    InformerError,
    LifecycleError,
    RedirectError,
    TransportError,
    TransportTimeoutError,
    UnauthorizedError,
    api_error_from_status,
)

__all__ = [
    "JSON",
    "Auth",
    "Endpoint",
    "Transport",
    "decode_body",
    "error_from_response",
    "map_errors",
    "read",
]

logger = logging.getLogger(__name__)

USER_AGENT = f"aioinformer/{__version__}"
#: The content type of JSON request bodies.
JSON = "application/json"
#: At most this much of an error body is read.
_ERROR_BODY_LIMIT = 1024 * 1024


class _Default(Enum):
    TIMEOUT = "the transport's request_timeout"


_REQUEST_TIMEOUT: Final = _Default.TIMEOUT


@contextmanager
def map_errors(
    what: str,
    *,
    on_timeout: Callable[[], InformerError] | None = None,
    phase: Callable[[TimeoutError], str] | None = None,
) -> Iterator[None]:
    """Raise the aiohttp, OS and timeout errors of the block as aioinformer's typed errors.

    ``TimeoutError`` becomes :class:`~aioinformer.errors.TransportTimeoutError` (or what
    ``on_timeout`` returns), a refused connection
    :class:`~aioinformer.errors.ConnectionRefused`, any other ``aiohttp.ClientError`` or
    ``OSError`` :class:`~aioinformer.errors.TransportError`; the original is the
    ``__cause__``. aioinformer's own errors pass unchanged.

    :param what: the request, for the message (``"GET /api"``); never a credential.
    :param phase: says what timed out (``"timed out connecting ..."``), for the message.
    """
    try:
        yield
    except InformerError:
        raise
    except TimeoutError as exc:  # before ClientError: aiohttp's timeouts are both
        if on_timeout is not None:
            raise on_timeout() from exc
        raise TransportTimeoutError(f"{what}: {phase(exc) if phase else 'timed out'}") from exc
    except (aiohttp.ClientError, OSError) as exc:
        raise _transport_error(exc, what) from exc


def _transport_error(exc: BaseException, what: str) -> TransportError:
    os_error = exc.os_error if isinstance(exc, aiohttp.ClientConnectorError) else exc
    if isinstance(os_error, ConnectionRefusedError) or (
        getattr(os_error, "errno", None) == errno.ECONNREFUSED
    ):
        return ConnectionRefused(f"{what}: connection refused ({exc})")
    return TransportError(f"{what}: {type(exc).__name__}: {exc}")


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date: rare from the API server; fall back to backoff
    return seconds if seconds >= 0 else None


def error_from_response(
    status: int, reason: str | None, headers: Mapping[str, str], body: bytes
) -> ApiError:
    """The typed error of a failed response: its ``Status`` body (or a Status built from a
    one-line, bounded, redacted excerpt of the text), the HTTP status and ``Retry-After``."""
    try:
        decoded = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        decoded = None
    document = decoded if isinstance(decoded, dict) and decoded.get("kind") == "Status" else None
    if document is None:
        # Not a Status: a proxy's page (HTML, several lines, maybe echoing our headers).
        text = excerpt(body, markup=True)
        document = {"kind": "Status", "code": status, "message": text or reason or ""}
    return api_error_from_status(document, http_status=status, retry_after=_retry_after(headers))


def decode_body(body: bytes, what: str) -> Any:
    """Decode a JSON response body (the process's garbage-collector state is left alone).

    :raises TransportError: when the body is not JSON.
    """
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise TransportError(f"{what}: undecodable response ({exc})") from exc


class Auth(Protocol):
    """The credentials of every request: headers, reloaded when due and after a 401."""

    @property
    def generation(self) -> int:
        """Counts the reloads; a refresh for a generation that is gone does nothing."""
        ...

    async def headers(self) -> Mapping[str, str]:
        """The authentication headers of the next request (reloaded first when due)."""
        ...

    async def refresh(self, generation: int) -> bool:
        """Reload now, unless a reload happened since ``generation`` (a 401 answered to
        credentials that were already replaced).

        :returns: whether the credentials may have changed since ``generation`` (False when
            nothing can reload them: sending the request again would be pointless).
        """
        ...


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where requests go and through what.

    :ivar session: the aiohttp session (its connector holds TLS and the connection pool).
    :ivar host: the server's URL, without a trailing slash.
    :ivar proxy: the proxy URL, or None.
    :ivar proxy_headers: headers for the proxy, or None.
    :ivar server_hostname: the name to verify the server's certificate against, or None.
    """

    session: aiohttp.ClientSession
    host: str
    proxy: str | None = None
    proxy_headers: Mapping[str, str] | None = None
    server_hostname: str | None = None


class Transport:
    """Sends requests to one API server and maps every failure to a typed error.

    :param endpoint: where to send them.
    :param auth: the credentials.
    :param connect_timeout: seconds to get a connection (a free one from the pool, then
        established).
    :param request_timeout: seconds without a byte before a response is abandoned.
    :param follow_redirects: follow 3xx answers (aiohttp drops ``Authorization`` on a hop to
        another origin); else a 3xx raises :class:`~aioinformer.errors.RedirectError`.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        auth: Auth,
        *,
        connect_timeout: float,
        request_timeout: float,
        follow_redirects: bool = False,
    ) -> None:
        self.endpoint = endpoint
        self.auth = auth
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.follow_redirects = follow_redirects
        self.closed = False

    async def open(
        self,
        method: str,
        path: str,
        *,
        what: str,
        query: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        read_timeout: float | _Default | None = _REQUEST_TIMEOUT,
    ) -> aiohttp.ClientResponse:
        """Send a request; return the response once its headers arrived (the caller reads and
        releases it).

        :param what: the request, for messages (``"list of v1/pods"``).
        :param read_timeout: seconds without a byte before the response is abandoned (None:
            wait forever); by default ``request_timeout``.
        :raises ApiError: for an error status (the Status decoded into the most specific class);
            :class:`~aioinformer.errors.RedirectError` for a 3xx unless redirects are followed.
        :raises TransportError: when no response arrived.
        :raises LifecycleError: after :meth:`close`.
        """
        if self.closed:
            raise LifecycleError(f"{what}: the client is closed")
        endpoint = self.endpoint
        sock_read = self.request_timeout if read_timeout is _REQUEST_TIMEOUT else read_timeout
        assert not isinstance(sock_read, _Default)
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=self.connect_timeout,
            sock_connect=self.connect_timeout,
            sock_read=sock_read,
        )
        request_headers = {"Accept": JSON, "User-Agent": USER_AGENT}
        if content_type is not None:
            request_headers["Content-Type"] = content_type
        if headers:
            request_headers.update(headers)
        options: dict[str, Any] = {}
        if endpoint.proxy:
            options["proxy"] = endpoint.proxy
            if endpoint.proxy_headers:
                options["proxy_headers"] = dict(endpoint.proxy_headers)
        if endpoint.server_hostname:
            options["server_hostname"] = endpoint.server_hostname
        phase = functools.partial(self._timeout_phase, read_timeout=sock_read)
        with map_errors(what, phase=phase):
            request_headers.update(await self.auth.headers())
            response = await endpoint.session.request(
                method,
                endpoint.host + path,
                params=query or {},
                data=body,
                headers=request_headers,
                timeout=timeout,
                allow_redirects=self.follow_redirects,
                **options,
            )
        if response.status >= 300:
            if response.status >= 400:
                raise await _error_of(response, what)
            if not self.follow_redirects:  # (when following, a 3xx here is a 304 or the like)
                location = response.headers.get("Location", "")
                response.release()
                raise RedirectError(code=response.status, location=_shown_location(location))
        return response

    def _timeout_phase(self, exc: TimeoutError, *, read_timeout: float | None) -> str:
        """What timed out before a response's headers arrived."""
        if isinstance(exc, aiohttp.ConnectionTimeoutError):
            return (
                f"timed out connecting: no connection within {self.connect_timeout:g} s (the"
                " server unreachable, or every pooled connection busy)"
            )
        within = "in time" if read_timeout is None else f"within {read_timeout:g} s"
        return f"timed out waiting for the response: connected and sent, no answer {within}"

    async def call(
        self,
        method: str,
        path: str,
        *,
        what: str,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = JSON,
    ) -> dict[str, Any]:
        """Send a request with a JSON body (None: no body) and decode the JSON object it
        answers.

        A 401 reloads the credentials and, when they can change, sends the request once more
        (an unauthenticated request was not executed, so repeating a write is safe); a second
        401 raises.

        :raises ApiError: for an error status.
        :raises TransportError: when no response, or not a JSON object, arrived.
        """
        data = None if body is None else orjson.dumps(body)
        send = functools.partial(
            self.open,
            method,
            path,
            what=what,
            query=query,
            body=data,
            content_type=None if data is None else content_type,
        )
        generation = self.auth.generation
        try:
            response = await send()
        except UnauthorizedError:
            if not await self._refreshed(generation, what):
                raise
            response = await send()
        document = decode_body(await read(response, what), what)
        if not isinstance(document, dict):
            raise TransportError(f"{what}: the answer is not a JSON object")
        return document

    async def _refreshed(self, generation: int, what: str) -> bool:
        try:
            return await self.auth.refresh(generation)
        except Exception as exc:  # an exec plugin or token file may fail in any way
            logger.warning("%s: reloading credentials failed: %s", what, type(exc).__name__)
            return False

    def close(self) -> None:
        """Refuse requests from now on (the session is closed by its owner)."""
        self.closed = True


def _shown_location(location: str) -> str:
    """A redirect's target as it may be shown: without user information (a password), query
    or fragment (a signed URL's token), on one bounded line."""
    try:
        parts = urlsplit(location)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "(an unparsable Location)"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    shown = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return excerpt(shown + ("?…" if parts.query else ""))


async def read(response: aiohttp.ClientResponse, what: str) -> bytes:
    """The whole body of a response, which is released."""
    try:
        with map_errors(what, phase=_body_stalled):
            return await response.read()
    finally:
        response.release()


def _body_stalled(exc: TimeoutError) -> str:
    return "timed out reading the response body: it stopped arriving"


async def _error_of(response: aiohttp.ClientResponse, what: str) -> ApiError:
    try:
        with map_errors(what):
            body = await response.content.read(_ERROR_BODY_LIMIT)
    except TransportError:
        return api_error_from_status(None, http_status=response.status)
    finally:
        response.release()
    return error_from_response(response.status, response.reason, response.headers, body)
