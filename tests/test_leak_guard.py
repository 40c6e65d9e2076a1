"""The suite-wide leak guard (``tests/conftest.py``) fails a test that leaves a task pending,
an aiohttp session open or a file descriptor open, and passes a clean one.

Run in a child pytest with the same conftest, so the failures do not count here.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import anyio
import pytest

LEAKY_TESTS = """
import asyncio
import socket

import aiohttp

KEPT = []


async def test_leaks_a_task() -> None:
    KEPT.append(asyncio.get_running_loop().create_task(asyncio.Event().wait()))


async def test_leaks_a_session() -> None:
    KEPT.append(aiohttp.ClientSession())


async def test_leaks_a_socket() -> None:
    KEPT.append(socket.socket())


async def test_is_clean() -> None:
    session = aiohttp.ClientSession()
    await session.close()
    with socket.socket():
        pass
"""


@pytest.mark.slow
async def test_the_guard_fails_each_kind_of_leak(tmp_path: Path) -> None:
    """Three leaking tests error at teardown, each naming what it left; the clean one passes."""
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_leaky.py").write_text(LEAKY_TESTS)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:aioinformer",
    ]
    command += ["-o"]
    command += ["asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function"]
    command += ["--rootdir", str(tmp_path), "-c", "/dev/null", str(tmp_path)]
    result = await anyio.run_process(command, cwd=tmp_path, check=False)
    out = result.stdout.decode()
    assert "4 passed, 3 errors" in out, out
    assert "tasks left pending" in out
    assert "aiohttp sessions left open" in out
    assert "file descriptors left open" in out and "socket:[" in out
