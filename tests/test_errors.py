"""The exception hierarchy and ``api_error_from_status`` (``aioinformer.errors``)."""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer import errors
from aioinformer.errors import (
    AlreadyExistsError,
    ApiError,
    BadRequestError,
    ConflictError,
    ConnectionRefused,
    ExpiredError,
    ForbiddenError,
    InformerError,
    InternalServerError,
    InvalidError,
    MethodNotAllowedError,
    NotFoundError,
    ServerTimeoutError,
    ServiceUnavailableError,
    TooLargeResourceVersionError,
    TooManyRequestsError,
    TransportError,
    TransportTimeoutError,
    UnauthorizedError,
    UnprocessableEntityError,
    UnsupportedMediaTypeError,
    api_error_from_status,
)


def status(code: int | None, reason: str = "", message: str = "", **extra: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "status": "Failure"}
    if code is not None:
        s["code"] = code
    if reason:
        s["reason"] = reason
    if message:
        s["message"] = message
    s.update(extra)
    return s


def test_every_public_exception_derives_from_informer_error() -> None:
    """Every exception class exported by aioinformer.errors is an InformerError."""
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type):
            assert issubclass(value, InformerError), name


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (400, "BadRequest", BadRequestError),
        (401, "Unauthorized", UnauthorizedError),
        (403, "Forbidden", ForbiddenError),
        (404, "NotFound", NotFoundError),
        (409, "Conflict", ConflictError),
        (405, "MethodNotAllowed", MethodNotAllowedError),
        (409, "AlreadyExists", AlreadyExistsError),
        (410, "Expired", ExpiredError),
        (410, "Gone", ExpiredError),
        (410, "", ExpiredError),
        (415, "UnsupportedMediaType", UnsupportedMediaTypeError),
        (422, "Invalid", InvalidError),
        (422, "", UnprocessableEntityError),
        (429, "TooManyRequests", TooManyRequestsError),
        (500, "InternalError", InternalServerError),
        (503, "ServiceUnavailable", ServiceUnavailableError),
        (504, "Timeout", ServerTimeoutError),
    ],
)
def test_status_code_maps_to_the_specific_error(code: int, reason: str, cls: type) -> None:
    """Each known Status code (and reason: AlreadyExists and Invalid refine 409 and 422, as in
    apimachinery's ``StatusReason``) becomes its own ApiError subclass with code, reason and
    message."""
    err = api_error_from_status(status(code, reason, "it failed"))
    assert type(err) is cls
    assert isinstance(err, ApiError)
    assert (err.code, err.reason, err.message) == (code, reason, "it failed")
    assert err.status["code"] == code


def test_expired_reason_wins_over_the_code() -> None:
    """A Status with reason Expired is an ExpiredError even if its code is not 410."""
    assert type(api_error_from_status(status(500, "Expired"))) is ExpiredError


def test_an_unknown_code_is_a_plain_api_error() -> None:
    """Codes without a dedicated class give ApiError itself."""
    err = api_error_from_status(status(418, "Teapot", "short and stout"))
    assert type(err) is ApiError
    assert err.code == 418


def test_http_status_is_used_when_the_status_has_no_code() -> None:
    """Without a Status code the HTTP status decides; without either it is a 500."""
    assert type(api_error_from_status(status(None), http_status=404)) is NotFoundError
    assert type(api_error_from_status(status(0), http_status=403)) is ForbiddenError
    assert type(api_error_from_status(None, http_status=401)) is UnauthorizedError
    err = api_error_from_status(None)
    assert type(err) is InternalServerError
    assert err.code == 500
    assert err.status == {}


def test_too_large_resource_version_is_detected_from_the_cause() -> None:
    """A Status with cause ResourceVersionTooLarge is a TooLargeResourceVersionError."""
    s = status(
        504,
        "Timeout",
        "Too large resource version: 12, current: 10",
        details={"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large"}]},
    )
    err = api_error_from_status(s)
    assert type(err) is TooLargeResourceVersionError
    assert isinstance(err, ServerTimeoutError)
    assert err.causes == [{"reason": "ResourceVersionTooLarge", "message": "Too large"}]


def test_too_large_resource_version_is_detected_from_an_old_servers_message() -> None:
    """Older servers only say it in the message of a Timeout Status."""
    err = api_error_from_status(status(504, "Timeout", "Too large resource version: 12"))
    assert type(err) is TooLargeResourceVersionError
    other = api_error_from_status(status(504, "Timeout", "request timed out"))
    assert type(other) is ServerTimeoutError


def test_retry_after_prefers_the_header_then_the_status_details() -> None:
    """retry_after comes from the header argument, else details.retryAfterSeconds, else None."""
    s = status(429, "TooManyRequests", details={"retryAfterSeconds": 3})
    assert api_error_from_status(s).retry_after == 3.0
    assert api_error_from_status(s, retry_after=7.5).retry_after == 7.5
    assert api_error_from_status(status(429, "TooManyRequests")).retry_after is None


def test_api_error_message_names_code_and_reason() -> None:
    """str() of an ApiError shows the code, the reason and the message."""
    err = api_error_from_status(status(404, "NotFound", 'pods "x" not found'))
    assert str(err) == '404 NotFound: pods "x" not found'
    assert err.causes == []


def test_malformed_status_details_do_not_break_the_mapping() -> None:
    """A Status whose details or causes have the wrong shape still maps to an ApiError."""
    from aioinformer.errors import ApiError, api_error_from_status

    for details in ("text", ["list"], {"causes": "not-a-list"}, {"causes": [1, "x"]}):
        error = api_error_from_status({"kind": "Status", "code": 500, "details": details})
        assert isinstance(error, ApiError)
        assert error.causes == []


def test_message_only_too_large_cause_is_recognised() -> None:
    """The 1.17-1.18 form (a cause with only the message) is a too-large resource version."""
    from aioinformer.errors import TooLargeResourceVersionError, api_error_from_status

    status = {
        "kind": "Status",
        "code": 504,
        "reason": "Timeout",
        "message": "Timeout: Too large resource version: 10, current: 5",
        "details": {"causes": [{"message": "Too large resource version"}]},
    }
    assert isinstance(api_error_from_status(status), TooLargeResourceVersionError)


def test_already_exists_and_invalid_refine_conflict_and_unprocessable() -> None:
    """``except ConflictError`` still catches AlreadyExists; an Invalid error lists the fields
    of its causes (the 422 ``details.causes`` of apimachinery's ``NewInvalid``)."""
    assert issubclass(AlreadyExistsError, ConflictError)
    assert issubclass(InvalidError, UnprocessableEntityError)
    causes = [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.image"},
        {"reason": "FieldValueInvalid", "message": "no field"},
    ]
    err = api_error_from_status(status(422, "Invalid", "bad", details={"causes": causes}))
    assert isinstance(err, InvalidError)
    assert err.causes == causes
    assert err.fields == ["spec.image"]


def test_transport_errors_are_the_builtin_errors_they_name() -> None:
    """A refused connection is a ``ConnectionRefusedError`` and a client timeout a
    ``TimeoutError``, so ``except`` clauses on the built-ins catch them too."""
    refused = ConnectionRefused("GET /api: connection refused")
    assert isinstance(refused, TransportError)
    assert isinstance(refused, ConnectionRefusedError)
    timed_out = TransportTimeoutError("GET /api: timed out")
    assert isinstance(timed_out, TransportError)
    assert isinstance(timed_out, TimeoutError)
