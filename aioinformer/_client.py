"""KubeClient: one connection to an API server, reading and writing plain dicts.

It owns kubernetes_asyncio's ``ApiClient`` (configuration, TLS, the aiohttp session), the
credentials (reloaded before they expire and after a 401) and the one error mapping
(:mod:`aioinformer._http`). The lister-watchers, leases and discovery of aioinformer go through
it, and so can a controller's writes::

    async with aioinformer.connect() as client:
        cm = await client.get("configmaps", "settings", namespace="default")
        await client.patch("configmaps", "settings", {"data": {"mode": "on"}})
        await client.apply("configmaps", desired, field_manager="my-controller")
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from anyio.abc import AsyncResource

from ._http import Transport
from ._kube_asyncio import Credentials, endpoint_of, refresher_credentials
from .errors import TransportError
from .factory import resolve_builtin_resource
from .listwatch import ListOptions, Resource, list_result_from_body
from .objects import KubeObject

if TYPE_CHECKING:
    from kubernetes_asyncio.client import ApiClient

__all__ = ["KubeClient", "PatchType", "PropagationPolicy", "delete_options"]

logger = logging.getLogger(__name__)

#: The content type of a server-side apply request (JSON is YAML too).
_APPLY = "application/apply-patch+yaml"

#: What happens to the dependents of a deleted object (``propagationPolicy``).
PropagationPolicy = Literal["Orphan", "Background", "Foreground"]


class PatchType(StrEnum):
    """How :meth:`KubeClient.patch` merges its body into the object (server-side apply is
    :meth:`KubeClient.apply`)."""

    #: RFC 7386 JSON merge patch: maps merge, anything else (lists included) is replaced,
    #: ``None`` deletes a key. Works on every resource.
    MERGE = "application/merge-patch+json"
    #: RFC 6902 JSON patch: a list of operations (``{"op": "replace", "path": ..., ...}``).
    JSON = "application/json-patch+json"
    #: Kubernetes' strategic merge patch: lists merge by their merge key (containers by
    #: name, ...), as ``kubectl patch`` does. Built-in resources only (a custom resource
    #: answers 415, :class:`~aioinformer.errors.UnsupportedMediaTypeError`).
    STRATEGIC = "application/strategic-merge-patch+json"


def _name_of(body: Mapping[str, Any], verb: str) -> str:
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        raise ValueError(f"{verb}: the body has no metadata.name")
    return name


def _write_query(
    *, dry_run: bool, field_manager: str | None, force: bool | None = None
) -> dict[str, str]:
    query: dict[str, str] = {}
    if dry_run:
        query["dryRun"] = "All"
    if field_manager:
        query["fieldManager"] = field_manager
    if force is not None:
        query["force"] = "true" if force else "false"
    return query


def delete_options(
    *,
    uid: str | None = None,
    resource_version: str | None = None,
    propagation_policy: PropagationPolicy | None = None,
    grace_period_seconds: int | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """The ``DeleteOptions`` body of a delete (apimachinery's ``meta/v1``): preconditions on
    ``uid`` and ``resourceVersion``, ``propagationPolicy``, ``gracePeriodSeconds``, ``dryRun``.
    """
    options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    preconditions = {
        key: value
        for key, value in (("uid", uid), ("resourceVersion", resource_version))
        if value is not None
    }
    if preconditions:
        options["preconditions"] = preconditions
    if propagation_policy is not None:
        options["propagationPolicy"] = propagation_policy
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if dry_run:
        options["dryRun"] = ["All"]
    return options


class KubeClient(AsyncResource):
    """A connection to one API server: plain-dict reads and writes, and the HTTP path of every
    lister-watcher, lease and discovery request.

    Usually made by :func:`aioinformer.connect` (kubeconfig, in-cluster or a server URL)::

        async with aioinformer.connect() as client:
            pod = await client.get("pods", "web-1")

    An async resource (anyio's ``AsyncResource``): ``async with`` returns it and closes it at
    the end of the block; :meth:`aclose` (idempotent) closes the HTTP session. Requests after
    that raise :class:`~aioinformer.errors.LifecycleError`.

    **Addressing.** ``resource`` is a :class:`~aioinformer.Resource`, kubectl's name of a
    built-in resource (``"pods"``, ``"deploy"``, ``"deployments.apps"``), ``"v1/pods"`` or
    ``"group/version/plural"`` (a cluster-scoped custom resource needs
    ``Resource(..., namespaced=False)``). For one object of a namespaced resource,
    ``namespace=None`` means the body's ``metadata.namespace`` (writes), else the client's
    :attr:`namespace` (the kubeconfig context's, like kubectl).

    **Errors.** An error status raises the most specific
    :class:`~aioinformer.errors.ApiError` (``NotFoundError``, ``AlreadyExistsError``,
    ``ConflictError``, ``InvalidError`` with its ``causes``, ``ForbiddenError``, ...); no
    answer raises :class:`~aioinformer.errors.TransportError` (``ConnectionRefused``,
    ``TransportTimeoutError``). A 401 reloads the credentials and sends the request once more.

    :param api_client: kubernetes_asyncio's ``ApiClient`` (configuration, TLS, session); the
        client owns it and closes it in :meth:`aclose`.
    :param namespace: the default namespace. Default ``"default"``.
    :param credential_refresher: awaited to reload the credentials after a 401 (for an
        ``ApiClient`` you configured yourself; :func:`~aioinformer.connect` sets this up).
        Default None: only the configuration's own ``refresh_api_key_hook``, if any.
    :param connect_timeout: seconds to get a connection: a free one from the pool
        (``configuration.connection_pool_maxsize``, 100 by default; every running watch holds
        one), then established. Default 30.
    :param request_timeout: seconds without a byte before a response is abandoned (watches
        use their own idle timeout). Default 60.
    """

    def __init__(
        self,
        api_client: ApiClient,
        *,
        namespace: str = "default",
        credential_refresher: Callable[[], Awaitable[None]] | None = None,
        connect_timeout: float = 30.0,
        request_timeout: float = 60.0,
    ) -> None:
        self._setup(
            api_client,
            refresher_credentials(api_client.configuration, credential_refresher),
            namespace=namespace,
            source="api_client",
            connect_timeout=connect_timeout,
            request_timeout=request_timeout,
        )

    @classmethod
    def _connected(
        cls, api_client: ApiClient, credentials: Credentials, *, namespace: str, source: str
    ) -> KubeClient:
        """The client :func:`~aioinformer.connect` builds (credentials from the kubeconfig or
        the service account)."""
        client = cls.__new__(cls)
        client._setup(
            api_client,
            credentials,
            namespace=namespace,
            source=source,
            connect_timeout=30.0,
            request_timeout=60.0,
        )
        return client

    def _setup(
        self,
        api_client: ApiClient,
        credentials: Credentials,
        *,
        namespace: str,
        source: str,
        connect_timeout: float,
        request_timeout: float,
    ) -> None:
        self._api_client = api_client
        self._credentials = credentials
        #: The default namespace (the kubeconfig context's, ``"default"`` when unset).
        self.namespace = namespace
        #: Where the configuration came from: ``"server"``, ``"kubeconfig"``,
        #: ``"in-cluster"`` or ``"api_client"`` (built from an ``ApiClient``).
        self.source = source
        self._transport = Transport(
            endpoint_of(api_client),
            credentials,
            connect_timeout=connect_timeout,
            request_timeout=request_timeout,
        )

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<KubeClient {self.host} namespace={self.namespace!r} [{state}]>"

    # -- lifecycle -----------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The API server's URL."""
        return self._transport.endpoint.host

    @property
    def api_client(self) -> ApiClient:
        """kubernetes_asyncio's ``ApiClient`` underneath (for its generated API classes)."""
        return self._api_client

    @property
    def closed(self) -> bool:
        """True once :meth:`aclose` was called."""
        return self._transport.closed

    async def refresh_credentials(self) -> None:
        """Reload the credentials now (an exec plugin runs again, token files are re-read).

        Requests do this by themselves after a 401; the reflector calls it through its
        lister-watcher.
        """
        await self._credentials.refresh()

    async def aclose(self) -> None:
        """Close the HTTP session (idempotent)."""
        if self._transport.closed:
            return
        self._transport.close()
        await self._api_client.close()

    # -- addressing ----------------------------------------------------------------------

    def _path(
        self,
        resource: Resource | str,
        *,
        namespace: str | None,
        name: str | None = None,
        body: Mapping[str, Any] | None = None,
        subresource: str | None = None,
    ) -> tuple[Resource, str]:
        res = resource if isinstance(resource, Resource) else resolve_builtin_resource(resource)
        if res.namespaced and not namespace:
            metadata = body.get("metadata") if body is not None else None
            given = metadata.get("namespace") if isinstance(metadata, Mapping) else None
            namespace = given if isinstance(given, str) and given else self.namespace
        path = res.path(namespace=namespace, name=name)  # ValueError: cluster-scoped
        return res, f"{path}/{subresource}" if subresource else path

    # -- reading -------------------------------------------------------------------------

    async def get(
        self, resource: Resource | str, name: str, *, namespace: str | None = None
    ) -> KubeObject:
        """The object ``name``.

        :raises NotFoundError: when it does not exist.
        """
        res, path = self._path(resource, namespace=namespace, name=name)
        return await self._transport.call("GET", path, what=f"get of {res} {name!r}")

    async def list(
        self,
        resource: Resource | str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> KubeObject:
        """One page of objects: the ``*List`` object as the server sent it, with ``items``
        (each given its ``kind`` and ``apiVersion``) and ``metadata.continue`` when more pages
        follow (pass it as ``continue_token``).

        :param namespace: one namespace; None: every namespace (the whole collection).
        :param label_selector: e.g. ``"app=web,tier!=db"``.
        :param field_selector: e.g. ``"spec.nodeName=node-1"``.
        :param limit: at most this many items (None: all).
        :param continue_token: the ``metadata.continue`` of the previous page.
        :param resource_version: ``"0"`` (any, from the watch cache), a version, or None (the
            most recent).
        :param resource_version_match: ``"NotOlderThan"`` or ``"Exact"``.
        :raises ExpiredError: when ``continue_token`` is too old (410).
        """
        res = resource if isinstance(resource, Resource) else resolve_builtin_resource(resource)
        options = ListOptions(
            resource_version=resource_version,
            resource_version_match=resource_version_match,
            limit=limit,
            continue_token=continue_token,
            label_selector=label_selector,
            field_selector=field_selector,
        )
        body = await self._transport.call(
            "GET", res.path(namespace=namespace), what=f"list of {res}", query=options.to_query()
        )
        try:
            list_result_from_body(body)  # fills in each item's kind and apiVersion
        except ValueError as exc:
            raise TransportError(f"list of {res}: the answer is not a list ({exc})") from None
        return body

    # -- writing -------------------------------------------------------------------------

    async def create(
        self,
        resource: Resource | str,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """Create an object; returns it as stored (with ``uid``, ``resourceVersion``, ...).

        :param field_manager: the manager of the fields written (default: the server derives
            one from the User-Agent, ``aioinformer``).
        :param dry_run: validate and answer as if created, but store nothing.
        :raises AlreadyExistsError: when the name is taken.
        :raises InvalidError: when the object is invalid.
        """
        res, path = self._path(resource, namespace=namespace, body=body)
        query = _write_query(dry_run=dry_run, field_manager=field_manager)
        return await self._transport.call(
            "POST", path, what=f"create of {res}", query=query, body=body
        )

    async def replace(
        self,
        resource: Resource | str,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """Replace the object named by ``body``'s ``metadata.name`` (an update, ``PUT``).

        With ``metadata.resourceVersion`` in the body (as read), the update happens only if
        nobody changed the object since: optimistic concurrency.

        :raises ConflictError: when the ``resourceVersion`` is stale.
        :raises NotFoundError: when the object does not exist.
        """
        return await self._put(resource, body, namespace, field_manager, dry_run, None)

    async def replace_status(
        self,
        resource: Resource | str,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """Replace the ``status`` of the object named by ``body`` (the ``/status``
        subresource: the server keeps everything but the status as it is). See
        :meth:`replace`."""
        return await self._put(resource, body, namespace, field_manager, dry_run, "status")

    async def _put(
        self,
        resource: Resource | str,
        body: Mapping[str, Any],
        namespace: str | None,
        field_manager: str | None,
        dry_run: bool,
        subresource: str | None,
    ) -> KubeObject:
        name = _name_of(body, "replace")
        res, path = self._path(
            resource, namespace=namespace, name=name, body=body, subresource=subresource
        )
        query = _write_query(dry_run=dry_run, field_manager=field_manager)
        what = f"replace of {res} {name!r}" + (f" {subresource}" if subresource else "")
        return await self._transport.call("PUT", path, what=what, query=query, body=body)

    async def patch(
        self,
        resource: Resource | str,
        name: str,
        patch: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """Patch the object ``name``; returns it as stored.

        :param patch: a dict (merge and strategic patches) or a list of operations (JSON
            patch).
        :param patch_type: :class:`PatchType` ``MERGE`` (default), ``STRATEGIC`` or ``JSON``.
        :raises NotFoundError: when the object does not exist.
        :raises ValueError: for a list with a merge patch type, or a dict with ``JSON``.
        """
        return await self._patch(
            resource, name, patch, namespace, patch_type, field_manager, dry_run, None
        )

    async def patch_status(
        self,
        resource: Resource | str,
        name: str,
        patch: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """Patch the ``status`` of the object ``name`` (the ``/status`` subresource). See
        :meth:`patch`."""
        return await self._patch(
            resource, name, patch, namespace, patch_type, field_manager, dry_run, "status"
        )

    async def _patch(
        self,
        resource: Resource | str,
        name: str,
        patch: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        namespace: str | None,
        patch_type: PatchType,
        field_manager: str | None,
        dry_run: bool,
        subresource: str | None,
    ) -> KubeObject:
        patch_type = PatchType(patch_type)
        if (patch_type is PatchType.JSON) == isinstance(patch, Mapping):
            wanted = "a list of operations" if patch_type is PatchType.JSON else "a dict"
            raise ValueError(f"a {patch_type.name} patch is {wanted}")
        res, path = self._path(resource, namespace=namespace, name=name, subresource=subresource)
        query = _write_query(dry_run=dry_run, field_manager=field_manager)
        what = f"patch of {res} {name!r}" + (f" {subresource}" if subresource else "")
        body = patch if isinstance(patch, Mapping) else builtins.list(patch)
        return await self._transport.call(
            "PATCH", path, what=what, query=query, body=body, content_type=patch_type.value
        )

    async def apply(
        self,
        resource: Resource | str,
        body: Mapping[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        subresource: Literal["status"] | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """Server-side apply: make ``field_manager`` own exactly the fields of ``body``
        (creating the object if needed); returns it as stored.

        Give the whole intent of this manager every time: fields it applied before and leaves
        out now are removed (unless another manager owns them too). ``apiVersion`` and
        ``kind`` are filled in from ``resource`` when the body has none.

        :param field_manager: who owns the fields (required; e.g. the controller's name).
        :param force: take over fields other managers own instead of failing.
        :param subresource: ``"status"`` to apply the status.
        :raises ConflictError: when another manager owns a field with another value (the
            ``causes`` name the fields and managers); ``force=True`` takes them over.
        """
        if not field_manager:
            raise ValueError("apply needs a field_manager (who owns the applied fields)")
        name = _name_of(body, "apply")
        res, path = self._path(
            resource, namespace=namespace, name=name, body=body, subresource=subresource
        )
        document = dict(body)
        document.setdefault("apiVersion", res.api_version)
        if res.kind:
            document.setdefault("kind", res.kind)
        query = _write_query(dry_run=dry_run, field_manager=field_manager, force=force or None)
        return await self._transport.call(
            "PATCH",
            path,
            what=f"apply of {res} {name!r}",
            query=query,
            body=document,
            content_type=_APPLY,
        )

    async def delete(
        self,
        resource: Resource | str,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """Delete the object ``name``.

        :param uid: delete only if the object still has this ``metadata.uid`` (not a new
            object of the same name).
        :param resource_version: delete only if nobody changed it since this version.
        :param propagation_policy: ``"Orphan"``, ``"Background"`` or ``"Foreground"``: what
            happens to its dependents. Default None: the resource's default.
        :param grace_period_seconds: for pods: seconds to terminate (0: at once).
        :returns: the object as last stored (still there, with a ``deletionTimestamp``, while
            finalizers remain), or a ``Status`` of ``Success`` for resources that answer one.
        :raises NotFoundError: when it does not exist.
        :raises ConflictError: when a precondition failed.
        """
        res, path = self._path(resource, namespace=namespace, name=name)
        options = delete_options(
            uid=uid,
            resource_version=resource_version,
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            dry_run=dry_run,
        )
        return await self._transport.call(
            "DELETE", path, what=f"delete of {res} {name!r}", body=options
        )

    async def delete_collection(
        self,
        resource: Resource | str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """Delete every object of a namespace (or of a cluster-scoped resource) that the
        selectors match; returns the list of what was deleted.

        :param namespace: default: the client's :attr:`namespace` (the API has no
            cluster-wide delete of a namespaced resource).
        """
        res, path = self._path(resource, namespace=namespace)
        query = ListOptions(label_selector=label_selector, field_selector=field_selector)
        options = delete_options(
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            dry_run=dry_run,
        )
        return await self._transport.call(
            "DELETE", path, what=f"delete of {res}", query=query.to_query(), body=options
        )
