"""What the sub-commands of the ``aioinformer`` command line share.

* Errors are one line on stderr, ``error: what is wrong; what to do``, and a non-zero exit
  status: :data:`EXIT_FAILURE` when the command could not do its work, :data:`EXIT_INTERRUPTED`
  when Ctrl-C (or SIGTERM) ended it before it could. Never a traceback.
* Ctrl-C works at every moment: :func:`run_command` receives SIGINT/SIGTERM in a task of its
  own; the first sets :attr:`Interrupts.stop` and cancels the scopes made with
  :meth:`Interrupts.cancellable` (slow start-up steps such as discovery), a second sets
  :attr:`Interrupts.abort`.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "RICH_HINT",
    "Interrupts",
    "fail",
    "have_rich",
    "note",
    "one_line",
    "run_command",
]

#: The command could not do its work.
EXIT_FAILURE = 1
#: Interrupted (by SIGINT or SIGTERM) before the command could do its work: 128 + SIGINT.
EXIT_INTERRUPTED = 130
#: Said once by commands with a live view when rich is missing.
RICH_HINT = "the live view needs rich: pip install 'aioinformer[cli]'; showing one line per update"

_LONGEST = 400


def one_line(text: object) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to a readable length."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= _LONGEST else flat[: _LONGEST - 3] + "..."


def fail(message: object, *, code: int = EXIT_FAILURE) -> int:
    """Print ``error: <message>`` as one line on stderr; returns ``code``."""
    print(f"error: {one_line(message)}", file=sys.stderr, flush=True)
    return code


def note(message: object) -> None:
    """Print ``note: <message>`` as one line on stderr."""
    print(f"note: {one_line(message)}", file=sys.stderr, flush=True)


def have_rich() -> bool:
    """Whether rich (the ``cli`` extra) can be imported."""
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


class Interrupts:
    """SIGINT/SIGTERM as seen by a command (see the module docstring)."""

    def __init__(self) -> None:
        #: Set by the first signal (or :meth:`request_stop`): wind down, then report.
        self.stop = anyio.Event()
        #: Set by the second signal: skip whatever is left that can be skipped.
        self.abort = anyio.Event()
        #: Signals received.
        self.received = 0
        self._scopes: list[anyio.CancelScope] = []

    def cancellable(self) -> anyio.CancelScope:
        """A cancel scope that the first signal cancels (already cancelled after one)."""
        scope = anyio.CancelScope()
        if self.received:
            scope.cancel()
        self._scopes.append(scope)
        return scope

    def request_stop(self) -> None:
        """Stop as the first signal would, without counting as one (an error ends the run)."""
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
