"""Loading YAML manifests into a fake API server (multi-document, ``kind: List`` aware)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._api import _status as status
from ._api._objects import KubeObject
from ._boundary import ApiError, NotFoundError, client_error

if TYPE_CHECKING:
    from ._server import FakeApiServer

__all__ = [
    "create_manifest_objects",
    "iter_manifest_objects",
    "load_manifests",
    "read_manifest_objects",
]


def iter_manifest_objects(text: str) -> Iterator[KubeObject]:
    """Every object in a multi-document YAML text; ``kind: List`` documents are flattened.

    :raises yaml.YAMLError: when the text is not YAML.
    :raises BadRequestError: for a document that is not an object.
    """
    import yaml

    for document in yaml.safe_load_all(text):
        if document is None:
            continue
        if not isinstance(document, dict):
            failure = status.bad_request(f"a manifest document is not an object: {document!r}")
            raise client_error(failure)
        if str(document.get("kind", "")).endswith("List") and isinstance(
            document.get("items"), list
        ):
            yield from document["items"]
        else:
            yield document


def read_manifest_objects(path: str | Path) -> list[KubeObject]:
    """The objects of a manifest file (blocking: reads the file).

    :raises OSError: when the file cannot be read.
    :raises yaml.YAMLError: when it is not YAML.
    :raises BadRequestError: for a document that is not an object.
    """
    return list(iter_manifest_objects(Path(path).read_text(encoding="utf-8")))


def _describe(obj: Any) -> str:
    if not isinstance(obj, dict):
        return repr(obj)
    kind = obj.get("kind") or "an object without kind"
    name = (obj.get("metadata") or {}).get("name") or "without a name"
    return f"{kind} {name!r}" if isinstance(name, str) else f"{kind} {name}"


async def create_manifest_objects(
    server: FakeApiServer, objects: Sequence[KubeObject], *, source: str = "manifest"
) -> list[KubeObject]:
    """Create ``objects`` in ``server`` in order (namespaces are created as needed).

    :param source: names the objects' origin in error messages (e.g. the file).
    :returns: the created objects.
    :raises ApiError: the server's refusal of an object (``NotFoundError`` for a kind it does
        not serve), its message prefixed with the source, the object's position and name.
    """
    created: list[KubeObject] = []
    namespaces = server.resource("v1/namespaces")
    for position, obj in enumerate(objects, start=1):
        try:
            if not isinstance(obj, dict):
                raise client_error(status.bad_request("a manifest item is not an object"))
            info = server.resource_for_kind(
                str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
            )
            meta: dict[str, Any] = obj.get("metadata") or {}
            namespace = str(meta.get("namespace") or "default") if info.namespaced else ""
            if namespace:
                try:
                    server.objects.get(namespaces, namespace)
                except NotFoundError:
                    server.objects.create(namespaces, {"metadata": {"name": namespace}})
            created.append(server.objects.create(info, obj, namespace=namespace))
        except ApiError as exc:
            raise type(exc)(
                code=exc.code,
                reason=exc.reason,
                message=f"{source}, object {position} ({_describe(obj)}): {exc.message}",
                status=exc.status,
                retry_after=exc.retry_after,
            ) from exc
    return created


async def load_manifests(server: FakeApiServer, path: str | Path) -> list[KubeObject]:
    """Create every object of a manifest file in ``server`` (namespaces are created as needed).

    :returns: the created objects.
    :raises NotFoundError: an object whose ``apiVersion``/``kind`` the server does not serve.
    :raises ApiError: any other refusal; messages name the file and the object.
    """
    objects = await asyncio.to_thread(read_manifest_objects, path)
    return await create_manifest_objects(server, objects, source=str(path))
