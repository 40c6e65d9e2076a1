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
    :param categories: the categories discovery lists (``all`` for ``kubectl get all``).
    :param storage_version: for a built-in resource also served in an older version: the
        version its objects are stored in (``v2`` for ``autoscaling/v1`` HPAs); ``""``: this
        one.
    :param custom: the serving view of the CRD that defines the resource (a
        :class:`._crd._kind.CustomKind`; None otherwise). Every version of such a resource
        shares one table of objects, kept in the storage version.
    :param stored_as: ``(group, version, plural)`` of the built-in resource whose stored
        objects these are, converted on every read and write (events.k8s.io/v1 ``events``
        are the core/v1 ``events``); None: their own table.
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
    categories: tuple[str, ...] = ()
    storage_version: str = ""
    custom: Any = field(default=None, compare=False, repr=False)
    stored_as: tuple[str, str, str] | None = None

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
    def converted(self) -> bool:
        """Whether reads convert stored objects (a custom resource's versions, a built-in
        resource served in a version other than its storage version, or another resource's
        objects under new names: events.k8s.io/v1 ``events``)."""
        return self.custom is not None or bool(self.storage_version) or self.stored_as is not None

    @property
    def stored(self) -> bool:
        """Whether objects are kept: False for the review resources, whose only verb is
        ``create`` and whose answer is computed (``SelfSubjectAccessReview``...)."""
        return self.verbs != ("create",)

    @property
    def singular_name(self) -> str:
        """The singular name for discovery."""
        return self.singular or self.kind.lower()

    def __str__(self) -> str:
        return f"{self.api_version}/{self.plural}"


def _storage_of(spec: str) -> tuple[str, str, str] | None:
    """``"v1/events"`` → ``("", "v1", "events")``; ``""`` → None."""
    if not spec:
        return None
    parts = spec.split("/")
    return ("", parts[0], parts[1]) if len(parts) == 2 else (parts[0], parts[1], parts[2])


def _served(row: BuiltinResource, version: str = "") -> ResourceInfo:
    return ResourceInfo(
        row.group,
        version or row.version,
        row.plural,
        row.kind,
        row.namespaced,
        singular=row.singular,
        short_names=row.short_names,
        selectable_fields=row.selectable_fields,
        delete_returns_object=row.delete_returns_object,
        verbs=row.verbs,
        subresources=tuple(s for s in row.subresources if s in SERVED_SUBRESOURCES),
        categories=row.categories,
        storage_version=row.version if version else "",
        stored_as=_storage_of(row.stored_as),
    )


#: The resources every fake API server serves: the package's table of built-in resources
#: (:mod:`aioinformer._builtin_resources`) in each version served, CustomResourceDefinitions
#: included (creating one serves its resource: :mod:`._crd._writes`).
BUILTIN_RESOURCES: tuple[ResourceInfo, ...] = tuple(
    info
    for row in TABLE
    for info in (_served(row), *(_served(row, version) for version in row.also_served))
)


#: The order of the built-in groups in ``/apis`` (kube-apiserver sorts its APIServices by
#: group priority, ``pkg/controlplane/apiserver/aggregator.go``); other groups come after, in
#: the order they were registered.
GROUP_ORDER = (
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
)
_GROUP_RANK = {name: rank for rank, name in enumerate(GROUP_ORDER)}


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
        """Every non-core group with its versions: the built-in groups in the real server's
        order (:data:`GROUP_ORDER`), then the others in registration order."""
        out: dict[str, list[str]] = {}
        for info in self._resources:
            if info.group and info.version not in out.setdefault(info.group, []):
                out[info.group].append(info.version)
        ordered = sorted(out, key=lambda name: _GROUP_RANK.get(name, len(GROUP_ORDER)))
        return {name: out[name] for name in ordered}

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
