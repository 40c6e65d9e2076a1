"""The failures the fake API server answers with, and its success ``Status``.

Every failure the fake answers is a ``Status`` with the real ``reason``, ``code`` and
message; inside the fake it travels as a :class:`~._failure.StatusFailure` built here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

from ._failure import StatusFailure

__all__ = [
    "already_exists",
    "bad_request",
    "conflict",
    "expired",
    "not_found",
    "reason_for_code",
    "status_error",
    "success_status",
    "too_large_resource_version",
]


class ResourceInfo(Protocol):
    """What a failure names of the resource it is about (a served resource's info)."""

    @property
    def group(self) -> str: ...

    @property
    def plural(self) -> str: ...

    @property
    def group_resource(self) -> str: ...


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
    continue_token: str = "",
) -> StatusFailure:
    """A failure answer built from the arguments.

    :param reason: the Status reason; None derives it from the code.
    :param message: the human-readable message; empty picks a generic one for the code.
    :param retry_after: also lands in ``details.retryAfterSeconds`` (rounded up to whole
        seconds).
    """
    if retry_after is not None:
        details = {**(details or {}), "retryAfterSeconds": max(1, math.ceil(retry_after))}
    return StatusFailure(
        code,
        reason_for_code(code) if reason is None else reason,
        message or _DEFAULT_MESSAGES.get(code, reason_for_code(code) or str(code)),
        details=details,
        retry_after=retry_after,
        continue_token=continue_token,
    )


def _details(info: ResourceInfo, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if info.group:
        details["group"] = info.group
    details["kind"] = info.plural
    return details


def not_found(info: ResourceInfo, name: str) -> StatusFailure:
    """404 NotFound for one object."""
    return status_error(
        404, message=f'{info.group_resource} "{name}" not found', details=_details(info, name)
    )


def already_exists(info: ResourceInfo, name: str) -> StatusFailure:
    """409 AlreadyExists for a create."""
    return status_error(
        409,
        "AlreadyExists",
        f'{info.group_resource} "{name}" already exists',
        details=_details(info, name),
    )


def conflict(info: ResourceInfo, name: str, why: str) -> StatusFailure:
    """409 Conflict (a stale resourceVersion or a failed precondition)."""
    return status_error(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {info.group_resource} "{name}": {why}',
        details=_details(info, name),
    )


def bad_request(message: str) -> StatusFailure:
    """400 BadRequest."""
    return status_error(400, "BadRequest", message)


def expired(message: str, *, continue_token: str = "") -> StatusFailure:
    """410 Expired (a resource version or continue token older than the history window)."""
    return status_error(410, "Expired", message, continue_token=continue_token)


def too_large_resource_version(requested: int, current: int) -> StatusFailure:
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
