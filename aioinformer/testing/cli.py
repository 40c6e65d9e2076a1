"""``aioinformer fake-apiserver``: run the fake API server standalone until interrupted.

Serves the fault-injection API under ``/_fake/`` (see :mod:`aioinformer.testing.admin`), so
kubectl and programs in other languages can be tested against it::

    aioinformer fake-apiserver --port 8001 -f manifests.yaml
    kubectl --server http://127.0.0.1:8001 get pods -A -w
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from collections.abc import Sequence

from .manifests import load_manifests
from .server import FakeApiServer

__all__ = ["add_parser", "run", "serve"]

logger = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``fake-apiserver`` sub-command to the ``aioinformer`` parser."""
    parser = subparsers.add_parser(
        "fake-apiserver",
        help="run a fake Kubernetes API server until interrupted",
        description="Run a fake Kubernetes API server (with a /_fake/ fault-injection API).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8001, help="port (8001; 0 picks a free one)")
    parser.add_argument(
        "-f",
        "--filename",
        action="append",
        default=[],
        metavar="MANIFEST",
        help="YAML manifests to load at start (repeatable; namespaces are created)",
    )
    parser.add_argument(
        "--bookmark-interval", type=float, default=60.0, help="seconds between bookmarks (60)"
    )
    parser.add_argument(
        "--history-limit", type=int, default=10_000, help="watch events kept per resource"
    )
    parser.add_argument(
        "--auto-create-namespaces",
        action="store_true",
        help="create missing namespaces instead of answering 404",
    )


async def serve(
    *,
    host: str,
    port: int,
    manifests: Sequence[str] = (),
    bookmark_interval: float = 60.0,
    history_limit: int = 10_000,
    auto_create_namespaces: bool = False,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve until SIGINT/SIGTERM (or until ``stop`` is set)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with FakeApiServer(
            host=host,
            port=port,
            bookmark_interval=bookmark_interval,
            history_limit=history_limit,
            auto_create_namespaces=auto_create_namespaces,
            admin_api=True,
        ) as server:
            for path in manifests:
                created = await load_manifests(server, path)
                logger.info("loaded %d objects from %s", len(created), path)
            logger.info("fake API server listening on %s", server.url)
            await stop.wait()
            logger.info("shutting down")
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def run(args: argparse.Namespace) -> int:
    """Run the sub-command from parsed arguments; returns the exit status."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    asyncio.run(
        serve(
            host=args.host,
            port=args.port,
            manifests=args.filename,
            bookmark_interval=args.bookmark_interval,
            history_limit=args.history_limit,
            auto_create_namespaces=args.auto_create_namespaces,
        )
    )
    return 0
