"""Listers: read-only views of an informer's cache by namespace and label selector."""

from __future__ import annotations

import builtins

from .errors import IndexNotFoundError
from .objects import KubeObject
from .selectors import LabelSelector, parse_label_selector
from .store import NAMESPACE_INDEX, Indexer

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


class Lister:
    """Reads an informer's cache. Objects are shared with the cache: never mutate them.

    :param indexer: the cache (``informer.indexer``).
    """

    __slots__ = ("_indexer",)

    def __init__(self, indexer: Indexer) -> None:
        self._indexer = indexer

    def list(self, label_selector: Selector = None) -> builtins.list[KubeObject]:
        """All cached objects matching the label selector (a string or a parsed selector).

        :raises SelectorSyntaxError: if the selector string does not parse.
        """
        return _filtered(self._indexer.list(), label_selector)

    def get(self, name: str, namespace: str | None = None) -> KubeObject | None:
        """The cached object with that name (and namespace, for namespaced resources), or None."""
        return self._indexer.get_by_key(f"{namespace}/{name}" if namespace else name)

    def namespace(self, namespace: str) -> NamespaceLister:
        """A view of one namespace."""
        return NamespaceLister(self._indexer, namespace)


class NamespaceLister:
    """Reads one namespace of an informer's cache."""

    __slots__ = ("_indexer", "namespace")

    def __init__(self, indexer: Indexer, namespace: str) -> None:
        self._indexer = indexer
        self.namespace = namespace

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
        """The cached object with that name in this namespace, or None."""
        return self._indexer.get_by_key(f"{self.namespace}/{name}" if self.namespace else name)
