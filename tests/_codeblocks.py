"""The code blocks of Markdown pages (the README, the docs site) and how tests run them.

A Python block is *complete* — a program (``asyncio.run(main())``), a FastAPI app module
(``app = FastAPI(``), an aiohttp app module (``def create_app``) or a pytest module
(``def test_``) — or announced as a fragment by the line before it. Programs run in a fresh
interpreter whose ``$KUBECONFIG`` points at a fake API server, the way they would find a
cluster; a ``text`` block right after one, introduced by a line ending in "prints:", is what
it must print.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
#: The most one block may take to run.
GUARD = 60.0


@dataclass(frozen=True)
class Block:
    """A fenced code block of a Markdown page."""

    language: str
    code: str
    #: The last non-empty line before the fence.
    before: str
    #: The code of a ``text`` block right after this one ("It prints:"), if any.
    prints: str | None
    #: The heading of the section it is in.
    section: str
    #: The page, relative to the repository's root.
    page: str = ""

    @property
    def kind(self) -> str:
        if "fragment" in self.before.lower():
            return "fragment"
        if "asyncio.run(main())" in self.code:
            return "program"
        if re.search(r"^app = FastAPI\(", self.code, re.MULTILINE):
            return "app"
        if re.search(r"^(async )?def create_app\(", self.code, re.MULTILINE):
            return "aiohttp app"
        if re.search(r"^async def test_|^def test_", self.code, re.MULTILINE):
            return "test module"
        return "incomplete"

    @property
    def id(self) -> str:
        """How a test names the block: ``page: section``."""
        return f"{self.page}: {self.section}" if self.page else self.section

    @property
    def runs_until_interrupted(self) -> bool:
        return "Ctrl-C" in self.code


def markdown_blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, in order (fences at any indentation)."""
    lines = path.read_text().splitlines()
    page = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
    blocks: list[Block] = []
    section = before = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = line.lstrip("# ").strip()
        fence = line.lstrip()
        if fence.startswith("```") and len(fence) > 3:
            indent = line[: len(line) - len(fence)]
            end = lines.index(indent + "```", i + 1)
            code = "\n".join(c.removeprefix(indent) for c in lines[i + 1 : end]) + "\n"
            blocks.append(Block(fence[3:].strip(), code, before, None, section, page))
            i = end + 1
            continue
        if line.strip():
            before = line
        i += 1
    # A ``text`` block right after a program, introduced by "... prints:", is what it prints.
    for n, block in enumerate(blocks[:-1]):
        following = blocks[n + 1]
        if following.language == "text" and following.before.lower().rstrip().endswith("prints:"):
            blocks[n] = replace(block, prints=following.code)
    return blocks


async def run_program(
    code: str, env: dict[str, str], cwd: Path, *, expected: list[str] | None
) -> tuple[list[str], str]:
    """Run ``code`` with ``python -c`` and return its stdout lines and its stderr.

    A program that runs until Ctrl-C gets SIGINT once it printed every ``expected`` line.
    Fails the test if it exits non-zero or prints a traceback.
    """
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, cwd=cwd, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    with anyio.fail_after(GUARD):
        if "Ctrl-C" in code:
            assert expected, "a program that runs until Ctrl-C needs the lines it prints"
            seen: list[str] = []
            while not set(expected) <= set(seen):
                line = (await process.stdout.readline()).decode()
                assert line, f"the program ended early: {seen}"
                seen.append(line.rstrip("\n"))
            process.send_signal(signal.SIGINT)
            _, err = await process.communicate()
        else:
            out, err = await process.communicate()
            seen = out.decode().splitlines()
    assert process.returncode == 0, err.decode()
    assert "Traceback" not in err.decode(), err.decode()
    return seen, err.decode()


def run_test_module(code: str, directory: Path) -> str:
    """Run ``code`` as the only test module of a fresh project (pytest-asyncio in strict mode,
    warnings as errors); returns pytest's output, whose last line says how it went."""
    (directory / "test_example.py").write_text(code)
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error",
            "-p", "asyncio", "--asyncio-mode=strict",
            "-o", "asyncio_default_fixture_loop_scope=function",
        ],
        cwd=directory, capture_output=True, text=True, timeout=GUARD,
    )  # fmt: skip
    return done.stdout + done.stderr
