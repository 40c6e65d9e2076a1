"""``aioinformer watch RESOURCE``: a live table of a resource, kept fresh by an informer.

::

    aioinformer watch pods -A
    aioinformer watch deployments.apps -n kube-system -l app=dns
    aioinformer watch pods -A --server http://127.0.0.1:8001      # e.g. the fake API server

The live view needs the ``cli`` extra (rich); ``--plain`` (or no rich, or no terminal) prints
one line per event instead.

Every failure is one line on stderr and a non-zero exit status (1; 130 when Ctrl-C came
before the watch started); Ctrl-C works at every moment, discovery included.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

import anyio
import orjson

from .._cache._selectors import parse_label_selector
from .._informer._event_stream import Event, EventStream
from .._informer._informer import SharedIndexInformer
from .._listwatch import ListOptions, Resource
from .._objects import KubeObject, meta_namespace_key
from .._wire._discovery import resolve_resource
from .._wire._http import read
from .._wire._kubeconfig import COMMAND_LINE, PendingConnection
from .._wire._transport import KubeListerWatcher
from ..errors import (
    ApiError,
    BadRequestError,
    ConfigurationError,
    ConnectionRefused,
    InformerError,
    NotFoundError,
    SelectorSyntaxError,
    TransportError,
)
from ._support import (
    EXIT_INTERRUPTED,
    RICH_HINT,
    Interrupts,
    fail,
    have_rich,
    note,
    run_command,
)

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = ["add_parser", "check_api_server", "run"]

logger = logging.getLogger(__name__)

#: Seconds the first request may take before the server is declared silent.
PROBE_TIMEOUT = 30.0


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
        stats = self.informer.statistics().reflector
        restarts = sum(stats.watch_restarts.values())
        relists = stats.relists
        rate = self.events / max(1e-9, time.monotonic() - self.started)
        title = (
            f"{self.resource}  objects={len(self.informer.cache)}  events={self.events}"
            f" ({rate:.1f}/s)  relists={relists}  watch restarts={restarts}"
            f"  rv={self.informer.last_sync_resource_version or '-'}"
        )
        table = Table(title=title, title_justify="left", expand=False)
        if self.show_namespace:
            table.add_column("NAMESPACE")
        for column in ("NAME", "STATUS", "AGE", "RESOURCE VERSION", "LAST EVENT"):
            table.add_column(column)
        objects = self.informer.cache.list()
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


async def check_api_server(client: KubeClient) -> str | None:
    """Why the client's server is not a Kubernetes API server, or None when it is one.

    Asks ``GET /api``, which every API server answers with an ``APIVersions`` document (or, to
    a client without the right credentials, with a ``Status``).

    :raises TransportError: when the request got no answer (refused, DNS, TLS, ...).
    :raises TimeoutError: when no answer came within :data:`PROBE_TIMEOUT` seconds.
    """
    host = client.host
    hint = "check --server (or the cluster of the kubeconfig context)"
    what = f"GET {host}/api"
    with anyio.fail_after(PROBE_TIMEOUT):
        try:
            response = await client._transport.open("GET", "/api", what=what)
        except ApiError as exc:
            if exc.status.get("apiVersion"):  # a Kubernetes Status (401, 403, ...): it is one
                return None
            return (
                f"{host} is not a Kubernetes API server: GET /api answered {exc.code} without a"
                f" Kubernetes Status; {hint}"
            )
        body = await read(response, what)
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        document = None
    if isinstance(document, dict) and document.get("kind") == "APIVersions":
        return None
    return (
        f"{host} is not a Kubernetes API server: GET /api answered {response.status}"
        f" {response.content_type}, not an APIVersions document; {hint}"
    )


async def _resolve(
    args: argparse.Namespace, client: KubeClient, interrupts: Interrupts
) -> Resource | int:
    """The resource to watch, or the exit status of a failure (one line printed)."""
    host = client.host
    with interrupts.cancellable():
        try:
            problem = await check_api_server(client)
        except ConnectionRefused:
            return fail(
                f"cannot connect to {host}: connection refused; is the API server running"
                " there? check --server (or the kubeconfig)"
            )
        except TransportError as exc:
            return fail(f"cannot reach the API server at {host}: {exc}")
        except TimeoutError:
            return fail(
                f"no answer from {host} within {PROBE_TIMEOUT:.0f} s; is it a Kubernetes API"
                " server? check --server (or the kubeconfig)"
            )
        if problem is not None:
            return fail(problem)
        try:
            return await resolve_resource(client, args.resource)
        except NotFoundError as exc:
            return fail(
                f"{exc.message}; `kubectl api-resources` lists them, or write group/version/plural"
            )
        except InformerError as exc:
            return fail(f"discovery at {host} failed: {exc}")
    return fail("interrupted while contacting the API server", code=EXIT_INTERRUPTED)


async def _watch(args: argparse.Namespace, interrupts: Interrupts, out: TextIO) -> int:
    if args.selector:
        try:
            parse_label_selector(args.selector)
        except SelectorSyntaxError as exc:
            return fail(f"invalid label selector: {exc}; e.g. -l app=web,tier!=db")
    plain = args.plain or not out.isatty() or not have_rich()
    if not args.plain and not have_rich():
        note(RICH_HINT)
    async with contextlib.AsyncExitStack() as stack:
        with interrupts.cancellable():
            try:
                client = await stack.enter_async_context(
                    PendingConnection(
                        spelling=COMMAND_LINE,
                        server=args.server,
                        kubeconfig=args.kubeconfig,
                        context=args.context,
                        insecure_skip_tls_verify=args.insecure_skip_tls_verify,
                        follow_redirects=False,
                    )
                )
            except ConfigurationError as exc:
                return fail(exc)
        if interrupts.stop.is_set():
            return fail("interrupted while loading the configuration", code=EXIT_INTERRUPTED)
        resource = await _resolve(args, client, interrupts)
        if not isinstance(resource, Resource):
            return resource
        namespace = None
        if resource.namespaced and not args.all_namespaces:
            namespace = args.namespace or client.namespace
        lister_watcher = KubeListerWatcher(
            client, resource, namespace=namespace, label_selector=args.selector
        )
        with interrupts.cancellable():
            try:  # one small list first: a request refused as malformed ends the command
                await lister_watcher.list(ListOptions(limit=1))
            except BadRequestError as exc:
                return fail(f"the API server refused to list {resource}: {exc.message}")
            except InformerError:
                pass  # anything else may pass (RBAC fixed, server back): the informer retries
        if interrupts.stop.is_set():
            return fail("interrupted while contacting the API server", code=EXIT_INTERRUPTED)
        informer = SharedIndexInformer(lister_watcher, name=str(resource))
        rejected: list[ApiError] = []

        def on_error(_reflector: object, error: BaseException) -> None:
            # A request the server refuses as malformed is refused again at every retry.
            if isinstance(error, BadRequestError) and not informer.has_synced():
                rejected.append(error)
                interrupts.request_stop()

        informer.set_watch_error_handler(on_error)
        view = _View(informer, resource, args.all_namespaces or namespace is None)
        async with informer:
            stream = informer.events()
            async with anyio.create_task_group() as tg:
                if plain:
                    tg.start_soon(_plain_consumer, stream, view, out)
                    tg.start_soon(_announce_sync, informer, out)
                else:
                    tg.start_soon(_live_consumer, stream, view)
                await interrupts.stop.wait()
                tg.cancel_scope.cancel()
            await stream.aclose()
        if rejected:
            return fail(f"the API server refused to list {resource}: {rejected[0].message}")
        if not informer.has_synced():
            return fail(f"the {resource} cache never synced (see the errors above)")
        return 0


async def _announce_sync(informer: SharedIndexInformer, out: TextIO) -> None:
    if await informer.wait_for_cache_sync():
        out.write(f"# synced {len(informer.cache)} objects\n")
        out.flush()


async def _plain_consumer(stream: EventStream, view: _View, out: TextIO) -> None:
    async for event in stream:
        view.record(event)
        _print_event(out, event)


async def _live_consumer(stream: EventStream, view: _View) -> None:
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
    """Run ``aioinformer watch``; returns the exit status (0 after Ctrl-C or SIGTERM once
    synced, 1 on failure, 130 when interrupted before the watch started)."""
    return run_command(lambda interrupts: _watch(args, interrupts, out or sys.stdout))
