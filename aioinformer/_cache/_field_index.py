"""Declared index functions: :func:`index_on` says which fields an index reads, so a cache that
keeps objects as bytes indexes them from the metadata-only decode (no whole-object decode per
write).

A plain callable index function (``lambda obj: [obj["spec"]["nodeName"]]``) can read anything,
so the compact cache decodes every written object to run it. ``index_on("spec.nodeName")``
reads only that field: the informer decodes it along with the key and resource version, and
the index never sees the rest of the object. Both kinds work with both cache modes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._wire._slices import MISSING, FieldSet, Path, field_path, value_at

__all__ = ["FieldIndex", "declared_fields", "index_on"]


class FieldIndex:
    """An index function that reads only declared fields (made by :func:`index_on`).

    Called with a decoded object it reads its fields like any index function; the compact
    cache instead hands it the values the informer decoded (:meth:`values_from`).

    :ivar paths: the fields read, each a tuple of keys.
    """

    __slots__ = ("_values", "paths")

    def __init__(
        self, paths: tuple[Path, ...], values: Callable[..., Iterable[str]] | None
    ) -> None:
        self.paths = paths
        self._values = values

    def __repr__(self) -> str:
        fields = ", ".join(repr(".".join(path)) for path in self.paths)
        return f"index_on({fields}{', values=...' if self._values else ''})"

    def __call__(self, obj: Any) -> Iterable[str]:
        return self.values_from(*(value_at(obj, path) for path in self.paths))

    def values_from(self, *found: Any) -> Iterable[str]:
        """The index values for the fields' values, in :attr:`paths` order (an absent field
        is None)."""
        found = tuple(None if value is MISSING else value for value in found)
        if self._values is not None:
            return self._values(*found)
        (value,) = found
        if value is None:
            return ()
        if value.__class__ is str:
            return (value,)
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return value
        where = ".".join(self.paths[0])
        raise TypeError(f"{where} is a {type(value).__name__}, not a string or a list of strings")


def index_on(
    *fields: str | Sequence[str], values: Callable[..., Iterable[str]] | None = None
) -> FieldIndex:
    """An index function that reads only ``fields``: the informer decodes them with each
    object's metadata, so a compact cache never decodes whole objects to index them.

    With one field and no ``values``, an object is indexed under the field's value when it is
    a string, under each of its strings when it is a list of strings, and under nothing when
    the field is absent or null (anything else is an index error)::

        indexers={"by-node": index_on("spec.nodeName")}

    With ``values``, it is called with the fields' values in order (None for an absent one)
    and returns the index values::

        indexers={"by-owner": index_on(
            "metadata.ownerReferences", values=lambda refs: [r["uid"] for r in refs or ()])}

    :param fields: dotted paths (``"spec.nodeName"``), or sequences of keys for keys with dots
        (``("metadata", "labels", "app.kubernetes.io/name")``). Not the whole ``metadata``.
    :param values: computes the index values from the fields' values.
    :raises ValueError: for no field, an empty or malformed path, or several fields without
        ``values``.
    """
    if not fields:
        raise ValueError("index_on needs at least one field")
    paths = tuple(dict.fromkeys(field_path(field) for field in fields))
    if len(paths) > 1 and values is None:
        raise ValueError("index_on with several fields needs values= to combine them")
    return FieldIndex(paths, values)


def declared_fields(funcs: Iterable[object]) -> FieldSet:
    """The fields the :class:`FieldIndex` functions among ``funcs`` read (and no uid: only a
    shard filter needs it)."""
    paths = [path for func in funcs if isinstance(func, FieldIndex) for path in func.paths]
    return FieldSet(paths=tuple(dict.fromkeys(paths)), uid=False)
