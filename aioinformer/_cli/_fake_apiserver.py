"""``aioinformer fake-apiserver``: run the fake API server standalone until interrupted.

Serves the fault-injection API under ``/_fake/`` (see
:mod:`aioinformer.testing._apiserver._admin`), so kubectl and programs in other languages can be
tested against it::

    aioinformer fake-apiserver --port 8001 -f manifests.yaml --kubeconfig fake.kubeconfig
    export KUBECONFIG=$PWD/fake.kubeconfig     # the line it prints once it listens
    kubectl get pods -A -w

Unlike ``FakeApiServer()`` in process, it runs a kubelet by default (``--no-kubelet`` turns
it off): scheduled pods become ``Running`` and ``kubectl delete pod`` returns once the
containers stopped, as on a cluster.

On a loopback ``--host`` (the default) it answers only requests for a loopback ``Host``
(``localhost``, ``127.0.0.1``, ...) and the names given with ``--allowed-host``: a web page
cannot reach it by DNS rebinding.

``--kubeconfig PATH`` writes a kubeconfig whose current context is this server (a token that
stands for ``kubernetes-admin``; with ``--tls`` the CA of its certificate) and prints the
``export KUBECONFIG=...`` line on stdout. It replaces only a file that it wrote itself (a
comment on the first line says so), and leaves it in place at exit. ``--tls`` serves HTTPS with
a certificate from a generated CA.

A port in use, a manifest that is missing, is not YAML or holds an object the server refuses
(an unknown kind, say), or a kubeconfig path it may not write is one line on stderr and exit
status 1. The fake server itself is imported when the command runs: without the ``testing``
extra (the Kubernetes schemas of kubernetes-validate) the command says what to install, in one
line, with exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib.util
import ipaddress
import logging
import shlex
from collections.abc import Sequence
from pathlib import Path

import anyio

from .._objects import KubeObject
from ..errors import ApiError
from ._support import Interrupts, fail, run_command

__all__ = [
    "KUBECONFIG_MARK",
    "TESTING_EXTRA",
    "add_parser",
    "check_kubeconfig_path",
    "kubeconfig_text",
    "read_manifests",
    "run",
    "serve",
    "write_kubeconfig",
]

logger = logging.getLogger(__name__)

#: What to install for the fake API server.
TESTING_EXTRA = "pip install 'aioinformer[testing]'"
#: The first line of a kubeconfig written by ``--kubeconfig``: only such a file is replaced.
KUBECONFIG_MARK = "# Written by `aioinformer fake-apiserver --kubeconfig`"


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

    from ..testing._apiserver._manifests import read_manifest_objects

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
    kubeconfig: Path | None = None,
    kubelet: bool = True,
    pod_start_delay: float = 1.0,
    pod_stop_delay: float = 1.0,
    sync_gc: bool = False,
    system_objects: bool = True,
    tls: bool = False,
    stop: anyio.Event,
) -> int:
    """Serve until ``stop`` is set; the exit status (failures are printed as one line).

    :param kubeconfig: where to write a kubeconfig for the server once it listens (the
        ``export KUBECONFIG=`` line is printed on stdout).
    """
    from ..testing._apiserver._manifests import create_manifest_objects
    from ..testing._apiserver._server import FakeApiServer

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
                write_kubeconfig(
                    kubeconfig,
                    _client_url(server.host, server.port, https=tls),
                    ca_pem=server.ca_pem if tls else None,
                )
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


def _client_url(host: str, port: int, *, https: bool = False) -> str:
    """The URL a client on this machine uses for a server listening on ``host``: an
    unspecified address (``0.0.0.0``, ``::``) is reached through the loopback one."""
    scheme = "https" if https else "http"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"{scheme}://{host}:{port}"
    if address.is_unspecified:
        address = ipaddress.ip_address("::1" if address.version == 6 else "127.0.0.1")
    if address.version == 6:
        return f"{scheme}://[{address}]:{port}"
    return f"{scheme}://{address}:{port}"


def kubeconfig_text(url: str, *, ca_pem: str | None = None) -> str:
    """A kubeconfig whose current context is the server at ``url``, namespace ``default``
    (the fake's kubeconfig: :func:`aioinformer.testing._apiserver._kubeconfig.kubeconfig_document`;
    ``ca_pem``: the CA of an ``https://`` server), its first line :data:`KUBECONFIG_MARK`."""
    from ..testing._apiserver._kubeconfig import kubeconfig_document, kubeconfig_yaml

    mark = KUBECONFIG_MARK.removeprefix("# ")
    document = kubeconfig_document(url, ca_pem=ca_pem)
    return kubeconfig_yaml(document, comment=f"{mark}: the fake API server at {url}.")


def check_kubeconfig_path(path: Path) -> str | None:
    """Why ``--kubeconfig path`` may not be written (one line), or None: a file is replaced
    only when this command wrote it (its first line is :data:`KUBECONFIG_MARK`)."""
    if path.is_dir():
        return f"--kubeconfig {path} is a directory; name a file"
    if not path.parent.is_dir():
        return f"cannot write --kubeconfig {path}: no directory {path.parent}"
    if path.exists():
        try:
            with path.open(encoding="utf-8", errors="replace") as file:
                first = file.readline()
        except OSError as exc:
            return f"cannot read --kubeconfig {path}: {exc.strerror or exc}"
        if not first.startswith(KUBECONFIG_MARK):
            return (
                f"--kubeconfig {path} exists and was not written by aioinformer fake-apiserver;"
                " choose another path (it is never overwritten)"
            )
    return None


def write_kubeconfig(path: Path, url: str, *, ca_pem: str | None = None) -> None:
    """Write :func:`kubeconfig_text` to ``path`` atomically (a reader sees the old file or
    the new one, never half of one), readable by its owner only.

    :raises OSError: when it cannot be written.
    """
    from ..testing._apiserver._kubeconfig import write_kubeconfig as write

    write(path, kubeconfig_text(url, ca_pem=ca_pem))


def _is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or name to listen on) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: What the fake API server takes from the ``testing`` extra: module, and what it is for.
_TESTING_MODULES = (
    ("kubernetes_validate", "the Kubernetes schemas"),
    ("cel_expr_python", "the CEL runtime"),
    ("google.protobuf", "protobuf"),
)


