"""The README tells the truth (issue 10, items 5 to 9).

Every Python block is either complete — a program (``asyncio.run``), a web app module
(``app = FastAPI(``) or a pytest module (``def test_``) — or announced as a fragment of the
program above it by the line before it. The complete ones run here: programs in a fresh
interpreter whose ``$KUBECONFIG`` points at a fake API server (the way they would find a
cluster), the app under uvicorn, the test module under pytest in strict mode.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from aioinformer._prometheus import NEED_PROMETHEUS, NO_OPS_WITHOUT_PROMETHEUS
from aioinformer.testing import FakeApiServer

from ._codeblocks import GUARD, ROOT, Block, markdown_blocks, run_program, run_test_module
from ._kubeconfig import kubeconfig_for
from ._web import serve_asgi
from .testing.valid import create_with_status, pod

README = ROOT / "README.md"


def readme_blocks() -> list[Block]:
    return markdown_blocks(README)


BLOCKS = readme_blocks()
PYTHON = [b for b in BLOCKS if b.language == "python"]


def of_kind(kind: str) -> list[Any]:
    return [pytest.param(b, id=b.section) for b in PYTHON if b.kind == kind]


def test_every_python_block_is_complete_or_announced_as_a_fragment() -> None:
    """No block a newcomer would paste and see fail: each is complete, or the line before it
    says it is a fragment of the program above it (which must then exist)."""
    assert [b.section for b in PYTHON if b.kind == "incomplete"] == []
    for n, block in enumerate(PYTHON):
        if block.kind == "fragment":
            assert "above" in block.before.lower(), block.before
            assert n > 0 and PYTHON[n - 1].kind == "program"
    assert len(of_kind("program")) >= 3
    assert of_kind("app") and of_kind("test module")


#: The pods the cluster programs find: web pods on two nodes, a database, a web pod with a
#: database tier (filtered out by ``app=web,tier!=db``).
PODS = [
    ("web-1", {"app": "web"}, "node-1", "Running"),
    ("web-2", {"app": "web", "tier": "front"}, "node-2", "Running"),
    ("web-3", {"app": "web", "tier": "db"}, "node-2", "Pending"),
    ("db-1", {"app": "db"}, "node-1", "Pending"),
]


@pytest.fixture
async def cluster(fake_apiserver: FakeApiServer, tmp_path: Path) -> AsyncIterator[dict[str, str]]:
    """A fake API server holding :data:`PODS`; yields the environment of a program that finds
    it through ``$KUBECONFIG``. Each pod's phase is written through ``pods/status`` after the
    create, as a kubelet writes it (a real create resets the status to ``Pending``)."""
    for name, labels, node, phase in PODS:
        create_with_status(
            fake_apiserver, "pods", pod(name, labels=labels, node=node), {"phase": phase}
        )
    config = kubeconfig_for(fake_apiserver, tmp_path / "kubeconfig", namespace="default")
    yield {**os.environ, "KUBECONFIG": str(config), "PYTHONUNBUFFERED": "1"}


#: What the cluster programs print, by a line of their code.
EXPECTED = {
    "by_index": [
        "web pods: ['web-1', 'web-2']",
        "on node-1: ['db-1', 'web-1']",
        "web-1 is Running",
    ],
    "sleep_forever": [
        "default/web-1 is Running",
        "default/web-2 is Running",
        "default/web-3 is Pending",
        "default/db-1 is Pending",
    ],
}


def expected_lines(block: Block) -> list[str] | None:
    if block.prints is not None:
        return block.prints.splitlines()
    for marker, lines in EXPECTED.items():
        if marker in block.code:
            return lines
    return None


@pytest.mark.slow
@pytest.mark.parametrize("block", of_kind("program"))
async def test_each_readme_program_runs(
    block: Block, cluster: dict[str, str], tmp_path: Path
) -> None:
    """Each program runs as written and prints what the README says (or, run against the
    fake cluster, the lines expected of it). One that runs until Ctrl-C stops cleanly on it."""
    expected = expected_lines(block)
    assert expected is not None, f"nothing is expected of the program in {block.section!r}"
    seen, _ = await run_program(block.code, cluster, tmp_path, expected=expected)
    if block.runs_until_interrupted:
        assert sorted(seen) == sorted(expected)  # the order of keys is not fixed
    else:
        assert seen == expected


def spliced(fragment: Block) -> str:
    """The program above ``fragment`` with the fragment inserted where the README says: after
    the cache synced, inside ``async with factory:``."""
    program = PYTHON[PYTHON.index(fragment) - 1].code.splitlines()
    (at,) = [n for n, line in enumerate(program) if "await factory.wait_for_cache_sync()" in line]
    indent = program[at][: len(program[at]) - len(program[at].lstrip())]
    inserted = [indent + line if line.strip() else line for line in fragment.code.splitlines()]
    return "\n".join([*program[: at + 1], *inserted, *program[at + 1 :]]) + "\n"


@pytest.mark.slow
@pytest.mark.parametrize("block", of_kind("fragment"))
async def test_each_readme_fragment_runs_in_the_program_above(
    block: Block, cluster: dict[str, str], tmp_path: Path
) -> None:
    """A fragment, put where it says into the program above, runs too."""
    out, _ = await run_program(spliced(block), cluster, tmp_path, expected=None)
    assert sorted(line for line in out if line.startswith("added ")) == [
        f"added {name}" for name in sorted(name for name, *_ in PODS)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("block", of_kind("app"))
async def test_the_readme_app_runs_under_uvicorn(
    block: Block,
    cluster: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The app, saved as a module, is served by uvicorn (by its import string, as
    ``uvicorn app:app`` does), turns ready and answers from the cache over HTTP."""
    (tmp_path / "readme_app.py").write_text(block.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("KUBECONFIG", cluster["KUBECONFIG"])
    monkeypatch.delitem(sys.modules, "readme_app", raising=False)
    module: Any = importlib.import_module("readme_app")
    with anyio.fail_after(GUARD):
        async with serve_asgi("readme_app:app") as url, aiohttp.ClientSession() as http:
            async with http.get(url + "/healthz") as response:  # answers once started up
                assert response.status == 200
            assert await module.app.state.informers.wait_for_cache_sync()
            async with http.get(url + "/readyz") as response:
                assert response.status == 200
            async with http.get(url + "/pods/default") as response:
                assert await response.json() == ["db-1", "web-1", "web-2", "web-3"]


@pytest.mark.slow
@pytest.mark.parametrize("block", of_kind("test module"))
def test_the_readme_test_module_passes_in_a_fresh_project(block: Block, tmp_path: Path) -> None:
    """The test module passes with pytest-asyncio in strict mode (its default) in a directory
    without any configuration, warnings as errors."""
    output = run_test_module(block.code, tmp_path)
    assert output.strip().splitlines()[-1].startswith("1 passed"), output


def section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_the_metrics_section_says_what_works_without_prometheus() -> None:
    """Each no-op name, and each name that raises, is named as such."""
    text = " ".join(section("Metrics").split())
    no_ops, raising = text.split("Without `prometheus_client`", 1)[1].split(" while ", 1)
    assert all(f"`{name}()`" in no_ops for name in NO_OPS_WITHOUT_PROMETHEUS)
    assert all(f"`{name}`" in raising for name in NEED_PROMETHEUS)
    assert "raise `ImportError`" in raising


def test_every_admin_endpoint_is_documented() -> None:
    """Every ``/_fake/...`` endpoint the standalone server has is in the README."""
    from aioinformer.testing._apiserver import _admin as admin

    endpoints = set(re.findall(r"(/_fake/[a-z-]+)", admin.__doc__ or ""))
    assert len(endpoints) >= 10
    missing = sorted(e for e in endpoints if e not in README.read_text())
    assert missing == []


def test_every_runnable_example_is_listed_with_its_command() -> None:
    """Each example with a main is in the Examples section, with how to run it."""
    text = section("Examples")
    runnable = [p.name for p in (ROOT / "examples").glob("*.py") if "__main__" in p.read_text()]
    assert runnable
    assert [n for n in runnable if f"python examples/{n}" not in text] == []
    assert "uvicorn examples.fastapi_app:app" in text


def test_every_make_target_the_readme_names_exists() -> None:
    """`make demo`, `make test`, `make lint` and `make bench` are real targets."""
    makefile = (ROOT / "Makefile").read_text()
    for target in re.findall(r"`make (\w+)`", README.read_text()):
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), target


def test_every_command_the_readme_names_exists() -> None:
    """Each `aioinformer <command>` in the README is a sub-command of the CLI."""
    from aioinformer._cli import build_parser

    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    named = set(re.findall(r"`aioinformer ([a-z-]+)", README.read_text()))
    assert named
    assert named <= set(subparsers.choices), named - set(subparsers.choices)
