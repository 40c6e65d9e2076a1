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
from ..errors import ForeignObjectError, InvalidObjectError, PaginationError, ResourceVersionError

__all__ = [
    "Page",
    "key_hint",
    "object_problem",
    "older",
    "page_problem",
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


def page_problem(
    followed: frozenset[str], token: str | None, list_rv: str, page_rv: object, pages: int
) -> PaginationError | None:
    """The error of page number ``pages`` of one list, or None when the list may go on.

    A continue token is the API server's cursor into one snapshot: it names the next key to
    serve, so a correct server never hands out a token the list already followed (a repeat
    would loop for ever), and every page of one list answers the first page's resource
    version (the snapshot's). ``followed`` holds the tokens followed so far; ``token`` is the
    page's own (None or ``""`` on the last page).
    """
    if token and token in followed:
        return PaginationError(
            f"page {pages} of the list repeats a continue token already followed (the pages"
            " loop); listing again from scratch",
            pages=pages,
        )
    if pages > 1 and isinstance(page_rv, str) and older(page_rv, list_rv):
        return PaginationError(
            f"page {pages} of the list answered resourceVersion {page_rv!r}, older than the first"
            f" page's {list_rv!r} (the pages are not one snapshot); listing again from scratch",
            pages=pages,
        )
    return None


def screen_pages(
    pages: Sequence[Page], namespace: str | None = None
) -> tuple[list[Any], list[InvalidObjectError]]:
    """The items of a list's pages a store can take, and what was wrong with the others.

    An item without a usable key or with a non-string resource version is left out (a
    :class:`~aioinformer._wire._slices.WirePage` brings those decoded, apart from its
    carriers); of items listed twice under one key, the last is kept (a store would keep the
    last one too); with a ``namespace`` (a namespaced reflector's), an item of another
    namespace is left out too (a :class:`~aioinformer.errors.ForeignObjectError`). Positions
    count every item of every page, in order.
    """
    problems: list[InvalidObjectError] = []
    seen: dict[str, int] = {}
    kept: dict[int, Any] = {}
    offset = 0

    def check(item: Any, position: int) -> None:
        if item.__class__ is WireObject:
            key: str = item.key
            item_namespace: str = item.namespace
        else:
            problem = object_problem(item)
            if problem is not None:
                problems.append(InvalidObjectError(problem, key=key_hint(item), position=position))
                return
            metadata = item["metadata"]
            item_namespace, name = metadata.get("namespace") or "", metadata["name"]
            key = f"{item_namespace}/{name}" if item_namespace else name
        if namespace is not None and item_namespace != namespace:
            problems.append(ForeignObjectError(key, namespace=namespace, position=position))
            return
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
