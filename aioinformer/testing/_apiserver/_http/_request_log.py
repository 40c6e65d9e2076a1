"""The log of every request the fake API server answered, with awaitable lookups
(``server.requests`` is its public face)."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["RequestLog", "RequestRecord", "describe_predicate"]

logger = logging.getLogger("aioinformer.testing")


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
        self, predicate: Callable[[RequestRecord], bool], *, start: int | None = None
    ) -> RequestRecord:
        """The first record from index ``start`` on that satisfies ``predicate``; waits
        without a bound (the caller bounds it with :func:`anyio.fail_after`).

        :param start: the first index of :attr:`records` to consider. Default None: only
            requests logged after this call.
        """
        first = len(self.records) if start is None else start
        for record in self.records[first:]:
            if predicate(record):
                return record
        future: asyncio.Future[RequestRecord] = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self._waiters.append(entry)
        try:
            return await future
        except asyncio.CancelledError:
            logger.info("%s", self._gave_up_message(predicate, first))
            raise
        finally:
            self._waiters.remove(entry)

    def _gave_up_message(self, predicate: Callable[[RequestRecord], bool], first: int) -> str:
        seen = self.records[first:]
        recent = ", ".join(
            f"{r.method} {r.path} ({r.verb or '?'} {r.status})" for r in seen[-_RECENT:]
        )
        return (
            f"stopped waiting for a request matching {describe_predicate(predicate)}"
            f" (from request #{first}; {len(seen)} since"
            f"{', the last ones: ' + recent if recent else ''})"
        )


#: How many of the requests seen while waiting the gave-up message shows.
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
