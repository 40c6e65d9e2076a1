"""Objects, the global resource version and the write log (the fake's etcd).

One global integer counts writes, like an etcd revision; every stored write takes the next
value and produces one :class:`~._history.StoredEvent`, handed synchronously to every
subscriber (the watch hub). All methods are synchronous and never await, so a reader that
snapshots state and subscribes in one step cannot miss or duplicate an event.

Stored objects are never mutated in place: a write builds a new dict. Callers must not
mutate what they get back either (the in-process API of the server copies for its callers).

This layer knows keys and versions only; what a write does to an object (decoding,
defaults, validation, status and generation rules, dry runs, managed fields) is the
registry's (:mod:`._rest`).
"""

from __future__ import annotations

from collections.abc import Callable

from .._api import _status as status
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo, ResourceRegistry
from .._schema._published import require_schemas
from ._history import DELETED, ResourceHistory, StoredEvent
from ._object_rules import object_key

__all__ = ["Storage", "storage_key"]

#: Called synchronously for every write.
Subscriber = Callable[[ResourceInfo, StoredEvent], None]


def _gvr(info: ResourceInfo) -> tuple[str, str, str]:
    """The table of a resource: one per group, version and plural; every version of a custom
    resource shares one (its objects are kept in the storage version, as etcd keeps them)."""
    return (info.group, "" if info.custom is not None else info.version, info.plural)


storage_key = _gvr


class Storage:
    """All objects of all resources, their histories and the global resource version.

    :param registry: the resources served.
    :param history_limit: events kept per resource for resuming watches (at least this many).
    :param auto_create_namespaces: create a missing namespace on a namespaced create instead
        of answering 404 (the registry, :mod:`._rest`, reads it).
    :raises ImportError: when the Kubernetes schemas (the ``testing`` extra) are missing.
    """

    def __init__(
        self,
        registry: ResourceRegistry,
        *,
        history_limit: int,
        auto_create_namespaces: bool,
    ) -> None:
        require_schemas()
        self.registry = registry
        self.history_limit = history_limit
        self.auto_create_namespaces = auto_create_namespaces
        self._rv = 1
        self._tables: dict[tuple[str, str, str], dict[str, KubeObject]] = {}
        self._histories: dict[tuple[str, str, str], ResourceHistory] = {}
        self._subscribers: list[Subscriber] = []

    # -- reading ---------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        """The RV of the latest write (the whole server's, like an etcd revision)."""
        return self._rv

    def subscribe(self, subscriber: Subscriber) -> None:
        """Call ``subscriber(resource, event)`` synchronously after every write."""
        self._subscribers.append(subscriber)

    def objects(self, info: ResourceInfo) -> dict[str, KubeObject]:
        """The live table of one resource, key → object. Do not mutate it."""
        return self._tables.setdefault(_gvr(info), {})

    def history(self, info: ResourceInfo) -> ResourceHistory:
        """The history window of one resource."""
        history = self._histories.get(_gvr(info))
        if history is None:
            history = self._histories[_gvr(info)] = ResourceHistory(limit=self.history_limit)
        return history

    def get(self, info: ResourceInfo, name: str, namespace: str = "") -> KubeObject:
        """One object.

        :raises StatusFailure: 404, when it does not exist.
        """
        obj = self.objects(info).get(object_key(namespace if info.namespaced else "", name))
        if obj is None:
            raise status.not_found(info, name)
        return obj

    def state_at(self, info: ResourceInfo, rv: int) -> dict[str, KubeObject]:
        """The table of one resource as it was at ``rv``, rebuilt from the history window.

        :raises StatusFailure: 504 (too large RV), when ``rv`` is in the future.
        :raises StatusFailure: 410, when ``rv`` is older than the history window.
        """
        if rv > self._rv:
            raise status.too_large_resource_version(rv, self._rv)
        history = self.history(info)
        events = history.since(rv)
        if events is None:
            raise status.expired(f"too old resource version: {rv} ({history.floor})")
        state = dict(self.objects(info))
        for event in reversed(events):
            if event.old is None:
                state.pop(event.key, None)
            else:
                state[event.key] = event.old
        return state

    # -- writing ---------------------------------------------------------------------------

    def next_resource_version(self) -> int:
        """Take the RV of a write about to be committed (:meth:`commit` it next)."""
        self._rv += 1
        return self._rv

    def commit(
        self,
        info: ResourceInfo,
        event_type: str,
        key: str,
        namespace: str,
        obj: KubeObject,
        old: KubeObject | None,
    ) -> StoredEvent:
        """Store (or, for ``DELETED``, remove) an object at the current RV, record the event
        and hand it to every subscriber."""
        table = self.objects(info)
        if event_type == DELETED:
            del table[key]
        else:
            table[key] = obj
        event = StoredEvent(self._rv, event_type, key, namespace, obj, old)
        self.history(info).append(event)
        for subscriber in self._subscribers:
            subscriber(info, event)
        return event

    def compact(self, rv: int | None = None) -> None:
        """Make every RV below ``rv`` (default: the current RV) unavailable to every resource."""
        target = self._rv if rv is None else min(rv, self._rv)
        for info in self.registry:
            self.history(info).compact(target)
