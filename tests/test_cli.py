"""The ``aioinformer`` command line."""

from __future__ import annotations

import subprocess
import sys

import pytest

import aioinformer
from aioinformer._cli import main


def test_version_flag_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    """``aioinformer --version`` prints the version and exits 0."""
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"aioinformer {aioinformer.__version__}"


def test_console_entry_point_runs_as_a_module() -> None:
    """``python -m aioinformer --version`` works in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-m", "aioinformer", "--version"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert out.stdout.startswith("aioinformer ")


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    """Without a sub-command the usage goes to stderr and the exit status is 2."""
    assert main([]) == 2
    assert "usage: aioinformer" in capsys.readouterr().err


def test_fake_apiserver_sub_command_is_wired(capsys: pytest.CaptureFixture[str]) -> None:
    """``aioinformer fake-apiserver --help`` documents host, port and manifests."""
    with pytest.raises(SystemExit) as exc:
        main(["fake-apiserver", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--host" in out and "--port" in out and "--filename" in out
