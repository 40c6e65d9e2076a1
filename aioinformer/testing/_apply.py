"""Server-side apply and ``managedFields``, as the API server's field manager keeps them.

Every write records who set which field (``metadata.managedFields``, ``fieldsType: FieldsV1``)
and an apply merges a manager's configuration under that ownership. This follows the field
manager of apimachinery (``pkg/util/managedfields/internal``: ``structuredmerge.go``,
``managedfieldsupdater.go``, ``stripmeta.go``, ``skipnonapplied.go``, ``capmanagers.go``,
``lastappliedmanager.go``, ``lastappliedupdater.go``) over structured-merge-diff's
``merge/update.go``:

* an update (create, PUT, merge/JSON/strategic patch) gives its manager (operation
  ``Update``) the fields it added or changed and takes them from every other manager; fields it
  removed leave every manager; objects that exist without managed fields stay untracked;
* an apply (operation ``Apply``) merges the configuration over the live object, removes the
  fields the manager applied last time and no longer applies (unless another manager owns
  them), and fails with 409 ``Conflict`` when it would change a field another manager owns,
  unless ``force`` moves the ownership;
* ``apiVersion``, ``kind`` and the server-owned metadata are never owned; at most 10
  ``Update`` managers are kept (older ones merge into ``ancient-changes``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._failure import StatusFailure
from ._fieldpath import FieldSet, Path, path_text
from ._schema import MAP, TypeInfo
from ._typed import (
    MISSING,
    compare,
    field_set,
    merge,
    named_fields,
    remove,
    validate,
)

__all__ = ["LAST_APPLIED", "apply", "manager_from_user_agent", "track_update"]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_MAX_UPDATE_MANAGERS = 10
_STRIPPED = FieldSet.of(
    (("f", "apiVersion"),),
    (("f", "kind"),),
    (("f", "metadata"),),
    *(
        (("f", "metadata"), ("f", name))
        for name in (
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        )
    ),
)
#: Struct fields that Go objects hold by value, so a new object already has them (empty).
#: The JSON schemas do not say which fields are pointers; these are the ones on the way to
#: a workload's pod template.
_VALUE_STRUCTS = frozenset(
    {"metadata", "spec", "status", "template", "jobTemplate", "strategy", "updateStrategy"}
)

#: (manager, operation, apiVersion ("" for Apply), subresource): how entries are told apart.
Identity = tuple[str, str, str, str]


@dataclass(slots=True)
class _Entry:
    fields: FieldSet
    api_version: str
    time: str | None


Managed = dict[Identity, _Entry]


def manager_from_user_agent(user_agent: str) -> str:
    """The manager of a write without ``fieldManager``: the user agent up to its first ``/``,
    printable characters only, at most 128 bytes (``prefixFromUserAgent``)."""
    out = ""
    for char in user_agent.split("/", 1)[0]:
        if not char.isprintable():
            continue
        if len((out + char).encode()) > 128:
            break
        out += char
    return out


def _identity_json(identity: Identity) -> str:
    """The identifier the real field manager keys entries by (``BuildManagerIdentifier``)."""
    manager, operation, api_version, subresource = identity
    doc = {"manager": manager, "operation": operation}
    if api_version:
        doc["apiVersion"] = api_version
    if subresource:
        doc["subresource"] = subresource
    return json.dumps(doc, separators=(",", ":"))


def _decode(entries: Any) -> Managed:
    """``DecodeManagedFields``.

    :raises ValueError: when an entry is invalid.
    """
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise ValueError("managedFields must be a list")
    out: Managed = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"managed fields entry {i} must be an object")
        operation = entry.get("operation")
        if operation not in ("Apply", "Update"):
            raise ValueError("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion")
        if not isinstance(api_version, str) or not api_version:
            raise ValueError("apiVersion must not be empty")
        if entry.get("fieldsType") != "FieldsV1":
            raise ValueError(f"invalid fieldsType in managed fields entry {i}")
        identity = (
            str(entry.get("manager") or ""),
            operation,
            "" if operation == "Apply" else api_version,
            str(entry.get("subresource") or ""),
        )
        fields = FieldSet.from_fields(entry.get("fieldsV1") or {})
        out[identity] = _Entry(fields, api_version, entry.get("time"))
    return out


def _encode(managed: Managed) -> list[dict[str, Any]] | None:
    """``encodeManagedFields``: sorted by operation, time, manager, version, subresource."""
    entries = []
    for (manager, operation, _, subresource), entry in managed.items():
        doc: dict[str, Any] = {"manager": manager, "operation": operation}
        doc["apiVersion"] = entry.api_version
        if entry.time is not None:
            doc["time"] = entry.time
        doc["fieldsType"] = "FieldsV1"
        doc["fieldsV1"] = entry.fields.to_fields()
        if subresource:
            doc["subresource"] = subresource
        entries.append(doc)
    entries.sort(
        key=lambda e: (
            e["operation"],
            e.get("time") or "",
            e["manager"],
            e["apiVersion"],
            e.get("subresource", ""),
        )
    )
    return entries or None


def _without_managed_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return dict(obj)
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def zero_object(root: TypeInfo, api_version: str, kind: str) -> dict[str, Any]:
    """What a freshly made Go object of this kind encodes to (``creater.New`` of the real
    server): required fields null, value structs (``spec``, ``status``, templates) empty."""
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {}}
    if root.kind == MAP:
        for name in ("spec", "status"):
            declared = root.field(name)
            if declared is not None and declared.type.kind == MAP:
                obj[name] = _zero(declared.type, 0)
    return obj


def _zero(t: TypeInfo, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if depth > 4:
        return out
    for name, declared in t.fields.items():
        if name in _VALUE_STRUCTS and declared.type.kind == MAP:
            out[name] = _zero(declared.type, depth + 1)
        elif name in t.required:
            out[name] = None
    return out


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _decode_live_or_new(
    live: Mapping[str, Any] | None, new: Mapping[str, Any], *, subresource: str
) -> Managed:
    """``decodeLiveOrNew``: the request's managed fields unless absent, invalid or a
    subresource write; ``managedFields: []`` (or ``[{}]``) resets them."""
    live_entries = (live or {}).get("metadata", {}).get("managedFields")
    if not subresource:
        entries = new.get("metadata", {}).get("managedFields")
        if entries == [] or entries == [{}]:
            return {}
        try:
            decoded = _decode(entries)
        except ValueError:
            decoded = {}
        if decoded:
            return decoded
    try:
        return _decode(live_entries)
    except ValueError:
        return {}


def _strip(fields: FieldSet) -> FieldSet:
    return fields.difference(_STRIPPED)


def _update(
    live: Any, new: Any, root: TypeInfo, managed: Managed, workflow: Identity, *, force: bool
) -> tuple[Managed, dict[Identity, FieldSet], FieldSet, FieldSet]:
    """``Updater.update``: take changed fields from other managers (or report conflicts).

    :returns: the managers, the conflicts per manager (not applied unless ``force``), and the
        changed (added or modified) and removed fields.
    """
    comparison = compare(live, new, root)
    changed = comparison.modified.union(comparison.added)
    conflicts: dict[Identity, FieldSet] = {}
    for identity, entry in managed.items():
        if identity == workflow:
            continue
        overlap = entry.fields.intersection(changed)
        if not overlap.empty():
            conflicts[identity] = overlap
    if conflicts and not force:
        return managed, conflicts, changed, comparison.removed
    out: Managed = {}
    for identity, entry in managed.items():
        fields = entry.fields
        if identity != workflow:
            if identity in conflicts:
                fields = fields.difference(conflicts[identity])
            fields = fields.difference(comparison.removed)
        if not fields.empty():
            out[identity] = _Entry(fields, entry.api_version, entry.time)
    return out, conflicts, changed, comparison.removed


def _cap_updaters(managed: Managed) -> Managed:
    """``capManagersManager``: merge the oldest ``Update`` managers into ``ancient-changes``."""
    updaters = [i for i in managed if i[1] == "Update"]
    if len(updaters) <= _MAX_UPDATE_MANAGERS:
        return managed
    updaters.sort(key=lambda i: (managed[i].time or "", _identity_json(i)))
    first_of_version: dict[str, Identity] = {}
    count = len(updaters)
    for identity in updaters:
        if count <= _MAX_UPDATE_MANAGERS:
            break
        entry = managed[identity]
        bucket: Identity = ("ancient-changes", "Update", entry.api_version, "")
        first = first_of_version.get(entry.api_version)
        if first is None:
            first_of_version[entry.api_version] = identity
            continue
        if bucket not in managed:
            managed[bucket] = managed.pop(first)
        managed[bucket] = _Entry(
            entry.fields.union(managed[bucket].fields), entry.api_version, entry.time
        )
        del managed[identity]
        count -= 1
    return managed


def _track(
    live: Any,
    new: Any,
    root: TypeInfo,
    managed: Managed,
    identity: Identity,
    api_version: str,
    now: str,
) -> Managed:
    """An ``Update`` by ``identity`` from ``live`` to ``new`` (``managedFieldsUpdater``)."""
    current: Identity = ("current-operation", "Update", api_version, "")
    managed, _, changed, _ = _update(live, new, root, managed, current, force=True)
    mine = _strip(changed)
    if not mine.empty():
        previous = managed.get(identity)
        if previous is not None:
            mine = mine.union(previous.fields)
        managed[identity] = _Entry(mine, api_version, now)
    return _cap_updaters(managed)


def track_update(
    live: Mapping[str, Any] | None,
    new: Mapping[str, Any],
    root: TypeInfo,
    *,
    manager: str,
    api_version: str,
    kind: str,
    subresource: str,
    now: str,
) -> list[dict[str, Any]] | None:
    """The ``managedFields`` of ``new`` after a non-apply write (None: the object keeps
    none). ``live`` is None for a create."""
    managed = _decode_live_or_new(live, new, subresource=subresource)
    if not managed and live is not None:
        return None
    before = zero_object(root, api_version, kind) if live is None else _without_managed_fields(live)
    identity = (manager or "unknown", "Update", api_version, subresource)
    managed = _track(
        before, _without_managed_fields(new), root, managed, identity, api_version, now
    )
    return _encode(managed)


def _conflict_error(conflicts: Mapping[Identity, FieldSet]) -> StatusFailure:
    """409 with one cause per field (``NewConflictError`` in ``internal/conflict.go``)."""

    def who(identity: Identity) -> str:
        manager, operation, api_version, subresource = identity
        text = json.dumps(manager)
        if subresource:
            text += f" with subresource {json.dumps(subresource)}"
        if operation == "Update":
            text += f" using {api_version}"
        return text

    listed: list[tuple[Identity, Path]] = []
    for identity in sorted(conflicts, key=_identity_json):
        listed.extend((identity, path) for path in conflicts[identity].paths())
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {who(i)}",
            "field": path_text(p),
        }
        for i, p in listed
    ]
    if len(listed) == 1:
        identity, path = listed[0]
        message = f"Apply failed with 1 conflict: conflict with {who(identity)}: {path_text(path)}"
    else:
        lines = []
        for identity in sorted(conflicts, key=_identity_json):
            lines.append(f"conflicts with {who(identity)}:")
            lines.extend(f"- {path_text(path)}" for path in conflicts[identity].paths())
        message = f"Apply failed with {len(listed)} conflicts: " + "\n".join(lines)
    return StatusFailure(409, "Conflict", message, details={"causes": causes})


class _Conflicts(Exception):
    def __init__(self, conflicts: dict[Identity, FieldSet]) -> None:
        super().__init__("apply conflicts")
        self.conflicts = conflicts


def _prune(merged: Any, root: TypeInfo, managed: Managed, applier: Identity, last: FieldSet) -> Any:
    """``Updater.prune``: drop what ``applier`` applied last time, no longer applies, and no
    other manager owns (with ``addBackOwnedItems`` and ``addBackDanglingItems``)."""
    if last.empty():
        return merged
    last_named = named_fields(last, root)
    pruned = remove(merged, root, last_named)
    owned = FieldSet()
    for entry in managed.values():
        owned = owned.union(entry.fields)
    merged_set = named_fields(field_set(merged, root), root)
    kept = named_fields(field_set(pruned, root), root).union(named_fields(owned, root))
    pruned = remove(merged, root, merged_set.difference(kept))
    pruned_set = named_fields(field_set(pruned, root), root)
    return remove(merged, root, merged_set.difference(pruned_set).intersection(last_named))


def _apply_once(
    live: Any,
    config: Any,
    root: TypeInfo,
    managed: Managed,
    identity: Identity,
    *,
    force: bool,
    api_version: str,
    now: str,
) -> tuple[Any, Managed]:
    """``Updater.Apply`` with stripped metadata and times: (new object or None, managers)."""
    merged = merge(live, config, root)
    previous = managed.get(identity)
    managed = dict(managed)
    managed[identity] = _Entry(
        field_set(config, root), api_version, previous.time if previous else None
    )
    if previous is not None:
        merged = _prune(merged, root, managed, identity, previous.fields)
    managed, conflicts, _, _ = _update(live, merged, root, managed, identity, force=force)
    if conflicts and not force:
        raise _Conflicts(conflicts)
    entry = managed.get(identity)
    if entry is not None:
        entry.fields = _strip(entry.fields)
        if entry.fields.empty():
            del managed[identity]
    if merged is MISSING or merged == live:
        return None, managed
    if entry is not None and identity in managed:
        entry.time = now
    return merged, managed


def _allowed_by_last_applied(live: Any, root: TypeInfo, api_version: str) -> FieldSet | None:
    """``lastAppliedManager``: the fields kubectl's client-side apply annotation shows the
    applier already set (and still sets), which it may take over without a conflict."""
    annotations = live.get("metadata", {}).get("annotations") or {}
    text = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    if not isinstance(text, str) or not text:
        return None
    try:
        last = json.loads(text)
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != api_version:
        return None
    if validate(last, root):
        return None
    fields = field_set(last, root)
    comparison = compare(last, live, root)
    return (
        fields.difference(comparison.modified)
        .difference(comparison.added)
        .difference(comparison.removed)
    )


def _gvk_text(api_version: Any, kind: Any) -> str:
    group, _, version = str(api_version or "").rpartition("/")
    return f"{group}/{version}, Kind={kind or ''}"


def apply(
    live: Mapping[str, Any] | None,
    config: Any,
    root: TypeInfo,
    *,
    manager: str,
    force: bool,
    api_version: str,
    kind: str,
    subresource: str,
    now: str,
) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None]:
    """Apply ``config`` for ``manager`` over ``live`` (None: the object does not exist).

    :returns: the new object (None when the apply changes nothing) and its managed fields.
    :raises StatusFailure: 400 for a configuration of another kind or carrying managed
        fields, 409 for conflicts, 500 for a configuration the schema refuses (as real).
    """
    if not isinstance(config, dict):
        raise StatusFailure.bad_request(
            "error decoding patch: json: cannot unmarshal "
            f"{type(config).__name__} into Go value of type map[string]interface {{}}"
        )
    if config.get("apiVersion") != api_version or config.get("kind") != kind:
        raise StatusFailure.bad_request(
            f"invalid object type: {_gvk_text(config.get('apiVersion'), config.get('kind'))}"
        )
    meta: dict[str, Any] = config["metadata"] if isinstance(config.get("metadata"), dict) else {}
    if meta.get("managedFields") is not None:
        raise StatusFailure.bad_request("metadata.managedFields must be nil")
    errors = validate(config, root)
    if errors:
        where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        detail = errors[0] if len(errors) == 1 else "errors:\n  " + "\n  ".join(errors)
        raise StatusFailure.internal(
            f"failed to create typed patch object ({where}; {_gvk_text(api_version, kind)}): "
            f"{detail}"
        )
    zero = zero_object(root, api_version, kind)
    before = zero if live is None else _without_managed_fields(live)
    try:
        managed = {} if live is None else _decode(live.get("metadata", {}).get("managedFields"))
    except ValueError as exc:
        raise StatusFailure.internal(f"failed to decode managed fields: {exc}") from None
    if not managed:
        first: Identity = ("before-first-apply", "Update", api_version, subresource)
        managed = _track(zero, before, root, {}, first, api_version, now)
    identity: Identity = (manager, "Apply", "", subresource)
    try:
        new, managed = _apply_once(
            before, config, root, managed, identity, force=force, api_version=api_version, now=now
        )
    except _Conflicts as failed:
        allowed = (
            None if manager != "kubectl" else _allowed_by_last_applied(before, root, api_version)
        )
        if allowed is None:
            raise _conflict_error(failed.conflicts) from None
        remaining = {i: s.difference(allowed) for i, s in failed.conflicts.items()}
        remaining = {i: s for i, s in remaining.items() if not s.empty()}
        if remaining:
            raise _conflict_error(remaining) from None
        new, managed = _apply_once(
            before, config, root, managed, identity, force=True, api_version=api_version, now=now
        )
    result = before if new is None else new
    if manager == "kubectl" and (result.get("metadata", {}).get("annotations") or {}).get(
        LAST_APPLIED
    ):
        annotations = dict(meta.get("annotations") or {})
        annotations.pop(LAST_APPLIED, None)
        applied = {**config, "metadata": {**meta, "annotations": annotations}}
        if not annotations:
            del applied["metadata"]["annotations"]
        text = json.dumps(applied, sort_keys=True, separators=(",", ":"))
        result = {**result, "metadata": {**result["metadata"]}}
        result["metadata"]["annotations"] = {
            **result["metadata"]["annotations"],
            LAST_APPLIED: text,
        }
        new = None if result == before else result
    return (None if new is None else _drop_nulls(new)), _encode(managed)
