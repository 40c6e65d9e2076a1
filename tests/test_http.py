"""The one error mapping and request plumbing (``aioinformer._wire._http``), without a server."""

from __future__ import annotations

import asyncio
import errno
import gc
import ssl
from collections.abc import Mapping

import aiohttp
import orjson
import pytest
from aiohttp.client_reqrep import ConnectionKey
from multidict import CIMultiDict

from aioinformer._wire._http import (
    Endpoint,
    Transport,
    decode_body,
    error_from_response,
    map_errors,
)
from aioinformer.errors import (
    ConflictError,
    ConnectionRefused,
    InformerError,
    InternalServerError,
    NotFoundError,
    TooManyRequestsError,
    TransportError,
    TransportTimeoutError,
    WatchIdleTimeoutError,
)


class NoAuth:
    """No credentials (an :class:`~aioinformer._wire._http.Auth` that never changes)."""

    generation = 0

    async def headers(self) -> Mapping[str, str]:
        return {}

    async def refresh(self, generation: int) -> bool:
        return False


KEY = ConnectionKey(
    host="api.example", port=6443, is_ssl=True, ssl=True,
    proxy=None, proxy_auth=None, proxy_headers_hash=None,
)  # fmt: skip


def connector_error(os_error: OSError) -> aiohttp.ClientConnectorError:
    """What aiohttp raises when it cannot connect."""
    return aiohttp.ClientConnectorError(KEY, os_error)


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (TimeoutError(), TransportTimeoutError),
        (aiohttp.ServerTimeoutError("read"), TransportTimeoutError),
        (aiohttp.ConnectionTimeoutError("connect"), TransportTimeoutError),
        (aiohttp.SocketTimeoutError("sock_read"), TransportTimeoutError),
        (connector_error(ConnectionRefusedError(errno.ECONNREFUSED, "refused")), ConnectionRefused),
        (connector_error(OSError(errno.ECONNREFUSED, "refused")), ConnectionRefused),
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), ConnectionRefused),
        (connector_error(OSError(errno.EHOSTUNREACH, "no route")), TransportError),
        (aiohttp.ClientConnectorDNSError(KEY, OSError(-2, "Name unknown")), TransportError),
        (aiohttp.ServerDisconnectedError(), TransportError),
        (aiohttp.ClientPayloadError("truncated chunk"), TransportError),
        (aiohttp.ClientOSError(errno.ECONNRESET, "reset"), TransportError),
        (ConnectionResetError(errno.ECONNRESET, "reset"), TransportError),
        (ssl.SSLError("certificate verify failed"), TransportError),
        (aiohttp.InvalidUrlClientError("nohost"), TransportError),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else "",
)
def test_each_aiohttp_os_and_timeout_error_becomes_a_typed_error(
    raised: BaseException, expected: type[TransportError]
) -> None:
    """httpcore's ``map_exceptions`` rule: every aiohttp, OS and timeout error of the block
    comes out as the most specific aioinformer error, the original as its ``__cause__`` and
    the request named in the message."""
    with pytest.raises(TransportError) as caught, map_errors("GET /api"):
        raise raised
    assert type(caught.value) is expected
    assert caught.value.__cause__ is raised
    assert str(caught.value).startswith("GET /api: ")


def test_a_timeout_can_be_told_apart() -> None:
    """``on_timeout`` names the error a timeout means here (a silent watch, say)."""
    idle = WatchIdleTimeoutError("no bytes for 3 s")
    with (
        pytest.raises(WatchIdleTimeoutError) as caught,
        map_errors("watch", on_timeout=lambda: idle),
    ):
        raise aiohttp.SocketTimeoutError("sock_read")
    assert caught.value is idle


@pytest.mark.parametrize(
    "own",
    [
        NotFoundError(code=404, reason="NotFound"),
        TransportError("already mapped"),
        ConnectionRefused("already mapped"),
        WatchIdleTimeoutError("idle"),
    ],
)
def test_aioinformer_errors_pass_unchanged(own: InformerError) -> None:
    """An error already typed (a TransportError is an OSError, an idle watch a TimeoutError)
    is not mapped again."""
    with pytest.raises(InformerError) as caught, map_errors("GET /api"):
        raise own
    assert caught.value is own


def test_other_exceptions_pass_unchanged() -> None:
    """A bug in the block is not disguised as a transport error."""
    with pytest.raises(KeyError), map_errors("GET /api"):
        raise KeyError("bug")


def headers(**values: str) -> CIMultiDict[str]:
    return CIMultiDict(values)


def test_an_error_response_with_a_status_becomes_its_error() -> None:
    """A ``Status`` body gives class, reason, message and causes; ``Retry-After`` is read."""
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": 409,
        "reason": "Conflict",
        "message": "Apply failed with 1 conflict",
        "details": {"causes": [{"reason": "FieldManagerConflict", "field": ".data.a"}]},
    }
    error = error_from_response(409, "Conflict", headers(), orjson.dumps(status))
    assert type(error) is ConflictError
    assert (error.code, error.reason, error.message) == (409, "Conflict", status["message"])
    assert error.causes == [{"reason": "FieldManagerConflict", "field": ".data.a"}]
    throttled = error_from_response(
        429, "Too Many Requests", headers(**{"Retry-After": "7"}), b"{}"
    )
    assert type(throttled) is TooManyRequestsError
    assert throttled.retry_after == 7.0


