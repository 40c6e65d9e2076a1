"""Validation of Events: ``pkg/apis/core/validation/events.go``.

Both versions of an Event are validated as the internal ``core.Event`` (so the paths are the
internal names, ``involvedObject`` and ``message`` even for an events.k8s.io/v1 request); what
runs depends on the version of the request (``ValidateEventCreate``/``ValidateEventUpdate``):

* every request: ``legacyValidateEvent``. An Event without ``eventTime`` (an old-style one)
  must sit in its ``involvedObject``'s namespace (one without a namespace: in ``default`` or
  none); one with ``eventTime`` may leave the ``involvedObject`` namespace empty only in
  ``default`` or ``kube-system``, and needs ``reportingController`` (a qualified name),
  ``reportingInstance`` (at most 128 bytes), ``action`` and ``reason`` (each 1 to 128 bytes),
  and a ``message`` (``note``) of at most 1024 bytes. The namespace is a DNS subdomain.
* events.k8s.io/v1 (not core/v1, not events.k8s.io/v1beta1), on create: ``eventTime``
  required, ``type`` ``Normal`` or ``Warning``, a ``series`` with ``count`` at least 2 and a
  ``lastObservedTime``, and the deprecated fields (``firstTimestamp``, ``lastTimestamp``,
  ``count``, ``source``) unset; on update: the ``series`` checks when it changed, and every
  other field immutable.

The functions take the Event under its core/v1 names (:mod:`.._api._conversion` renames an
events.k8s.io/v1 one); ``reportingComponent`` is reported as ``reportingController``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._content import is_dns1123_subdomain, is_qualified_name
from ._fielderrors import FieldError, invalid, required
from ._meta import FIELD_IMMUTABLE, as_map

__all__ = ["validate_event_create", "validate_event_update"]

#: The length limits of ``events.go`` (bytes).
REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024

_NORMAL, _WARNING = "Normal", "Warning"
_NO_MATCH = "does not match event.namespace"
_UNSET = "needs to be unset"

#: core/v1 name → internal name (the path an error names) of the fields immutable on an
#: events.k8s.io/v1 update, in the order ``ValidateEventUpdate`` checks them (``reason``
#: twice, as there; the aggregated message prints it once).
_IMMUTABLE = (
    ("involvedObject", "involvedObject"),
    ("reason", "reason"),
    ("message", "message"),
    ("source", "source"),
    ("firstTimestamp", "firstTimestamp"),
    ("lastTimestamp", "lastTimestamp"),
    ("count", "count"),
    ("reason", "reason"),
    ("type", "type"),
    ("eventTime", "eventTime"),
    ("action", "action"),
    ("related", "related"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
)


def _zeroless(value: Any) -> Any:
    """A value without its Go zero values (``""``, 0, false, null, empty maps and lists), as
    ``apiequality.Semantic.DeepEqual`` compares typed fields."""
    if isinstance(value, Mapping):
        kept = {k: _zeroless(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None} or None
    if isinstance(value, list):
        return [_zeroless(v) for v in value] or None
    return None if value in ("", 0, False) else value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _size(value: Any) -> int:
    return len(_text(value).encode())


def _zero_time(value: Any) -> bool:
    """A ``metav1.Time``/``MicroTime`` that is unset (null, or the zero instant)."""
    return not value or (isinstance(value, str) and value.startswith("0001-01-01T00:00:00"))


def _namespace(event: Mapping[str, Any]) -> str:
    return _text(as_map(event.get("metadata")).get("namespace"))


def _legacy(event: Mapping[str, Any]) -> list[FieldError]:
    """``legacyValidateEvent``."""
    errors: list[FieldError] = []
    namespace = _namespace(event)
    involved = _text(as_map(event.get("involvedObject")).get("namespace"))
    if _zero_time(event.get("eventTime")):
        matches = namespace in ("", "default") if not involved else namespace == involved
        if not matches:
            errors.append(invalid("involvedObject.namespace", involved, _NO_MATCH))
    else:
        if not involved and namespace not in ("default", "kube-system"):
            errors.append(invalid("involvedObject.namespace", involved, _NO_MATCH))
        controller = _text(event.get("reportingComponent"))
        if not controller:
            errors.append(required("reportingController"))
        errors.extend(
            invalid("reportingController", controller, problem)
            for problem in is_qualified_name(controller)
        )
        errors.extend(_length("reportingInstance", event, REPORTING_INSTANCE_LIMIT, needed=True))
        errors.extend(_length("action", event, ACTION_LIMIT, needed=True))
        errors.extend(_length("reason", event, REASON_LIMIT, needed=True))
        errors.extend(_length("message", event, NOTE_LIMIT, needed=False))
    errors.extend(invalid("namespace", namespace, p) for p in is_dns1123_subdomain(namespace))
    return errors


def _length(field: str, event: Mapping[str, Any], limit: int, *, needed: bool) -> list[FieldError]:
    value = event.get(field)
    errors = []
    if needed and not _text(value):
        errors.append(required(field))
    if _size(value) > limit:
        errors.append(invalid(field, "", f"can have at most {limit} characters"))
    return errors


def _series(event: Mapping[str, Any]) -> list[FieldError]:
    """``validateV1EventSeries``."""
    series = event.get("series")
    if not isinstance(series, Mapping):
        return []
    errors = []
    count = series.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 2:
        errors.append(invalid("series.count", "", "should be at least 2"))
    if _zero_time(series.get("lastObservedTime")):
        errors.append(required("series.lastObservedTime"))
    return errors


def validate_event_create(event: Mapping[str, Any], *, strict: bool) -> list[FieldError]:
    """``ValidateEventCreate``: ``strict`` for a request to events.k8s.io/v1 (metadata is
    validated by the caller, as for every kind)."""
    errors = _legacy(event)
    if not strict:
        return errors
    errors.extend(_series(event))
    if _zero_time(event.get("eventTime")):
        errors.append(required("eventTime"))
    kind = _text(event.get("type"))
    if kind not in (_NORMAL, _WARNING):
        errors.append(invalid("type", "", f"has invalid value: {kind}"))
    for field in ("firstTimestamp", "lastTimestamp"):
        if not _zero_time(event.get(field)):
            errors.append(invalid(field, "", _UNSET))
    if event.get("count"):
        errors.append(invalid("count", "", _UNSET))
    source = as_map(event.get("source"))
    if _text(source.get("component")) or _text(source.get("host")):
        errors.append(invalid("source", "", _UNSET))
    return errors


def validate_event_update(
    new: Mapping[str, Any], old: Mapping[str, Any], *, strict: bool
) -> list[FieldError]:
    """``ValidateEventUpdate``: ``strict`` for a request to events.k8s.io/v1 (metadata is
    validated by the caller)."""
    errors = _legacy(new)
    if not strict:
        return errors
    if _zeroless(new.get("series")) != _zeroless(old.get("series")):
        errors.extend(_series(new))
    for name, path in _IMMUTABLE:
        if _zeroless(new.get(name)) != _zeroless(old.get(name)):
            errors.append(invalid(path, new.get(name), FIELD_IMMUTABLE))
    return errors
