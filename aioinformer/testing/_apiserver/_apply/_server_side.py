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
from typing import Any

from .._api._failure import StatusFailure
from .._schema._fieldpath import FieldSet
from .._schema._published import TypeInfo
from .._schema._typed import (
    MISSING,
    compare,
    field_set,
    merge,
    named_fields,
    remove,
    validate,
)
from ._managed import (
    LAST_APPLIED,
    Entry,
    Identity,
    Managed,
    cap_updaters,
    conflict_error,
    decode,
    decode_live_or_new,
    drop_nulls,
    encode,
    strip,
    without_managed_fields,
    zero_object,
)

__all__ = ["apply", "track_update"]


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
            out[identity] = Entry(fields, entry.api_version, entry.time)
    return out, conflicts, changed, comparison.removed


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
    mine = strip(changed)
    if not mine.empty():
        previous = managed.get(identity)
        if previous is not None:
            mine = mine.union(previous.fields)
        managed[identity] = Entry(mine, api_version, now)
    return cap_updaters(managed)


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
    managed = decode_live_or_new(live, new, subresource=subresource)
    if not managed and live is not None:
        return None
    before = zero_object(root, api_version, kind) if live is None else without_managed_fields(live)
    identity = (manager or "unknown", "Update", api_version, subresource)
    managed = _track(before, without_managed_fields(new), root, managed, identity, api_version, now)
    return encode(managed)


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
    managed[identity] = Entry(
        field_set(config, root), api_version, previous.time if previous else None
    )
    if previous is not None and not previous.fields.difference(managed[identity].fields).empty():
        # only what the manager stopped applying can go (nothing, if it still applies all)
        merged = _prune(merged, root, managed, identity, previous.fields)
    managed, conflicts, _, _ = _update(live, merged, root, managed, identity, force=force)
    if conflicts and not force:
        raise _Conflicts(conflicts)
    entry = managed.get(identity)
    if entry is not None:
        entry.fields = strip(entry.fields)
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
    if config is None:
        config = {}
    if not isinstance(config, dict):
        kind_name = {list: "array", str: "string", bool: "bool"}.get(type(config), "number")
        raise StatusFailure.bad_request(
            f"error decoding patch: json: cannot unmarshal {kind_name} into Go value of type "
            "map[string]interface {}"
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
    before = zero if live is None else without_managed_fields(live)
    try:
        managed = {} if live is None else decode(live.get("metadata", {}).get("managedFields"))
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
            raise conflict_error(failed.conflicts) from None
        remaining = {i: s.difference(allowed) for i, s in failed.conflicts.items()}
        remaining = {i: s for i, s in remaining.items() if not s.empty()}
        if remaining:
            raise conflict_error(remaining) from None
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
        text = json.dumps(applied, sort_keys=True, separators=(",", ":")) + "\n"
        result = {**result, "metadata": {**result["metadata"]}}
        result["metadata"]["annotations"] = {
            **result["metadata"]["annotations"],
            LAST_APPLIED: text,
        }
        new = None if result == before else result
    return (None if new is None else drop_nulls(new)), encode(managed)
