"""What the source distribution ships."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_sdist_includes_the_examples() -> None:
    """The README points at ``examples/``, so the sdist carries it (with the tests)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = config["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert {"aioinformer", "tests", "examples", "README.md", "CHANGELOG.md"} <= set(include)
    assert all((ROOT / path).exists() for path in include)
