"""Fenced writes: a reconcile writes only while its controller provably owns its key.

A controller that can lose the right to reconcile (a :class:`~aioinformer.ShardedController`
replica, a leader-elected :class:`~aioinformer.Controller`) hands its reconciles a fenced
client (:meth:`KubeClient.fenced <aioinformer.KubeClient.fenced>`, as the controller's
``client`` property). Before every write that client asks the controller's :class:`WriteFence`,
which asks the controller why the write would not be safe *now* (``refusal``: reading the
clock and the membership state, never a flag a background task sets later) and raises
:class:`~aioinformer.errors.FencedWriteError` instead of sending it when there is a reason.

Which reconcile is writing comes from a context variable (:class:`Ticket`) the worker sets
around each reconcile call; tasks the reconcile starts inherit it. A ticket remembers what the
controller's ownership was when the reconcile began (an epoch: its stop-everything count, or
its leadership term), so a reconcile that began before a stop never writes after it, even if
the ownership came back in between. A write outside any reconcile (no ticket) is checked
against the replica's lease alone.

:func:`run_fenced` runs one reconcile with its ticket: once the fence refused one of its
writes, the reconcile counts as done, whatever it then raised or returned (it is not retried on
this replica; the owner reconciles the key now).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from ..errors import FencedWriteError

__all__ = ["Ticket", "WriteFence", "current_ticket", "run_fenced"]

logger = logging.getLogger(__name__)

R = TypeVar("R")


@dataclass(slots=True, eq=False)
class Ticket:
    """One reconcile as the fence sees it.

    :ivar owner: the controller running it.
    :ivar key: the key reconciled.
    :ivar epoch: the owner's epoch when the reconcile began (a write is refused once it moved).
    :ivar hash: the shard hash of the key's object (sharded controllers), else None.
    :ivar refused: the first write refused, once one was.
    """

    owner: object
    key: Hashable
    epoch: object = None
    hash: int | None = None
    refused: FencedWriteError | None = None


_TICKET: ContextVar[Ticket | None] = ContextVar("aioinformer_reconcile", default=None)


def current_ticket() -> Ticket | None:
    """The reconcile running in this context (None outside one)."""
    return _TICKET.get()


@contextmanager
def _reconciling(ticket: Ticket) -> Iterator[None]:
    token = _TICKET.set(ticket)
    try:
        yield
    finally:
        _TICKET.reset(token)


class WriteFence:
    """The fence of one controller: a :data:`~aioinformer._wire._client.WriteFence` callable.

    :param owner: the controller (tickets of other controllers count as no ticket).
    :param name: the controller and replica, for messages.
    :param refusal: ``refusal(ticket)``: why a write is not safe now (None: it is).
    """

    def __init__(
        self, *, owner: object, name: str, refusal: Callable[[Ticket | None], str | None]
    ) -> None:
        self._owner = owner
        self.name = name
        self._refusal = refusal
        #: Writes refused so far.
        self.refused = 0

    def __call__(self, what: str) -> None:
        ticket = _TICKET.get()
        if ticket is not None and ticket.owner is not self._owner:
            ticket = None
        reason = self._refusal(ticket)
        if reason is None:
            return
        self.refused += 1
        key = ticket.key if ticket is not None else None
        error = FencedWriteError(what=what, key=key, reason=reason, owner=self.name)
        if ticket is None:
            logger.warning("%s", error)
        elif ticket.refused is None:
            ticket.refused = error
            logger.warning("%s; not retried here", error)
        raise error


async def run_fenced(ticket: Ticket, reconcile: Callable[[], Awaitable[R]]) -> R | None:
    """Run ``reconcile()`` as ``ticket``'s reconcile; None (done: not retried here) once a
    write of it was refused, whatever it raised or returned after."""
    with _reconciling(ticket):
        try:
            result = await reconcile()
        except Exception:
            if ticket.refused is not None:
                return None
            raise
    return None if ticket.refused is not None else result
