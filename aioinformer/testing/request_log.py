"""The log of every request the fake API server answered, with awaitable lookups."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["RequestLog", "RequestRecord"]


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
        start: int = 0,
        timeout: float = 10.0,
    ) -> RequestRecord:
        """The first record from index ``start`` on that satisfies ``predicate``.

        :raises TimeoutError: when none arrives within ``timeout`` seconds.
        """
        for record in self.records[start:]:
            if predicate(record):
                return record
        future: asyncio.Future[RequestRecord] = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self._waiters.append(entry)
        try:
            async with asyncio.timeout(timeout):
                return await future
        finally:
            self._waiters.remove(entry)