def _missing_extra() -> str | None:
    """What to install when the fake API server cannot run here, or None."""
    for module, what in _TESTING_MODULES:
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:  # a missing parent package (google)
            found = False
        if not found:
            return f"the fake API server needs {what} of the testing extra: {TESTING_EXTRA}"
    return None


def run(args: argparse.Namespace) -> int:
    """Run the sub-command from parsed arguments; returns the exit status (2 when the
    ``testing`` extra is missing)."""
    missing = _missing_extra()
    if missing is not None:
        return fail(missing, code=2)
    kubeconfig = None
    if args.kubeconfig is not None:
        kubeconfig = Path(args.kubeconfig).expanduser().absolute()
        problem = check_kubeconfig_path(kubeconfig)
        if problem is not None:
            return fail(problem)
    try:
        manifests = read_manifests(args.filename)
    except ImportError as exc:  # a part of the fake that cannot load here
        return fail(f"cannot load the fake API server ({exc}); {TESTING_EXTRA}", code=2)
    if isinstance(manifests, str):
        return fail(manifests)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )

    async def main(interrupts: Interrupts) -> int:
        return await serve(
            host=args.host,
            port=args.port,
            allowed_hosts=args.allowed_host,
            manifests=manifests,
            bookmark_interval=args.bookmark_interval,
            history_limit=args.history_limit,
            auto_create_namespaces=args.auto_create_namespaces,
            kubeconfig=kubeconfig,
            kubelet=args.kubelet,
            pod_start_delay=args.pod_start_delay,
            pod_stop_delay=args.pod_stop_delay,
            sync_gc=args.sync_gc,
            system_objects=args.system_objects,
            tls=args.tls,
            stop=interrupts.stop,
        )

    return run_command(main)
