"""The package's public surface: exports, typing marker, import cost."""

from __future__ import annotations

import importlib
import pathlib
import subprocess
import sys

import pytest

import aioinformer

PUBLIC_MODULES = [
    "aioinformer",
    "aioinformer.errors",
    "aioinformer.workqueue",
    "aioinformer.testing",
    "aioinformer.metrics",
    "aioinformer.integrations",
    "aioinformer.integrations.aiohttp",
    "aioinformer.integrations.fastapi",
]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_module_declares_all_and_defines_it(name: str) -> None:
    """Each public module has an __all__ whose names all exist."""
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported, f"{name} has no __all__"
    missing = [n for n in exported if not hasattr(module, n)]
    assert missing == []
    assert len(set(exported)) == len(exported)


def test_top_level_exports_only_reexports() -> None:
    """aioinformer/__init__.py defines nothing of its own: every export lives in a submodule."""
    for name in aioinformer.__all__:
        if name in ("__version__", "KubeObject", "NAMESPACE_INDEX"):
            continue  # a string, a type alias and a constant
        obj = getattr(aioinformer, name)
        module = getattr(obj, "__module__", None)
        assert module is None or module.startswith("aioinformer."), (name, module)


def test_package_is_typed() -> None:
    """py.typed ships with the package."""
    assert (pathlib.Path(aioinformer.__file__).parent / "py.typed").exists()


def test_importing_the_package_creates_no_event_loop_or_tasks() -> None:
    """Importing aioinformer in a fresh interpreter has no side effects worth noticing."""
    code = (
        "import asyncio, warnings; warnings.simplefilter('error');"
        "import aioinformer, aioinformer.testing, aioinformer.workqueue;"
        "print(len(aioinformer.__all__))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert int(out.stdout) == len(aioinformer.__all__)
