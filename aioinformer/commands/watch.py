"""``aioinformer watch RESOURCE``: a live table of a resource, kept fresh by an informer.

::

    aioinformer watch pods -A
    aioinformer watch deployments.apps -n kube-system -l app=dns
    aioinformer watch pods -A --server http://127.0.0.1:8001      # e.g. the fake API server

The live view needs the ``cli`` extra (rich); ``--plain`` (or no rich, or no terminal) prints
one line per event instead.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import signal
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TextIO

from ..discovery import resolve_resource
from ..errors import ConfigurationError, InformerError
from ..informer import SharedIndexInformer
from ..kubeconfig import ClusterConnection, connect
from ..listener import Event
from ..listwatch import Resource
from ..objects import KubeObject, meta_namespace_key
from ..transport import KubeListerWatcher

__all__ = ["add_parser", "run"]

logger = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``watch`` sub-command to the ``aioinformer`` parser."""
    parser = subparsers.add_parser(
        "watch",
        help="show a live table of a resource through an informer",
        description="Show a live, continuously updated table of a resource through an informer.",
    )
    parser.add_argument("resource", help="pods, deployments.apps, v1/nodes, apps/v1/deployments...")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("-n", "--namespace", help="namespace (default: the context's)")
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    parser.add_argument("-l", "--selector", help="label selector, e.g. app=web,tier!=db")
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)"
    )
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    parser.add_argument("--server", help="API server URL, bypassing kubeconfig (no credentials)")
    parser.add_argument(
        "--insecure-skip-tls-verify",
        action="store_true",
        help="do not verify the server's certificate",
    )
    parser.add_argument("--plain", action="store_true", help="one line per event, no live table")


def _age(obj: KubeObject, now: float) -> str:
    created = (obj.get("metadata") or {}).get("creationTimestamp")
    if not isinstance(created, str):
        return "-"
    try:
        seconds = now - datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * 2:
            return f"{int(seconds // size)}{unit}"
    return f"{max(0, int(seconds))}s"


def _status(obj: KubeObject) -> str:
    status = obj.get("status")
    if isinstance(status, dict):
        for field in ("phase", "type"):
            value = status.get(field)
            if isinstance(value, str):
                return value
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    return ""


class _View:
    """What the live table shows: the cache plus the last event per key."""

    def __init__(self, informer: SharedIndexInformer, resource: Resource, all_namespaces: bool):
        self.informer = informer
        self.resource = resource
        self.show_namespace = all_namespaces and resource.namespaced
        self.last: dict[str, tuple[str, float]] = {}
        self.events = 0
        self.started = time.monotonic()

    def record(self, event: Event) -> None:
        self.events += 1
        key = meta_namespace_key(event.object) if isinstance(event.object, dict) else ""
        if key:
            self.last[key] = (event.type.value, time.monotonic())

    def table(self, height: int) -> Any:
        from rich.table import Table

        now = datetime.now(UTC).timestamp()
        stats = self.informer.reflector_stats
        restarts = sum(stats.watch_restarts.values()) if stats else 0
        relists = stats.relists if stats else 0
        rate = self.events / max(1e-9, time.monotonic() - self.started)
        title = (
            f"{self.resource}  objects={len(self.informer.indexer)}  events={self.events}"
            f" ({rate:.1f}/s)  relists={relists}  watch restarts={restarts}"
            f"  rv={self.informer.last_sync_resource_version or '-'}"
        )
        table = Table(title=title, title_justify="left", expand=False)
        if self.show_namespace:
            table.add_column("NAMESPACE")
        for column in ("NAME", "STATUS", "AGE", "RESOURCE VERSION", "LAST EVENT"):
            table.add_column(column)
        objects = self.informer.indexer.list()
        # Most recently changed first, then by key; only as many rows as fit.
        objects.sort(
            key=lambda o: (
                -self.last.get(meta_namespace_key(o), ("", 0.0))[1],
                meta_namespace_key(o),
            )
        )
        for obj in objects[: max(1, height - 6)]:
            metadata = obj.get("metadata") or {}
            event = self.last.get(meta_namespace_key(obj), ("", 0.0))[0]
            row = [
                metadata.get("name", ""),
                _status(obj),
                _age(obj, now),
                str(metadata.get("resourceVersion", "")),
                event,
            ]
            if self.show_namespace:
                row.insert(0, metadata.get("namespace", ""))
            table.add_row(*row)
        hidden = len(objects) - max(1, height - 6)
        if hidden > 0:
            table.caption = f"... and {hidden} more"
        return table


