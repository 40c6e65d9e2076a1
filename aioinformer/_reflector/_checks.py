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

from collections.abc import Sequence
from typing import Any, TypeAlias

from .._listwatch import ListResult
from .._objects import _text, object_problem
from .._wire._slices import WireObject, WirePage
from ..errors import InvalidObjectError, ResourceVersionError

__all__ = [
    "Page",
    "key_hint",
    "object_problem",
    "older",
    "screen_pages",
    "version_problem",
]

#: A page of a list: decoded items, or carriers in wire form.
Page: TypeAlias = ListResult | WirePage
_ABSENT: Any = object()


def key_hint(obj: Any) -> str | None:
    """``namespace/name`` (or ``name``) when both are usable strings, else None (a carrier in
    wire form gives the key decoded with it)."""
    if obj.__class__ is WireObject:
        key: str = obj.key
        return key
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


def screen_pages(pages: Sequence[Page]) -> tuple[list[Any], list[InvalidObjectError]]:
    """The items of a list's pages a store can take, and what was wrong with the others.

    An item without a usable key or with a non-string resource version is left out (a
    :class:`~aioinformer._wire._slices.WirePage` brings those decoded, apart from its
    carriers); of items listed twice under one key, the last is kept (a store would keep the
    last one too). Positions count every item of every page, in order.
    """
    problems: list[InvalidObjectError] = []
    seen: dict[str, int] = {}
    kept: dict[int, Any] = {}
    offset = 0

    def check(item: Any, position: int) -> None:
        if item.__class__ is WireObject:
            key: str = item.key
        else:
            problem = object_problem(item)
            if problem is not None:
                problems.append(InvalidObjectError(problem, key=key_hint(item), position=position))
                return
            metadata = item["metadata"]
            namespace, name = metadata.get("namespace"), metadata["name"]
            key = f"{namespace}/{name}" if namespace else name
        earlier = seen.get(key)
        if earlier is not None:
            reason = f"listed again as item {position}; the later one is kept"
            problems.append(InvalidObjectError(reason, key=key, position=earlier))
            del kept[earlier]
        seen[key] = position
        kept[position] = item

    for page in pages:
        bad = {item.position: item.document for item in getattr(page, "invalid", ())}
        if not bad:
            for at, item in enumerate(page.items):
                check(item, offset + at)
            offset += len(page.items)
            continue
        items = iter(page.items)
        size = len(page.items) + len(bad)
        for at in range(size):
            document = bad.get(at, _ABSENT)
            if document is _ABSENT:
                check(next(items), offset + at)
                continue
            reason = object_problem(document) or "the object is nested too deeply to be stored"
            problems.append(
                InvalidObjectError(reason, key=key_hint(document), position=offset + at)
            )
        offset += size
    if not problems and len(pages) == 1:
        return pages[0].items, problems
    return list(kept.values()), problems
