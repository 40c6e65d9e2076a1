"""``FakeApiServer``: a protocol-faithful Kubernetes API server on 127.0.0.1 for tests.

It speaks the real REST protocol over real HTTP, so kubernetes_asyncio, aioinformer and
kubectl talk to it unchanged::

    async with FakeApiServer() as server:
        pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "nginx"}]}}
        server.objects.create("pods", pod)
        async with server.api_client() as api:
            pods = await CoreV1Api(api).list_namespaced_pod("default")

The resource version is one global integer, like an etcd revision. Besides its lifecycle,
address and resources, a server has three entry points:

* :attr:`~FakeApiServer.objects` (:class:`~._objects.ServerObjects`): create, get, update,
  patch, delete and list objects in process, synchronously, exactly as HTTP writes do;
* :attr:`~FakeApiServer.faults` (:class:`~aioinformer.testing.ServerFaults`): drop or stall watches,
  fail requests, compact history, inject bad lines, restart, add latency, refuse connections;
* :attr:`~FakeApiServer.requests` (:class:`~aioinformer.testing.ServerRequests`): the requests
  answered so far and the watches open now, with awaitable lookups.

The standalone server (``aioinformer fake-apiserver``) exposes the faults over HTTP too, see
:mod:`aioinformer.testing._apiserver._admin`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
from aiohttp import web
from anyio import CancelScope

from ..._clock import SYSTEM_CLOCK, Clock
from ..._lifecycle import Service, State
from ._admin import AdminApi
from ._api._resources import ResourceInfo, ResourceRegistry
from ._api._status import status_error
from ._boundary import client_error, client_errors
from ._crd._controller import CrdController
from ._faults import ServerFaults
from ._http._api import ApiHandler
from ._http._listoptions import MIN_REQUEST_TIMEOUT
from ._http._request_faults import RequestFaults
from ._http._request_log import RequestLog
from ._network import Listener
from ._objects import ServerObjects
from ._registry._rest import RestStorage
from ._registry._storage import Storage
from ._registry._watch import WatchHub
from ._request_log import ServerRequests
from ._selectors._shard import ShardingGate

if TYPE_CHECKING:
    from kubernetes_asyncio.client import ApiClient, Configuration

__all__ = ["FakeApiServer", "FakeApiServerStatistics"]


@dataclass(frozen=True, kw_only=True, slots=True)
class FakeApiServerStatistics:
    """A snapshot of a :class:`FakeApiServer` (:meth:`FakeApiServer.statistics`)."""

    #: Where the server is in its life (``NEW``, ``RUNNING``, ``STOPPED``).
    state: State
    #: The base URL (the port is 0 until it listens when asked for a free one).
    url: str
    #: Objects stored now, over every resource.
    objects: int
    #: Watches open now.
    open_watches: int
    #: Requests answered so far.
    requests_served: int
    #: The current (global) resource version.
    resource_version: int


class FakeApiServer(Service):
    """An in-process Kubernetes API server for tests, with the project's one lifecycle.

    * ``async with FakeApiServer() as server:`` listens on entering (the block sees a
      serving server: its :attr:`url` is known) and stops on leaving; an exception of the
      block comes out unwrapped.
    * ``await tg.start(server.run)`` starts it in a task group and returns once it listens;
      ``run`` serves until :meth:`aclose` is called or its task is cancelled.
    * :meth:`aclose` stops it, bounded (about 2 s at most) and idempotent.
    * :meth:`statistics` returns a :class:`FakeApiServerStatistics`; :attr:`state` a
      :class:`~aioinformer.State`.
    * Waiters (``server.requests.wait_for(...)``, ``wait_for_watches(...)``) take no
      timeout: bound them with :func:`anyio.fail_after`.

    A pytest-asyncio fixture sets up and tears down in different tasks, where no task group
    (and so no ``async with``) can span the ``yield``: the ``fake_apiserver`` fixture runs the
    server in a task of its own; see :mod:`aioinformer.testing.pytest_plugin` for the pattern.

    :param host: the address to listen on.
    :param port: the port; 0 (the default) picks a free one, kept across
        ``faults.stop_listening()`` / ``faults.start_listening()``.
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
        ``faults.set_sharded_list_and_watch()`` changes it while running.
    :param min_request_timeout: like kube-apiserver's ``--min-request-timeout``: a watch
        without ``timeoutSeconds`` is ended by the server after a random time between this
        and twice this, in seconds (default 1800: 30 to 60 minutes).
    :param sync_gc: run the garbage collector and the namespace controller inside the
        write that sets them off (default False: as on a cluster, they run in a task of the
        server right after the write has answered; ``await server.objects.wait_idle()``
        waits until they are done).
    :param kubelet: run a kubelet for every node (default False, like envtest; the
        standalone ``aioinformer fake-apiserver`` runs one): a pod with ``spec.nodeName``
        is accepted (``ContainerCreating``) and ``Running`` ``pod_start_delay`` seconds
        later, and a marked pod stops ``pod_stop_delay`` seconds after its deletion began
        (at most its grace period) and is removed by the kubelet's final ``DELETE``. See
        :mod:`._registry._kubelet`.
    :param pod_start_delay: seconds, on ``clock``, from a pod's acceptance to ``Running``
        (default 1).
    :param pod_stop_delay: seconds, on ``clock``, its containers take to stop once the pod
        is deleted, bounded by the grace period (default 1); None: they ignore SIGTERM and
        are killed when the grace period ends.
    :param clock: the clock the kubelet's delays are measured on (default: the system
        clock; a :class:`~aioinformer.testing.FakeClock` makes them the test's to advance).
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
        min_request_timeout: float = MIN_REQUEST_TIMEOUT,
        sync_gc: bool = False,
        kubelet: bool = False,
        pod_start_delay: float = 1.0,
        pod_stop_delay: float | None = 1.0,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._min_request_timeout = min_request_timeout
        self._sharding = ShardingGate(enabled=sharded_list_and_watch)
        self._listener = Listener(host, port)
        self._max_body_size = max_body_size
        self._registry = ResourceRegistry()
        self._storage = Storage(
            self._registry,
            history_limit=history_limit,
            auto_create_namespaces=auto_create_namespaces,
        )
        # Closing is the listener's: aiohttp's shutdown is bounded by 2 s.
        self._stop_timeout = 2.5
        self._rest = RestStorage(self._storage, sync_gc=sync_gc)
        self._kubelet = (
            self._rest.start_kubelet(
                clock=clock, start_delay=pod_start_delay, stop_delay=pod_stop_delay
            )
            if kubelet
            else None
        )
        # CRDs and their custom resources: apiextensions-apiserver, the registry's delegate.
        self._rest.add_delegate(CrdController(self._rest))
        self._bookmark_interval = bookmark_interval
        self._admin_enabled = admin_api
        self._request_faults = RequestFaults()
        self._log = RequestLog()
        self._hub: WatchHub | None = None
        self._objects = ServerObjects(self._registry, self._rest)
        self._faults = ServerFaults(
            registry=self._registry,
            storage=self._storage,
            requests=self._request_faults,
            sharding=self._sharding,
            listener=self._listener,
            hub=self._current_hub,
        )
        self._requests = ServerRequests(self._log, self._registry, self._current_hub)
        for name in namespaces:
            self._objects.create("namespaces", {"metadata": {"name": name}})

    def _current_hub(self) -> WatchHub | None:
        return self._hub

    @property
    def objects(self) -> ServerObjects:
        """The objects, read and written in process (synchronously)."""
        return self._objects

    @property
    def faults(self) -> ServerFaults:
        """Fault injection: watches, failures, history, connections, latency."""
        return self._faults

    @property
    def requests(self) -> ServerRequests:
        """The requests answered so far and the watches open now."""
        return self._requests

    # -- lifecycle ---------------------------------------------------------------------------

    #: ``async with`` returns once the server listens (its address is what a test needs).
    _ready_on_enter = True

    def statistics(self) -> FakeApiServerStatistics:
        """A snapshot: state, URL, stored objects, open watches, requests, resource version."""
        return FakeApiServerStatistics(
            state=self.state,
            url=self.url,
            objects=sum(len(self._storage.objects(info)) for info in self._registry),
            open_watches=0 if self._hub is None else self._hub.count(),
            requests_served=len(self._log.records),
            resource_version=self._storage.resource_version,
        )

    async def _serve(self, ready: Callable[[], None]) -> None:
        """Listen, report ready, serve until a stop is requested; then end the watches and
        close every connection (shielded, so a cancelled ``run`` closes too; bounded by
        aiohttp's 2 s shutdown).

        :raises OSError: when it cannot listen (the port is taken).
        """
        hub = self._hub = WatchHub(self._storage, bookmark_interval=self._bookmark_interval)
        handler = ApiHandler(
            registry=self._registry,
            rest=self._rest,
            hub=hub,
            faults=self._request_faults,
            log=self._log,
            admin=AdminApi(self).handle if self._admin_enabled else None,
            sharding=self._sharding,
            min_request_timeout=self._min_request_timeout,
        )
        app = web.Application(client_max_size=self._max_body_size)
        app.router.add_route("*", "/{tail:.*}", handler.handle)
        try:
            async with anyio.create_task_group() as controllers:
                # The cluster's controllers (the garbage collector, the namespace
                # controller) and the kubelet work while the server runs.
                controllers.start_soon(self._rest.controllers.run)
                if self._kubelet is not None:
                    controllers.start_soon(self._kubelet.run)
                await self._listener.open(app)
                await self._listener.start_listening()
                ready()
                await self._wait_stop_requested()
                controllers.cancel_scope.cancel()
        finally:
            with CancelScope(shield=True):
                hub.end_all()
                await self._listener.close()

    # -- address -----------------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The address served."""
        return self._listener.host

    @property
    def port(self) -> int:
        """The port served (known once started)."""
        return self._listener.port

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:36789``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

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
        status_subresource: bool = True,
    ) -> ResourceInfo:
        """Serve a custom resource without a schema; works before or after start.

        Its objects are not validated (there is no schema); ``metadata`` follows the rules of
        every kind, and ``generation`` counts changes of anything but metadata and status.
        For a resource served as a real CRD serves it (schema, versions, ``/scale``, printer
        columns), create the CustomResourceDefinition instead:
        ``server.objects.create("customresourcedefinitions", crd)``.

        :param selectable_fields: extra field-selector labels (CRD ``selectableFields``).
        :param status_subresource: the CRD enables ``/status`` (default True): a create then
            drops ``status`` and main-resource writes keep the stored one, as for a real CRD
            with ``subresources.status``; without it ``status`` is an ordinary field.
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
            subresources=("status",) if status_subresource else (),
        )
        return self._registry.register(info)

    @client_errors
    def resource(self, spec: str | ResourceInfo) -> ResourceInfo:
        """The served resource for any accepted spelling (``"pods"``, ``"v1/pods"``,
        ``"apps/v1/deployments"``, ``"deployments.apps"``, ``"widgets.example.com"``...).

        :raises NotFoundError: when no served resource matches.
        """
        return self._registry.resolve(spec)

    def resource_for_kind(self, api_version: str, kind: str) -> ResourceInfo:
        """The served resource for an object's ``apiVersion`` and ``kind``.

        :raises NotFoundError: when no served resource has them.
        """
        info = self._registry.by_kind(api_version, kind)
        if info is None:
            failure = status_error(
                404, message=f'no matches for kind "{kind}" in version "{api_version}"'
            )
            raise client_error(failure)
        return info

    @property
    def resources(self) -> list[ResourceInfo]:
        """Every served resource."""
        return list(self._registry)
