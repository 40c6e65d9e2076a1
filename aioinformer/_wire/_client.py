"""KubeClient: one connection to an API server, reading and writing plain dicts.

It owns kubernetes_asyncio's ``ApiClient`` (configuration, TLS, the aiohttp session), the
credentials (reloaded before they expire and after a 401) and the one error mapping
(:mod:`aioinformer._wire._http`). The lister-watchers, leases and discovery of aioinformer go
through it, and so can a controller's writes::

    async with aioinformer.connect() as client:
        cm = await client.get("configmaps", "settings", namespace="default")
        await client.patch("configmaps", "settings", {"data": {"mode": "on"}})
        await client.apply("configmaps", desired, field_manager="my-controller")
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self

from anyio.abc import AsyncResource

from .._listwatch import ListOptions, Resource, as_resource, list_result_from_body
from .._objects import KubeObject
from ..errors import TransportError
from ._http import JSON, Transport
from ._kube_asyncio import Credentials, endpoint_of, refresher_credentials
from ._verbs import (
    APPLY,
    PatchType,
    PropagationPolicy,
    apply_body,
    delete_options,
    name_of,
    object_path,
    patch_body,
    write_query,
)

if TYPE_CHECKING:
    from kubernetes_asyncio.client import ApiClient

__all__ = ["KubeClient", "WriteFence"]

#: Asked before a fenced client (:meth:`KubeClient.fenced`) sends a write, with what the write
#: is (``"patch of v1/configmaps 'web'"``); it raises to refuse the write.
WriteFence = Callable[[str], None]

logger = logging.getLogger(__name__)


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

    **Writes** take ``field_manager=`` (who owns the fields written; default: the server
    derives one from the User-Agent, ``aioinformer``) and ``dry_run=True`` (validated and
    answered, nothing stored).

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
        self._api_client = api_client
        self._credentials = refresher_credentials(api_client.configuration, credential_refresher)
        #: The default namespace (the kubeconfig context's, ``"default"`` when unset).
        self.namespace = namespace
        #: Where the configuration came from: ``"server"``, ``"kubeconfig"``,
        #: ``"in-cluster"`` or ``"api_client"`` (built from an ``ApiClient``).
        self.source = "api_client"
        self._transport = Transport(
            endpoint_of(api_client),
            self._credentials,
            connect_timeout=connect_timeout,
            request_timeout=request_timeout,
        )

    def _connected(self, credentials: Credentials, source: str) -> Self:
        """As :func:`~aioinformer.connect` makes it: credentials of the kubeconfig or the
        service account."""
        self._credentials = self._transport.auth = credentials
        self.source = source
        return self

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

    async def _send(
        self,
        method: str,
        verb: str,
        resource: Resource | str,
        namespace: str | None,
        name: str | None = None,
        body: Any = None,
        *,
        subresource: str | None = None,
        query: Mapping[str, str] | None = None,
        content_type: str = JSON,
    ) -> KubeObject:
        res = as_resource(resource)
        path = object_path(
            res,
            namespace=namespace,
            default_namespace=self.namespace,
            name=name,
            body=body if isinstance(body, Mapping) else None,
            subresource=subresource,
        )
        what = " ".join(filter(None, (f"{verb} of {res}", name and repr(name), subresource)))
        return await self._transport.call(
            method, path, what=what, query=query, body=body, content_type=content_type
        )

    def fenced(self, fence: WriteFence) -> KubeClient:
        """A view of this client that calls ``fence(what)`` right before it sends a write
        (``POST``, ``PUT``, ``PATCH``, ``DELETE``: every create, replace, patch, apply and
        delete, status writes included) and sends nothing when ``fence`` raises; reads pass.

        The view shares this client's connection and configuration; closing it closes
        nothing. Controllers that may lose the right to reconcile hand one to their reconciles
        (``ShardedController.client``, ``Controller.client``).
        """
        return _FencedClient(self, fence)

    # -- reading -------------------------------------------------------------------------

    async def get(
        self, resource: Resource | str, name: str, *, namespace: str | None = None
    ) -> KubeObject:
        """The object ``name``.

        :raises NotFoundError: when it does not exist.
        """
        return await self._send("GET", "get", resource, namespace, name)

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
        res = as_resource(resource)
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

    # -- writing: every write takes field_manager= and dry_run= (see the class) -----------

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

        :raises AlreadyExistsError: when the name is taken.
        """
        query = write_query(dry_run=dry_run, field_manager=field_manager)
        return await self._send("POST", "create", resource, namespace, body=body, query=query)

    async def replace(
        self,
        resource: Resource | str,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """Replace (``PUT``) the object named by ``body``'s ``metadata.name``. With the
        ``metadata.resourceVersion`` it was read at, only if nobody changed it since.

        :raises ConflictError: when that ``resourceVersion`` is stale.
        """
        query = write_query(dry_run=dry_run, field_manager=field_manager)
        name = name_of(body, "replace")
        return await self._send("PUT", "replace", resource, namespace, name, body, query=query)

    async def replace_status(
        self,
        resource: Resource | str,
        body: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> KubeObject:
        """:meth:`replace` of the ``status`` subresource: only the status changes."""
        query = write_query(dry_run=dry_run, field_manager=field_manager)
        name = name_of(body, "replace_status")
        return await self._send(
            "PUT", "replace", resource, namespace, name, body, subresource="status", query=query
        )

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

        :param patch: a dict (``MERGE`` and ``STRATEGIC``) or a list of operations (``JSON``).
        :param patch_type: a :class:`PatchType`. Default ``MERGE``.
        """
        query = write_query(dry_run=dry_run, field_manager=field_manager)
        body = patch_body(patch, patch_type)
        return await self._send(
            "PATCH", "patch", resource, namespace, name, body, query=query, content_type=patch_type
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
        """:meth:`patch` of the ``status`` subresource: only the status changes."""
        query = write_query(dry_run=dry_run, field_manager=field_manager)
        body = patch_body(patch, patch_type)
        return await self._send(
            "PATCH", "patch", resource, namespace, name, body,
            subresource="status", query=query, content_type=patch_type,
        )  # fmt: skip

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
        """Server-side apply: ``field_manager`` (required) owns exactly the fields of ``body``
        (the object is created if needed; ``apiVersion`` and ``kind`` are filled in). Fields
        it applied before and leaves out now are removed, unless another manager owns them.

        :param force: take over fields other managers own instead of failing.
        :param subresource: ``"status"`` to apply the status.
        :raises ConflictError: another manager owns a field with another value (the
            ``causes`` name fields and managers).
        """
        if not field_manager:
            raise ValueError("apply needs a field_manager (who owns the applied fields)")
        query = write_query(dry_run=dry_run, field_manager=field_manager, force=force or None)
        name, document = name_of(body, "apply"), apply_body(as_resource(resource), body)
        return await self._send(
            "PATCH", "apply", resource, namespace, name, document,
            subresource=subresource, query=query, content_type=APPLY,
        )  # fmt: skip

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
        """Delete the object ``name``; returns it as last stored (still there, with a
        ``deletionTimestamp``, while finalizers remain) or a ``Status`` of ``Success``.

        :param uid: only if it still has this ``metadata.uid`` (not a new one of that name).
        :param resource_version: only if nobody changed it since this version.
        :param propagation_policy: ``"Orphan"``, ``"Background"`` or ``"Foreground"``: what
            happens to its dependents. Default None: the resource's default.
        :param grace_period_seconds: for pods: seconds to terminate (0: at once).
        :raises ConflictError: when a precondition failed.
        """
        options = delete_options(
            uid=uid,
            resource_version=resource_version,
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            dry_run=dry_run,
        )
        return await self._send("DELETE", "delete", resource, namespace, name, options)

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
        """Delete what the selectors match in a namespace (default: the client's; the API
        has no cluster-wide delete of a namespaced resource); returns the list deleted."""
        query = ListOptions(label_selector=label_selector, field_selector=field_selector)
        options = delete_options(
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            dry_run=dry_run,
        )
        return await self._send(
            "DELETE", "delete", resource, namespace, body=options, query=query.to_query()
        )


class _FencedClient(KubeClient):
    """:meth:`KubeClient.fenced`: the same client (one shared ``__dict__``: the same
    transport, credentials and namespace, now and after changes), every write asked to the
    fence first, at the last moment before the request is handed to the transport."""

    __slots__ = ("_fence",)

    def __init__(self, client: KubeClient, fence: WriteFence) -> None:
        self.__dict__ = client.__dict__  # a view, not a copy
        self._fence = fence

    def __repr__(self) -> str:
        return super().__repr__().replace("<KubeClient", "<KubeClient (fenced)", 1)

    async def aclose(self) -> None:
        """Nothing: the connection belongs to the client this is a view of."""

    async def _send(
        self,
        method: str,
        verb: str,
        resource: Resource | str,
        namespace: str | None,
        name: str | None = None,
        body: Any = None,
        **options: Any,
    ) -> KubeObject:
        if method != "GET":
            named = name
            if named is None and isinstance(body, Mapping):
                named = (body.get("metadata") or {}).get("name")
            self._fence(f"{verb} of {as_resource(resource)}" + (f" {named!r}" if named else ""))
        return await super()._send(method, verb, resource, namespace, name, body, **options)
