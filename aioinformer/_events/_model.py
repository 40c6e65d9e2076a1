"""What the recorder builds: object references, event names, timestamps, and one recorded
occurrence of an event.

References are built as client-go's ``reference.GetReference`` builds them (``kind``,
``apiVersion``, ``name``, ``namespace``, ``uid`` and ``resourceVersion`` of the object), names
as ``tools/record/util.GenerateEventName``: ``<regarding name>.<UnixNano in hex>``, or a random
UUID when that is not a DNS subdomain (kubernetes#127594).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from .._names import is_dns_subdomain

__all__ = [
    "REFERENCE_FIELDS",
    "Occurrence",
    "event_name",
    "micro_time",
    "reference_key",
    "reference_of",
    "rfc3339",
    "unix_nanos",
]

#: The fields of an ``ObjectReference``, in the order client-go writes them.
REFERENCE_FIELDS: Final = (
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
)

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
#: The kinds a metadata-only list or watch gives every object: not the object's own kind.
_PARTIAL_KINDS: Final = frozenset({"PartialObjectMetadata", "PartialObjectMetadataList"})


def reference_of(obj: Mapping[str, Any]) -> dict[str, str]:
    """The ``ObjectReference`` of an object (one with ``metadata``), or a copy of a reference
    (a mapping with ``kind`` and ``name`` and no ``metadata``). Empty fields are left out, as
    Go's ``omitempty`` leaves them out.

    :raises ValueError: when an object has no ``apiVersion``, ``kind`` or ``metadata.name``
        (or is a metadata-only ``PartialObjectMetadata``), or a reference no ``kind`` or
        ``name``.
    """
    metadata = obj.get("metadata")
    if isinstance(metadata, Mapping):
        kind = obj.get("kind")
        if kind in _PARTIAL_KINDS:
            raise ValueError(
                "a metadata-only object has no kind of its own: pass a reference "
                "({'apiVersion': ..., 'kind': ..., 'name': ..., 'namespace': ..., 'uid': ...})"
            )
        fields = {
            "kind": kind,
            "namespace": metadata.get("namespace"),
            "name": metadata.get("name"),
            "uid": metadata.get("uid"),
            "apiVersion": obj.get("apiVersion"),
            "resourceVersion": metadata.get("resourceVersion"),
        }
        for needed in ("apiVersion", "kind", "name"):
            if not fields[needed] or not isinstance(fields[needed], str):
                where = "metadata.name" if needed == "name" else needed
                raise ValueError(f"an event's object needs {where} (use the object as stored)")
    else:
        fields = {field: obj.get(field) for field in REFERENCE_FIELDS}
        if not fields["kind"] or not fields["name"]:
            raise ValueError("an object reference needs kind and name")
    return {field: str(value) for field, value in fields.items() if value}


def reference_key(reference: Mapping[str, str] | None) -> tuple[str, ...]:
    """A hashable identity of a reference (all its fields; ``()`` for none)."""
    if reference is None:
        return ()
    return tuple(reference.get(field, "") for field in REFERENCE_FIELDS)


def unix_nanos(moment: datetime) -> int:
    """Nanoseconds since the epoch (``time.Time.UnixNano``; datetimes hold microseconds)."""
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def event_name(regarding_name: str, nanos: int) -> str:
    """``<name>.<nanos in hex>``, or a random UUID when that is not a valid name."""
    name = f"{regarding_name}.{nanos:x}"
    if not is_dns_subdomain(name):
        return str(uuid.uuid4())
    return name


def micro_time(moment: datetime) -> str:
    """``metav1.MicroTime`` as JSON: UTC with six fractional digits."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(moment: datetime) -> str:
    """``metav1.Time`` as JSON: UTC, whole seconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True, kw_only=True)
class Occurrence:
    """One ``record(...)`` call, as queued for the sender.

    :ivar regarding: the reference of the object the event is about.
    :ivar related: the reference of a second object, or None.
    :ivar type: ``Normal`` or ``Warning``.
    :ivar reason: why (``Reconciled``).
    :ivar action: what was done (``Reconcile``).
    :ivar note: a human-readable description (may be ``""``).
    :ivar name: the event's name, made when recorded.
    :ivar namespace: the event's namespace (the regarding object's, or ``default``).
    :ivar wall: when it was recorded (wall time).
    :ivar monotonic: when it was recorded, on the recorder's clock.
    """

    regarding: dict[str, str]
    related: dict[str, str] | None
    type: str
    reason: str
    action: str
    note: str
    name: str
    namespace: str
    wall: datetime
    monotonic: float
