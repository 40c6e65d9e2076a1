"""The ``aioinformer`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ._version import __version__
from .commands import demo, watch
from .testing import cli as fake_apiserver

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``aioinformer`` command."""
    parser = argparse.ArgumentParser(
        prog="aioinformer",
        description="asyncio-native Kubernetes informers.",
    )
    parser.add_argument("--version", action="version", version=f"aioinformer {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    watch.add_parser(subparsers)
    demo.add_parser(subparsers)
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
    if args.command == "demo":
        return demo.run(args)
    return 0  # pragma: no cover - every sub-command returns above


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
