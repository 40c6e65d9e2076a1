"""Aggregated discovery: ``/api`` and ``/apis`` as an ``apidiscovery.k8s.io``
``APIGroupDiscoveryList``, for clients that ask for it.

kubectl (1.30 and later) and client-go send ``Accept: application/json;g=apidiscovery.k8s.io;
v=v2;as=APIGroupDiscoveryList,…,application/json``; a real server answers the first clause it
serves with that ``Content-Type`` (``endpoints/discovery/aggregated/handler.go``), every
group with its versions (preferred first) and per version each resource with its
``responseKind``, ``scope``, ``singularResource``, verbs, short names, categories and
subresources (``/scale`` answers ``autoscaling/v1`` ``Scale``). Resources appear here the
moment they are served, as a CRD's do once ``Established``
(``customresource_discovery_controller.go``). Any other ``Accept`` gets the legacy documents.
"""

from __future__ import annotations

from typing import Any

from .._api._resources import ResourceInfo, ResourceRegistry
from ._subresources import aggregated_entries

__all__ = ["aggregated_media_type", "api_discovery", "apis_discovery"]

_GROUP = "apidiscovery.k8s.io"
_VERSIONS = ("v2", "v2beta1")
_SUB_VERBS = ["get", "patch", "update"]
#: The built-in resources in the ``all`` category (``kubectl get all``), as their registries'
#: ``Categories()`` declare.
_ALL = {
    ("", "pods"),
    ("", "replicationcontrollers"),
    ("", "services"),
    ("apps", "daemonsets"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("autoscaling", "horizontalpodautoscalers"),
    ("batch", "cronjobs"),
    ("batch", "jobs"),
}


def aggregated_media_type(accept: str | None) -> str | None:
    """The aggregated ``Content-Type`` the ``Accept`` header asks for first, or None when it
    prefers (or only takes) the legacy documents."""
    for clause in (accept or "").split(","):
        media, *params = (part.strip() for part in clause.split(";"))
        values = dict(p.partition("=")[::2] for p in params)
        if media in ("application/json", "*/*", "application/*") and not values.get("g"):
            return None
        if (
            media == "application/json"
            and values.get("g") == _GROUP
            and values.get("as") == "APIGroupDiscoveryList"
            and values.get("v") in _VERSIONS
        ):
            return f"application/json;g={_GROUP};v={values['v']};as=APIGroupDiscoveryList"
    return None


def _resource(info: ResourceInfo) -> dict[str, Any]:
    kind = {"group": info.group, "version": info.version, "kind": info.kind}
    entry: dict[str, Any] = {
        "resource": info.plural,
        "responseKind": kind,
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "singularResource": info.singular_name,
        "verbs": list(info.verbs),
    }
    if info.short_names:
        entry["shortNames"] = list(info.short_names)
    categories = getattr(info.custom, "categories", ())
    if info.custom is None and (info.group, info.plural) in _ALL:
        categories = ("all",)
    if categories:
        entry["categories"] = list(categories)
    subresources = []
    for name in info.subresources:
        response = kind
        if name == "scale":
            response = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
        subresources.append({"subresource": name, "responseKind": response, "verbs": _SUB_VERBS})
    subresources.extend(aggregated_entries(info))
    if subresources:
        entry["subresources"] = subresources
    return entry


def _group(registry: ResourceRegistry, name: str, versions: list[str]) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": None}
        if name
        else {"creationTimestamp": None},
        "versions": [
            {
                "version": version,
                "resources": [_resource(i) for i in registry.in_group_version(name, version)],
                "freshness": "Current",
            }
            for version in versions
        ],
    }


def _document(version: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"{_GROUP}/{version}",
        "metadata": {},
        "items": items,
    }


def _version_of(media_type: str) -> str:
    return "v2beta1" if ";v=v2beta1;" in media_type else "v2"


def api_discovery(registry: ResourceRegistry, media_type: str) -> dict[str, Any]:
    """``/api``: the core group."""
    return _document(_version_of(media_type), [_group(registry, "", ["v1"])])


def apis_discovery(registry: ResourceRegistry, media_type: str) -> dict[str, Any]:
    """``/apis``: every other group, in the order ``/apis`` lists them."""
    groups = [_group(registry, name, vs) for name, vs in registry.groups().items()]
    return _document(_version_of(media_type), groups)
