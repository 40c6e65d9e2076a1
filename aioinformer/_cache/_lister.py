"""Listers: read-only views of an informer's cache by namespace and label selector."""

from __future__ import annotations

import builtins

from .._listwatch import Resource
from .._objects import KubeObject
from ..errors import IndexNotFoundError
from ._compact import CacheIndexer
from ._selectors import LabelSelector, parse_label_selector
from ._store import NAMESPACE_INDEX

__all__ = ["Lister", "NamespaceLister"]

Selector = str | LabelSelector | None


def _selector(selector: Selector) -> LabelSelector:
    if isinstance(selector, LabelSelector):
        return selector
    return parse_label_selector(selector)


def _filtered(objects: builtins.list[KubeObject], selector: Selector) -> builtins.list[KubeObject]:
    parsed = _selector(selector)
    if parsed.empty:
        return objects
    return [obj for obj in objects if parsed.matches_object(obj)]


def _namespaced(indexer: CacheIndexer, resource: Resource | None) -> bool | None:
    """Whether the cached resource lives in namespaces (None: cannot tell).

    Known from the resource when its kind is known (the built-in resources, or discovered
    ones); else from the cache itself, once it holds objects.
    """
    if resource is not None and resource.kind is not None:
        return resource.namespaced
    try:
        namespaces = indexer.list_index_func_values(NAMESPACE_INDEX)
    except IndexNotFoundError:
        return None
    if not namespaces:
        return None
    return any(namespaces)


def _what(resource: Resource | None) -> str:
    return str(resource) if resource is not None else "these objects"


class Lister:
    """Reads an informer's cache.

    With the compact cache (the informer's default) every read returns freshly decoded dicts,
    which the caller may mutate (except ``get`` of a recently read key with the informer's
    ``read_cache``: a shared dict); with ``cache="dict"`` it returns the cached objects
    themselves, shared with the cache and every other reader: never mutate them.

    :param indexer: the cache (``informer.indexer``).
    :param resource: what the cache holds, for the namespace checks of :meth:`get` and for
        messages. Default None: unknown (the cache's content tells the scope).
    """

    __slots__ = ("_indexer", "_resource")

    def __init__(self, indexer: CacheIndexer, *, resource: Resource | None = None) -> None:
        self._indexer = indexer
        self._resource = resource

    def __repr__(self) -> str:
        what = f" {self._resource}" if self._resource is not None else ""
        return f"<Lister{what} objects={len(self._indexer)}>"

    def list(self, label_selector: Selector = None) -> builtins.list[KubeObject]:
        """All cached objects matching the label selector (a string or a parsed selector).

        :raises SelectorSyntaxError: if the selector string does not parse.
        """
        return _filtered(self._indexer.list(), label_selector)

    def get(self, name: str, namespace: str | None = None) -> KubeObject | None:
        """The cached object with that name (and namespace, for namespaced resources), or None.

        :raises ValueError: without a namespace for a namespaced resource, or with one for a
            cluster-scoped resource (such a lookup could only ever answer None).
        """
        found = self._indexer.get_by_key(f"{namespace}/{name}" if namespace else name)
        if found is None:
            namespaced = _namespaced(self._indexer, self._resource)
            if namespaced and not namespace:
                raise ValueError(
                    f"{_what(self._resource)} are namespaced: get({name!r}) needs the"
                    f" namespace, get({name!r}, namespace) or namespace(ns).get({name!r})"
                )
            if namespaced is False and namespace:
                raise ValueError(
                    f"{_what(self._resource)} are cluster-scoped: call get({name!r}) without"
                    " a namespace"
                )
        return found

    def namespace(self, namespace: str) -> NamespaceLister:
        """A view of one namespace."""
        return NamespaceLister(self._indexer, namespace, resource=self._resource)


class NamespaceLister:
    """Reads one namespace of an informer's cache."""

    __slots__ = ("_indexer", "_resource", "namespace")

    def __init__(
        self, indexer: CacheIndexer, namespace: str, *, resource: Resource | None = None
    ) -> None:
        self._indexer = indexer
        self._resource = resource
        self.namespace = namespace

    def __repr__(self) -> str:
        what = f" {self._resource}" if self._resource is not None else ""
        return f"<NamespaceLister{what} namespace={self.namespace!r}>"

    def list(self, label_selector: Selector = None) -> builtins.list[KubeObject]:
        """The namespace's cached objects matching the label selector (every namespace's for
        the namespace ``""``, like client-go's ``ListAllByNamespace``)."""
        if not self.namespace:
            return _filtered(self._indexer.list(), label_selector)
        try:
            objects = self._indexer.by_index(NAMESPACE_INDEX, self.namespace)
        except IndexNotFoundError:
            objects = [
                obj
                for obj in self._indexer.list()
                if (obj.get("metadata") or {}).get("namespace", "") == self.namespace
            ]
        return _filtered(objects, label_selector)

    def get(self, name: str) -> KubeObject | None:
        """The cached object with that name in this namespace, or None.

        :raises ValueError: for a cluster-scoped resource (see :meth:`Lister.get`).
        """
        if not self.namespace:
            return Lister(self._indexer, resource=self._resource).get(name)
        return Lister(self._indexer, resource=self._resource).get(name, self.namespace)
