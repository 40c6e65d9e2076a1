"""The package's public surface: a few namespaces, each name public exactly once (issue 11).

Modelled on trio's ``test_exports`` and anyio's ``test_all_attributes``: every namespace
lists its names in ``__all__``, every entry resolves, no object is exported twice, and every
class and function says where users import it from (``aioinformer.SharedIndexInformer``, not
the private module that defines it).
"""

from __future__ import annotations

import importlib
import pathlib
import pkgutil
import subprocess
import sys
import types
from collections import Counter

import pytest

import aioinformer

#: The public namespaces; every other module of the package is private.
NAMESPACES = (
    "aioinformer",
    "aioinformer.errors",
    "aioinformer.lowlevel",
    "aioinformer.workqueue",
    "aioinformer.metrics",
    "aioinformer.integrations",
    "aioinformer.integrations.aiohttp",
    "aioinformer.integrations.fastapi",
    "aioinformer.testing",
    "aioinformer.conditions",
    "aioinformer.predicates",
)

#: How many names each namespace exports. Changing one of these is an API decision. The
#: issue's "about 60 names" counts the everyday surface: ``aioinformer``, ``workqueue``,
#: ``metrics`` and ``integrations`` (with its two framework modules). ``lowlevel`` (for
#: building a pipeline of one's own), ``testing`` (the fake API server) and ``errors`` (the
#: exception hierarchy) are counted apart. 63 of the everyday names are the consolidated surface
#: of issue 11; seven came with sharding (issue 14: ``ShardedController``, ``ShardSelector``,
#: ``shard_range``, ``equal_shards``, ``ShardTiming``, ``RangeExit`` and the metrics collector).
#: Five came with the operator toolkit (issue 22: ``Finalizer``, ``EventRecorder``,
#: ``EventRecorderStatistics``, ``owner_keys``, ``set_controller_reference``); its condition
#: helpers and predicates are namespaces of their own, counted apart, as are its two errors.
#: ``testing`` gained the scripted lister-watcher and its stream in issue 19 (the suite's own
#: double, made public).
EVERYDAY = {
    "aioinformer": 49,
    "aioinformer.workqueue": 11,
    "aioinformer.metrics": 6,
    "aioinformer.integrations": 2,
    "aioinformer.integrations.aiohttp": 4,
    "aioinformer.integrations.fastapi": 4,
}
APART = {
    "aioinformer.lowlevel": 17,
    "aioinformer.testing": 13,
    "aioinformer.errors": 43,
    "aioinformer.conditions": 9,
    "aioinformer.predicates": 5,
}

#: The one public-looking module that is not a namespace: the pytest plugin, which
#: ``pyproject.toml`` registers as the ``pytest11`` entry point by this name.
NOT_NAMESPACES = ("aioinformer.testing.pytest_plugin",)


def exports(namespace: str) -> dict[str, object]:
    module = importlib.import_module(namespace)
    names: tuple[str, ...] = tuple(module.__all__)
    return {name: getattr(module, name) for name in names}


def is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_entry_of_all_resolves_once(namespace: str) -> None:
    """``__all__`` names only what the namespace has, each name once."""
    module = importlib.import_module(namespace)
    names = list(module.__all__)
    assert [n for n in names if not hasattr(module, n)] == []
    assert [n for n, k in Counter(names).items() if k > 1] == []


def test_no_name_is_exported_from_two_namespaces() -> None:
    """Each public class, function and constant has one home."""
    homes: dict[str, list[str]] = {}
    objects: dict[int, list[str]] = {}
    for namespace in NAMESPACES:
        for name, obj in exports(namespace).items():
            if name == "__version__":
                continue
            homes.setdefault(name, []).append(namespace)
            if isinstance(obj, type | types.FunctionType):
                objects.setdefault(id(obj), []).append(f"{namespace}.{name}")
    assert {n: h for n, h in homes.items() if len(h) > 1} == {}
    assert [where for where in objects.values() if len(where) > 1] == []


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_exported_classes_and_functions_name_their_public_home(namespace: str) -> None:
    """No public class or function reports a private module: reprs, tracebacks and pickles
    name the namespace users import it from, and that name resolves to the object."""
    for name, obj in exports(namespace).items():
        if not isinstance(obj, type | types.FunctionType):
            continue  # constants and type aliases
        assert not is_private(obj.__module__), (namespace, name, obj.__module__)
        home = importlib.import_module(obj.__module__)
        assert getattr(home, obj.__qualname__) is obj, (namespace, name)


def test_reprs_say_where_users_import_from() -> None:
    """``repr`` of a class shows its public path."""
    assert repr(aioinformer.SharedIndexInformer) == "<class 'aioinformer.SharedIndexInformer'>"
    assert aioinformer.lowlevel.Reflector.__module__ == "aioinformer.lowlevel"
    assert aioinformer.workqueue.WorkQueue.__module__ == "aioinformer.workqueue"


def test_every_other_module_is_private() -> None:
    """A module of the package is a public namespace, or private (a ``_`` in its path)."""
    path = [str(pathlib.Path(aioinformer.__file__).parent)]
    public = [
        info.name
        for info in pkgutil.walk_packages(path, prefix="aioinformer.")
        if not is_private(info.name)
        and info.name not in NAMESPACES
        and info.name not in NOT_NAMESPACES
    ]
    assert public == []


def test_the_public_names_are_counted() -> None:
    """About 60 everyday names; the specialist namespaces apart. A change here is deliberate."""
    counts = {namespace: len(exports(namespace)) for namespace in {**EVERYDAY, **APART}}
    assert counts == {**EVERYDAY, **APART}
    assert sum(EVERYDAY.values()) == 76


def test_package_is_typed() -> None:
    """py.typed ships with the package."""
    assert (pathlib.Path(aioinformer.__file__).parent / "py.typed").exists()


def test_importing_the_package_creates_no_event_loop_task_or_thread() -> None:
    """Importing every public namespace in a fresh interpreter starts nothing: no event loop
    (so no task), no thread, and no warning."""
    code = f"""
import asyncio, gc, threading, warnings
warnings.simplefilter("error")
threads = set(threading.enumerate())
import importlib
for name in {NAMESPACES!r}:
    if name.endswith("fastapi"):
        continue  # needs the examples extra
    importlib.import_module(name)
loops = [o for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop)]
assert loops == [], loops
assert asyncio.events._get_running_loop() is None
assert set(threading.enumerate()) == threads, threading.enumerate()
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "ok"
