"""The OpenAPI documents of the served resources (``/openapi/v2``, ``/openapi/v3/...``).

:mod:`._openapi` builds what a real API server publishes (kubectl reads it for ``explain``,
for server-side field validation and for client-side apply's patch strategies); this module
describes the served resources to it and rebuilds the documents when a resource is
registered.
"""

from __future__ import annotations

from .._api._resources import ResourceInfo, ResourceRegistry
from .._registry._writerules import kind_of
from .._schema._published import schemas
from ._openapi import Endpoint, OpenAPIDocuments

__all__ = ["ServedDocuments", "endpoint"]


def endpoint(info: ResourceInfo) -> Endpoint:
    """How the documents describe one served resource."""
    return Endpoint(
        info.group,
        info.version,
        info.plural,
        info.kind,
        info.namespaced,
        subresources=info.subresources,
        custom=not kind_of(info).builtin,
        schema=None if info.custom is None else info.custom.version(info.version).openapi,
    )


class ServedDocuments:
    """The documents of a registry's resources, rebuilt when the registry changes."""

    def __init__(self, registry: ResourceRegistry) -> None:
        self._registry = registry
        self._generation = -1
        self._documents: OpenAPIDocuments | None = None

    @property
    def documents(self) -> OpenAPIDocuments:
        """The current documents."""
        if self._documents is None or self._generation != self._registry.generation:
            self._generation = self._registry.generation
            self._documents = OpenAPIDocuments(
                [endpoint(info) for info in self._registry], version=schemas().git_version
            )
        return self._documents
