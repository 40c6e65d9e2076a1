"""Every wrong input to the command line is one line on stderr and a non-zero exit status,
never a traceback and never an endless retry (issue 10, item 11)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from aiohttp import web

from aioinformer import connect as aioinformer_connect
from aioinformer._cli._fake_apiserver import KUBECONFIG_MARK
from aioinformer.testing import FakeApiServer

from ._examples import ROOT
from ._kubeconfig import two_contexts
from ._web import listening_socket, serve_aiohttp

#: Whole programs: left out of `make test-lowest` (-m "not slow").
pytestmark = pytest.mark.slow

#: A fail-safe for each command (not a measurement).
GUARD = 60.0


@dataclass
class Outcome:
    """How a command ended."""

    code: int | None
    stdout: str
    stderr: str

    @property
    def error_lines(self) -> list[str]:
        return self.stderr.splitlines()


async def start(
    *args: str, prelude: str = "", env: Mapping[str, str] | None = None
) -> asyncio.subprocess.Process:
    """``aioinformer ARGS`` in a fresh interpreter (``prelude``: Python run first; ``env``:
    its environment)."""
    code = f"{prelude}\nimport sys\nfrom aioinformer._cli import main\nsys.exit(main(sys.argv[1:]))"
    return await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, *args, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def finish(process: asyncio.subprocess.Process) -> Outcome:
    with anyio.fail_after(GUARD):
        out, err = await process.communicate()
    return Outcome(process.returncode, out.decode(), err.decode())


async def aioinformer(
    *args: str, prelude: str = "", env: Mapping[str, str] | None = None
) -> Outcome:
    """Run ``aioinformer ARGS`` to its end."""
    return await finish(await start(*args, prelude=prelude, env=env))


def assert_one_line(outcome: Outcome, line: str, code: int = 1) -> None:
    """Exactly ``line`` on stderr, nothing else, and the exit status ``code``."""
    assert outcome.error_lines == [line], outcome.stderr
    assert outcome.code == code


async def test_wrong_arguments_are_one_line_too() -> None:
    """argparse's own errors (a missing argument, an unknown command) are one line, status 2."""
    assert_one_line(
        await aioinformer("watch"),
        "error: aioinformer watch: the following arguments are required: resource; see"
        " aioinformer watch --help",
        code=2,
    )
    outcome = await aioinformer("nope")
    (line,) = outcome.error_lines  # argparse's wording of the choices varies across Pythons
    assert line.startswith("error: aioinformer: argument COMMAND: invalid choice: 'nope'")
    assert line.endswith("; see aioinformer --help")
    assert outcome.code == 2


# -- aioinformer watch ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "reason"),
    [
        ("app in (web", "expected ',' or ')' but found 'the end' at position 11 in 'app in (web'"),
        ("app!", "unknown operator '!' at position 3 in 'app!'"),
        ("app=a b", "expected ',' but found 'b' at position 6 in 'app=a b'"),
    ],
)
async def test_watch_with_a_bad_label_selector(selector: str, reason: str) -> None:
    """A selector that does not parse is refused before anything is contacted (it would be
    refused at every retry). Grammar: apimachinery's labels.Parse. ``app==`` is not among them:
    it is valid Kubernetes syntax (``app`` equals the empty value)."""
    outcome = await aioinformer("watch", "pods", "-l", selector, "--server", "http://127.0.0.1:1")
    assert_one_line(outcome, f"error: invalid label selector: {reason}; e.g. -l app=web,tier!=db")


async def test_watch_stops_when_the_server_refuses_the_selector(
    fake_apiserver: FakeApiServer,
) -> None:
    """A list refused with 400 BadRequest (a selector the server does not accept) ends the
    command with the server's message instead of being retried forever."""
    fake_apiserver.faults.fail_next(1, 400, verb="list", message="unable to parse requirement")
    outcome = await aioinformer("watch", "pods", "-A", "--plain", "--server", fake_apiserver.url)
    assert_one_line(outcome, "error: the API server refused to list v1/pods: unable to parse"
                    " requirement")  # fmt: skip
    assert [r.verb for r in fake_apiserver.requests.records if r.verb == "list"] == ["list"]


