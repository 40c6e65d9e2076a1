"""Resources, list options and the :class:`ListerWatcher` protocol.

A :class:`ListerWatcher` is the one I/O seam of an informer: it lists a resource (one page per
call) and opens watches. :class:`~aioinformer.lowlevel.KubeListerWatcher` implements it over HTTP
with kubernetes_asyncio's configuration; tests and exotic sources can bring their own.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple, Protocol
from urllib.parse import quote

from ._builtin_resources import BUILTIN_RESOURCES
from ._objects import KubeObject
from .errors import MalformedWatchEventError

__all__ = [
    "BatchWatchStream",
    "ListOptions",
    "ListResult",
    "ListerWatcher",
    "Resource",
    "WatchEvent",
    "WatchEventType",
    "WatchStream",
    "as_resource",
    "resolve_builtin_resource",
]

# Well-known resources: kind and whether they live in a namespace. Anything else parses as
# namespaced with an unknown kind unless told otherwise.
_BUILTIN: dict[tuple[str, str], tuple[str, bool]] = {
    (r.group, r.plural): (r.kind, r.namespaced) for r in BUILTIN_RESOURCES
}


@dataclass(frozen=True, slots=True)
class Resource:
    """A Kubernetes resource type: API group, version and plural name.

    Equality and hashing use ``(group, version, plural)`` only, so one resource is one informer
    in a factory whatever ``kind`` and ``namespaced`` say.

    :param group: the API group, ``""`` for the core group.
    :param version: the API version, e.g. ``"v1"``.
    :param plural: the plural resource name, e.g. ``"pods"``.
    :param kind: the object kind, e.g. ``"Pod"``; filled in for well-known resources.
    :param namespaced: whether objects live in namespaces (default True; known resources such
        as nodes and namespaces are cluster-scoped).
    """

    group: str
    version: str
    plural: str
    kind: str | None = field(default=None, compare=False, kw_only=True)
    namespaced: bool = field(default=True, compare=False, kw_only=True)

    @classmethod
    def parse(
        cls, spec: str, *, kind: str | None = None, namespaced: bool | None = None
    ) -> Resource:
        """Parse ``"v1/pods"``, ``"apps/v1/deployments"`` or ``"example.com/v1/widgets"``.

        Kind and scope come from the arguments, else from the table of well-known resources,
        else they default to unknown and namespaced.

        :raises ValueError: for anything but ``version/plural`` or ``group/version/plural``.
        """
        parts = spec.strip().strip("/").split("/")
        if len(parts) == 2:
            group, version, plural = "", parts[0], parts[1]
        elif len(parts) == 3:
            group, version, plural = parts
        else:
            raise ValueError(f"resource {spec!r} is not 'version/plural' or 'group/version/plural'")
        if not version or not plural:
            raise ValueError(f"resource {spec!r} has an empty version or plural")
        known_kind, known_namespaced = _BUILTIN.get((group, plural), (None, True))
        return cls(
            group,
            version,
            plural,
            kind=kind if kind is not None else known_kind,
            namespaced=namespaced if namespaced is not None else known_namespaced,
        )

    @property
    def api_version(self) -> str:
        """``"v1"`` for the core group, else ``"group/version"``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, *, namespace: str | None = None, name: str | None = None) -> str:
        """The URL path of the collection (or of one object when ``name`` is given).

        :raises ValueError: if a namespace is given for a cluster-scoped resource.
        """
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace:
            if not self.namespaced:
                raise ValueError(f"{self} is cluster-scoped; it has no namespace {namespace!r}")
            prefix += f"/namespaces/{quote(namespace, safe='')}"
        path = f"{prefix}/{self.plural}"
        if name:
            path += f"/{quote(name, safe='')}"
        return path

    def __str__(self) -> str:
        return f"{self.api_version}/{self.plural}"


#: kubectl's names of the built-in resources (plural, singular, short names; the kind,
#: lower-cased, is accepted too) → ``group/version/plural``. Others (custom resources, or
#: built-ins missing here) are written ``group/version/plural`` or given as a Resource.
_KUBECTL_NAMES: dict[str, tuple[str, ...]] = {
    f"{r.api_version}/{r.plural}": (r.singular, *r.short_names) for r in BUILTIN_RESOURCES
}


@functools.cache
def _builtin_names() -> dict[str, Resource]:
    """Every accepted name → its resource: each name alone, ``name.group`` and
    ``name.version.group`` (``deployments.apps``, ``deploy.v1.apps``), like kubectl."""
    names: dict[str, Resource] = {}
    for spec, aliases in _KUBECTL_NAMES.items():
        resource = Resource.parse(spec)
        for name in (resource.plural, *aliases, (resource.kind or "").lower()):
            if not name:
                continue
            names.setdefault(name, resource)
            if resource.group:
                names.setdefault(f"{name}.{resource.group}", resource)
                names.setdefault(f"{name}.{resource.version}.{resource.group}", resource)
    return names


