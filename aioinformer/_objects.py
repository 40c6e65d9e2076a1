"""Objects, keys and tombstones.

Objects are plain ``dict`` s as decoded from the API server's JSON, decoded when someone reads
them: the informer carries each one as the bytes it came in. An event's objects are decoded on
first access and then **shared** by every consumer of that event, and a ``cache="dict"``
informer shares its cached dicts with every reader: never mutate those (copy first, e.g. with
``copy.deepcopy``). Reads from the default compact cache return fresh dicts, yours to change.
The user guide's "Who shares an object" (``docs/guide/cache.md``) says it for every read.
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
    "object_problem",
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


def _text(value: Any) -> str:
    """A bounded description of a wrong value: its type, never its content."""
    return type(value).__name__


def object_problem(obj: Any) -> str | None:
    """What makes ``obj`` uncachable (None: nothing)."""
    if obj.__class__ is not dict and not isinstance(obj, dict):
        return f"the object is a {_text(obj)}, not a JSON object"
    metadata = obj.get("metadata")
    if metadata.__class__ is not dict and not isinstance(metadata, dict):
        return "metadata is missing" if metadata is None else "metadata is not an object"
    name = metadata.get("name")
    if name.__class__ is not str:
        return "metadata.name is missing" if name is None else "metadata.name is not a string"
    if not name:
        return "metadata.name is empty"
    namespace = metadata.get("namespace")
    if namespace is not None and namespace.__class__ is not str:
        return "metadata.namespace is not a string"
    rv = metadata.get("resourceVersion")
    if rv is not None and rv.__class__ is not str:
        return f"metadata.resourceVersion is a {_text(rv)}, not a string"
    return None
