"""The demo's command line: options, logging, the live view or status lines, the summary."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from .run import Demo
from .signals import RICH_HINT, Interrupts, have_rich, note, run_command

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["build_parser", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    """The demo's command line (``python -m examples.demo --help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m examples.demo",
        description=(
            "Run a pods informer and a node-summary controller against the embedded fake API "
            "server while pods churn and faults are injected; end with a check that the cache "
            "equals the server."
        ),
    )
    parser.add_argument(
        "--duration", type=_non_negative, default=20.0, help="seconds of churn (default 20)"
    )
    parser.add_argument(
        "--objects", type=_positive_int, default=200, help="pods to keep alive (default 200)"
    )
    parser.add_argument(
        "--rate", type=_non_negative, default=50.0, help="operations per second (default 50)"
    )
    parser.add_argument(
        "--no-faults",
        action="store_true",
        help="inject no faults (no server faults, no failing reconciles)",
    )
    parser.add_argument("--plain", action="store_true", help="status lines instead of a live view")
    parser.add_argument("--seed", type=int, help="random seed (default: a random one)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the log")
    return parser


def _non_negative(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, not {text!r}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text!r}")
    return value


def run(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run the demo; returns the exit status (0: the final checks passed).

    The first SIGINT/SIGTERM ends the churn early (the demo still settles, checks and prints
    its summary); a second one skips the wait for settling and the checks (exit status 130).
    """
    out = out or sys.stdout
    console: Console | None = None
    if not args.plain and not have_rich():
        note(RICH_HINT)
    if not args.plain and out.isatty() and have_rich():
        from rich.console import Console

        console = Console(file=out)

    async def main(interrupts: Interrupts) -> int:
        demo = Demo(args, out, console)
        root = logging.getLogger()
        handlers: list[logging.Handler] = [demo.log]
        if args.verbose:
            shown: logging.Handler
            if console is not None:
                from rich.logging import RichHandler

                shown = RichHandler(console=console, show_path=False)
            else:
                shown = logging.StreamHandler(sys.stderr)
                shown.setFormatter(
                    logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
                )
            handlers.append(shown)
        level = root.level
        root.setLevel(logging.INFO if args.verbose else logging.WARNING)
        for handler in handlers:
            root.addHandler(handler)
        try:
            code = await demo.run(interrupts)
        finally:
            for handler in handlers:
                root.removeHandler(handler)
            root.setLevel(level)
        for line in demo.summary(code):
            out.write(line + "\n")
        out.flush()
        return code

    return run_command(main)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m examples.demo [options]``; returns the exit status."""
    return run(build_parser().parse_args(argv))
