"""Every exception aioinformer raises.

The hierarchy::

    InformerError                        base of everything raised by aioinformer
    ├── KeyFuncError (ValueError)        an object has no usable metadata, or a key is malformed
    ├── IndexFuncError                   an index function raised; the write was not applied
    ├── IndexNotFoundError (KeyError)    an index name that was never registered
    ├── IndexConflictError (ValueError)  an index name registered twice
    ├── SelectorSyntaxError (ValueError) a label or field selector that does not parse
    ├── InvalidShardSelectorError (ValueError)  a shard selector the API server would refuse
    ├── LifecycleError (RuntimeError)    an operation not allowed in the current lifecycle state
    ├── ConfigurationError               no usable cluster configuration (kubeconfig, in-cluster)
    │   └── InvalidNameError (ValueError)  a replica identity, group, lease or namespace name
    │                                    the API server would refuse
    ├── FencedWriteError                 a write a controller's fenced client refused: the
    │                                    replica no longer provably owns the key
    ├── FIFOClosedError                  pop() on a DeltaFIFO that is closed and drained
    ├── QueueShutDown                    get() on a work queue that is shut down and drained
    ├── MalformedWatchEventError         a watch line that is not a decodable watch event
    ├── InvalidObjectError (ValueError)  an object from the server that cannot be cached
    ├── ObjectRejectedError              a transform, key or index function raised for an object
    ├── ResourceVersionError (ValueError)  a resource version that is not a string, or went back
    ├── WatchIdleTimeoutError (TimeoutError)  a watch that sent no bytes for the idle timeout
    ├── VeryShortWatchError              a watch that ended in under 1 s without any event
    ├── OwnerReferenceError (ValueError)  an owner reference Kubernetes would not honour
    │   └── AlreadyOwnedError            the object already has another controller owner
    ├── TransportError (OSError)         the request did not get an HTTP response
    │   ├── ConnectionRefused (ConnectionRefusedError)  the API server refused the connection
    │   └── TransportTimeoutError (TimeoutError)  no response (or no bytes of it) in time
    └── ApiError                         the API server answered with a ``Status`` failure
        ├── BadRequestError              400
        ├── UnauthorizedError            401
        ├── ForbiddenError               403
        ├── NotFoundError                404
        ├── MethodNotAllowedError        405
        ├── ConflictError                409 Conflict: a stale ``resourceVersion``, an apply
        │   │                            conflict, a failed precondition
        │   └── AlreadyExistsError       409 AlreadyExists: create of an existing name
        ├── ExpiredError                 410 Gone / Expired: the resource version is too old
        ├── UnsupportedMediaTypeError    415 (e.g. a strategic merge patch of a custom resource)
        ├── UnprocessableEntityError     422
        │   └── InvalidError             422 Invalid: the object fails validation; ``causes``
        ├── TooManyRequestsError         429, with ``retry_after``
        ├── InternalServerError          500
        │   └── ShardSelectorRejectedError  500 ``invalid shard selector:``: a configuration error
        ├── ServiceUnavailableError      503
        └── ServerTimeoutError           504
            └── TooLargeResourceVersionError  504 with cause ``ResourceVersionTooLarge``

Retry policy lives with the reflector, not here; these classes only say what happened.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._redact import excerpt

__all__ = [
    "AlreadyExistsError",
    "ApiError",
    "BadRequestError",
    "ConfigurationError",
    "ConflictError",
    "ConnectionRefused",
    "ExpiredError",
    "FIFOClosedError",
    "FencedWriteError",
    "ForbiddenError",
    "IndexConflictError",
    "IndexFuncError",
    "IndexNotFoundError",
    "InformerError",
    "InternalServerError",
    "InvalidError",
    "InvalidNameError",
    "InvalidObjectError",
    "InvalidShardSelectorError",
    "KeyFuncError",
    "LifecycleError",
    "MalformedWatchEventError",
    "MethodNotAllowedError",
    "NotFoundError",
    "ObjectRejectedError",
    "QueueShutDown",
    "ResourceVersionError",
    "SelectorSyntaxError",
    "ServerTimeoutError",
    "ShardSelectorRejectedError",
    "ServiceUnavailableError",
    "TooLargeResourceVersionError",
    "TooManyRequestsError",
    "TransportError",
    "TransportTimeoutError",
    "UnauthorizedError",
    "UnprocessableEntityError",
    "UnsupportedMediaTypeError",
    "VeryShortWatchError",
    "WatchIdleTimeoutError",
    "api_error_from_status",
    "OwnerReferenceError",
    "AlreadyOwnedError",
]


class InformerError(Exception):
    """Base class of every exception raised by aioinformer."""


class KeyFuncError(InformerError, ValueError):
    """Raised by key functions when an object has no ``metadata.name`` (or a key is malformed)."""


class IndexFuncError(InformerError):
    """Raised by an :class:`~aioinformer.lowlevel.Indexer` write when an index function raised.

    The write is refused as a whole: the store and every index are exactly as before.
    The original exception is the ``__cause__``.
    """

    def __init__(self, index_name: str, key: str) -> None:
        super().__init__(f"index function {index_name!r} failed for {key!r}; write not applied")
        self.index_name = index_name
        self.key = key


class IndexNotFoundError(InformerError, KeyError):
    """Raised when querying an index name that was never registered."""

    def __init__(self, index_name: str) -> None:
        super().__init__(index_name)
        self.index_name = index_name

    def __str__(self) -> str:
        return f"index {self.index_name!r} does not exist"


class IndexConflictError(InformerError, ValueError):
    """Raised by ``add_indexers`` when an index name is already registered."""


class SelectorSyntaxError(InformerError, ValueError):
    """Raised when a label or field selector cannot be parsed; says where and why."""


class InvalidShardSelectorError(InformerError, ValueError):
    """A shard selector (KEP-5866 ``shardSelector``) that the API server would refuse.

    Raised when parsing or building one. ``str()`` is what the API server says in its HTTP 500
    for the same selector: ``invalid shard selector: <reason>``.

    :ivar reason: the parser's message alone, without the ``invalid shard selector:`` prefix.
    :ivar selector: the selector text that was refused (``""`` when built from values).
    """

    def __init__(self, reason: str, selector: str = "") -> None:
        super().__init__(f"invalid shard selector: {reason}")
        self.reason = reason
        self.selector = selector


class LifecycleError(InformerError, RuntimeError):
    """Raised for an operation the component's lifecycle state does not allow.

    Examples: running an informer twice, ``set_transform`` after start, adding a handler to a
    stopped informer.
    """


class ConfigurationError(InformerError):
    """No usable cluster configuration: no kubeconfig, no in-cluster service account, or a
    kubeconfig that does not load. The message says what was tried."""


class InvalidNameError(ConfigurationError, ValueError):
    """A name the API server would refuse, caught where it is given (a replica identity, a
    group, a Lease name, a namespace): otherwise every Lease write would fail with 422.

    ``str()`` names the value, what it is for and the rule it breaks.

    :ivar value: the name as given.
    :ivar what: what it names, e.g. ``"replica identity"``.
    :ivar rule: the rule it breaks, e.g. ``"a DNS-1123 subdomain"``.
    """

    def __init__(self, value: object, *, what: str, rule: str, problem: str) -> None:
        super().__init__(f"{what} {value!r} is not {rule}: {problem}")
        self.value = value
        self.what = what
        self.rule = rule


class FencedWriteError(InformerError):
    """A write that a controller's fenced client refused to send: the replica can no longer
    prove that it owns the key being reconciled (its lease's write deadline passed, its lease
    was taken over, the key's range moved away, or it stopped every reconcile since this one
    began). Nothing was sent.

    Raised by the client of a :class:`~aioinformer.ShardedController` or a leader-elected
    :class:`~aioinformer.Controller` (their ``client`` property). The controller counts it
    (``statistics().fenced_writes``) and does not retry the reconcile on this replica: the
    replica that owns the key now reconciles it.

    :ivar what: the write, e.g. ``"patch of v1/configmaps 'web'"``.
    :ivar key: the key of the reconcile that tried it (None outside a reconcile).
    :ivar reason: why the replica does not own the key now.
    """

    def __init__(self, *, what: str, key: object, reason: str, owner: str) -> None:
        whose = f" for {key!r}" if key is not None else ""
        super().__init__(f"{owner}: {what}{whose} refused: {reason}")
        self.what = what
        self.key = key
        self.reason = reason


class FIFOClosedError(InformerError):
    """Raised by ``DeltaFIFO.pop`` once the FIFO is closed and nothing is left queued."""


class QueueShutDown(InformerError):
    """Raised by a work queue's ``get`` once it is shut down and nothing is left queued."""


