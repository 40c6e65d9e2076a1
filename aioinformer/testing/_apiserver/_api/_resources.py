"""The resources the fake API server serves: the built-in table and the registry.

A resource is named by group, version and plural, like the real API. Anywhere the fake
takes a resource it accepts a :class:`ResourceInfo` or one of these spellings:
``"pods"``, ``"v1/pods"``, ``"apps/v1/deployments"``, ``"deployments.apps"``,
``"example.com/v1/widgets"``, ``"widgets.example.com"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...._builtin_resources import ALL_VERBS, BuiltinResource
from ...._builtin_resources import BUILTIN_RESOURCES as TABLE
from ._failure import StatusFailure
from ._status import status_error

__all__ = ["BUILTIN_RESOURCES", "SERVED_SUBRESOURCES", "ResourceInfo", "ResourceRegistry"]

_COMMON_FIELDS = ("metadata.name", "metadata.namespace")

#: The subresources the fake serves (others answer 404, like an unknown path).
SERVED_SUBRESOURCES = ("status", "scale")


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """One servable resource.

    :param group: API group, ``""`` for the core group.
    :param version: API version, e.g. ``"v1"``.
    :param plural: resource name in URLs, e.g. ``"pods"``.
    :param kind: object kind, e.g. ``"Pod"``.
    :param namespaced: whether objects live in namespaces.
    :param singular: singular name for discovery (default: the lower-cased kind).
    :param short_names: kubectl short names, e.g. ``("po",)``.
    :param selectable_fields: field labels usable in a field selector beyond
        ``metadata.name`` and ``metadata.namespace``.
    :param delete_returns_object: whether DELETE answers with the object (pods, services,
        custom resources) rather than a ``Status``.
    :param verbs: the verbs discovery lists (and the server allows).
    :param subresources: the subresources served (``"status"``, ``"scale"``).
    :param custom: the serving view of the CRD that defines the resource (a
        :class:`._crd._kind.CustomKind`; None otherwise). Every version of such a resource
        shares one table of objects, kept in the storage version.
    """

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    selectable_fields: tuple[str, ...] = field(default=())
    delete_returns_object: bool = False
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = SERVED_SUBRESOURCES
    custom: Any = field(default=None, compare=False, repr=False)

    @property
    def api_version(self) -> str:
        """``"v1"`` for the core group, else ``"group/version"``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        """The kind of a list of these objects, e.g. ``"PodList"`` (a CRD's ``listKind``)."""
        custom_list = getattr(self.custom, "list_kind", "")
        return str(custom_list) if custom_list else f"{self.kind}List"

    @property
    def group_resource(self) -> str:
        """``plural.group`` as used in error messages (``"pods"``, ``"deployments.apps"``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def field_labels(self) -> tuple[str, ...]:
        """Every field label a field selector may use for this resource."""
        return _COMMON_FIELDS + self.selectable_fields

    @property
    def singular_name(self) -> str:
        """The singular name for discovery."""
        return self.singular or self.kind.lower()

    def __str__(self) -> str:
        return f"{self.api_version}/{self.plural}"


def _served(row: BuiltinResource) -> ResourceInfo:
    return ResourceInfo(
        row.group,
        row.version,
        row.plural,
        row.kind,
        row.namespaced,
        singular=row.singular,
        short_names=row.short_names,
        selectable_fields=row.selectable_fields,
        delete_returns_object=row.delete_returns_object,
        verbs=row.verbs,
        subresources=tuple(s for s in row.subresources if s in SERVED_SUBRESOURCES),
    )


#: The resources every fake API server serves: the package's table of built-in resources
#: (:mod:`aioinformer._builtin_resources`), CustomResourceDefinitions included (creating one
#: serves its resource: :mod:`._crd._writes`).
BUILTIN_RESOURCES: tuple[ResourceInfo, ...] = tuple(_served(row) for row in TABLE)


def _unknown(spec: str) -> StatusFailure:
    return status_error(404, message=f"the server doesn't have a resource type {spec!r}")


class ResourceRegistry:
    """The set of resources a fake API server serves, with lookups by every spelling."""

    def __init__(self, resources: Iterable[ResourceInfo] = BUILTIN_RESOURCES) -> None:
        self._resources: list[ResourceInfo] = []
        self._resolved: dict[str, ResourceInfo] = {}
        #: Counts registrations (documents built from the served set compare it).
        self.generation = 0
        for info in resources:
            self.register(info)

    def register(self, info: ResourceInfo) -> ResourceInfo:
        """Add a resource; re-registering the same group/version/plural replaces it."""
        self._resolved.clear()
        self.generation += 1
        self._resources = [
            r
            for r in self._resources
            if (r.group, r.version, r.plural) != (info.group, info.version, info.plural)
        ]
        self._resources.append(info)
        return info

    def unregister(self, group: str, plural: str) -> None:
        """Stop serving every version of a resource."""
        self._resolved.clear()
        self.generation += 1
        self._resources = [r for r in self._resources if (r.group, r.plural) != (group, plural)]

    def __iter__(self) -> Iterator[ResourceInfo]:
        return iter(list(self._resources))

    def lookup(self, group: str, version: str, plural: str) -> ResourceInfo | None:
        """The resource at exactly this group, version and plural, or None."""
        for info in self._resources:
            if (info.group, info.version, info.plural) == (group, version, plural):
                return info
        return None

    def by_kind(self, api_version: str, kind: str) -> ResourceInfo | None:
        """The resource for an object's ``apiVersion`` and ``kind``, or None."""
        for info in self._resources:
            if info.api_version == api_version and info.kind == kind:
                return info
        return None

    def groups(self) -> dict[str, list[str]]:
        """Every non-core group with its versions, in registration order."""
        out: dict[str, list[str]] = {}
        for info in self._resources:
            if info.group and info.version not in out.setdefault(info.group, []):
                out[info.group].append(info.version)
        return out

    def in_group_version(self, group: str, version: str) -> list[ResourceInfo]:
        """The resources of one group version."""
        return [r for r in self._resources if (r.group, r.version) == (group, version)]

    def resolve(self, spec: str | ResourceInfo) -> ResourceInfo:
        """Find a resource by any accepted spelling (see the module docstring).

        :raises StatusFailure: 404 when no served resource matches (or the plural is ambiguous).
        """
        if isinstance(spec, ResourceInfo):
            found = self.lookup(spec.group, spec.version, spec.plural)
            if found is None:
                raise _unknown(str(spec))
            return found
        cached = self._resolved.get(spec)
        if cached is not None:
            return cached
        found = self._resolve_text(spec)
        self._resolved[spec] = found
        return found

    def resolve_optional(self, spec: str | ResourceInfo | None) -> ResourceInfo | None:
        """:meth:`resolve`, with None for None (faults and lookups "on every resource")."""
        return None if spec is None else self.resolve(spec)

    def _resolve_text(self, spec: str) -> ResourceInfo:
        parts = spec.strip("/").split("/")
        if len(parts) == 3:
            found = self.lookup(*parts)
        elif len(parts) == 2:
            found = self.lookup("", parts[0], parts[1])
        elif len(parts) == 1 and "." in spec:
            plural, _, group = spec.partition(".")
            candidates = [r for r in self._resources if (r.plural, r.group) == (plural, group)]
            found = candidates[0] if candidates else None
        elif len(parts) == 1:
            candidates = [
                r for r in self._resources if spec in (r.plural, r.singular_name, *r.short_names)
            ]
            core = [r for r in candidates if not r.group]
            found = (core or candidates)[0] if len(core or candidates) == 1 else None
        else:
            found = None
        if found is None:
            raise _unknown(spec)
        return found
