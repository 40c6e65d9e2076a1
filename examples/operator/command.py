"""The command line of ``python -m examples.operator``: options, logging, the connection to
``$KUBECONFIG``'s cluster, and a graceful stop on SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Sequence

import anyio

import aioinformer
from aioinformer.errors import ConfigurationError, InformerError

from .widgets import operate

EXIT_OK, EXIT_FAILURE = 0, 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m examples.operator",
        description="Run the Widget operator against the cluster of $KUBECONFIG "
        "(kubectl apply -f examples/operator/crd.yaml first).",
    )
    parser.add_argument(
        "--namespace", default=None, help="watch one namespace only (default: all namespaces)"
    )
    parser.add_argument(
        "--lease-namespace",
        default=None,
        help="the namespace of the Lease widget-operator (default: the context's, or default)",
    )
    parser.add_argument("--identity", default=None, help="this replica's name in the Lease")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG")
    return parser


async def _stop_on_signal(stop: anyio.Event) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            logging.getLogger("widget-operator").info("%s received", signal.Signals(signum).name)
            stop.set()
            return


async def _run(args: argparse.Namespace) -> None:
    stop = anyio.Event()
    async with aioinformer.connect() as client, anyio.create_task_group() as tg:
        tg.start_soon(_stop_on_signal, stop)
        await operate(
            client,
            namespace=args.namespace,
            lease_namespace=args.lease_namespace or client.namespace or "default",
            identity=args.identity,
            stop=stop,
        )
        tg.cancel_scope.cancel()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        anyio.run(_run, args)
    except KeyboardInterrupt:
        return EXIT_OK
    except (ConfigurationError, InformerError) as exc:
        print(f"widget operator: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    return EXIT_OK