def resolve_builtin_resource(name: str) -> Resource:
    """The resource for ``"v1/pods"``, ``"apps/v1/deployments"`` or a kubectl name of a
    built-in resource (``"pods"``, ``"po"``, ``"Pod"``, ``"deploy"``, ``"deployments.apps"``).

    Needs no API server: custom resources are written ``group/version/plural`` (or given as a
    :class:`~aioinformer.Resource`, with ``namespaced=False`` when cluster-scoped).

    :raises ValueError: for a name that is none of these, saying what to write instead.
    """
    wanted = name.strip()
    if "/" in wanted:
        return Resource.parse(wanted)
    resource = _builtin_names().get(wanted.lower())
    if resource is None:
        raise ValueError(
            f"unknown resource {name!r}: write a built-in resource as kubectl does (pods,"
            " deploy, deployments.apps, ...) or as 'version/plural' ('v1/pods'), and any other"
            " as 'group/version/plural' (e.g. 'example.com/v1/widgets'), or pass a"
            " Resource(group, version, plural, namespaced=...)"
        )
    return resource


def as_resource(resource: Resource | str) -> Resource:
    """``resource`` itself, or the resource a name resolves to
    (:func:`resolve_builtin_resource`)."""
    return resource if isinstance(resource, Resource) else resolve_builtin_resource(resource)


@dataclass(frozen=True, kw_only=True, slots=True)
class ListOptions:
    """Query options of a list or watch request (``None`` leaves a parameter out).

    :param resource_version: ``""`` (most recent, consistent), ``"0"`` (any, served from the
        watch cache) or a specific version.
    :param resource_version_match: ``"NotOlderThan"`` or ``"Exact"``.
    :param limit: page size of a list.
    :param continue_token: the ``continue`` token of the previous page.
    :param label_selector: a label selector, e.g. ``"app=web,tier!=db"``.
    :param field_selector: a field selector, e.g. ``"spec.nodeName=node-1"``.
    :param timeout_seconds: server-side timeout of the request (watches end cleanly after it).
    :param allow_watch_bookmarks: ask for BOOKMARK events on a watch.
    :param send_initial_events: streaming list: the watch starts with the current state.
    :param shard_selector: a KEP-5866 shard selector (``shardSelector``), e.g. the ``str()``
        of a :class:`~aioinformer.ShardSelector`; sent as given.
    """

    resource_version: str | None = None
    resource_version_match: str | None = None
    limit: int | None = None
    continue_token: str | None = None
    label_selector: str | None = None
    field_selector: str | None = None
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool = False
    send_initial_events: bool | None = None
    shard_selector: str | None = None

    def to_query(self) -> dict[str, str]:
        """The options as URL query parameters."""
        query: dict[str, str] = {}
        if self.resource_version is not None and self.resource_version != "":
            query["resourceVersion"] = self.resource_version
        if self.resource_version_match:
            query["resourceVersionMatch"] = self.resource_version_match
        if self.limit:
            query["limit"] = str(self.limit)
        if self.continue_token:
            query["continue"] = self.continue_token
        if self.label_selector:
            query["labelSelector"] = self.label_selector
        if self.field_selector:
            query["fieldSelector"] = self.field_selector
        if self.timeout_seconds is not None:
            query["timeoutSeconds"] = str(self.timeout_seconds)
        if self.allow_watch_bookmarks:
            query["allowWatchBookmarks"] = "true"
        if self.send_initial_events is not None:
            query["sendInitialEvents"] = "true" if self.send_initial_events else "false"
        if self.shard_selector:
            query["shardSelector"] = self.shard_selector
        return query


class ListResult(NamedTuple):
    """One page of a list.

    :ivar items: the objects of this page.
    :ivar resource_version: the resource version the list represents.
    :ivar continue_token: the token for the next page, or None on the last page.
    :ivar remaining_item_count: the server's estimate of the items after this page, if given.
    :ivar shard_info: ``metadata.shardInfo.selector``: the shard selector the server filtered
        the list with (KEP-5866), if it says so.
    """

    items: list[KubeObject]
    resource_version: str
    continue_token: str | None = None
    remaining_item_count: int | None = None
    shard_info: str | None = None


