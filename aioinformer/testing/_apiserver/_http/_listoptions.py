"""``ValidateListOptions`` for LIST and WATCH, and the server's own watch timeout.

The checks of ``k8s.io/apimachinery/pkg/apis/meta/internalversion/validation``, all
collected and answered together as one 422 ``ListOptions.meta.k8s.io "" is invalid``:

* LIST: ``resourceVersionMatch`` needs ``resourceVersion``, is forbidden with ``continue``,
  is ``Exact`` or ``NotOlderThan`` (``Exact`` not with ``resourceVersion=0``);
  ``sendInitialEvents`` (true or false) is forbidden;
* WATCH: ``sendInitialEvents`` (true **or false**) requires ``resourceVersionMatch=
  NotOlderThan``; ``resourceVersionMatch`` requires ``sendInitialEvents``, must be
  ``NotOlderThan`` and is forbidden with ``continue``. ``allowWatchBookmarks`` is not
  required: without it the initial events come without the closing bookmark (the cacher's
  ``getBookmarkAfterResourceVersionLockedFunc``).

A watch without ``timeoutSeconds`` is ended by the server after a random time between
``--min-request-timeout`` (1800 s) and twice that (``handlers/get.go``: ``timeout =
time.Duration(float64(minRequestTimeout) * (rand.Float64() + 1.0))``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from .._validation._fielderrors import FieldError, forbidden, invalid_failure, not_supported

__all__ = ["MIN_REQUEST_TIMEOUT", "server_watch_timeout", "validate_list_options"]

#: kube-apiserver's ``--min-request-timeout`` default, in seconds.
MIN_REQUEST_TIMEOUT = 1800.0

_MATCH = "resourceVersionMatch"


def server_watch_timeout(min_request_timeout: float) -> float:
    """The time after which the server ends a watch that gave no ``timeoutSeconds``."""
    return min_request_timeout * (random.random() + 1.0)


def _list_errors(query: Mapping[str, str]) -> list[FieldError]:
    errors: list[FieldError] = []
    match = query.get(_MATCH, "")
    if match:
        if not query.get("resourceVersion"):
            errors.append(
                forbidden(
                    _MATCH, "resourceVersionMatch is forbidden unless resourceVersion is provided"
                )
            )
        if query.get("continue"):
            errors.append(
                forbidden(_MATCH, "resourceVersionMatch is forbidden when continue is provided")
            )
        if match not in ("Exact", "NotOlderThan"):
            errors.append(not_supported(_MATCH, match, ["Exact", "NotOlderThan", ""]))
        if match == "Exact" and query.get("resourceVersion") == "0":
            errors.append(
                forbidden(
                    _MATCH, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
                )
            )
    if "sendInitialEvents" in query:
        errors.append(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return errors


def _watch_errors(query: Mapping[str, str]) -> list[FieldError]:
    errors: list[FieldError] = []
    match = query.get(_MATCH, "")
    initial = "sendInitialEvents" in query
    if initial and match != "NotOlderThan":
        errors.append(
            forbidden(
                _MATCH, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
            )
        )
    if match:
        if not initial:
            errors.append(
                forbidden(
                    _MATCH,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                    "provided",
                )
            )
        if match != "NotOlderThan":
            errors.append(not_supported(_MATCH, match, ["NotOlderThan"]))
        if query.get("continue"):
            errors.append(
                forbidden(_MATCH, "resourceVersionMatch is forbidden when continue is provided")
            )
    return errors


def validate_list_options(query: Mapping[str, str], *, watch: bool) -> None:
    """``ValidateListOptions`` of a LIST (``watch`` False) or WATCH request.

    :raises StatusFailure: 422 listing every problem.
    """
    errors = _watch_errors(query) if watch else _list_errors(query)
    if errors:
        raise invalid_failure("meta.k8s.io", "ListOptions", "", errors)
