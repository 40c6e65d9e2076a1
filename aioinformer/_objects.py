"""Objects, keys and tombstones.

Objects are plain ``dict`` s decoded from the API server's JSON. Who shares a decoded object
decides whether you may mutate it (the user guide's "Who shares an object" says the same):

* **Events** (``events()``, handlers): an event's ``object`` and ``old_object``, and a
  tombstone's ``obj``, are decoded once and shared by every consumer of the informer (with
  ``cache="dict"``, also with the cache). **Never mutate them**; copy first
  (``copy.deepcopy``).
* **Cache reads** (``lister()``, ``informer.cache``, index lookups): the compact cache (the
  default) decodes a fresh dict on every read, the caller's own to mutate; ``cache="dict"``
  returns the cache's own objects, shared with every reader and event: never mutate those.
* A transform (``set_transform``) sees each object before anything else and may mutate it.
* :class:`~aioinformer.lowlevel.Store` and :class:`~aioinformer.lowlevel.Indexer` keep the
  dicts they are given, and hand out those same dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from .errors import KeyFuncError

__all__ = [
    "DeletedFinalStateUnknown",
    "KeyFunc",
    "KubeObject",
    "annotations_of",
    "deletion_handling_meta_namespace_key",
    "labels_of",
    "meta_namespace_key",
    "name_of",
    "namespace_of",
    "resource_version_of",
    "split_meta_namespace_key",
    "try_resource_version",
    "uid_of",
]

#: A Kubernetes object as decoded from JSON.
KubeObject: TypeAlias = dict[str, Any]

#: A function computing the store key of an object.
KeyFunc: TypeAlias = Callable[[Any], str]


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """A tombstone: the object was deleted, but the delete event itself was missed.

    Produced when a relist no longer contains an object the cache held. ``obj`` is the last
    known state of the object, which may be stale, and may be None when the last state was not
    available. Handlers' ``on_delete`` must accept it next to a plain object.
    """

    key: str
    obj: KubeObject | None


def _metadata(obj: Any) -> Mapping[str, Any]:
    # Decoded objects are plain dicts: test for those first (an ABC check costs ~10x more).
    metadata = obj.get("metadata") if type(obj) is dict or isinstance(obj, Mapping) else None
    if type(metadata) is dict or isinstance(metadata, Mapping):
        return metadata
    raise KeyFuncError(f"object has no metadata: {type(obj).__name__}")


def namespace_of(obj: Mapping[str, Any]) -> str:
    """``metadata.namespace``, or ``""`` for cluster-scoped objects."""
    return str(_metadata(obj).get("namespace") or "")


def name_of(obj: Mapping[str, Any]) -> str:
    """``metadata.name``, or ``""`` when unset."""
    return str(_metadata(obj).get("name") or "")


def uid_of(obj: Mapping[str, Any]) -> str:
    """``metadata.uid``, or ``""`` when unset."""
    return str(_metadata(obj).get("uid") or "")


def resource_version_of(obj: Mapping[str, Any]) -> str:
    """``metadata.resourceVersion``, or ``""`` when unset."""
    return str(_metadata(obj).get("resourceVersion") or "")


def try_resource_version(obj: Any) -> str:
    """``metadata.resourceVersion`` of anything (``""`` for objects without metadata)."""
    if type(obj) is dict:  # decoded objects: skip the ABC checks (~10x slower)
        metadata = obj.get("metadata")
        if type(metadata) is dict:
            rv = metadata.get("resourceVersion")
            return rv if type(rv) is str else str(rv or "")
    if isinstance(obj, Mapping):
        metadata = obj.get("metadata")
        if isinstance(metadata, Mapping):
            return str(metadata.get("resourceVersion") or "")
    return ""


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.labels`` (an empty mapping when unset)."""
    labels = _metadata(obj).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.annotations`` (an empty mapping when unset)."""
    annotations = _metadata(obj).get("annotations")
    return annotations if isinstance(annotations, Mapping) else {}


def meta_namespace_key(obj: Any) -> str:
    """The cache key of an object: ``"namespace/name"``, or ``"name"`` when cluster-scoped.

    A string is taken to be a key already and returned as is (client-go's ``ExplicitKey``).

    :raises KeyFuncError: if the object has no ``metadata.name``.
    """
    if isinstance(obj, str):
        return obj
    metadata = _metadata(obj)
    name = metadata.get("name")
    if not name or not isinstance(name, str):
        raise KeyFuncError("object has no metadata.name")
    namespace = metadata.get("namespace")
    return f"{namespace}/{name}" if namespace else name


def deletion_handling_meta_namespace_key(obj: Any) -> str:
    """Like :func:`meta_namespace_key`, but a :class:`DeletedFinalStateUnknown` gives its key."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return meta_namespace_key(obj)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """Split a key into ``(namespace, name)``; the namespace is ``""`` for cluster-scoped keys.

    :raises KeyFuncError: if the key is empty or has more than one ``/``.
    """
    parts = key.split("/")
    if len(parts) == 1 and parts[0]:
        return "", parts[0]
    if len(parts) == 2 and parts[1]:
        return parts[0], parts[1]
    raise KeyFuncError(f"unexpected key format: {key!r}")
