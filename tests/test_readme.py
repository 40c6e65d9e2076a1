"""The README tells the truth: its complete programs run, its commands exist."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_the_complete_program_in_the_readme_runs() -> None:
    """The tour's first program (a whole script) runs and prints what it promises."""
    programs = [block for block in _python_blocks() if "asyncio.run(main())" in block]
    assert programs, "the README lost its runnable example"
    out = subprocess.run(
        [sys.executable, "-c", programs[0]], check=True, capture_output=True, text=True, timeout=60
    )
    lines = out.stdout.splitlines()
    assert "ADDED a True" in lines
    assert "ADDED b False" in lines


def test_every_make_target_the_readme_names_exists() -> None:
    """`make demo`, `make test`, `make lint` and `make bench` are real targets."""
    makefile = (README.parent / "Makefile").read_text()
    for target in re.findall(r"`make (\w+)`", README.read_text()):
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), target


def test_every_command_the_readme_names_exists() -> None:
    """Each `aioinformer <command>` in the README is a sub-command of the CLI."""
    from aioinformer.cli import build_parser

    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    named = set(re.findall(r"`aioinformer ([a-z-]+)", README.read_text()))
    assert named
    assert named <= set(subparsers.choices), named - set(subparsers.choices)