class MalformedWatchEventError(InformerError, ValueError):
    """A watch line that is not a decodable watch event.

    The watch stream stays usable after this error: the next read continues with the next line.
    ``line`` holds at most the first 200 bytes of the offending line (never logged at INFO).
    """

    def __init__(self, reason: str, line: bytes = b"") -> None:
        super().__init__(f"malformed watch event: {reason}")
        self.reason = reason
        self.line = line[:200]


class InvalidObjectError(InformerError, ValueError):
    """An object from the server (a list item or a watch event's object) that cannot be cached:
    no ``metadata``, no usable ``name``, a ``namespace`` or ``resourceVersion`` that is not a
    string, a key listed twice in one list, a bookmark without a resource version.

    The object is skipped and the rest goes on; the reflector reports it to the watch-error
    handler and counts it (``invalid_objects``). The message never holds the object.

    :ivar reason: what is wrong, e.g. ``"metadata.name is missing"``.
    :ivar key: the object's ``namespace/name`` key when it has one, else None.
    :ivar position: the item's index in its list page (None for a watch event).
    """

    def __init__(self, reason: str, *, key: str | None = None, position: int | None = None) -> None:
        where = f"object {key!r}" if key is not None else "an object"
        if position is not None:
            where += f" (list item {position})"
        super().__init__(f"{where} skipped: {reason}")
        self.reason = reason
        self.key = key
        self.position = position