def _print_event(out: TextIO, event: Event) -> None:
    obj = event.object
    key = meta_namespace_key(obj) if isinstance(obj, dict) else getattr(obj, "key", "?")
    rv = (obj.get("metadata") or {}).get("resourceVersion", "") if isinstance(obj, dict) else ""
    out.write(f"{event.type.value:<8} {key} rv={rv}\n")
    out.flush()


async def _watch(args: argparse.Namespace, stop: asyncio.Event, out: TextIO) -> int:
    try:
        connection: ClusterConnection = await connect(
            server=args.server,
            kubeconfig=args.kubeconfig,
            context=args.context,
            insecure_skip_tls_verify=args.insecure_skip_tls_verify,
        )
    except ConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        try:
            resource = await resolve_resource(connection.api_client, args.resource)
        except InformerError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        namespace = None
        if resource.namespaced and not args.all_namespaces:
            namespace = args.namespace or connection.namespace
        lister_watcher = KubeListerWatcher(
            connection.api_client,
            resource,
            namespace=namespace,
            label_selector=args.selector,
            credential_refresher=connection.credential_refresher,
        )
        informer = SharedIndexInformer(lister_watcher, name=str(resource))
        view = _View(informer, resource, args.all_namespaces or namespace is None)
        plain = args.plain or not out.isatty() or not _have_rich()
        async with informer:
            stream = informer.events()
            consumer = (
                _plain_consumer(stream, view, out) if plain else _live_consumer(stream, view, stop)
            )
            async with asyncio.TaskGroup() as tg:
                task = tg.create_task(consumer)
                synced = tg.create_task(informer.wait_for_cache_sync())
                if plain:
                    # Ctrl-C must work while the first list is still failing or slow.
                    stopping = tg.create_task(stop.wait())
                    await asyncio.wait([synced, stopping], return_when=asyncio.FIRST_COMPLETED)
                    stopping.cancel()
                    if synced.done() and not synced.cancelled() and synced.result():
                        out.write(f"# synced {len(informer.indexer)} objects\n")
                        out.flush()
                await stop.wait()
                task.cancel()
                synced.cancel()
            await stream.aclose()
        if not informer.has_synced():
            print(
                f"error: the {resource} cache never synced (see the errors above)", file=sys.stderr
            )
            return 1
        return 0
    finally:
        await connection.close()


def _have_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


async def _plain_consumer(stream: Any, view: _View, out: TextIO) -> None:
    async for event in stream:
        view.record(event)
        _print_event(out, event)


async def _live_consumer(stream: Any, view: _View, stop: asyncio.Event) -> None:
    from rich.console import Console
    from rich.live import Live

    console = Console()
    with Live(
        get_renderable=lambda: view.table(console.size.height),
        console=console,
        refresh_per_second=4,
        screen=False,
    ):
        async for event in stream:
            view.record(event)


def run(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``aioinformer watch``; returns the exit status (0 after Ctrl-C or SIGTERM)."""

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        remove: list[Callable[[], object]] = []
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, stop.set)
                remove.append(functools.partial(loop.remove_signal_handler, signum))
        try:
            return await _watch(args, stop, out or sys.stdout)
        finally:
            for undo in remove:
                undo()

    return asyncio.run(main())
