"""``import aioinformer`` is light (issue 19, deliverable 4).

``import aioinformer`` loads none of the machinery, so that an environment where aioinformer is
merely installed (a pytest run, whose plugin lives in this package) does not pay for it; the
first public name used loads the rest. kubernetes_asyncio loads when ``connect()`` connects,
the fake API server only with ``aioinformer.testing``. Each check runs in a fresh interpreter.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import aioinformer

PACKAGE = Path(aioinformer.__file__)

#: What a program that never connects must not load.
HEAVY = ("kubernetes_asyncio", "aioinformer.testing")


def loaded_after(code: str, *prefixes: str) -> list[str]:
    """The modules named by ``prefixes`` that ``code`` leaves loaded in a fresh interpreter."""
    probe = (
        f"{code}\nimport sys\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {prefixes!r}"
        f" or m.startswith({prefixes!r})))"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    loaded: list[str] = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    return loaded


def test_import_aioinformer_loads_no_machinery() -> None:
    """The package alone: no aiohttp, anyio, kubernetes_asyncio, no fake, no private module but
    the version."""
    assert loaded_after("import aioinformer", "aiohttp", "anyio", *HEAVY) == []
    assert loaded_after("import aioinformer", "aioinformer") == [
        "aioinformer",
        "aioinformer._version",
    ]


def test_every_public_name_loads_without_kubernetes_asyncio_or_the_fake() -> None:
    """Every name of every client-side namespace resolves without kubernetes_asyncio (it loads
    when ``connect()`` connects) or the fake API server."""
    code = (
        "from aioinformer import *\n"
        "from aioinformer.lowlevel import *\n"
        "from aioinformer.workqueue import *\n"
        "from aioinformer.errors import *\n"
        "from aioinformer.metrics import *\n"
        "from aioinformer.integrations import *\n"
        "import aioinformer\n"
        "assert aioinformer.connect(server='http://127.0.0.1:1') is not None\n"
    )
    assert loaded_after(code, *HEAVY) == []


def test_connecting_loads_kubernetes_asyncio() -> None:
    """The first connection imports kubernetes_asyncio (here over plain HTTP, refused)."""
    code = (
        "import anyio, aioinformer\n"
        "async def main():\n"
        "    async with aioinformer.connect(server='http://127.0.0.1:1'):\n"
        "        pass\n"
        "anyio.run(main)\n"
    )
    assert "kubernetes_asyncio" in loaded_after(code, "kubernetes_asyncio")


def test_the_first_public_name_publishes_them_all() -> None:
    """Any public name loads them all, each presented where users import it from, as an
    eager package would: the reprs do not depend on which name was used first."""
    code = (
        "from aioinformer import Clock\n"
        "import aioinformer._informer._listener as listener, aioinformer._reflector as r\n"
        "print(listener.Event.__module__, r.Reflector.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["aioinformer", "aioinformer.lowlevel"]


def test_attributes_namespaces_and_dir() -> None:
    """``aioinformer.errors`` and the other namespaces are attributes; ``dir()`` lists every
    public name; an unknown name is an AttributeError naming it."""
    code = (
        "import aioinformer\n"
        "print(aioinformer.errors.ConfigurationError.__name__,"
        " aioinformer.workqueue.WorkQueue.__name__, aioinformer.lowlevel.Reflector.__name__)\n"
        "print(set(aioinformer.__all__) <= set(dir(aioinformer)))\n"
        "try:\n"
        "    aioinformer.Nope\n"
        "except AttributeError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.splitlines() == [
        "ConfigurationError WorkQueue Reflector",
        "True",
        "module 'aioinformer' has no attribute 'Nope'",
    ]


def test_the_name_table_agrees_with_the_typed_imports() -> None:
    """``_DEFINED_IN`` (what ``__getattr__`` imports) and the ``TYPE_CHECKING`` imports (what
    mypy and the docs see) name the same definitions, and together cover ``__all__``."""
    tree = ast.parse(PACKAGE.read_text())
    typed: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                for alias in statement.names:
                    assert alias.asname == alias.name  # an explicit re-export
                    typed[alias.name] = "." * statement.level + (statement.module or "")
    namespaces = {name for name, module in typed.items() if module == "."}
    assert namespaces == set(aioinformer._NAMESPACES)
    assert {k: v for k, v in typed.items() if k not in namespaces} == aioinformer._DEFINED_IN
    assert set(aioinformer.__all__) == {*aioinformer._DEFINED_IN, "__version__"}


@pytest.mark.parametrize("name", ["KubeClient", "SharedInformerFactory"])
def test_a_public_name_is_the_defining_object(name: str) -> None:
    """What ``aioinformer.X`` resolves to is the object of the private module (one object)."""
    module = importlib.import_module(aioinformer._DEFINED_IN[name], "aioinformer")
    assert getattr(aioinformer, name) is getattr(module, name)
