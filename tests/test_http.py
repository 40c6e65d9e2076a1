"""The one error mapping and request plumbing (``aioinformer._http``), without a server."""

from __future__ import annotations

import errno
import gc
import ssl

import aiohttp
import orjson
import pytest
from aiohttp.client_reqrep import ConnectionKey
from multidict import CIMultiDict

from aioinformer._http import decode_body, error_from_response, map_errors
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

KEY = ConnectionKey("api.example", 6443, True, True, None, None, None, None)


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


def test_an_error_response_without_a_status_keeps_its_text() -> None:
    """A proxy's HTML or plain text becomes the message (at most 500 bytes); no body: the
    HTTP reason. An HTTP-date Retry-After is ignored (backoff instead)."""
    html = b"<html>" + b"x" * 1000
    error = error_from_response(
        500, "Internal Server Error", headers(**{"Retry-After": "Wed, 21 Oct 2026"}), html
    )
    assert type(error) is InternalServerError
    assert error.message.startswith("<html>") and len(error.message) == 500
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
