"""The ``fake_apiserver`` pytest fixture shipped through the ``pytest11`` entry point."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aioinformer.testing import FakeApiServer

INNER_TESTS = """
import aiohttp
from aioinformer.testing import FakeApiServer


async def test_gets_a_started_server(fake_apiserver):
    assert isinstance(fake_apiserver, FakeApiServer)
    async with aiohttp.ClientSession() as http:
        async with http.get(fake_apiserver.url + "/version") as resp:
            assert resp.status == 200


async def test_fails_while_a_watch_is_open(fake_apiserver):
    async with aiohttp.ClientSession() as http:
        async with http.get(fake_apiserver.url + "/api/v1/pods?watch=1"):
            await fake_apiserver.requests.wait_for_watches(1)
            raise AssertionError("deliberate failure")
"""


async def test_fixture_yields_a_started_server(fake_apiserver: FakeApiServer) -> None:
    """The fixture is available without any conftest and is already serving."""
    assert fake_apiserver.port > 0
    assert fake_apiserver.requests.active_watches() == 0


@pytest.mark.slow  # a child pytest: left out of make test-lowest
def test_fixture_closes_cleanly_when_a_test_fails(tmp_path: Path) -> None:
    """In a fresh pytest run, a failing test's server still tears down without errors."""
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-W",
            "error",
            "-o",
            "asyncio_mode=auto",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            "test_inner.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    summary = done.stdout.strip().splitlines()[-1]
    assert "1 failed, 1 passed" in summary, done.stdout
    assert "error" not in summary and "deliberate failure" in done.stdout


STRICT_MODE_TESTS = """
import pytest
from aioinformer.testing import FakeApiServer


@pytest.mark.asyncio
async def test_marked_test_gets_the_server(fake_apiserver: FakeApiServer) -> None:
    created = fake_apiserver.objects.create(
        "configmaps", {"metadata": {"name": "a", "namespace": "default"}}
    )
    assert created["metadata"]["resourceVersion"]
"""


def run_inner_pytest(directory: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``pytest`` in a fresh interpreter, in a directory without any configuration file (a
    user's project), with warnings as errors."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", *options],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow  # a child pytest: left out of make test-lowest
def test_fixture_works_in_pytest_asyncio_strict_mode(tmp_path: Path) -> None:
    """In a user's project with pytest-asyncio in strict mode (its default), a test marked
    ``@pytest.mark.asyncio`` gets the fixture (issue 10: the README's pytest section)."""
    (tmp_path / "test_user.py").write_text(STRICT_MODE_TESTS)
    done = run_inner_pytest(
        tmp_path,
        "-p",
        "asyncio",
        "--asyncio-mode=strict",
        "-o",
        "asyncio_default_fixture_loop_scope=function",
    )
    assert done.stdout.strip().splitlines()[-1].startswith("1 passed"), done.stdout + done.stderr
