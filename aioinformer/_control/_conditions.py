"""Status conditions (``metav1.Condition``) with the Kubernetes rules, and their write through
the ``status`` subresource.

The rules (apimachinery ``pkg/api/meta/conditions.go``, ``SetStatusCondition`` and friends;
validation from ``pkg/apis/meta/v1/validation``, ``ValidateCondition``):

* a condition is ``{type, status, observedGeneration?, lastTransitionTime, reason, message}``,
  one per ``type``;
* ``type`` is a qualified name (``Ready``, ``example.com/Synced``); ``status`` is ``True``,
  ``False`` or ``Unknown``; ``reason`` is CamelCase — 1 to 1024 characters matching
  ``^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$``; ``message`` at most 32768 bytes;
  ``observedGeneration`` not negative;
* ``lastTransitionTime`` (RFC 3339, whole seconds, as ``metav1.Time`` serializes) changes
  only when ``status`` changes; setting the same status with another reason, message or
  observed generation updates those and keeps the time.

The editing functions work on a list you own (:func:`conditions_of` copies one out of an
object: objects from a cache are shared and must not be changed), and say whether they changed
it, so a reconcile writes only when something changed::

    current = conditions.conditions_of(widget)
    if conditions.set_condition(
        current, type="Ready", status=True, reason="Reconciled",
        observed_generation=widget["metadata"]["generation"],
    ):
        await conditions.write_conditions(client, WIDGETS, widget, current)
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired, TypedDict, cast

from .._listwatch import Resource, as_resource
from .._names import qualified_name_problems
from .._objects import KubeObject
from .._wire._verbs import PatchType

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = [
    "Condition",
    "conditions_of",
    "find_condition",
    "is_false",
    "is_true",
    "is_unknown",
    "remove_condition",
    "set_condition",
    "write_conditions",
]


class Condition(TypedDict):
    """One entry of ``status.conditions`` (``metav1.Condition``), as a dict."""

    #: The condition's type, a qualified name: ``"Ready"``, ``"example.com/Synced"``.
    type: str
    #: ``"True"``, ``"False"`` or ``"Unknown"``.
    status: str
    #: The ``metadata.generation`` the condition was set for.
    observedGeneration: NotRequired[int]
    #: When ``status`` last changed (RFC 3339).
    lastTransitionTime: str
    #: Why, in CamelCase: ``"Reconciled"``, ``"ImagePullFailed"``.
    reason: str
    #: Details for humans (may be ``""``).
    message: str


#: The statuses a condition can have.
_STATUSES: Final = ("True", "False", "Unknown")
#: apimachinery's ``conditionReasonFmt`` and ``maxReasonLen``.
_REASON = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
_REASON_MAX = 1024
#: apimachinery's ``maxMessageLen`` (bytes: Go's ``len`` of a string).
_MESSAGE_MAX = 32 * 1024


def _validate_type(value: str) -> None:
    problems = qualified_name_problems(value)
    if problems:
        raise ValueError(f"condition type {value!r} is not a qualified name: {'; '.join(problems)}")


def _validate(
    type: str, status: str, reason: str, message: str, observed_generation: int | None
) -> None:
    if not type:
        raise ValueError("a condition needs a type")
    _validate_type(type)
    if status not in _STATUSES:
        raise ValueError(f"condition status {status!r} is not one of True, False, Unknown")
    if not reason:
        raise ValueError("a condition needs a reason (CamelCase, e.g. 'Reconciled')")
    if len(reason) > _REASON_MAX:
        raise ValueError(f"condition reason is longer than {_REASON_MAX} characters")
    if not _REASON.fullmatch(reason):
        raise ValueError(
            f"condition reason {reason!r}: a condition reason must start with alphabetic "
            "character, optionally followed by a string of alphanumeric characters or '_,:', "
            "and must end with an alphanumeric character or '_' (e.g. 'MyReason')"
        )
    if len(message.encode()) > _MESSAGE_MAX:
        raise ValueError(f"condition message is longer than {_MESSAGE_MAX} bytes")
    if observed_generation is not None and (
        not isinstance(observed_generation, int)
        or isinstance(observed_generation, bool)
        or observed_generation < 0
    ):
        raise ValueError("observed_generation must be an integer >= 0")


def _rfc3339(moment: datetime) -> str:
    """``metav1.Time`` as JSON: UTC, whole seconds."""
    if moment.tzinfo is None:
        raise ValueError("now must be timezone-aware (e.g. datetime.now(UTC))")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _list_of(source: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> Sequence[Any]:
    """The conditions of an object (``status.conditions``), or the list itself."""
    if isinstance(source, Mapping):
        status = source.get("status")
        found = status.get("conditions") if isinstance(status, Mapping) else None
        return found if isinstance(found, list) else []
    return source


def conditions_of(obj: Mapping[str, Any]) -> list[Condition]:
    """A copy of ``obj``'s ``status.conditions`` (an empty list when it has none), to edit
    with :func:`set_condition` and :func:`remove_condition` and write with
    :func:`write_conditions`."""
    return [cast(Condition, c) for c in copy.deepcopy(list(_list_of(obj))) if isinstance(c, dict)]


def find_condition(
    source: Mapping[str, Any] | Sequence[Mapping[str, Any]], type: str
) -> Condition | None:
    """The condition of ``type`` in an object's ``status.conditions`` (or in a list of
    conditions), or None (apimachinery's ``FindStatusCondition``)."""
    for condition in _list_of(source):
        if isinstance(condition, Mapping) and condition.get("type") == type:
            return cast(Condition, condition)
    return None


def is_true(source: Mapping[str, Any] | Sequence[Mapping[str, Any]], type: str) -> bool:
    """Whether the condition of ``type`` is present with status ``True``
    (``IsStatusConditionTrue``)."""
    found = find_condition(source, type)
    return found is not None and found.get("status") == "True"


def is_false(source: Mapping[str, Any] | Sequence[Mapping[str, Any]], type: str) -> bool:
    """Whether the condition of ``type`` is present with status ``False``
    (``IsStatusConditionFalse``)."""
    found = find_condition(source, type)
    return found is not None and found.get("status") == "False"


def is_unknown(source: Mapping[str, Any] | Sequence[Mapping[str, Any]], type: str) -> bool:
    """Whether the condition of ``type`` is ``Unknown`` — or absent, which the API conventions
    read as unknown. So exactly one of :func:`is_true`, :func:`is_false` and this holds."""
    return not is_true(source, type) and not is_false(source, type)


def set_condition(
    conditions: list[Condition],
    *,
    type: str,
    status: bool | Literal["True", "False", "Unknown"],
    reason: str,
    message: str = "",
    observed_generation: int | None = None,
    now: datetime | None = None,
) -> bool:
    """Set the condition of ``type`` in ``conditions`` (in place); True if that changed it
    (apimachinery's ``SetStatusCondition``).

    A new condition gets ``lastTransitionTime = now`` and is appended. An existing one gets the
    given status, reason, message and observed generation; its ``lastTransitionTime`` becomes
    ``now`` only if the status changed (or if it had none, which validation would refuse).

    :param conditions: the list to change (from :func:`conditions_of`).
    :param type: the condition type, a qualified name (``"Ready"``).
    :param status: ``"True"``, ``"False"``, ``"Unknown"``, or a bool.
    :param reason: CamelCase, 1-1024 characters (``"Reconciled"``).
    :param message: details for humans, at most 32768 bytes. Default ``""``.
    :param observed_generation: the ``metadata.generation`` this condition describes; None
        leaves it out (and removes an existing one, as Go's zero value does). Default None.
    :param now: the transition time. Default None: the current time
        (``datetime.now(UTC)``); pass your clock's time in tests.
    :raises ValueError: for a value the API server's validation would refuse.
    """
    status_text = ("True" if status else "False") if isinstance(status, bool) else status
    _validate(type, status_text, reason, message, observed_generation)
    stamp = _rfc3339(now if now is not None else datetime.now(UTC))
    for existing in conditions:
        if existing.get("type") != type:
            continue
        changed = False
        if existing.get("status") != status_text:
            existing["status"] = status_text
            existing["lastTransitionTime"] = stamp
            changed = True
        elif not existing.get("lastTransitionTime"):
            existing["lastTransitionTime"] = stamp
            changed = True
        if existing.get("reason") != reason:
            existing["reason"] = reason
            changed = True
        if existing.get("message", "") != message:
            existing["message"] = message
            changed = True
        if observed_generation is None:
            if existing.pop("observedGeneration", 0):
                changed = True
        elif existing.get("observedGeneration") != observed_generation:
            existing["observedGeneration"] = observed_generation
            changed = True
        return changed
    condition: Condition = {
        "type": type,
        "status": status_text,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }
    if observed_generation is not None:
        condition["observedGeneration"] = observed_generation
    conditions.append(condition)
    return True


def remove_condition(conditions: list[Condition], type: str) -> bool:
    """Remove the condition of ``type`` from ``conditions`` (in place); True if it was there
    (``RemoveStatusCondition``)."""
    kept = [c for c in conditions if c.get("type") != type]
    removed = len(kept) != len(conditions)
    conditions[:] = kept
    return removed


async def write_conditions(
    client: KubeClient,
    resource: Resource | str,
    obj: Mapping[str, Any],
    conditions: Sequence[Mapping[str, Any]],
    *,
    method: Literal["merge", "apply"] = "merge",
    field_manager: str | None = None,
    precondition: bool = True,
    force: bool = False,
    dry_run: bool = False,
) -> KubeObject:
    """Write ``conditions`` as ``obj``'s ``status.conditions`` through the ``status``
    subresource, in one request; returns the object as stored.

    * ``method="merge"`` (the default) sends a JSON merge patch
      ``{"status": {"conditions": [...]}}``: the list is replaced as a whole, so pass all of
      them (what :func:`conditions_of` gave, edited).
    * ``method="apply"`` server-side applies ``status.conditions`` as ``field_manager``
      (required): with a CRD whose ``conditions`` list is ``x-kubernetes-list-type: map``
      keyed by ``type`` (as ``metav1.Condition`` lists should be), pass only the conditions
      this controller owns and the others' stay.

    :param client: the client to write with.
    :param resource: ``obj``'s resource (``WIDGETS``, ``"deployments.apps"``).
    :param obj: the object as read (its name, namespace and ``resourceVersion`` are used).
    :param conditions: the conditions to write.
    :param method: ``"merge"`` or ``"apply"``. Default ``"merge"``.
    :param field_manager: who owns the written fields. Default None (required for apply).
    :param precondition: send ``obj``'s ``metadata.resourceVersion``, so the write fails with
        :class:`~aioinformer.errors.ConflictError` (409) if the object changed since it was
        read — no one else's status change is overwritten. Default True.
    :param force: (apply) take over fields other managers own. Default False.
    :param dry_run: validate only. Default False.
    :raises ConflictError: the object changed since it was read (with ``precondition``), or
        (apply) another manager owns a written field.
    :raises ValueError: ``obj`` has no name, or apply without ``field_manager``.
    """
    res = as_resource(resource)
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping) or not metadata.get("name"):
        raise ValueError("the object has no metadata.name")
    name: str = metadata["name"]
    namespace: str | None = metadata.get("namespace") or None
    written = [dict(c) for c in conditions]
    target: dict[str, Any] = {"name": name}
    if namespace:
        target["namespace"] = namespace
    if precondition:
        version = metadata.get("resourceVersion")
        if not version:
            raise ValueError("precondition=True needs the object's metadata.resourceVersion")
        target["resourceVersion"] = version
    if method == "apply":
        if not field_manager:
            raise ValueError("method='apply' needs a field_manager")
        kind = res.kind or obj.get("kind")
        if not kind or kind == "PartialObjectMetadata":
            raise ValueError("method='apply' needs the kind: give it as Resource(..., kind=...)")
        document: dict[str, Any] = {
            "apiVersion": res.api_version,
            "kind": kind,
            "metadata": target,
            "status": {"conditions": written},
        }
        return await client.apply(
            res,
            document,
            field_manager=field_manager,
            force=force,
            namespace=namespace,
            subresource="status",
            dry_run=dry_run,
        )
    if method != "merge":
        raise ValueError(f"method must be 'merge' or 'apply', not {method!r}")
    patch: dict[str, Any] = {"status": {"conditions": written}}
    if precondition:
        patch["metadata"] = {"resourceVersion": target["resourceVersion"]}
    return await client.patch_status(
        res,
        name,
        patch,
        namespace=namespace,
        patch_type=PatchType.MERGE,
        field_manager=field_manager,
        dry_run=dry_run,
    )
