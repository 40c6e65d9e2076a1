"""Loading YAML manifests into a fake API server (multi-document, ``kind: List`` aware)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError
from ..objects import KubeObject
from . import status

if TYPE_CHECKING:
    from .server import FakeApiServer

__all__ = ["iter_manifest_objects", "load_manifests"]


def iter_manifest_objects(text: str) -> Iterator[KubeObject]:
    """Every object in a multi-document YAML text; ``kind: List`` documents are flattened."""
    import yaml

    for document in yaml.safe_load_all(text):
        if document is None:
            continue
        if not isinstance(document, dict):
            raise status.bad_request(f"a manifest document is not an object: {document!r}")
        if str(document.get("kind", "")).endswith("List") and isinstance(
            document.get("items"), list
        ):
            yield from document["items"]
        else:
            yield document


async def load_manifests(server: FakeApiServer, path: str | Path) -> list[KubeObject]:
    """Create every object of a manifest file in ``server`` (namespaces are created as needed).

    :returns: the created objects.
    :raises NotFoundError: an object whose ``apiVersion``/``kind`` the server does not serve.
    """
    created: list[KubeObject] = []
    namespaces = server.resource("v1/namespaces")
    text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
    for obj in iter_manifest_objects(text):
        info = server.resource_for_kind(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        meta: dict[str, Any] = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default") if info.namespaced else ""
        if namespace:
            try:
                await server.get(namespaces, namespace)
            except NotFoundError:
                await server.create(namespaces, {"metadata": {"name": namespace}})
        created.append(await server.create(info, obj, namespace=namespace))
    return created
