"""``aioinformer fake-apiserver``: run the fake API server standalone until interrupted.

Serves the fault-injection API under ``/_fake/`` (see
:mod:`aioinformer.testing._apiserver._admin`), so kubectl and programs in other languages can be
tested against it::

    aioinformer fake-apiserver --port 8001 -f manifests.yaml --kubeconfig fake.kubeconfig
    export KUBECONFIG=$PWD/fake.kubeconfig     # the line it prints once it listens
    kubectl get pods -A -w

``--kubeconfig PATH`` writes a kubeconfig whose current context is this server (no
credentials; with ``--tls`` the CA of its certificate) and prints the ``export KUBECONFIG=...``
line on stdout. ``--tls`` serves HTTPS with a certificate from a generated CA.

Unlike ``FakeApiServer()`` in process, it runs a kubelet by default (``--no-kubelet`` turns
it off): scheduled pods become ``Running`` and ``kubectl delete pod`` returns once the
containers stopped, as on a cluster.

On a loopback ``--host`` (the default) it answers only requests for a loopback ``Host``
(``localhost``, ``127.0.0.1``, ...) and the names given with ``--allowed-host``: a web page
cannot reach it by DNS rebinding.

A port in use, or a manifest that is missing, is not YAML or holds an object the server
refuses (an unknown kind, say) is one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import ipaddress
import logging
import shlex
from collections.abc import Sequence
from pathlib import Path

import anyio

from .._objects import KubeObject
from ..errors import ApiError
from ..testing._apiserver._manifests import create_manifest_objects, read_manifest_objects
from ..testing._apiserver._server import FakeApiServer
from ._support import Interrupts, fail, run_command

__all__ = ["add_parser", "read_manifests", "run", "serve"]

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
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="on a loopback --host, answer requests for this Host name too (repeatable;"
        " localhost, *.localhost, 127.0.0.0/8 and ::1 always are; others get 403)",
    )
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
    parser.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS, with a certificate from a CA generated at start (see --kubeconfig)",
    )
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="write a kubeconfig for this server to PATH and print the export KUBECONFIG= line",
    )
    parser.add_argument(
        "--no-system-objects",
        dest="system_objects",
        action="store_false",
        help="start empty but for the default namespace: no kube-system, kube-public,"
        " kube-node-lease, default ServiceAccounts, kube-root-ca.crt, kubernetes Service or"
        " system PriorityClasses",
    )
    parser.add_argument(
        "--kubelet",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run a kubelet for every node: scheduled pods (spec.nodeName) become Running,"
        " deleted ones stop and go (default: on)",
    )
    parser.add_argument(
        "--pod-start-delay",
        type=_seconds,
        default=1.0,
        metavar="SECONDS",
        help="seconds from a pod's acceptance by the kubelet to Running (1)",
    )
    parser.add_argument(
        "--pod-stop-delay",
        type=_seconds,
        default=1.0,
        metavar="SECONDS",
        help="seconds a deleted pod's containers take to stop, at most its grace period (1)",
    )
    parser.add_argument(
        "--sync-gc",
        action="store_true",
        help="collect garbage and empty deleted namespaces inside the DELETE request"
        " (default: right after it, as a cluster does)",
    )


def _seconds(text: str) -> float:
    """A non-negative number of seconds (argparse answers a bad one in one line)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value


Manifest = tuple[str, list[KubeObject]]


def read_manifests(paths: Sequence[str]) -> list[Manifest] | str:
    """Each manifest's objects, or what is wrong with the first bad file (one line)."""
    import yaml

    manifests: list[Manifest] = []
    for path in paths:
        try:
            manifests.append((path, read_manifest_objects(path)))
        except OSError as exc:
            return f"cannot read manifest {path!r}: {exc.strerror or exc}"
        except yaml.YAMLError as exc:
            where = getattr(exc, "problem_mark", None)
            at = f" (line {where.line + 1}, column {where.column + 1})" if where else ""
            problem = getattr(exc, "problem", None) or type(exc).__name__
            return f"manifest {path!r} is not valid YAML: {problem}{at}"
        except ApiError as exc:
            return f"manifest {path!r}: {exc.message}"
    return manifests


