"""Running the programs of ``examples/`` from tests: as scripts, or imported as modules."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_example(filename: str) -> subprocess.CompletedProcess[str]:
    """``python examples/<filename>`` from the repository's root (at most 60 s)."""
    return subprocess.run(
        [sys.executable, str(EXAMPLES / filename)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )


@contextmanager
def imported_example(filename: str) -> Iterator[ModuleType]:
    """``examples/<filename>`` imported as a module (its ``main()`` does not run)."""
    name = f"example_{Path(filename).stem}"
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / filename)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]
