"""Resolving resource names the way kubectl does (``pods``, ``po``, ``deployments.apps``, ...).

Uses the API server's discovery documents (``/api``, ``/apis`` and each group version's
resource list), so custom resources resolve too.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .._listwatch import Resource
from ..errors import InformerError, NotFoundError

if TYPE_CHECKING:
    from ._client import KubeClient

__all__ = ["discover_resources", "group_version_resources", "resolve_resource"]

logger = logging.getLogger(__name__)


def _resources_of(group: str, version: str, document: Any) -> list[tuple[Resource, set[str]]]:
    found: list[tuple[Resource, set[str]]] = []
    for entry in document.get("resources") or []:
        plural = entry.get("name", "")
        if not plural or "/" in plural:  # skip subresources (pods/status, ...)
            continue
        kind = entry.get("kind") or None
        names = {plural, entry.get("singularName") or "", *(entry.get("shortNames") or [])}
        if kind:
            names.add(kind.lower())
        resource = Resource(
            group, version, plural, kind=kind, namespaced=bool(entry.get("namespaced", True))
        )
        found.append((resource, {n for n in names if n}))
    return found


async def _get(client: KubeClient, path: str) -> dict[str, Any]:
    return await client._transport.call("GET", path, what=f"GET {path}")


async def discover_resources(client: KubeClient) -> list[tuple[Resource, set[str]]]:
    """Every listable resource the server offers (preferred versions), with the names that
    refer to it (plural, singular, short names, lower-case kind).

    :raises ApiError: when ``/api/v1`` or ``/apis`` answer an error.
    :raises TransportError: when they do not answer.
    """
    found = _resources_of("", "v1", await _get(client, "/api/v1"))
    groups = await _get(client, "/apis")
    for group in groups.get("groups") or []:
        name = group.get("name", "")
        preferred = (group.get("preferredVersion") or {}).get("version")
        if not name or not preferred:
            continue
        try:
            document = await _get(client, f"/apis/{name}/{preferred}")
        except InformerError as exc:  # an aggregated API that is down must not break the rest
            logger.debug("discovery of %s/%s failed: %s", name, preferred, exc)
            continue
        found.extend(_resources_of(name, preferred, document))
    return found


async def resolve_resource(client: KubeClient, name: str) -> Resource:
    """The resource a kubectl-style name refers to.

    Accepts ``pods``, ``pod``, ``po``, ``Pod``, ``deployments.apps``, ``v1/pods`` and
    ``apps/v1/deployments``. The core group wins a tie, like kubectl.

    :raises NotFoundError: when the server has no such resource.
    """
    wanted = name.strip()
    if wanted.count("/") in (1, 2):
        parsed = Resource.parse(wanted)
        try:
            discovered = await discover_resources(client)
        except InformerError as exc:  # an explicit group/version/plural needs no discovery
            logger.debug("discovery failed (%s); using %s as given", exc, parsed)
            return parsed
        for resource, _ in discovered:
            if resource == parsed:
                return resource
        return parsed
    lowered = wanted.lower()
    short, _, group = lowered.partition(".")
    candidates = [
        resource
        for resource, names in await discover_resources(client)
        if short in names
        and (not group or resource.group == group or resource.group.startswith(group + "."))
    ]
    if not candidates:
        raise NotFoundError(
            code=404,
            reason="NotFound",
            message=f'the server doesn\'t have a resource type "{name}"',
        )
    candidates.sort(key=lambda r: (r.group != "", r.group))
    return candidates[0]


async def group_version_resources(
    client: KubeClient, group: str, version: str
) -> list[Resource] | None:
    """The resources one group version serves (subresources left out), or None when the
    server does not serve that group version (404), as client-go's
    ``ServerResourcesForGroupVersion`` tells.

    :raises ApiError: for any other error answer.
    :raises TransportError: when the server does not answer.
    """
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    try:
        document = await _get(client, path)
    except NotFoundError:
        return None
    return [resource for resource, _ in _resources_of(group, version, document)]
