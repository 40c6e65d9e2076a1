"""What the reflector checks of the objects and resource versions a server sends (pure).

The API server guarantees every stored object a ``metadata`` with a non-empty ``name`` and a
string ``resourceVersion`` (apimachinery's ``ObjectMeta``), a string ``namespace`` for a
namespaced object, keys unique within one list, and resource versions that only grow along a
watch (etcd revisions; ``resourceVersion`` is an opaque string to clients, but every API
server in practice sends etcd's decimal revision). A proxy, a buggy aggregated API server or
a hand-written test server can break each of these; the reflector then skips what it cannot
cache and reports it (an :class:`~aioinformer.errors.InvalidObjectError` or
:class:`~aioinformer.errors.ResourceVersionError`) instead of failing a whole list or silently
watching from the wrong place.
"""

from __future__ import annotations

from typing import Any

from .._objects import KubeObject, _text, object_problem
from ..errors import InvalidObjectError, ResourceVersionError

__all__ = ["key_hint", "object_problem", "older", "screen_items", "version_problem"]


def key_hint(obj: Any) -> str | None:
    """``namespace/name`` (or ``name``) when both are usable strings, else None."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(metadata, dict):
        return None
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        return None
    namespace = metadata.get("namespace")
    if namespace is None or namespace == "":
        return name
    return f"{namespace}/{name}" if isinstance(namespace, str) else None


def older(resource_version: str, than: str) -> bool:
    """Whether ``resource_version`` is older than ``than``: both decimal (etcd revisions, as
    every API server sends) and numerically smaller. Opaque versions are never older."""
    if not (resource_version.isdigit() and than.isdigit()):
        return False
    return int(resource_version) < int(than)


def version_problem(value: Any, previous: str) -> ResourceVersionError | None:
    """The error for a list's or bookmark's resource version ``value`` that is not a string."""
    if value.__class__ is str:
        return None
    return ResourceVersionError(
        f"resourceVersion is a {_text(value)}, not a string (kept {previous!r})",
        resource_version=_text(value),
        previous=previous,
    )


def screen_items(items: list[KubeObject]) -> tuple[list[KubeObject], list[InvalidObjectError]]:
    """The items a store can take, and what was wrong with the others.

    An item without a usable key or with a non-string resource version is left out; of items
    listed twice under one key, the last is kept (a store would keep the last one too).
    Returns ``items`` itself when nothing is wrong.
    """
    problems: list[InvalidObjectError] = []
    seen: dict[str, int] = {}
    for position, item in enumerate(items):
        problem = object_problem(item)
        if problem is not None:
            problems.append(InvalidObjectError(problem, key=key_hint(item), position=position))
            continue
        metadata = item["metadata"]
        namespace, name = metadata.get("namespace"), metadata["name"]
        key = f"{namespace}/{name}" if namespace else name
        earlier = seen.get(key)
        if earlier is not None:
            reason = f"listed again as item {position}; the later one is kept"
            problems.append(InvalidObjectError(reason, key=key, position=earlier))
        seen[key] = position
    if not problems:
        return items, problems
    return [items[position] for position in sorted(seen.values())], problems
