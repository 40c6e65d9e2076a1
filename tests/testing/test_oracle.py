"""The fake API server is an independent oracle of the client, and its package stays small.

Design rule (DESIGN.md §2.10, architecture review §4.5): the fake shares no parsing, matching
or error code with the client it tests, so a client bug cannot be mirrored by the fake.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import aioinformer.testing

PACKAGE = Path(aioinformer.testing.__file__).parent
MODULES = sorted(PACKAGE.glob("*.py"))

#: Modules that use the fake's public Python API, whose failures are the client's exceptions,
#: and so handle those: the boundary itself and the code built on the public API.
ABOVE_THE_BOUNDARY = {"_boundary.py", "_admin.py", "_cli.py", "_manifests.py"}

#: What any module may take from the client's errors (not an API error class).
LIFECYCLE_ONLY = {"LifecycleError"}


def _imports(path: Path) -> list[tuple[str, set[str]]]:
    """``(module, names)`` of every ``from ... import``, relative modules made absolute."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = "aioinformer" if node.level == 2 else "aioinformer.testing"
            module = f"{base}.{node.module}" if node.level else (node.module or "")
            found.append((module, {alias.name for alias in node.names}))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, set()) for alias in node.names)
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_the_fake_never_imports_the_clients_selectors(path: Path) -> None:
    """Selectors are parsed and matched by the fake's own ``_labels``/``_fields``."""
    assert not [m for m, _ in _imports(path) if m.startswith("aioinformer._cache._selectors")]


@pytest.mark.parametrize(
    "path", [p for p in MODULES if p.name not in ABOVE_THE_BOUNDARY], ids=lambda p: p.name
)
def test_the_fakes_internals_never_import_the_clients_error_classes(path: Path) -> None:
    """Inside, a refusal is a ``StatusFailure``; client exceptions appear only at the edge."""
    for module, names in _imports(path):
        if module == "aioinformer.errors":
            assert names <= LIFECYCLE_ONLY, (path.name, names)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_module_of_the_fake_is_over_450_lines(path: Path) -> None:
    """Issue 11: small modules, one concept each."""
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 450