@pytest.mark.parametrize(
    ("server", "line"),
    [
        (
            "127.0.0.1:8001",
            "error: --server 127.0.0.1:8001 has no scheme: write https://127.0.0.1:8001 (or"
            " http:// for a plain-HTTP server such as the fake API server)",
        ),
        (
            "ftp://127.0.0.1:8001",
            "error: --server ftp://127.0.0.1:8001 has the scheme 'ftp': use http:// or https://",
        ),
    ],
)
async def test_watch_with_a_server_url_without_an_http_scheme(server: str, line: str) -> None:
    """A URL without a scheme, or with another one, is refused before any request."""
    assert_one_line(await aioinformer("watch", "pods", "--server", server), line)


async def test_watch_with_a_kubeconfig_problem_names_the_flags(tmp_path: Path) -> None:
    """Configuration errors name the command's flags (``--kubeconfig``, ``--context``,
    ``--server``), where ``connect()`` names its parameters; an unknown context lists the
    file's contexts in both."""
    missing = tmp_path / "absent"
    assert_one_line(
        await aioinformer("watch", "pods", "--kubeconfig", str(missing)),
        f"error: --kubeconfig {missing}: no such file",
    )
    config = two_contexts(tmp_path / "config")
    assert_one_line(
        await aioinformer("watch", "pods", "--kubeconfig", str(config), "--context", "staging"),
        f"error: no context named staging in {config} (contexts: ctx, other)",
    )
    config = two_contexts(tmp_path / "config", current=None)
    assert_one_line(
        await aioinformer("watch", "pods", "--kubeconfig", str(config)),
        f"error: kubeconfig {config} has no current-context: use --context (contexts: ctx, other)",
    )
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    assert_one_line(
        await aioinformer("watch", "pods", env={**env, "KUBECONFIG": str(missing)}),
        f"error: no cluster configuration found: no kubeconfig at {missing} and not running in"
        " a cluster; use --kubeconfig or --server",
    )


async def test_watch_of_a_server_nobody_listens_on() -> None:
    """A refused connection says where, and what to check."""
    sock = listening_socket()
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there any more
    outcome = await aioinformer("watch", "pods", "--server", f"http://127.0.0.1:{port}")
    assert_one_line(
        outcome,
        f"error: cannot connect to http://127.0.0.1:{port}: connection refused; is the API"
        " server running there? check --server (or the kubeconfig)",
    )


def html_site(status: int) -> web.Application:
    """A web site that is not a Kubernetes API server: HTML for every path."""

    async def page(request: web.Request) -> web.Response:
        body = "<!doctype html>\n<html><body><h1>Welcome</h1>\n<p>nginx</p></body></html>\n"
        return web.Response(status=status, text=body, content_type="text/html")

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", page)
    return app


@pytest.mark.parametrize(
    ("status", "answer"),
    [
        (200, "answered 200 text/html, not an APIVersions document"),
        (404, "answered 404 without a Kubernetes Status"),
    ],
)
async def test_watch_of_a_server_that_is_not_kubernetes(status: int, answer: str) -> None:
    """A web server that answers with HTML is named as not an API server; the page is not
    dumped."""
    async with serve_aiohttp(html_site(status)) as url:
        outcome = await aioinformer("watch", "pods", "--server", url)
    assert_one_line(
        outcome,
        f"error: {url} is not a Kubernetes API server: GET /api {answer}; check --server (or"
        " the cluster of the kubeconfig context)",
    )


@pytest.fixture
async def silent_server() -> AsyncIterator[tuple[str, anyio.Event]]:
    """A server that accepts connections and reads requests but never answers; the event is
    set when a request arrived."""
    arrived = anyio.Event()

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        arrived.set()
        await reader.read()  # until the client goes away
        writer.close()

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}", arrived


