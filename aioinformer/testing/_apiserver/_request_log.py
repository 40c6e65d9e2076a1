"""The log of every request the fake API server answered, with awaitable lookups, and
``server.requests``: the log and the open watches as a test sees them."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

from ...errors import LifecycleError
from ._api._resources import ResourceInfo, ResourceRegistry
from ._boundary import client_errors
from ._registry._watch import WatchHub

__all__ = ["RequestLog", "RequestRecord", "ServerRequests", "describe_predicate"]


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One answered request.

    A watch is recorded when its stream starts (status 200), or when it is refused; every
    other request when its answer is complete.

    :ivar method: the HTTP method.
    :ivar path: the URL path.
    :ivar query: the query parameters (the first value of a repeated one).
    :ivar verb: get, list, watch, create, update, patch, delete, deletecollection,
        discovery or admin (``""`` for a request the server could not classify).
    :ivar group: the API group (``""`` for core).
    :ivar version: the API version.
    :ivar resource: the resource plural (``""`` when none).
    :ivar subresource: the subresource (``"status"``...), ``""`` when none.
    :ivar namespace: the namespace in the URL, ``""`` when none.
    :ivar name: the object name in the URL, ``""`` when none.
    :ivar status: the HTTP status of the answer.
    """

    method: str
    path: str
    query: dict[str, str] = field(hash=False)
    verb: str
    group: str
    version: str
    resource: str
    subresource: str
    namespace: str
    name: str
    status: int


class RequestLog:
    """An append-only list of :class:`RequestRecord` with waiters."""

    def __init__(self) -> None:
        self.records: list[RequestRecord] = []
        self._waiters: list[
            tuple[Callable[[RequestRecord], bool], asyncio.Future[RequestRecord]]
        ] = []

    def append(self, record: RequestRecord) -> None:
        """Log a record and resolve the waiters it satisfies."""
        self.records.append(record)
        for predicate, future in list(self._waiters):
            if future.done():
                continue
            try:
                matched = predicate(record)
            except Exception as exc:  # the test's predicate is broken: tell its waiter
                future.set_exception(exc)
                continue
            if matched:
                future.set_result(record)

    async def wait_for(
        self,
        predicate: Callable[[RequestRecord], bool],
        *,
        start: int | None = None,
        timeout: float = 10.0,
    ) -> RequestRecord:
        """The first record from index ``start`` on that satisfies ``predicate``.

        :param start: the first index of :attr:`records` to consider. Default None: only
            requests logged after this call.
        :raises TimeoutError: when none arrives within ``timeout`` seconds; the message says
            what was awaited and which requests came meanwhile.
        """
        first = len(self.records) if start is None else start
        for record in self.records[first:]:
            if predicate(record):
                return record
        future: asyncio.Future[RequestRecord] = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self._waiters.append(entry)
        try:
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            raise TimeoutError(self._timeout_message(predicate, first, timeout)) from None
        finally:
            self._waiters.remove(entry)

    def _timeout_message(
        self, predicate: Callable[[RequestRecord], bool], first: int, timeout: float
    ) -> str:
        seen = self.records[first:]
        recent = ", ".join(
            f"{r.method} {r.path} ({r.verb or '?'} {r.status})" for r in seen[-_RECENT:]
        )
        return (
            f"no request matching {describe_predicate(predicate)} within {timeout:g} s"
            f" (from request #{first}; {len(seen)} since"
            f"{', the last ones: ' + recent if recent else ''})"
        )


#: How many of the requests seen while waiting a timeout message shows.
_RECENT = 5


def describe_predicate(predicate: Callable[..., object]) -> str:
    """A short description of a predicate for messages: a lambda's source text, else its
    qualified name."""
    name = getattr(predicate, "__qualname__", None) or repr(predicate)
    if getattr(predicate, "__name__", "") != "<lambda>":
        return name
    try:
        source = inspect.getsource(predicate)
    except (OSError, TypeError):
        return name
    text = " ".join(source[source.find("lambda") :].split())
    depth = 0
    for end, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}" or (char == "," and depth == 0):
            if depth == 0:
                return text[:end]
            depth -= 1
    return text


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
        self,
        predicate: Callable[[RequestRecord], bool],
        *,
        start: int | None = None,
        timeout: float = 10.0,
    ) -> RequestRecord:
        """The first request matching ``predicate`` that arrives after this call::

            mark = len(server.requests.records)      # or: an index of those records
            ...
            await server.requests.wait_for(lambda r: r.verb == "watch", start=mark)

        :param start: consider :attr:`records` from this index on instead, so that a request
            answered before the call counts too (``start=0``: any request so far).
            Default None: only requests after the call.
        :param timeout: seconds to wait (default 10).
        :raises TimeoutError: when none arrives in time; the message names the predicate and
            the requests that came meanwhile.
        """
        return await self._log.wait_for(predicate, start=start, timeout=timeout)

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
        timeout: float = 10.0,
    ) -> None:
        """Until at least ``n`` watches are open (on one resource).

        :param exactly: wait until exactly ``n`` are open instead (e.g. 0: every client left).
        :param timeout: seconds to wait (default 10).
        :raises TimeoutError: when that does not happen in time.
        :raises LifecycleError: when the server is not started.
        """
        hub = self._hub()
        if hub is None:
            raise LifecycleError("the server is not started")
        info = client_errors(self._registry.resolve_optional)(resource)
        with anyio.fail_after(timeout):
            await hub.wait_for_count(n, info, exactly=exactly)
