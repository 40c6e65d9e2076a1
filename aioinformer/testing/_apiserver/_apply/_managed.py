"""``managedFields`` entries: who they are, how they are stored, and what they cannot own.

The bookkeeping half of the field manager (apimachinery ``pkg/util/managedfields/internal``):
entries are told apart by manager, operation, version (``Update`` only) and subresource
(``BuildManagerIdentifier``); they are encoded as ``FieldsV1`` and sorted by operation, time,
manager, version and subresource (``managedfields.go``); ``apiVersion``, ``kind`` and the
server-owned metadata are stripped (``stripmeta.go``); at most 10 ``Update`` entries are kept
(``capmanagers.go``); conflicts become the 409 of ``conflict.go``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._api._failure import StatusFailure
from .._schema._fieldpath import FieldSet, Path, path_text
from .._schema._published import MAP, TypeInfo

__all__ = [
    "LAST_APPLIED",
    "Identity",
    "Managed",
    "conflict_error",
    "decode",
    "decode_live_or_new",
    "drop_nulls",
    "encode",
    "Entry",
    "identity_json",
    "manager_from_user_agent",
    "strip",
    "cap_updaters",
    "without_managed_fields",
    "zero_object",
]

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
class Entry:
    fields: FieldSet
    api_version: str
    time: str | None


Managed = dict[Identity, Entry]


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


def identity_json(identity: Identity) -> str:
    """The identifier the real field manager keys entries by (``BuildManagerIdentifier``)."""
    manager, operation, api_version, subresource = identity
    doc = {"manager": manager, "operation": operation}
    if api_version:
        doc["apiVersion"] = api_version
    if subresource:
        doc["subresource"] = subresource
    return json.dumps(doc, separators=(",", ":"))


def decode(entries: Any) -> Managed:
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
        out[identity] = Entry(fields, api_version, entry.get("time"))
    return out


def encode(managed: Managed) -> list[dict[str, Any]] | None:
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


def without_managed_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
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


def drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def decode_live_or_new(
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
            decoded = decode(entries)
        except ValueError:
            decoded = {}
        if decoded:
            return decoded
    try:
        return decode(live_entries)
    except ValueError:
        return {}


def strip(fields: FieldSet) -> FieldSet:
    return fields.difference(_STRIPPED)


def cap_updaters(managed: Managed) -> Managed:
    """``capManagersManager``: merge the oldest ``Update`` managers into ``ancient-changes``."""
    updaters = [i for i in managed if i[1] == "Update"]
    if len(updaters) <= _MAX_UPDATE_MANAGERS:
        return managed
    updaters.sort(key=lambda i: (managed[i].time or "", identity_json(i)))
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
        managed[bucket] = Entry(
            entry.fields.union(managed[bucket].fields), entry.api_version, entry.time
        )
        del managed[identity]
        count -= 1
    return managed


def conflict_error(conflicts: Mapping[Identity, FieldSet]) -> StatusFailure:
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
    for identity in sorted(conflicts, key=identity_json):
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
        for identity in sorted(conflicts, key=identity_json):
            lines.append(f"conflicts with {who(identity)}:")
            lines.extend(f"- {path_text(path)}" for path in conflicts[identity].paths())
        message = f"Apply failed with {len(listed)} conflicts: " + "\n".join(lines)
    return StatusFailure(409, "Conflict", message, details={"causes": causes})