class ObjectRejectedError(InformerError):
    """A transform, key or index function raised for one object, so that version of it was
    not cached: the cache keeps the last version it accepted (or nothing), and the key counts
    as stale until a later version is accepted. The original exception is the ``__cause__``.

    :ivar key: the object's key.
    :ivar stage: ``"transform"``, ``"key"`` or ``"index"``.
    """

    def __init__(self, key: str, stage: str, cause: BaseException) -> None:
        detail = f"{type(cause).__name__}: {cause}"
        if len(detail) > 200:
            detail = detail[:199] + "…"
        super().__init__(f"{stage} failed for {key!r} ({detail}); that version was not cached")
        self.key = key
        self.stage = stage


class ResourceVersionError(InformerError, ValueError):
    """A resource version the reflector cannot use: not a string, or older than one already
    seen on the same stream (a misbehaving server or proxy, or an etcd restored from a backup).

    :ivar resource_version: the offending value, as text (bounded).
    :ivar previous: the last good resource version.
    """

    def __init__(self, message: str, *, resource_version: str, previous: str) -> None:
        super().__init__(message)
        self.resource_version = resource_version
        self.previous = previous


class WatchIdleTimeoutError(InformerError, TimeoutError):
    """A watch stream delivered no bytes at all (not even a bookmark) for the idle timeout."""


class VeryShortWatchError(InformerError):
    """A watch ended cleanly in under one second without delivering any event.

    Counted as an error (client-go's ``VeryShortWatchError``): it leads to a backoff and a relist,
    which protects against hot loops on proxies that close streams at once.
    """


class TransportError(InformerError, OSError):
    """The request got no HTTP response (connection reset, DNS failure, TLS failure, ...)."""


