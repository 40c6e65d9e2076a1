"""What the source distribution ships."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_sdist_includes_the_examples() -> None:
    """The README points at ``examples/``, so the sdist carries it (with the tests)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = config["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert {"aioinformer", "tests", "examples", "README.md", "CHANGELOG.md"} <= set(include)
    assert all((ROOT / path).exists() for path in include)


def test_make_says_what_it_does_before_each_slow_step(tmp_path: Path) -> None:
    """``make demo`` on a fresh clone creates a venv and installs for minutes with pip quiet:
    a line says what comes before each such step (issue 19: first contact). Checked on
    ``make -n`` (what make would run), with a venv directory that does not exist."""
    venv = tmp_path / "venv"
    out = subprocess.run(
        ["make", "-n", "demo", "test-lowest", f"VENV={venv}", f"LOWEST_VENV={venv}-lowest",
         f"UV_VENV={venv}-uv"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    lines = [line.strip() for line in out.splitlines()]
    slow = [
        i for i, line in enumerate(lines) if re.search(r" -m venv | pip install |uv venv", line)
    ]
    assert len(slow) == 7, out  # .venv: venv, pip, install; uv: venv, install; lowest: two
    assert [lines[i] for i in slow if not lines[i - 1].startswith("echo ")] == []
    assert any(line.startswith("echo") and "demo" in line for line in lines)


def test_every_dependency_has_a_floor() -> None:
    """Every requirement, runtime and extra, names a lowest version (``make test-lowest``
    installs exactly those: one without a floor would be tested at its very first release); a
    ceiling may follow (cel-expr-python's young API: ``<0.2``)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        requirements += extra
    floored = re.compile(r"[A-Za-z0-9_.-]+>=[0-9.]+(,<[0-9.]+)?")
    assert [r for r in requirements if not floored.fullmatch(r)] == []
