"""The ``aioinformer`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn, cast

from .._version import __version__
from . import _fake_apiserver as fake_apiserver
from . import _watch as watch

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (and exit status 2, as usual)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message}; see {self.prog} --help\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``aioinformer`` command."""
    parser = _Parser(
        prog="aioinformer",
        description="asyncio-native Kubernetes informers.",
        epilog="Exit status: 0 done, 1 failed (one line on stderr says why), 2 wrong arguments,"
        " 130 interrupted before the command could do its work.",
    )
    parser.add_argument("--version", action="version", version=f"aioinformer {__version__}")
    subparsers = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser),
    )
    watch.add_parser(subparsers)
    fake_apiserver.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command == "fake-apiserver":
        return fake_apiserver.run(args)
    if args.command == "watch":
        return watch.run(args)
    return 0  # pragma: no cover - every sub-command returns above


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