class WatchEventType(StrEnum):
    """The event types of the watch protocol."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    ERROR = "ERROR"


class WatchEvent(NamedTuple):
    """One decoded watch event.

    ``type`` is a :class:`WatchEventType` value for the known types; unknown types are passed
    through as the server sent them (the reflector logs and skips them). ``ERROR`` events never
    appear: the stream raises them as :class:`~aioinformer.errors.ApiError`.

    ``raw`` is the object's exact JSON when the stream has it (a slice of the watch line, see
    :mod:`aioinformer._wire._framing`), else None; the compact cache stores it without encoding the
    object again. ``event_type, obj = event[:2]`` unpacks the other two.
    """

    type: str
    object: KubeObject
    raw: bytes | None = None


class WatchStream(Protocol):
    """An open watch: an async iterator of :class:`WatchEvent` that can be closed.

    Iteration ends (``StopAsyncIteration``) when the server ends the stream cleanly. It raises
    :class:`~aioinformer.errors.ApiError` for an ``ERROR`` event (the stream is then over),
    :class:`~aioinformer.errors.TransportError` when the connection breaks,
    :class:`~aioinformer.errors.WatchIdleTimeoutError` when no bytes arrived for the idle
    timeout, and :class:`~aioinformer.errors.MalformedWatchEventError` for an undecodable line,
    after which the stream stays usable.
    """

    def __aiter__(self) -> AsyncIterator[WatchEvent]: ...

    async def __anext__(self) -> WatchEvent: ...

    async def aclose(self) -> None: ...


class BatchWatchStream(WatchStream, Protocol):
    """A :class:`WatchStream` that also hands out everything one read of the connection
    completed at once; the reflector uses :meth:`next_batch` when a stream has it (one store
    hand-off per batch instead of one per event).
    """

    async def next_batch(self) -> list[WatchEvent | MalformedWatchEventError]:
        """The events completed by the next read, in order, each undecodable line as its
        :class:`~aioinformer.errors.MalformedWatchEventError` in its place (not raised).

        Returns an empty list once the stream ended cleanly (and on every call after that);
        raises what :meth:`__anext__` raises for the stream's end (an ``ERROR`` event as
        :class:`~aioinformer.errors.ApiError`, after the events before it were returned).
        Never returns an empty list before the end. Mixing it with ``__anext__`` is allowed:
        each event is delivered once.
        """
        ...


class ListerWatcher(Protocol):
    """Lists and watches one resource; namespace and selectors are fixed by the implementation."""

    async def list(self, options: ListOptions) -> ListResult:
        """Fetch one page.

        :raises ApiError: for an error Status (``ExpiredError`` for 410, ...).
        :raises TransportError: when no response arrived.
        """
        ...

    async def watch(
        self, options: ListOptions, *, idle_timeout: float | None = None
    ) -> WatchStream:
        """Open a watch; returns once the server accepted it (response headers received).

        :param idle_timeout: abandon the stream with
            :class:`~aioinformer.errors.WatchIdleTimeoutError` when no bytes at all arrive for
            this many seconds (None: wait forever).
        """
        ...


def _list_item_defaults(body: dict[str, Any]) -> tuple[str | None, str | None]:
    """The ``kind`` and ``apiVersion`` list items should carry (``PodList`` → ``Pod``)."""
    kind = body.get("kind")
    item_kind = kind[: -len("List")] if isinstance(kind, str) and kind.endswith("List") else None
    api_version = body.get("apiVersion")
    return item_kind, api_version if isinstance(api_version, str) else None


def list_result_from_body(body: Any) -> ListResult:
    """Build a :class:`ListResult` from a decoded ``*List`` response body.

    List items come without ``kind`` and ``apiVersion``; they are filled in from the list so
    cached objects look the same whether they came from a list or a watch.

    :raises ValueError: if the body is not a list object.
    """
    if not isinstance(body, dict):
        raise ValueError("response is not a list object")
    # ``"items": null`` is how some servers say "no items" (kubernetes#41294).
    items: list[KubeObject] = body.get("items") or []
    if not isinstance(items, list):
        raise ValueError("response is not a list object")
    kind, api_version = _list_item_defaults(body)
    if kind or api_version:
        for item in items:
            if kind and "kind" not in item:
                item["kind"] = kind
            if api_version and "apiVersion" not in item:
                item["apiVersion"] = api_version
    return ListResult(items, *list_page_metadata(body.get("metadata") or {}))


def list_page_metadata(metadata: Any) -> tuple[str, str | None, int | None, str | None]:
    """A list's ``metadata`` as :class:`ListResult` reads it: ``(resource_version,
    continue_token, remaining_item_count, shard_info)``."""
    remaining = metadata.get("remainingItemCount")
    shard_info = metadata.get("shardInfo")
    selector = shard_info.get("selector") if isinstance(shard_info, dict) else None
    return (
        str(metadata.get("resourceVersion") or ""),
        metadata.get("continue") or None,
        remaining if isinstance(remaining, int) else None,
        selector if isinstance(selector, str) else None,
    )
