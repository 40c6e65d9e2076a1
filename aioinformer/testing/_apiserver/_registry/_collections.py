"""Operations on whole collections of objects: selecting and DELETECOLLECTION."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo
from ._deletion import DeleteOptions
from ._rest_types import Written
from ._storage import Storage

__all__ = ["CollectionHost", "delete_collection", "matching"]


class CollectionHost(Protocol):
    """What DELETECOLLECTION needs of the REST layer (:class:`._rest.RestStorage`)."""

    @property
    def storage(self) -> Storage: ...

    def delete(
        self, info: ResourceInfo, *, name: str, namespace: str, options: DeleteOptions
    ) -> Written: ...


#: A predicate over a whole object (compiled selectors), None for "every object".
Matcher = Callable[[Mapping[str, Any]], bool] | None


def matching(
    storage: Storage, info: ResourceInfo, *, namespace: str, matcher: Matcher
) -> list[KubeObject]:
    """The objects of a resource (in ``namespace``; ``""``: all) that ``matcher`` accepts, in
    storage-key order (namespace, then name). The stored objects themselves: do not mutate."""
    table = storage.objects(info)
    prefix = f"{namespace}/" if namespace and info.namespaced else ""
    return [
        obj
        for key, obj in sorted(table.items())
        if key.startswith(prefix) and (matcher is None or matcher(obj))
    ]


def delete_collection(
    rest: CollectionHost,
    info: ResourceInfo,
    *,
    namespace: str = "",
    matcher: Matcher = None,
    dry_run: Sequence[str] = (),
    options: DeleteOptions | None = None,
) -> list[KubeObject]:
    """Delete every object of a resource (in ``namespace``) that ``matcher`` accepts, one by
    one like the registry's ``DeleteCollection``; returns their final states. An object that
    cannot be deleted (gone meanwhile) is skipped. ``dry_run=("All",)`` deletes nothing;
    ``options`` (every ``DeleteOptions``) win over ``dry_run``."""
    if options is None:
        options = DeleteOptions(dry_run=tuple(dry_run))
    options.check()
    out: list[KubeObject] = []
    for obj in matching(rest.storage, info, namespace=namespace, matcher=matcher):
        meta = obj["metadata"]
        try:
            written = rest.delete(
                info,
                name=meta["name"],
                namespace=str(meta.get("namespace") or ""),
                options=options,
            )
        except StatusFailure:
            continue
        out.append(written.obj)
    return out