async def test_ctrl_c_during_discovery_against_a_silent_server(
    silent_server: tuple[str, anyio.Event],
) -> None:
    """Ctrl-C while the first request waits for an answer that never comes ends the command
    at once (status 130), not after the request's timeout."""
    url, arrived = silent_server
    process = await start("watch", "pods", "--server", url)
    with anyio.fail_after(GUARD):
        await arrived.wait()
    process.send_signal(signal.SIGINT)
    outcome = await finish(process)
    assert_one_line(outcome, "error: interrupted while contacting the API server", code=130)


@pytest.mark.fake_apiserver(system_objects=False)  # its first line is the synced note
async def test_without_rich_watch_says_once_how_to_get_the_live_view(
    fake_apiserver: FakeApiServer,
) -> None:
    """Without the ``cli`` extra, ``watch`` prints plain lines and says, once, what to install
    for the live view."""
    process = await start(
        "watch", "configmaps", "--server", fake_apiserver.url,
        prelude="import sys; sys.modules['rich'] = None",
    )  # fmt: skip
    assert process.stdout is not None
    with anyio.fail_after(GUARD):
        assert (await process.stdout.readline()).startswith(b"# synced")
    process.send_signal(signal.SIGINT)
    outcome = await finish(process)
    assert_one_line(
        outcome,
        "note: the live view needs rich: pip install 'aioinformer[cli]'; showing one line per"
        " update",
        code=0,
    )


