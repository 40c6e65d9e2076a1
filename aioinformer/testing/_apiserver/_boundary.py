"""Where the fake's failures become the client's exceptions: the edge of the in-process API.

Inside, the fake raises only :class:`~._api._failure.StatusFailure`. Its Python API
(``server.objects``, ``server.faults``, ``server.requests``, ``server.resource``) is used by
tests written against the real client, so there a failure is raised as the
:class:`~aioinformer.errors.ApiError` subclass the client raises for the same answer over
HTTP (``NotFoundError`` for a 404, ``ConflictError`` for a 409, ...), its ``status`` the whole
``Status``. This module is the only place in the fake that imports the client's error classes
(an import contract in ``pyproject.toml`` checks it): the facade takes :class:`LifecycleError`,
:class:`ApiError` and :class:`NotFoundError` from here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from ...errors import ApiError, LifecycleError, NotFoundError, api_error_from_status
from ._api._failure import StatusFailure

__all__ = [
    "ApiError",
    "LifecycleError",
    "NotFoundError",
    "client_error",
    "client_errors",
    "status_failure",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def client_error(failure: StatusFailure) -> ApiError:
    """The client's exception for a failure (what the client raises for the same answer)."""
    return api_error_from_status(
        failure.status, http_status=failure.code, retry_after=failure.retry_after
    )


def status_failure(error: ApiError) -> StatusFailure:
    """The failure again for a client exception the in-process API raised (the admin API
    answers it over HTTP)."""
    return StatusFailure(
        error.code, error.reason, error.message, details=error.status.get("details")
    )


def client_errors(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorate a function of the in-process API: its failures leave as client exceptions."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return func(*args, **kwargs)
        except StatusFailure as failure:
            raise client_error(failure) from None

    return wrapper
