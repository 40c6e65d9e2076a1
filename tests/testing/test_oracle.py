"""The fake API server is an independent oracle of the client.

Design rule (DESIGN.md §2.10, architecture review §1.5): the fake shares no parsing, matching
or error code with the client it tests, so a client bug cannot be mirrored by the fake. It
takes from the client side only what it declares: the client's error classes at one boundary
(``_boundary.py``), the one resource table, the clock and the lifecycle. The import contracts
in ``pyproject.toml`` (``make lint``) check the same floor plan on the import graph; this test
reads every module of the fake, so it holds on a checkout without the linter too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import aioinformer.testing

TESTING = Path(aioinformer.testing.__file__).parent
FAKE = TESTING / "_apiserver"
MODULES = sorted(FAKE.rglob("*.py"))
DOUBLES = sorted((TESTING / "_doubles").rglob("*.py"))

#: What the fake may import from the client side (the rest of ``aioinformer``).
DECLARED = {
    "aioinformer.errors",  # only in _boundary.py
    "aioinformer._builtin_resources",
    "aioinformer._clock",
    "aioinformer._lifecycle",
}

#: The one module that knows the client's error classes.
BOUNDARY = FAKE / "_boundary.py"


def _module_name(path: Path) -> str:
    parts = path.relative_to(TESTING.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[str]:
    """Every module ``path`` imports (``from a import b``: ``a.b`` when that is a module, else
    ``a``), relative imports made absolute; imports inside functions and ``TYPE_CHECKING``
    blocks included."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.append(module)
            found.extend(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return found


def _client_side(module: str) -> bool:
    return (module == "aioinformer" or module.startswith("aioinformer.")) and not (
        module.startswith("aioinformer.testing._apiserver")
    )


def _known(module: str) -> bool:
    """Whether ``module`` names a module of the package (not ``module.some_name``)."""
    relative = Path(*module.split("."))
    root = TESTING.parent.parent
    return (root / relative).with_suffix(".py").exists() or (root / relative).is_dir()


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(FAKE)))
def test_the_fake_imports_from_the_client_side_only_what_it_declares(path: Path) -> None:
    """No selector, cache, wire or object code of the client: only the declared modules."""
    taken = {m for m in _imports(path) if _client_side(m) and _known(m)}
    assert taken <= DECLARED, sorted(taken - DECLARED)


@pytest.mark.parametrize(
    "path", [p for p in MODULES if p != BOUNDARY], ids=lambda p: str(p.relative_to(FAKE))
)
def test_only_the_boundary_knows_the_clients_error_classes(path: Path) -> None:
    """Inside, a refusal is a ``StatusFailure``; client exceptions appear only at the edge
    (the facade takes ``LifecycleError``, ``ApiError``... from ``_boundary``)."""
    assert "aioinformer.errors" not in _imports(path)


def test_the_boundary_is_where_client_errors_come_from() -> None:
    """The rule above is not vacuous: the boundary does import them."""
    assert "aioinformer.errors" in _imports(BOUNDARY)


@pytest.mark.parametrize("path", DOUBLES, ids=lambda p: p.name)
def test_the_test_doubles_do_not_use_the_fake(path: Path) -> None:
    """``FakeClock`` and ``MemorySource`` are client-side doubles, apart from the oracle."""
    assert not [m for m in _imports(path) if m.startswith("aioinformer.testing._apiserver")]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(FAKE)))
def test_the_fake_does_not_use_the_test_doubles(path: Path) -> None:
    assert not [m for m in _imports(path) if m.startswith("aioinformer.testing._doubles")]
