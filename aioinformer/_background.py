"""``async with obj:`` runs ``obj``'s main coroutine in the background of the block.

One implementation for every long-running component (informer, factory, controller, leader
elector), so they all behave the same way:

* entering starts the coroutine in a task of a task group owned by the block;
* leaving asks the component to stop (its synchronous ``_request_stop``) and waits for the
  coroutine to return — a graceful, bounded stop, bounded by the component itself;
* an exception raised by the block propagates unchanged (never wrapped in an ExceptionGroup);
* when the block is cancelled, the coroutine is cancelled too;
* when the coroutine fails, the block is cancelled and the failure surfaces from ``async with``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, Self

__all__ = ["BackgroundRunner"]


class BackgroundRunner:
    """Mixin giving a component ``async with`` support around its main coroutine.

    Subclasses implement :meth:`_background_main` (called once on entry; it may raise
    :class:`~aioinformer.errors.LifecycleError` synchronously to refuse) and
    :meth:`_request_stop`.
    """

    _background_group: asyncio.TaskGroup | None = None

    def _background_main(self) -> Coroutine[Any, Any, None]:
        """The coroutine to run for the duration of the block."""
        raise NotImplementedError

    def _request_stop(self) -> None:
        """Ask the main coroutine to return soon (synchronous, idempotent)."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        main = self._background_main()
        group = asyncio.TaskGroup()
        await group.__aenter__()
        self._background_group = group
        group.create_task(main, name=f"{type(self).__name__} {getattr(self, 'name', '')}".strip())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group, self._background_group = self._background_group, None
        assert group is not None, "__aexit__ without __aenter__"
        if exc_type is not None and issubclass(exc_type, asyncio.CancelledError):
            # The group cancels the main task and re-raises the cancellation.
            await group.__aexit__(exc_type, exc, tb)
            return
        self._request_stop()
        # The block's own exception (if any) propagates unchanged after this returns.
        await group.__aexit__(None, None, None)
