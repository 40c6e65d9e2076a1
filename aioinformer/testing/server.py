"""``FakeApiServer``: a protocol-faithful Kubernetes API server on 127.0.0.1 for tests.

It speaks the real REST protocol over real HTTP, so kubernetes_asyncio, aioinformer and
kubectl talk to it unchanged::

    async with FakeApiServer() as server:
        await server.create("pods", {"metadata": {"name": "p", "namespace": "default"}})
        async with server.api_client() as api:
            pods = await CoreV1Api(api).list_namespaced_pod("default")

The resource version is one global integer, like an etcd revision. The in-process object
API (``create``, ``get``, ``update``, ``patch``, ``delete``, ``list_objects``...) mutates
exactly like HTTP writes: same RVs, same watch events, same errors (raised as
:mod:`aioinformer.errors` exceptions). Objects passed in and handed out are copies.

Faults, for tests of what a client does when things go wrong: :meth:`~FakeApiServer.drop_watches`,
:meth:`~FakeApiServer.stall_watches`, :meth:`~FakeApiServer.fail_next`,
:meth:`~FakeApiServer.compact`, :meth:`~FakeApiServer.inject_malformed_line`,
:meth:`~FakeApiServer.inject_raw_line`, :meth:`~FakeApiServer.inject_watch_error`,
:meth:`~FakeApiServer.restart`, :meth:`~FakeApiServer.set_latency`,
:meth:`~FakeApiServer.stop_listening` / :meth:`~FakeApiServer.start_listening`.
The standalone server (``aioinformer fake-apiserver``) exposes them over HTTP too, see
:mod:`aioinformer.testing.admin`.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

import orjson
from aiohttp import web

from ..errors import LifecycleError
from ..objects import KubeObject
from ._shard import ShardingGate
from .admin import AdminApi
from .faults import FailRule, Faults
from .http_api import ApiHandler
from .listing import compile_matcher
from .request_log import RequestLog, RequestRecord
from .resources import ResourceInfo, ResourceRegistry
from .status import status_error
from .storage import Storage
from .watch import WatchHub

if TYPE_CHECKING:
    from kubernetes_asyncio.client import ApiClient, Configuration

__all__ = ["FakeApiServer"]

#: The line :meth:`FakeApiServer.inject_malformed_line` sends.
MALFORMED_LINE = b'{"type":"MODIFIED","object":{"metadata":{"name":\n'

_READY, _STARTED, _CLOSED = "ready", "started", "closed"
_T = TypeVar("_T")


def _copy(obj: _T) -> _T:
    """A deep copy (JSON round trip: objects are JSON anyway, and it is fast)."""
    return cast(_T, orjson.loads(orjson.dumps(obj)))


class FakeApiServer:
    """An in-process Kubernetes API server for tests (an async context manager).

    :param host: the address to listen on.
    :param port: the port; 0 (the default) picks a free one, kept across
        :meth:`stop_listening` / :meth:`start_listening`.
    :param history_limit: watch events kept per resource for resuming watches (default
        10,000); a watch or Exact list from an RV older than that answers 410 Expired.
    :param bookmark_interval: seconds between ``BOOKMARK`` events on watches that allow them
        (default 60, like the real server; tests usually want far less).
    :param auto_create_namespaces: create a missing namespace on a namespaced create instead
        of answering 404 (default False, like the real server).
    :param namespaces: namespaces that exist from the start (default ``("default",)``).
    :param admin_api: serve the fault-injection API under ``/_fake/`` (default False).
    :param max_body_size: the largest request body accepted, in bytes (default 64 MiB).
    :param sharded_list_and_watch: the ``ShardedListAndWatch`` feature gate (KEP-5866,
        Kubernetes 1.36): on (the default), LIST, WATCH, streaming lists and DELETECOLLECTION
        honour ``shardSelector``; off, the parameter is ignored like an older server does.
        :meth:`set_sharded_list_and_watch` changes it while running.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        history_limit: int = 10_000,
        bookmark_interval: float = 60.0,
        auto_create_namespaces: bool = False,
        namespaces: Sequence[str] = ("default",),
        admin_api: bool = False,
        max_body_size: int = 64 * 1024 * 1024,
        sharded_list_and_watch: bool = True,
    ) -> None:
        self.host = host
        self._sharding = ShardingGate(enabled=sharded_list_and_watch)
        self._port = port
        self._max_body_size = max_body_size
        self._registry = ResourceRegistry()
        self._storage = Storage(
            self._registry,
            history_limit=history_limit,
            auto_create_namespaces=auto_create_namespaces,
        )
        for name in namespaces:
            self._storage.create(self._registry.resolve("namespaces"), {"metadata": {"name": name}})
        self._bookmark_interval = bookmark_interval
        self._admin_enabled = admin_api
        self._faults = Faults()
        self._log = RequestLog()
        self._hub: WatchHub | None = None
        self._runner: web.AppRunner | None = None
        self._site: web.SockSite | None = None
        self._state = _READY

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Start serving (``async with`` calls it).

        :raises LifecycleError: when started twice or after :meth:`aclose`.
        """
        if self._state != _READY:
            raise LifecycleError(f"a FakeApiServer can start once; it is {self._state}")
        self._state = _STARTED
        self._hub = WatchHub(self._storage, bookmark_interval=self._bookmark_interval)
        handler = ApiHandler(
            registry=self._registry,
            storage=self._storage,
            hub=self._hub,
            faults=self._faults,
            log=self._log,
            admin=AdminApi(self).handle if self._admin_enabled else None,
            sharding=self._sharding,
        )
        app = web.Application(client_max_size=self._max_body_size)
        app.router.add_route("*", "/{tail:.*}", handler.handle)
        self._runner = web.AppRunner(
            app, handler_cancellation=True, shutdown_timeout=2.0, access_log=None
        )
        await self._runner.setup()
        try:
            await self.start_listening()
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Stop serving: open watches end, connections close (bounded: about 2 s at most).

        Idempotent.
        """
        if self._state == _CLOSED:
            return
        self._state = _CLOSED
        if self._hub is not None:
            self._hub.end_all()
        if self._runner is not None:
            self._site = None
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeApiServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def start_listening(self) -> None:
        """Accept connections again on the same port (after :meth:`stop_listening`)."""
        if self._runner is None or self._state != _STARTED:
            raise LifecycleError("the server is not running")
        if self._site is not None:
            return
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self._port))
            sock.listen(128)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self._port = sock.getsockname()[1]
        site = web.SockSite(self._runner, sock)
        await site.start()
        self._site = site

    async def stop_listening(self) -> None:
        """Refuse new connections (ECONNREFUSED) and drop every open one, watches included."""
        if self._site is not None:
            site, self._site = self._site, None
            await site.stop()
        self._drop_connections()

    def _drop_connections(self, *, exclude: object = None) -> None:
        if self._hub is not None:
            self._hub.drop()
        if self._runner is None or self._runner.server is None:
            return
        for connection in self._runner.server.connections:
            transport = connection.transport
            if transport is not None and transport is not exclude:
                transport.abort()

    @property
    def port(self) -> int:
        """The port served (known once started)."""
        return self._port

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:36789``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._port}"

    def configuration(self) -> Configuration:
        """A kubernetes_asyncio ``Configuration`` pointed at this server (no credentials)."""
        from kubernetes_asyncio.client import Configuration

        return Configuration(host=self.url)

    def api_client(self) -> ApiClient:
        """A new kubernetes_asyncio ``ApiClient`` for this server; close it (``async with``)."""
        from kubernetes_asyncio.client import ApiClient

        return ApiClient(configuration=self.configuration())

    # -- resources ---------------------------------------------------------------------------

    def register_resource(
        self,
        group: str,
        version: str,
        plural: str,
        kind: str,
        *,
        namespaced: bool = True,
        singular: str = "",
        short_names: Iterable[str] = (),
        selectable_fields: Iterable[str] = (),
    ) -> ResourceInfo:
        """Serve a custom resource (like installing a CRD); works before or after start.

        :param selectable_fields: extra field-selector labels (CRD ``selectableFields``).
        """
        info = ResourceInfo(
            group,
            version,
            plural,
            kind,
            namespaced,
            singular=singular,
            short_names=tuple(short_names),
            selectable_fields=tuple(selectable_fields),
            delete_returns_object=True,
        )
        return self._registry.register(info)

    def resource(self, spec: str | ResourceInfo) -> ResourceInfo:
        """The served resource for any accepted spelling (``"pods"``, ``"deployments.apps"``...).

        :raises NotFoundError: when no served resource matches.
        """
        return self._registry.resolve(spec)

    def resource_for_kind(self, api_version: str, kind: str) -> ResourceInfo:
        """The served resource for an object's ``apiVersion`` and ``kind``.

        :raises NotFoundError: when no served resource has them.
        """
        info = self._registry.by_kind(api_version, kind)
        if info is None:
            raise status_error(
                404, message=f'no matches for kind "{kind}" in version "{api_version}"'
            )
        return info

    @property
    def resources(self) -> list[ResourceInfo]:
        """Every served resource."""
        return list(self._registry)

    # -- in-process object API ---------------------------------------------------------------

    @property
    def resource_version(self) -> str:
        """The current global resource version."""
        return str(self._storage.resource_version)

    async def create(
        self,
        resource: str | ResourceInfo,
        obj: Mapping[str, Any],
        *,
        namespace: str = "",
        field_manager: str = "",
    ) -> KubeObject:
        """Create an object as ``POST`` would; returns the stored object.

        :param namespace: overrides ``metadata.namespace`` (default: from the object, else
            ``default``).
        :param field_manager: the manager ``managedFields`` name (default ``""``: ``unknown``,
            as for a request with neither ``fieldManager`` nor User-Agent).
        """
        info = self.resource(resource)
        created = self._storage.create(
            info, _copy(obj), namespace=namespace, field_manager=field_manager
        )
        return _copy(created)

    async def get(
        self, resource: str | ResourceInfo, name: str, *, namespace: str = ""
    ) -> KubeObject:
        """One object.

        :raises NotFoundError: when it does not exist.
        """
        return _copy(self._storage.get(self.resource(resource), name, namespace or "default"))

    async def update(
        self,
        resource: str | ResourceInfo,
        obj: Mapping[str, Any],
        *,
        namespace: str = "",
        subresource: str = "",
        field_manager: str = "",
    ) -> KubeObject:
        """Replace an object as ``PUT`` would (409 on a stale ``metadata.resourceVersion``).

        :param subresource: ``"status"`` to change only ``status``.
        :param field_manager: the manager ``managedFields`` name (default: ``unknown``).
        """
        info = self.resource(resource)
        updated = self._storage.update(
            info,
            _copy(obj),
            namespace=namespace,
            subresource=subresource,
            field_manager=field_manager,
        )
        return _copy(updated)

    async def patch(
        self,
        resource: str | ResourceInfo,
        name: str,
        patch: Any,
        *,
        namespace: str = "",
        patch_type: str = "merge",
        subresource: str = "",
        field_manager: str = "",
        force: bool | None = None,
    ) -> KubeObject:
        """Patch an object as ``PATCH`` would.

        :param patch_type: ``"merge"`` (default, RFC 7386), ``"strategic"`` (strategic merge
            patch, by the kind's schema), ``"json"`` (RFC 6902) or ``"apply"`` (server-side
            apply, creating when missing).
        :param field_manager: the manager ``managedFields`` name; required for ``"apply"``
            (else 422, as real), default ``unknown`` for the others.
        :param force: for ``"apply"``: take fields other managers own instead of a 409.
        """
        if patch_type not in ("merge", "strategic", "json", "apply"):
            raise ValueError(f"unknown patch type {patch_type!r}")
        patched = self._storage.patch(
            self.resource(resource),
            _copy(patch),
            name=name,
            namespace=namespace,
            patch_type=patch_type,
            subresource=subresource,
            field_manager=field_manager,
            force=force,
        )
        return _copy(patched)

    async def delete(
        self,
        resource: str | ResourceInfo,
        name: str,
        *,
        namespace: str = "",
        preconditions: Mapping[str, Any] | None = None,
    ) -> KubeObject:
        """Delete an object (or mark it, when it has finalizers); returns its final state."""
        obj, _ = self._storage.delete(
            self.resource(resource), name=name, namespace=namespace, preconditions=preconditions
        )
        return _copy(obj)

    async def delete_collection(
        self,
        resource: str | ResourceInfo,
        *,
        namespace: str = "",
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[KubeObject]:
        """Delete every matching object; returns their final states."""
        info = self.resource(resource)
        matcher = compile_matcher(
            info, {"labelSelector": label_selector, "fieldSelector": field_selector}
        )
        deleted = self._storage.delete_collection(info, namespace=namespace, matcher=matcher)
        return _copy(deleted)

    async def list_objects(
        self,
        resource: str | ResourceInfo,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[KubeObject]:
        """The current objects of a resource (in one namespace), in storage-key order."""
        info = self.resource(resource)
        matcher = compile_matcher(
            info, {"labelSelector": label_selector, "fieldSelector": field_selector}
        )
        table = self._storage.objects(info)
        prefix = f"{namespace}/" if namespace and info.namespaced else ""
        return [
            _copy(table[key])
            for key in sorted(table)
            if key.startswith(prefix) and (matcher is None or matcher(table[key]))
        ]

    # -- request log -------------------------------------------------------------------------

    @property
    def requests(self) -> list[RequestRecord]:
        """Every request answered so far, oldest first (a copy)."""
        return list(self._log.records)

    async def wait_for_request(
        self,
        predicate: Callable[[RequestRecord], bool],
        *,
        start: int | None = None,
        timeout: float = 10.0,
    ) -> RequestRecord:
        """The first request matching ``predicate`` that arrives after this call::

            mark = len(server.requests)       # or: from an index of server.requests
            ...
            await server.wait_for_request(lambda r: r.verb == "watch", start=mark)

        :param start: consider :attr:`requests` from this index on instead, so that a
            request answered before the call counts too (``start=0``: any request so far).
            Default None: only requests after the call.
        :raises TimeoutError: when none arrives within ``timeout`` seconds; the message names
            the predicate and the requests that came meanwhile.
        """
        return await self._log.wait_for(predicate, start=start, timeout=timeout)

    def active_watches(self, resource: str | ResourceInfo | None = None) -> int:
        """How many watches are open now (on one resource), stalled ones included."""
        if self._hub is None:
            return 0
        return self._hub.count(None if resource is None else self.resource(resource))

    async def wait_for_watches(
        self,
        n: int,
        *,
        resource: str | ResourceInfo | None = None,
        exactly: bool = False,
        timeout: float = 10.0,
    ) -> None:
        """Until at least ``n`` watches are open (on one resource).

        :param exactly: wait until exactly ``n`` are open instead (e.g. 0: every client left).
        :raises TimeoutError: when that does not happen within ``timeout`` seconds.
        """
        hub = self._require_hub()
        info = None if resource is None else self.resource(resource)
        async with asyncio.timeout(timeout):
            await hub.wait_for_count(n, info, exactly=exactly)

    # -- faults ------------------------------------------------------------------------------

    def _require_hub(self) -> WatchHub:
        if self._hub is None:
            raise LifecycleError("the server is not started")
        return self._hub

    def _maybe(self, resource: str | ResourceInfo | None) -> ResourceInfo | None:
        return None if resource is None else self.resource(resource)

    def drop_watches(self, resource: str | ResourceInfo | None = None) -> int:
        """Close open watches abruptly (the client sees a broken chunked response).

        :returns: how many were dropped.
        """
        return self._require_hub().drop(self._maybe(resource))

    def stall_watches(self, resource: str | ResourceInfo | None = None) -> int:
        """Silence the watches open now: no events, no bookmarks, no bytes, until the client
        goes away (or the server closes). Watches opened later are normal.

        :returns: how many were stalled.
        """
        return self._require_hub().stall(self._maybe(resource))

    def fail_next(
        self,
        n: int,
        status: int,
        *,
        retry_after: float | None = None,
        verb: str | None = None,
        resource: str | ResourceInfo | None = None,
        message: str = "",
    ) -> None:
        """Answer the next ``n`` matching requests with HTTP ``status`` and a proper Status.

        The reason follows the code (410 Expired, 429 TooManyRequests, 500 InternalError,
        503 ServiceUnavailable, ...). ``retry_after`` sets the ``Retry-After`` header and
        ``details.retryAfterSeconds``.

        :param verb: only requests with this verb (get, list, watch, create, ...).
        :param resource: only requests for this resource.
        """
        self._faults.add(
            FailRule(
                remaining=n,
                code=status,
                retry_after=retry_after,
                verb=verb,
                resource=self._maybe(resource),
                message=message,
            )
        )

    def compact(self, resource_version: str | int | None = None) -> None:
        """Forget history before ``resource_version`` (default: the current RV), like an etcd
        compaction: watches resuming from, Exact lists at and continue tokens pinned to an older
        RV answer 410 Expired. The given RV itself stays usable.
        """
        rv = None if resource_version is None else int(resource_version)
        self._storage.compact(rv)

    def inject_malformed_line(self, resource: str | ResourceInfo | None = None) -> None:
        """Send a line that is not valid JSON on every open watch (which stays open)."""
        self.inject_raw_line(MALFORMED_LINE, resource)

    def inject_raw_line(self, line: bytes, resource: str | ResourceInfo | None = None) -> None:
        """Send any line (a newline is added when missing) on every open watch."""
        if not line.endswith(b"\n"):
            line += b"\n"
        self._require_hub().push(line, self._maybe(resource))

    def inject_watch_error(
        self,
        code: int,
        reason: str,
        message: str = "",
        *,
        resource: str | ResourceInfo | None = None,
    ) -> int:
        """Send an ``ERROR`` event carrying this Status on every open watch, then end them.

        :returns: how many watches got it.
        """
        error = status_error(code, reason, message)
        return self._require_hub().fail(error, self._maybe(resource))

    def restart(self) -> None:
        """Simulate an API server restart: every connection drops, the history window is reset
        (older RVs answer 410), objects and the RV counter are kept.
        """
        self._restart(exclude=None)

    def _restart(self, *, exclude: object) -> None:
        self._drop_connections(exclude=exclude)
        self._storage.compact()

    @property
    def sharded_list_and_watch(self) -> bool:
        """Whether the ``ShardedListAndWatch`` feature gate is on (see the constructor)."""
        return self._sharding.enabled

    def set_sharded_list_and_watch(self, enabled: bool) -> None:
        """Turn the ``ShardedListAndWatch`` gate on or off, for the requests that follow
        (open watches keep the filter they started with)."""
        self._sharding.enabled = enabled

    def set_latency(self, seconds: float) -> None:
        """Delay every answer by ``seconds`` (0 restores)."""
        self._faults.latency = max(0.0, float(seconds))
