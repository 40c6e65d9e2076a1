"""Fault injection: ``server.faults``.

Request-level faults (injected failure answers and latency: :mod:`._http._request_faults`) are
consulted by the HTTP face for every request that follows. Connection-level faults (dropping,
stalling, malformed lines, restarts, refusing connections) act on watchers and connections at
once. :class:`ServerFaults` is the public face of both.
"""

from __future__ import annotations

from collections.abc import Callable

from ._api._resources import ResourceInfo, ResourceRegistry
from ._api._status import status_error
from ._boundary import LifecycleError, client_errors
from ._http._request_faults import FailRule, RequestFaults
from ._network import Listener
from ._registry._storage import Storage
from ._registry._watch import WatchHub
from ._selectors._shard import ShardingGate

__all__ = ["MALFORMED_LINE", "ServerFaults"]

#: The line :meth:`ServerFaults.inject_malformed_line` sends.
MALFORMED_LINE = b'{"type":"MODIFIED","object":{"metadata":{"name":\n'


class ServerFaults:
    """What can go wrong, on demand (``server.faults``): for tests of what a client does then.

    Watch faults act on the watches open at the call (they need a started server:
    :class:`~aioinformer.errors.LifecycleError` otherwise); request faults on the requests
    that follow. A ``resource`` narrows a fault to one resource (any spelling
    :meth:`FakeApiServer.resource <aioinformer.testing.FakeApiServer.resource>` accepts;
    :class:`~aioinformer.errors.NotFoundError` for one not served). Every fault is also
    reachable over HTTP on a server with ``admin_api=True``
    (:mod:`aioinformer.testing._apiserver._admin`).
    """

    def __init__(
        self,
        *,
        registry: ResourceRegistry,
        storage: Storage,
        requests: RequestFaults,
        sharding: ShardingGate,
        listener: Listener,
        hub: Callable[[], WatchHub | None],
    ) -> None:
        self._registry = registry
        self._storage = storage
        self._requests = requests
        self._sharding = sharding
        self._listener = listener
        self._hub = hub

    @client_errors
    def drop_watches(self, resource: str | ResourceInfo | None = None) -> int:
        """Close open watches abruptly (the client sees a broken chunked response).

        :returns: how many were dropped.
        """
        return self._watches().drop(self._registry.resolve_optional(resource))

    @client_errors
    def stall_watches(self, resource: str | ResourceInfo | None = None) -> int:
        """Silence the watches open now: no events, no bookmarks, no bytes, until the client
        goes away (or the server closes). Watches opened later are normal.

        :returns: how many were stalled.
        """
        return self._watches().stall(self._registry.resolve_optional(resource))

    @client_errors
    def inject_malformed_line(self, resource: str | ResourceInfo | None = None) -> None:
        """Send a line that is not valid JSON on every open watch (which stays open)."""
        self.inject_raw_line(MALFORMED_LINE, resource)

    @client_errors
    def inject_raw_line(self, line: bytes, resource: str | ResourceInfo | None = None) -> None:
        """Send any line (a newline is added when missing) on every open watch."""
        if not line.endswith(b"\n"):
            line += b"\n"
        self._watches().push(line, self._registry.resolve_optional(resource))

    @client_errors
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
        return self._watches().fail(error, self._registry.resolve_optional(resource))

    @client_errors
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
        :param message: the Status message (default: the generic one for the code).
        """
        rule = FailRule(
            remaining=n,
            code=status,
            retry_after=retry_after,
            verb=verb,
            resource=self._registry.resolve_optional(resource),
            message=message,
        )
        self._requests.add(rule)

    def set_latency(self, seconds: float) -> None:
        """Delay every answer by ``seconds`` (0 restores)."""
        self._requests.latency = max(0.0, float(seconds))

    def compact(self, resource_version: str | int | None = None) -> None:
        """Forget history before ``resource_version`` (default: the current RV), like an etcd
        compaction: watches resuming from, Exact lists at and continue tokens pinned to an older
        RV answer 410 Expired. The given RV itself stays usable.
        """
        self._storage.compact(None if resource_version is None else int(resource_version))

    def restart(self, *, spare_transport: object = None) -> None:
        """Simulate an API server restart: every connection drops, the history window is reset
        (older RVs answer 410), objects and the RV counter are kept.

        :param spare_transport: the transport of one connection to keep (the admin API's own
            request, which closes once answered); None drops them all.
        """
        self._drop_connections(spare=spare_transport)
        self._storage.compact()

    async def stop_listening(self) -> None:
        """Refuse new connections (ECONNREFUSED) and drop every open one, watches included."""
        await self._listener.stop_listening()
        self._drop_connections(spare=None)

    async def start_listening(self) -> None:
        """Accept connections again on the same port (after :meth:`stop_listening`).

        :raises LifecycleError: when the server is not running.
        """
        await self._listener.start_listening()

    @property
    def sharded_list_and_watch(self) -> bool:
        """Whether the ``ShardedListAndWatch`` feature gate is on (see the server's
        ``sharded_list_and_watch`` option)."""
        return self._sharding.enabled

    def set_sharded_list_and_watch(self, enabled: bool) -> None:
        """Turn the ``ShardedListAndWatch`` gate on or off, for the requests that follow
        (open watches keep the filter they started with)."""
        self._sharding.enabled = enabled

    def _watches(self) -> WatchHub:
        hub = self._hub()
        if hub is None:
            raise LifecycleError("the server is not started")
        return hub

    def _drop_connections(self, *, spare: object) -> None:
        hub = self._hub()
        if hub is not None:
            hub.drop()
        self._listener.drop_connections(spare=spare)