class ConnectionRefused(TransportError, ConnectionRefusedError):
    """The API server refused the TCP connection; the reflector re-watches after a backoff."""


class TransportTimeoutError(TransportError, TimeoutError):
    """No response arrived (or its body stopped arriving) within the client's timeouts:
    ``connect_timeout`` to get a connection, ``request_timeout`` between bytes."""


class ApiError(InformerError):
    """The API server answered with a failure ``Status``.

    :ivar code: the HTTP status code (from the Status ``code``, else the response status).
    :ivar reason: the Status ``reason`` (``"Expired"``, ``"NotFound"``, ...), may be ``""``.
    :ivar message: the Status ``message``.
    :ivar status: the whole Status object as a dict.
    :ivar retry_after: seconds from ``Retry-After`` or ``details.retryAfterSeconds``, or None.
    """

    def __init__(
        self,
        *,
        code: int,
        reason: str = "",
        message: str = "",
        status: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code} {reason}: {message}" if reason else f"{code}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.status: dict[str, Any] = dict(status) if status is not None else {}
        self.retry_after = retry_after

    @property
    def causes(self) -> list[dict[str, Any]]:
        """The ``details.causes`` of the Status (may be empty)."""
        return _causes(self.status)


class BadRequestError(ApiError):
    """400 Bad Request."""


class UnauthorizedError(ApiError):
    """401 Unauthorized: credentials missing or expired."""


class ForbiddenError(ApiError):
    """403 Forbidden."""


class NotFoundError(ApiError):
    """404 Not Found."""


class MethodNotAllowedError(ApiError):
    """405 Method Not Allowed: the resource does not support the verb (e.g. ``create`` of a
    subresource)."""


class ConflictError(ApiError):
    """409 Conflict: a stale ``resourceVersion`` on update, a server-side apply conflict (the
    ``causes`` name the fields and their managers; ``force=True`` takes them over), or a delete
    precondition that failed. :class:`AlreadyExistsError` is a ConflictError too."""


class AlreadyExistsError(ConflictError):
    """409 AlreadyExists: a create of a name that exists."""


class ExpiredError(ApiError):
    """410 Gone / Expired: the requested resource version is older than the server keeps."""


class UnsupportedMediaTypeError(ApiError):
    """415 Unsupported Media Type: e.g. a strategic merge patch of a custom resource (which only
    takes merge, JSON and apply patches)."""


class UnprocessableEntityError(ApiError):
    """422 Unprocessable Entity."""


class InvalidError(UnprocessableEntityError):
    """422 Invalid: the object fails validation. ``causes`` lists each field error as the
    server reported it: ``{"reason": "FieldValueRequired", "message": ..., "field":
    "spec.containers"}``; :attr:`fields` the field paths alone."""

    @property
    def fields(self) -> list[str]:
        """The ``field`` of every cause that names one, in order."""
        return [c["field"] for c in self.causes if isinstance(c.get("field"), str)]


class TooManyRequestsError(ApiError):
    """429 Too Many Requests; ``retry_after`` says how long the server asked to wait."""


class InternalServerError(ApiError):
    """500 Internal Server Error."""


class ServiceUnavailableError(ApiError):
    """503 Service Unavailable."""


class ShardSelectorRejectedError(InternalServerError):
    """The API server refused a shard selector: HTTP 500 ``invalid shard selector: ...``
    (KEP-5866; the registry returns a plain error, which the handler maps to 500).

    A configuration error, not a server fault: an informer stops with it instead of retrying.
    """


class ServerTimeoutError(ApiError):
    """504 Gateway Timeout (and Status reason ``Timeout``)."""


class TooLargeResourceVersionError(ServerTimeoutError):
    """The requested resource version is newer than the server has.

    The Status carries the cause ``ResourceVersionTooLarge`` (older servers: only the message).
    """