def test_an_error_response_without_a_status_keeps_an_excerpt_of_its_text() -> None:
    """A proxy's HTML or plain text becomes the message as one line of at most 200
    characters, tags dropped; no body: the HTTP reason. An HTTP-date Retry-After is ignored
    (backoff instead)."""
    html = b"<html>\n<body>\n<h1>Oops</h1>\n" + b"x" * 1000
    error = error_from_response(
        500, "Internal Server Error", headers(**{"Retry-After": "Wed, 21 Oct 2026"}), html
    )
    assert type(error) is InternalServerError
    assert error.message.startswith("Oops x") and len(error.message) == 200
    assert "\n" not in error.message and "<" not in error.message
    assert error.retry_after is None
    empty = error_from_response(404, "Not Found", headers(), b"")
    assert type(empty) is NotFoundError and empty.message == "Not Found"


def test_decode_body_refuses_what_is_not_json() -> None:
    """An undecodable body is a TransportError naming the request."""
    with pytest.raises(TransportError, match="list of v1/pods: undecodable response"):
        decode_body(b"<html>", "list of v1/pods")


def test_decoding_a_large_body_leaves_the_gc_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library changes no process-wide GC state (issue 13): a large body is decoded with
    the collector as the application set it, enabled or disabled."""
    calls: list[str] = []
    monkeypatch.setattr(gc, "disable", lambda: calls.append("disable"))
    monkeypatch.setattr(gc, "enable", lambda: calls.append("enable"))
    body = orjson.dumps({"items": [{"n": i} for i in range(100_000)]})
    assert decode_body(body, "list")["items"][99_999] == {"n": 99_999}
    with pytest.raises(TransportError):
        decode_body(b"x" * 2_000_000, "list")
    assert calls == []


PROXY_ECHO = b"""<html><head><title>502 Bad Gateway</title></head>
<body><h1>Bad Gateway</h1><p>The upstream did not answer. Your request:</p>
<pre>GET /api/v1/pods?watch=1 HTTP/1.1
Host: kubernetes
Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl
Cookie: session=abcdef123456
X-Auth-Token: abcdef987654
</pre></body></html>"""


def test_an_error_body_echoing_credentials_is_redacted() -> None:
    """A proxy page that echoes the request's headers (issue 15: the bearer token reached
    INFO logs) keeps no credential in the error message, on one line."""
    error = error_from_response(502, "Bad Gateway", headers(), PROXY_ECHO)
    assert "\n" not in error.message
    for secret in ("eyJhbGciOiJSUzI1NiJ9", "c2lnbmF0dXJl", "abcdef123456", "abcdef987654"):
        assert secret not in error.message and secret not in str(error)
    assert error.message.startswith("502 Bad Gateway Bad Gateway The upstream did not answer.")


@pytest.mark.parametrize(
    ("text", "leaked"),
    [
        ('{"headers": {"Authorization": ["Bearer abc.def-ghi"]}}', "abc.def-ghi"),
        ("authorization=Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
        ("token=s3cr3t&x=1", "s3cr3t"),
        ('"client-key-data": "LS0tLS1CRUdJTg=="', "LS0tLS1CRUdJTg"),
        ("password: hunter2", "hunter2"),
        ("a JWT eyJhbGciOiJI.eyJzdWIiOiIx.sig-nature in prose", "eyJzdWIiOiIx"),
    ],
)
def test_a_status_message_is_redacted_too(text: str, leaked: str) -> None:
    """Even a proper Status message is masked (the message is logged; the Status dict keeps
    what came)."""
    body = orjson.dumps({"kind": "Status", "code": 500, "message": text})
    error = error_from_response(500, "Internal Server Error", headers(), body)
    assert leaked not in error.message and "<redacted>" in error.message


async def test_a_request_nobody_answers_names_the_phase_that_timed_out() -> None:
    """A server that accepts the connection and never answers: the error says the request
    was sent and no answer came, not that connecting timed out (issue 15)."""
    silent: list[asyncio.StreamWriter] = []

    async def accept(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        silent.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with aiohttp.ClientSession() as session:
            transport = Transport(
                Endpoint(session, f"http://127.0.0.1:{port}"),
                NoAuth(),
                connect_timeout=5.0,
                request_timeout=0.2,
            )
            with pytest.raises(TransportTimeoutError) as caught:
                await transport.open("GET", "/api/v1/pods", what="list of v1/pods")
    finally:
        for writer in silent:
            writer.close()
        server.close()
        await server.wait_closed()
    message = str(caught.value)
    assert message.startswith("list of v1/pods: timed out waiting for the response")
    assert "connected and sent" in message and "connecting" not in message


@pytest.mark.parametrize(
    ("location", "shown"),
    [
        (
            "https://user:pw@other.example:8443/api/v1/pods?token=abc#frag",
            "https://other.example:8443/api/v1/pods?…",
        ),
        ("/api/v1/pods", "/api/v1/pods"),
        ("", ""),
        ("http://[broken", "(an unparsable Location)"),
    ],
)
def test_a_redirect_location_is_shown_without_credentials(location: str, shown: str) -> None:
    """A RedirectError names where the redirect pointed, without user information, query or
    fragment (a password, a signed URL's token)."""
    from aioinformer._wire._http import _shown_location

    assert _shown_location(location) == shown
