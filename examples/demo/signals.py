"""Ctrl-C for the demo: the first SIGINT/SIGTERM winds the run down (the demo still settles,
checks and reports), a second one skips what is left; and the exit statuses."""

from __future__ import annotations

import signal
import sys
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc

__all__ = ["EXIT_FAILURE", "EXIT_INTERRUPTED", "RICH_HINT", "Interrupts", "note", "run_command"]

#: The demo could not do its work.
EXIT_FAILURE = 1
#: Interrupted before the demo could do its work: 128 + SIGINT.
EXIT_INTERRUPTED = 130
#: Said once when rich, which draws the live view, is missing.
RICH_HINT = "the live view needs rich: pip install 'aioinformer[cli]'; showing one line per update"


def note(message: str) -> None:
    """Print ``note: <message>`` as one line on stderr."""
    print(f"note: {message}", file=sys.stderr, flush=True)


def have_rich() -> bool:
    """Whether rich (the ``cli`` extra) can be imported."""
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


class Interrupts:
    """SIGINT/SIGTERM as the demo sees them."""

    def __init__(self) -> None:
        #: Set by the first signal: wind down, then report.
        self.stop = anyio.Event()
        #: Set by the second signal: skip whatever is left that can be skipped.
        self.abort = anyio.Event()
        #: Signals received.
        self.received = 0
        self._scopes: list[anyio.CancelScope] = []

    def cancellable(self) -> anyio.CancelScope:
        """A cancel scope that the first signal cancels (already cancelled after one)."""
        scope = anyio.CancelScope()
        if self.stop.is_set():
            scope.cancel()
        self._scopes.append(scope)
        return scope

    def request_stop(self) -> None:
        """What the first signal does."""
        self.stop.set()
        for scope in self._scopes:
            scope.cancel()

    async def receive(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Count SIGINT/SIGTERM until cancelled."""
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            task_status.started()
            async for _ in signals:
                self.received += 1
                if self.received == 1:
                    self.request_stop()
                else:
                    self.abort.set()


def run_command(main: Callable[[Interrupts], Awaitable[int]]) -> int:
    """Run ``main(interrupts)`` in a new event loop with signal handling; its exit status."""

    async def command() -> int:
        interrupts = Interrupts()
        async with anyio.create_task_group() as tg:
            await tg.start(interrupts.receive)
            code = await main(interrupts)
            tg.cancel_scope.cancel()
        return code

    return anyio.run(command)
