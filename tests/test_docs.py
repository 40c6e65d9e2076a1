"""The documentation site tells the truth (issue 11, item 6).

Every Python block of ``docs/`` is complete or announced as a fragment, like the README's
(:mod:`tests._codeblocks`). The complete ones run here against a fake API server holding
``docs/cluster.yaml``: programs in a fresh interpreter that finds it through ``$KUBECONFIG``
and must print what the page says they print; FastAPI apps under uvicorn and aiohttp apps on
an ``AppRunner``, each until ready; test modules under pytest in strict mode. Fragments must
compile. The API reference has a page for each public namespace.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from aioinformer.integrations import InformerRuntime
from aioinformer.integrations.aiohttp import INFORMERS
from aioinformer.testing import FakeApiServer, load_manifests

from ._codeblocks import GUARD, ROOT, Block, markdown_blocks, run_program, run_test_module
from ._kubeconfig import fake_kubeconfig
from ._web import serve_aiohttp, serve_asgi

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
PYTHON = [b for page in PAGES for b in markdown_blocks(page) if b.language == "python"]

#: The public namespaces; each has a reference page rendering it.
NAMESPACES = (
    "aioinformer",
    "aioinformer.errors",
    "aioinformer.workqueue",
    "aioinformer.testing",
    "aioinformer.metrics",
    "aioinformer.integrations",
    "aioinformer.lowlevel",
    "aioinformer.conditions",
    "aioinformer.predicates",
)


def of_kind(kind: str) -> list[Any]:
    return [pytest.param(b, id=b.id) for b in PYTHON if b.kind == kind]


def test_every_python_block_is_complete_or_announced_as_a_fragment() -> None:
    """Nothing a reader would paste and see fail: each block is complete, or the line before
    it says it is a fragment."""
    assert [b.id for b in PYTHON if b.kind == "incomplete"] == []
    assert len(of_kind("program")) >= 10


@pytest.mark.parametrize("block", of_kind("fragment"))
def test_each_fragment_compiles(block: Block) -> None:
    """A fragment is valid Python (``await`` allowed at its top level)."""
    compile(block.code, block.id, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.fixture
async def cluster(fake_apiserver: FakeApiServer, tmp_path: Path) -> AsyncIterator[dict[str, str]]:
    """A fake API server holding ``docs/cluster.yaml``; yields the environment of a program
    that finds it through ``$KUBECONFIG``: the kubeconfig ``aioinformer fake-apiserver
    --kubeconfig`` writes, as Getting started does (its context's namespace: ``default``)."""
    await load_manifests(fake_apiserver, DOCS / "cluster.yaml")
    config = fake_kubeconfig(fake_apiserver, tmp_path / "kubeconfig")
    yield {**os.environ, "KUBECONFIG": str(config), "PYTHONUNBUFFERED": "1"}


@pytest.mark.slow
@pytest.mark.parametrize("block", of_kind("program"))
async def test_each_program_runs(block: Block, cluster: dict[str, str], tmp_path: Path) -> None:
    """Each program runs as written and prints what its page says (in any order for one
    that runs until Ctrl-C, which then stops cleanly on it)."""
    expected = block.prints.splitlines() if block.prints is not None else None
    seen, _ = await run_program(block.code, cluster, tmp_path, expected=expected)
    if expected is None:
        return
    if block.runs_until_interrupted:
        assert sorted(seen) == sorted(expected)
    else:
        assert seen == expected


def imported(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The block saved as a module (``docs_app``) and imported."""
    (tmp_path / "docs_app.py").write_text(block.code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "docs_app", raising=False)
    return importlib.import_module("docs_app")


async def probe(url: str, runtime: Callable[[], InformerRuntime], block: Block) -> None:
    """``/healthz`` answers; once the app's informers synced, ``/readyz`` says so, and a
    ``/pods/{namespace}`` route answers the cached Pods' names."""
    async with aiohttp.ClientSession() as http:
        async with http.get(url + "/healthz") as response:  # answers once started up
            assert response.status == 200
        assert await runtime().wait_for_cache_sync()
        async with http.get(url + "/readyz") as response:
            assert response.status == 200
        if "/pods/{namespace}" in block.code:
            async with http.get(url + "/pods/default") as response:
                assert await response.json() == ["db-1", "web-1", "web-2", "web-3"]


@pytest.mark.slow
@pytest.mark.parametrize("block", of_kind("app"))
async def test_each_fastapi_app_serves(
    block: Block,
    cluster: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A FastAPI app, saved as a module, runs under uvicorn and turns ready."""
    monkeypatch.setenv("KUBECONFIG", cluster["KUBECONFIG"])
    module = imported(block, tmp_path, monkeypatch)
    with anyio.fail_after(GUARD):
        async with serve_asgi("docs_app:app") as url:
            await probe(url, lambda: module.app.state.informers, block)


@pytest.mark.slow
@pytest.mark.parametrize("block", of_kind("aiohttp app"))
async def test_each_aiohttp_app_serves(
    block: Block,
    cluster: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An aiohttp app, built by its ``create_app()``, runs and turns ready."""
    monkeypatch.setenv("KUBECONFIG", cluster["KUBECONFIG"])
    module = imported(block, tmp_path, monkeypatch)
    app = module.create_app()
    if not hasattr(app, "router"):
        app = await app
    with anyio.fail_after(GUARD):
        async with serve_aiohttp(app) as url:
            await probe(url, lambda: app[INFORMERS], block)


@pytest.mark.slow
@pytest.mark.parametrize("block", of_kind("test module"))
def test_each_test_module_passes_in_a_fresh_project(block: Block, tmp_path: Path) -> None:
    """A test module passes with pytest-asyncio in strict mode in a bare directory."""
    output = run_test_module(block.code, tmp_path)
    assert re.match(r"\d+ passed", output.strip().splitlines()[-1]), output


def test_each_public_namespace_has_a_reference_page() -> None:
    """The API reference renders every public namespace (by its public name, not a module)."""
    rendered = {
        match
        for page in (DOCS / "reference").glob("*.md")
        for match in re.findall(r"^::: ([\w.]+)", page.read_text(), re.MULTILINE)
    }
    assert set(NAMESPACES) <= rendered


def test_every_page_is_in_the_navigation() -> None:
    """mkdocs.yml lists every page (a page left out would be built but unreachable)."""
    nav = (ROOT / "mkdocs.yml").read_text()
    listed = set(re.findall(r":\s+([\w/-]+\.md)\s*$", nav, re.MULTILINE))
    assert {str(p.relative_to(DOCS)) for p in PAGES} == listed


def test_the_readme_links_the_site_pages() -> None:
    """The README links the site's main pages by relative paths that exist."""
    links = re.findall(r"\]\((docs/[\w/.-]+\.md)\)", (ROOT / "README.md").read_text())
    assert {"docs/getting-started.md", "docs/lifecycle.md", "docs/design.md"} <= set(links)
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_every_module_the_design_page_names_exists() -> None:
    """The design page says which module owns each rule; each one it names exists (under
    ``aioinformer/``, or from the repository's root for tests), so a rename shows up here."""
    text = (DOCS / "design.md").read_text()
    named = set(re.findall(r"`((?:[\w]+/)*[\w]+\.py|[\w]+/)`", text))
    assert len(named) >= 30
    missing = [n for n in named if not (ROOT / "aioinformer" / n).exists()]
    assert [n for n in missing if not (ROOT / n).exists()] == []


def test_no_page_writes_a_kubeconfig_by_hand() -> None:
    """The pages point programs at the fake API server with ``aioinformer fake-apiserver
    --kubeconfig``, not with a kubeconfig to copy (issue 19: first contact)."""
    pages = [*PAGES, ROOT / "README.md"]
    assert [
        p.name for p in pages if re.search(r"^\s*kind:\s*Config\s*$", p.read_text(), re.M)
    ] == []
    assert "--kubeconfig fake.kubeconfig" in (DOCS / "getting-started.md").read_text()
