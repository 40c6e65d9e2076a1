"""``server.requests``: the requests a fake API server answered and the watches open now, as a
test sees them."""

from __future__ import annotations

from collections.abc import Callable

from ._api._resources import ResourceInfo, ResourceRegistry
from ._boundary import LifecycleError, client_errors
from ._http._request_log import RequestLog, RequestRecord
from ._registry._watch import WatchHub

__all__ = ["RequestRecord", "ServerRequests"]


class ServerRequests:
    """What clients asked of a fake API server (``server.requests``): every answered request,
    and the watches open now.

    A ``resource`` is any spelling :meth:`FakeApiServer.resource
    <aioinformer.testing.FakeApiServer.resource>` accepts
    (:class:`~aioinformer.errors.NotFoundError` for one not served).
    """

    def __init__(
        self, log: RequestLog, registry: ResourceRegistry, hub: Callable[[], WatchHub | None]
    ) -> None:
        self._log = log
        self._registry = registry
        self._hub = hub

    @property
    def records(self) -> list[RequestRecord]:
        """Every request answered so far, oldest first (a copy)."""
        return list(self._log.records)

    async def wait_for(
        self, predicate: Callable[[RequestRecord], bool], *, start: int | None = None
    ) -> RequestRecord:
        """The first request matching ``predicate`` that arrives after this call::

            mark = len(server.requests.records)      # or: an index of those records
            ...
            with anyio.fail_after(5):
                await server.requests.wait_for(lambda r: r.verb == "watch", start=mark)

        Like every waiter of the package it takes no timeout: bound it with
        :func:`anyio.fail_after`. When the wait is cancelled (the bound expired), the
        ``aioinformer.testing`` logger says at INFO what was awaited and which requests came
        meanwhile.

        :param start: consider :attr:`records` from this index on instead, so that a request
            answered before the call counts too (``start=0``: any request so far).
            Default None: only requests after the call.
        """
        return await self._log.wait_for(predicate, start=start)

    @client_errors
    def active_watches(self, resource: str | ResourceInfo | None = None) -> int:
        """How many watches are open now (on one resource), stalled ones included (0 before
        the server starts)."""
        hub = self._hub()
        if hub is None:
            return 0
        return hub.count(self._registry.resolve_optional(resource))

    async def wait_for_watches(
        self,
        n: int,
        *,
        resource: str | ResourceInfo | None = None,
        exactly: bool = False,
    ) -> None:
        """Until at least ``n`` watches are open (on one resource). It takes no timeout:
        bound it with :func:`anyio.fail_after`.

        :param exactly: wait until exactly ``n`` are open instead (e.g. 0: every client left).
        :raises LifecycleError: when the server is not started.
        """
        hub = self._hub()
        if hub is None:
            raise LifecycleError("the server is not started")
        info = client_errors(self._registry.resolve_optional)(resource)
        await hub.wait_for_count(n, info, exactly=exactly)