#: The message prefix of the API server's answer to an invalid shard selector (registry
#: ``store.go``: ``fmt.Errorf("invalid shard selector: %w", err)``).
_SHARD_REFUSED: Final = "invalid shard selector:"
#: The longest Status message kept (a validation error listing many fields stays whole).
_MESSAGE_LIMIT = 2000

_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    410: ExpiredError,
    415: UnsupportedMediaTypeError,
    422: UnprocessableEntityError,
    429: TooManyRequestsError,
    500: InternalServerError,
    503: ServiceUnavailableError,
    504: ServerTimeoutError,
}


def api_error_from_status(
    status: Mapping[str, Any] | None,
    *,
    http_status: int | None = None,
    retry_after: float | None = None,
) -> ApiError:
    """Build the most specific :class:`ApiError` for a Kubernetes ``Status``.

    The message is made one line of at most 2,000 characters, with credentials masked (see
    ``status`` for the Status as it came).

    :param status: the decoded Status object (or None when the body was not a Status).
    :param http_status: the HTTP status of the response, used when the Status has no ``code``.
    :param retry_after: the ``Retry-After`` header in seconds; ``details.retryAfterSeconds``
        is used when the header is absent.
    """
    status = status or {}
    raw_code = status.get("code")
    code = raw_code if isinstance(raw_code, int) and raw_code > 0 else (http_status or 500)
    reason = excerpt(str(status.get("reason") or ""), limit=100)
    # Messages end up in logs: one bounded line, credentials masked (a proxy may echo them).
    message = excerpt(str(status.get("message") or ""), limit=_MESSAGE_LIMIT)
    if retry_after is None:
        details = status.get("details")
        seconds = details.get("retryAfterSeconds") if isinstance(details, Mapping) else None
        if isinstance(seconds, int | float) and seconds > 0:
            retry_after = float(seconds)
    cls: type[ApiError]
    if _is_too_large_rv(status, code, reason, message):
        cls = TooLargeResourceVersionError
    elif reason in ("Expired", "Gone"):
        cls = ExpiredError
    elif code == 409 and reason == "AlreadyExists":
        cls = AlreadyExistsError
    elif code == 422 and reason == "Invalid":
        cls = InvalidError
    elif code == 500 and message.startswith(_SHARD_REFUSED):
        cls = ShardSelectorRejectedError
    else:
        cls = _BY_CODE.get(code, ApiError)
    return cls(code=code, reason=reason, message=message, status=status, retry_after=retry_after)


def _causes(status: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``details.causes`` of a Status that are objects (an empty list when it has none)."""
    details = status.get("details")
    causes = details.get("causes") if isinstance(details, Mapping) else None
    return [c for c in causes if isinstance(c, dict)] if isinstance(causes, list) else []


def _is_too_large_rv(status: Mapping[str, Any], code: int, reason: str, message: str) -> bool:
    """Whether a Status says the resource version asked for is newer than the server has."""
    for cause in _causes(status):
        if cause.get("reason") == "ResourceVersionTooLarge":
            return True
        # API servers 1.17.0-1.18.5 sent a cause with only this message.
        if cause.get("message") == "Too large resource version":
            return True
    # Older servers say it only in the message of a Timeout.
    return (code == 504 or reason == "Timeout") and "Too large resource version" in message


class OwnerReferenceError(InformerError, ValueError):
    """Raised by :func:`~aioinformer.set_controller_reference` for an owner reference that
    Kubernetes would not honour: an owner without ``apiVersion``, ``kind``, ``name`` or
    ``uid``, a namespaced owner of a cluster-scoped object, or an owner in another namespace
    (owner references are namespace-local)."""


class AlreadyOwnedError(OwnerReferenceError):
    """Raised by :func:`~aioinformer.set_controller_reference` when another object already is
    the controller of the object (controller-runtime's ``AlreadyOwnedError``).

    :ivar owner: the existing controller reference.
    """

    def __init__(self, message: str, owner: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.owner: dict[str, Any] = dict(owner) if owner is not None else {}
