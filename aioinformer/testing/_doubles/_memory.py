"""An in-memory source of objects, listed and watched without HTTP: the lister-watcher seam of
a factory or an informer in tests, answering like a small API server from the objects it holds
(for scripted answers and recorded requests, see
:class:`~aioinformer.testing.ScriptedListerWatcher`).

::

    source = MemorySource()
    source.create("configmaps", {"metadata": {"name": "a", "namespace": "default"}})
    async with SharedInformerFactory(lister_watcher=source.lister_watcher) as factory:
        ...
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import AsyncIterator, Callable

import anyio

from ..._builtin_resources import BUILTIN_RESOURCES
from ..._cache._field_selectors import parse_field_selector
from ..._cache._selectors import parse_label_selector
from ..._listwatch import (
    ListerWatcher,
    ListOptions,
    ListResult,
    Resource,
    WatchEvent,
    WatchEventType,
    as_resource,
)
from ..._objects import KubeObject, meta_namespace_key
from ...errors import ApiError, SelectorSyntaxError, api_error_from_status

__all__ = ["MemorySource"]

_Matcher = Callable[[KubeObject], bool]


class MemorySource:
    """Objects of any resources in memory, listed and watched the way an API server does.

    Every write gets the next resource version. A list answers every matching object at the
    current version (``limit`` is ignored: one page); a watch from version ``v`` first replays
    the changes after ``v`` (the whole history is kept), then follows new ones, so nothing
    written between a list and its watch is lost. A watch from ``""`` or ``"0"`` starts with
    an ``ADDED`` event per object. Label and field selectors filter as an API server's do; a
    selector that does not parse, or a field the resource cannot select on (only
    ``metadata.name``, ``metadata.namespace`` and a built-in kind's selectable fields), raises
    :class:`~aioinformer.errors.BadRequestError`, the server's 400. It is a client-side double
    (httpx's ``MockTransport``): selectors are parsed with the client's own parsers, so a test
    of selectors themselves belongs against :class:`~aioinformer.testing.FakeApiServer`, the
    oracle, which also has faults and bookmarks.

    Resources are :class:`~aioinformer.Resource` s or names as the factory takes them
    (``"configmaps"``, ``"v1/configmaps"``).
    """

    def __init__(self) -> None:
        self._objects: dict[Resource, dict[str, KubeObject]] = {}
        self._history: list[tuple[int, Resource, WatchEvent]] = []
        self._watches: set[_MemoryWatch] = set()
        self._version = 0

    def __repr__(self) -> str:
        count = sum(len(objects) for objects in self._objects.values())
        return f"<MemorySource {count} objects, resourceVersion {self._version}>"

    @property
    def resource_version(self) -> str:
        """The version of the last write (``"0"`` before any)."""
        return str(self._version)

    def lister_watcher(
        self,
        resource: Resource | str,
        *,
        namespace: str | None = None,
        tweak_list_options: Callable[[ListOptions], ListOptions] | None = None,
    ) -> ListerWatcher:
        """A lister-watcher of one resource (of one namespace, when given): the
        ``lister_watcher=`` of a :class:`~aioinformer.SharedInformerFactory`."""
        return _MemoryListerWatcher(self, as_resource(resource), namespace, tweak_list_options)

    def objects(self, resource: Resource | str) -> list[KubeObject]:
        """The objects of a resource, in the order they were created."""
        return list(self._objects.get(as_resource(resource), {}).values())

    def create(self, resource: Resource | str, obj: KubeObject) -> KubeObject:
        """Store a new object (a copy); returns it with its resource version.

        :raises ValueError: when an object of that namespace and name exists.
        """
        res = as_resource(resource)
        key = meta_namespace_key(obj)
        if key in self._objects.get(res, {}):
            raise ValueError(f"{res} {key!r} exists")
        return self._write(res, WatchEventType.ADDED, obj)

    def update(self, resource: Resource | str, obj: KubeObject) -> KubeObject:
        """Replace an object (by namespace and name) with a copy of ``obj``.

        :raises KeyError: when there is no such object.
        """
        res = as_resource(resource)
        key = meta_namespace_key(obj)
        if key not in self._objects.get(res, {}):
            raise KeyError(f"{res} {key!r}")
        return self._write(res, WatchEventType.MODIFIED, obj)

    def delete(
        self, resource: Resource | str, name: str, *, namespace: str | None = None
    ) -> KubeObject:
        """Remove an object; returns it as last stored (with the deletion's version).

        :raises KeyError: when there is no such object.
        """
        res = as_resource(resource)
        key = f"{namespace}/{name}" if namespace else name
        stored = self._objects.get(res, {}).get(key)
        if stored is None:
            raise KeyError(f"{res} {key!r}")
        return self._write(res, WatchEventType.DELETED, stored)

    def _write(self, resource: Resource, event_type: WatchEventType, obj: KubeObject) -> KubeObject:
        self._version += 1
        stored = copy.deepcopy(obj)
        stored.setdefault("apiVersion", resource.api_version)
        if resource.kind:
            stored.setdefault("kind", resource.kind)
        stored.setdefault("metadata", {})["resourceVersion"] = str(self._version)
        objects = self._objects.setdefault(resource, {})
        if event_type is WatchEventType.DELETED:
            del objects[meta_namespace_key(stored)]
        else:
            objects[meta_namespace_key(stored)] = stored
        event = WatchEvent(event_type, stored)
        self._history.append((self._version, resource, event))
        for watch in list(self._watches):
            watch.offer(resource, event)
        return stored

    def _open(
        self, resource: Resource, matches: _Matcher, resource_version: str | None
    ) -> _MemoryWatch:
        watch = _MemoryWatch(self, resource, matches)
        if resource_version in (None, "", "0"):
            for obj in self._objects.get(resource, {}).values():
                watch.offer(resource, WatchEvent(WatchEventType.ADDED, obj))
        else:
            since = int(resource_version)
            for version, res, event in self._history:
                if version > since:
                    watch.offer(res, event)
        self._watches.add(watch)
        return watch

    def _close(self, watch: _MemoryWatch) -> None:
        self._watches.discard(watch)


class _MemoryListerWatcher:
    """Lists and watches one resource of a :class:`MemorySource`."""

    def __init__(
        self,
        source: MemorySource,
        resource: Resource,
        namespace: str | None,
        tweak: Callable[[ListOptions], ListOptions] | None,
    ) -> None:
        self._source = source
        self.resource = resource
        self.namespace = namespace or None
        self._tweak = tweak

    def __repr__(self) -> str:
        return f"<MemoryListerWatcher {self.resource} namespace={self.namespace!r}>"

    async def list(self, options: ListOptions) -> ListResult:
        matches = self._matcher(options)
        items = [obj for obj in self._source.objects(self.resource) if matches(obj)]
        return ListResult(items, self._source.resource_version)

    async def watch(
        self, options: ListOptions, *, idle_timeout: float | None = None
    ) -> _MemoryWatch:
        """Open a watch (it never idles: ``idle_timeout`` is not needed)."""
        return self._source._open(self.resource, self._matcher(options), options.resource_version)

    def _matcher(self, options: ListOptions) -> _Matcher:
        if self._tweak is not None:
            options = self._tweak(options)
        try:
            labels = parse_label_selector(options.label_selector)
            fields = parse_field_selector(options.field_selector)
        except SelectorSyntaxError as exc:
            raise _bad_request(str(exc)) from None
        allowed = _field_labels(self.resource)
        for label in sorted(fields.fields):
            if label not in allowed:
                raise _bad_request(f"field label not supported: {label}")
        namespace = self.namespace

        def matches(obj: KubeObject) -> bool:
            if namespace and (obj.get("metadata") or {}).get("namespace") != namespace:
                return False
            return labels.matches_object(obj) and fields.matches_object(obj)

        return matches


def _bad_request(message: str) -> ApiError:
    """The API server's 400 for a selector it refuses."""
    status = {"kind": "Status", "status": "Failure", "message": message}
    return api_error_from_status({**status, "reason": "BadRequest", "code": 400})


def _field_labels(resource: Resource) -> frozenset[str]:
    """The field labels a field selector may use on a resource: the object's name (and
    namespace when namespaced), and a built-in kind's selectable fields."""
    labels = {"metadata.name"}
    if resource.namespaced:
        labels.add("metadata.namespace")
    for row in BUILTIN_RESOURCES:
        if (row.group, row.version, row.plural) == (
            resource.group,
            resource.version,
            resource.plural,
        ):
            labels.update(row.selectable_fields)
    return frozenset(labels)


class _MemoryWatch:
    """An open watch on a :class:`MemorySource`; ends only when closed."""

    def __init__(self, source: MemorySource, resource: Resource, matches: _Matcher) -> None:
        self._source = source
        self._resource = resource
        self._matches = matches
        self._events: deque[WatchEvent] = deque()
        self._arrived: anyio.Event | None = None
        self.closed = False

    def offer(self, resource: Resource, event: WatchEvent) -> None:
        if resource != self._resource or not self._matches(event.object):
            return
        self._events.append(event)
        arrived, self._arrived = self._arrived, None
        if arrived is not None:
            arrived.set()

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self

    async def __anext__(self) -> WatchEvent:
        while not self._events:
            if self.closed:
                raise StopAsyncIteration
            if self._arrived is None:
                self._arrived = anyio.Event()
            await self._arrived.wait()
        return self._events.popleft()

    async def aclose(self) -> None:
        self.closed = True
        self._source._close(self)
        arrived, self._arrived = self._arrived, None
        if arrived is not None:
            arrived.set()
