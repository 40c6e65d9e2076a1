"""Kubernetes ``Status`` objects, and the errors the fake API server answers with.

Every failure the fake answers is a ``Status`` with the real ``reason`` and ``code``. Inside
the fake a failure travels as the matching :class:`~aioinformer.errors.ApiError` (its
``status`` holds the whole Status), so the in-process API raises exactly what a client of the
HTTP API would be told.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ApiError, api_error_from_status

if TYPE_CHECKING:
    from .resources import ResourceInfo

__all__ = [
    "already_exists",
    "bad_request",
    "conflict",
    "expired",
    "invalid",
    "not_found",
    "reason_for_code",
    "status_error",
    "status_object",
    "success_status",
    "too_large_resource_version",
]

_REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}

_DEFAULT_MESSAGES: dict[int, str] = {
    401: "Unauthorized",
    403: "forbidden",
    404: "the server could not find the requested resource",
    410: "too old resource version",
    429: "Too many requests, please try again later.",
    500: "Internal error occurred",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted",
}


def reason_for_code(code: int) -> str:
    """The Status ``reason`` the real server uses for an HTTP code (``""`` when it has none)."""
    return _REASONS.get(code, "")


def status_object(
    code: int,
    reason: str | None = None,
    message: str = "",
    *,
    details: Mapping[str, Any] | None = None,
    continue_token: str | None = None,
) -> dict[str, Any]:
    """A failure ``Status`` object.

    :param code: the HTTP code.
    :param reason: the Status reason; None derives it from the code.
    :param message: the human-readable message; empty picks a generic one for the code.
    :param details: the ``details`` field, omitted when None.
    :param continue_token: ``metadata.continue`` (410 answers to an expired continue token).
    """
    metadata: dict[str, Any] = {}
    if continue_token:
        metadata["continue"] = continue_token
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": metadata,
        "status": "Failure",
        "message": message or _DEFAULT_MESSAGES.get(code, reason_for_code(code) or str(code)),
        "reason": reason_for_code(code) if reason is None else reason,
        "code": code,
    }
    if details is not None:
        status["details"] = dict(details)
    return status


def success_status(details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A ``Status`` with ``status: Success`` (the answer to deletes of most resources)."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
    }
    if details is not None:
        status["details"] = dict(details)
    return status


def status_error(
    code: int,
    reason: str | None = None,
    message: str = "",
    *,
    details: Mapping[str, Any] | None = None,
    retry_after: float | None = None,
    continue_token: str | None = None,
) -> ApiError:
    """The most specific :class:`ApiError` carrying a failure Status built from the arguments.

    ``retry_after`` also lands in ``details.retryAfterSeconds`` (rounded up to whole seconds).
    """
    if retry_after is not None:
        details = {**(details or {}), "retryAfterSeconds": max(1, math.ceil(retry_after))}
    status = status_object(code, reason, message, details=details, continue_token=continue_token)
    return api_error_from_status(status, http_status=code, retry_after=retry_after)


def _details(info: ResourceInfo, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if info.group:
        details["group"] = info.group
    details["kind"] = info.plural
    return details


def not_found(info: ResourceInfo, name: str) -> ApiError:
    """404 NotFound for one object."""
    return status_error(
        404, message=f'{info.group_resource} "{name}" not found', details=_details(info, name)
    )


def already_exists(info: ResourceInfo, name: str) -> ApiError:
    """409 AlreadyExists for a create."""
    return status_error(
        409,
        "AlreadyExists",
        f'{info.group_resource} "{name}" already exists',
        details=_details(info, name),
    )


def conflict(info: ResourceInfo, name: str, why: str) -> ApiError:
    """409 Conflict (a stale resourceVersion or a failed precondition)."""
    return status_error(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {info.group_resource} "{name}": {why}',
        details=_details(info, name),
    )


def invalid(info: ResourceInfo, name: str, field: str, why: str) -> ApiError:
    """422 Invalid for an object that fails validation."""
    return status_error(
        422,
        "Invalid",
        f'{info.kind} "{name}" is invalid: {field}: {why}',
        details={**_details(info, name), "causes": [{"field": field, "message": why}]},
    )


def bad_request(message: str) -> ApiError:
    """400 BadRequest."""
    return status_error(400, "BadRequest", message)


def expired(message: str, *, continue_token: str | None = None) -> ApiError:
    """410 Expired (a resource version or continue token older than the history window)."""
    return status_error(410, "Expired", message, continue_token=continue_token)


def too_large_resource_version(requested: int, current: int) -> ApiError:
    """504 Timeout with cause ResourceVersionTooLarge (an RV newer than the server has)."""
    return status_error(
        504,
        "Timeout",
        f"Too large resource version: {requested}, current: {current}",
        details={
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
    )