async def test_without_rich_demo_says_once_how_to_get_the_live_view() -> None:
    """The same for the demo (``python -m examples.demo``, run from the repository's root)."""
    code = (
        "import sys; sys.modules['rich'] = None\n"
        "from examples.demo.command import main\n"
        "sys.exit(main(sys.argv[1:]))"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, "--duration", "0", "--objects", "5", "--no-faults",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    assert_one_line(
        await finish(process),
        "note: the live view needs rich: pip install 'aioinformer[cli]'; showing one line per"
        " update",
        code=0,
    )


# -- aioinformer fake-apiserver ------------------------------------------------------------


async def test_fake_apiserver_on_a_port_in_use() -> None:
    """A port somebody listens on is named, with what to do."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        outcome = await aioinformer("fake-apiserver", "--port", str(port))
    assert_one_line(
        outcome,
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use; choose another"
        " --port (0 picks a free one)",
    )


def manifest(tmp_path: Path, text: str) -> str:
    path = tmp_path / "objects.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (None, "error: cannot read manifest '{path}': No such file or directory"),
        (
            "kind: ConfigMap\nmetadata: [\n",
            "error: manifest '{path}' is not valid YAML: expected the node content, but found"
            " '<stream end>' (line 3, column 1)",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
            "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
            "error: {path}, object 2 (Widget 'w'): no matches for kind \"Widget\" in version"
            ' "example.com/v1"; the standalone fake API server serves the built-in kinds only'
            " (in tests, FakeApiServer.register_resource() adds custom ones)",
        ),
    ],
    ids=["missing", "not-yaml", "unknown-kind"],
)
async def test_fake_apiserver_with_a_bad_manifest(
    tmp_path: Path, text: str | None, line: str
) -> None:
    """A missing file, a file that is not YAML, and an object of a kind the server does not
    serve: each names the file (and the object)."""
    path = manifest(tmp_path, text) if text is not None else str(tmp_path / "missing.yaml")
    outcome = await aioinformer("fake-apiserver", "--port", "0", "-f", path)
    assert_one_line(outcome, line.format(path=path))


@pytest.mark.parametrize(
    ("module", "what"),
    [
        ("kubernetes_validate", "the Kubernetes schemas"),
        ("cel_expr_python", "the CEL runtime"),
        ("google", "protobuf"),
    ],
)
async def test_fake_apiserver_without_the_testing_extra(module: str, what: str) -> None:
    """Without a package of the ``testing`` extra (kubernetes-validate, cel-expr-python,
    protobuf) the command says what to install, in one line, with exit status 2 (the fake
    server is imported only when the command runs)."""
    missing = f"import sys; sys.modules[{module!r}] = None"
    outcome = await aioinformer("fake-apiserver", "--port", "0", prelude=missing)
    assert_one_line(
        outcome,
        f"error: the fake API server needs {what} of the testing extra: pip"
        " install 'aioinformer[testing]'",
        code=2,
    )


def test_the_command_line_imports_the_fake_only_to_run_it() -> None:
    """Building the parser (``--help``, ``watch``) does not import ``aioinformer.testing``."""
    code = (
        "import sys\nfrom aioinformer._cli import build_parser\nbuild_parser()\n"
        "print(sorted(m for m in sys.modules if m.startswith('aioinformer.testing')))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("kind", ["foreign file", "directory", "no parent"])
async def test_fake_apiserver_kubeconfig_it_may_not_write(tmp_path: Path, kind: str) -> None:
    """``--kubeconfig`` never replaces a file it did not write (your ~/.kube/config), and
    names a directory or a missing parent; the file is left as it was."""
    path = tmp_path / "config"
    if kind == "foreign file":
        path.write_text("apiVersion: v1\nkind: Config\n")
        line = (
            f"error: --kubeconfig {path} exists and was not written by aioinformer"
            " fake-apiserver; choose another path (it is never overwritten)"
        )
    elif kind == "directory":
        path.mkdir()
        line = f"error: --kubeconfig {path} is a directory; name a file"
    else:
        path = tmp_path / "absent" / "config"
        line = f"error: cannot write --kubeconfig {path}: no directory {path.parent}"
    outcome = await aioinformer("fake-apiserver", "--port", "0", "--kubeconfig", str(path))
    assert_one_line(outcome, line)
    if kind == "foreign file":
        assert path.read_text() == "apiVersion: v1\nkind: Config\n"


async def test_fake_apiserver_writes_a_kubeconfig_for_itself(tmp_path: Path) -> None:
    """``--kubeconfig PATH``: once listening, the command writes a kubeconfig whose current
    context is the server (replacing one it wrote before) and prints ``export KUBECONFIG=``;
    connect() finds the server through it; Ctrl-C ends the command with status 0."""
    path = tmp_path / "fake.kubeconfig"
    path.write_text(f"{KUBECONFIG_MARK}: an older run.\nclusters: []\n")
    cluster = str(ROOT / "docs" / "cluster.yaml")
    process = await start("fake-apiserver", "--port", "0", "-f", cluster, "--kubeconfig", str(path))
    assert process.stdout is not None
    try:
        with anyio.fail_after(GUARD):
            line = (await process.stdout.readline()).decode()
        assert line == f"export KUBECONFIG={path}\n"
        async with aioinformer_connect(kubeconfig=str(path)) as client:
            assert (client.source, client.namespace) == ("kubeconfig", "default")
            pods = await client.list("pods", namespace="default")
        assert sorted(p["metadata"]["name"] for p in pods["items"]) == [
            "db-1", "web-1", "web-2", "web-3",
        ]  # fmt: skip
    finally:
        process.send_signal(signal.SIGINT)
    outcome = await finish(process)
    assert outcome.code == 0
    assert "error" not in outcome.stderr and "Traceback" not in outcome.stderr
    assert path.read_text().startswith(
        f"{KUBECONFIG_MARK}: the fake API server at http://127.0.0.1:"
    )


def test_every_case_above_is_covered() -> None:
    """The issue's list of command-line cases, each with its test in this module."""
    cases: Sequence[str] = (
        "test_watch_with_a_bad_label_selector",
        "test_watch_stops_when_the_server_refuses_the_selector",
        "test_watch_with_a_server_url_without_an_http_scheme",
        "test_watch_with_a_kubeconfig_problem_names_the_flags",
        "test_watch_of_a_server_that_is_not_kubernetes",
        "test_ctrl_c_during_discovery_against_a_silent_server",
        "test_fake_apiserver_on_a_port_in_use",
        "test_fake_apiserver_with_a_bad_manifest",
        "test_fake_apiserver_without_the_testing_extra",
        "test_fake_apiserver_kubeconfig_it_may_not_write",
        "test_without_rich_watch_says_once_how_to_get_the_live_view",
        "test_without_rich_demo_says_once_how_to_get_the_live_view",
    )
    assert all(callable(globals()[name]) for name in cases)