async def serve(
    *,
    host: str,
    port: int,
    allowed_hosts: Sequence[str] = (),
    manifests: Sequence[Manifest] = (),
    bookmark_interval: float = 60.0,
    history_limit: int = 10_000,
    auto_create_namespaces: bool = False,
    kubelet: bool = True,
    pod_start_delay: float = 1.0,
    pod_stop_delay: float = 1.0,
    sync_gc: bool = False,
    system_objects: bool = True,
    tls: bool = False,
    kubeconfig: Path | None = None,
    stop: anyio.Event,
) -> int:
    """Serve until ``stop`` is set; the exit status (failures are printed as one line).

    :param kubeconfig: where to write a kubeconfig for the server once it listens (the
        ``export KUBECONFIG=`` line is printed on stdout).
    """
    server = FakeApiServer(
        host=host,
        port=port,
        allowed_hosts=allowed_hosts,
        bookmark_interval=bookmark_interval,
        history_limit=history_limit,
        auto_create_namespaces=auto_create_namespaces,
        system_objects=system_objects,
        tls=tls,
        admin_api=True,
        kubelet=kubelet,
        pod_start_delay=pod_start_delay,
        pod_stop_delay=pod_stop_delay,
        sync_gc=sync_gc,
    )
    async with contextlib.AsyncExitStack() as stack:
        try:
            await stack.enter_async_context(server)  # returns once it listens
        except OSError as exc:
            advice = (
                "; choose another --port (0 picks a free one)"
                if exc.errno == errno.EADDRINUSE
                else ""
            )
            return fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}{advice}")
        for path, objects in manifests:
            try:
                created = await create_manifest_objects(server, objects, source=path)
            except ApiError as exc:
                hint = (
                    "; the standalone fake API server serves the built-in kinds only (in"
                    " tests, FakeApiServer.register_resource() adds custom ones)"
                    if exc.code == 404
                    else ""
                )
                return fail(f"{exc.message}{hint}")
            logger.info("loaded %d objects from %s", len(created), path)
        logger.info("fake API server listening on %s", server.url)
        if kubeconfig is not None:
            try:
                server.kubeconfig(kubeconfig)
            except OSError as exc:
                return fail(f"cannot write --kubeconfig {kubeconfig}: {exc.strerror or exc}")
            print(f"export KUBECONFIG={shlex.quote(str(kubeconfig))}", flush=True)
        if not _is_loopback(host):
            logger.warning(
                "listening on %s, not only on this machine: anyone who can reach it can read"
                " and write its objects and inject faults through /_fake/ (no authentication)",
                host,
            )
        await stop.wait()
        logger.info("shutting down")
        return 0


def _is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or name to listen on) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    """Run the sub-command from parsed arguments; returns the exit status."""
    manifests = read_manifests(args.filename)
    if isinstance(manifests, str):
        return fail(manifests)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )

    kubeconfig = Path(args.kubeconfig).resolve() if args.kubeconfig else None

    async def main(interrupts: Interrupts) -> int:
        return await serve(
            host=args.host,
            port=args.port,
            allowed_hosts=args.allowed_host,
            manifests=manifests,
            bookmark_interval=args.bookmark_interval,
            history_limit=args.history_limit,
            auto_create_namespaces=args.auto_create_namespaces,
            kubelet=args.kubelet,
            pod_start_delay=args.pod_start_delay,
            pod_stop_delay=args.pod_stop_delay,
            sync_gc=args.sync_gc,
            system_objects=args.system_objects,
            tls=args.tls,
            kubeconfig=kubeconfig,
            stop=interrupts.stop,
        )

    return run_command(main)
