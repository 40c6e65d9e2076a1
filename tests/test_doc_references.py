"""Every cross-reference in the docstrings and the documentation site names a real object
(issue 19, item 5).

The site renders docstring roles (``class``, ``meth``, ``func``, ... in Sphinx's syntax) as
*optional* references (``docs/_ext/sphinx_markup.py``): a target that no longer exists degrades to
plain code instead of failing the strict build, so nothing else notices a module renamed under a
docstring. Here every role of every docstring and ``#:`` comment in ``aioinformer/``, ``examples/``
and ``tests/``, and every reference of ``docs/**/*.md`` and the README (the ``[title][target]``
autorefs, the ``::: target`` directives and code spans naming a path of the package), is resolved
the way Sphinx reads it — ``~`` and ``Title <target>`` forms, ``.name`` relative to the object the
docstring documents (then its class, its module and the packages above), bare names in the scope of
the docstring (the class, the module's names, builtins) — by importing the module and reading the
attributes. A target that reaches a public object through a private module must name it where users
import it (``aioinformer.lowlevel.DeltaFIFO``, not its defining module).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import importlib.util
import inspect
import re
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "aioinformer"

#: A Sphinx role, as the docstrings write it (``:py:`` domain prefix optional).
ROLE = re.compile(r":(?:py:)?(class|meth|func|attr|data|mod|exc|obj|const):`([^`]+)`")
_TITLED = re.compile(r"^(.*?)\s*<([^>]+)>$", re.DOTALL)
#: An autorefs reference of a Markdown page: ``[title][aioinformer.X]``.
AUTOREF = re.compile(r"\]\[([A-Za-z_][\w.]*)\]")
#: A mkdocstrings directive: ``::: aioinformer.X``.
DIRECTIVE = re.compile(r"^::: *([\w.]+)", re.MULTILINE)
#: A code span naming a path of the package: ```aioinformer.lowlevel.Reflector```.
CODE_PATH = re.compile(r"`(aioinformer(?:\.\w+)+)(?:\(\))?`")


@dataclass(frozen=True)
class Reference:
    """One cross-reference and where it was written."""

    where: str  # file:line
    role: str
    target: str  # as written, without ``~`` and title
    module: str | None  # the module of the docstring (None for a Markdown page)
    scope: tuple[str, ...]  # qualified name of the documented object within the module


def _target(text: str) -> str:
    titled = _TITLED.match(text.strip())
    target = titled.group(2) if titled else text.strip()
    return target.lstrip("~").removesuffix("()")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] in ("__init__", "__main__"):  # a __main__ runs on import: read its package
        parts.pop()
    return ".".join(parts)


Documented = tuple[ast.Constant, tuple[str, ...]]


def _string(node: ast.stmt | None) -> ast.Constant | None:
    """The string literal a statement consists of (a docstring), else None."""
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ):
        return node.value
    return None


def _docstrings(tree: ast.Module) -> Iterator[Documented]:
    """Every docstring (and attribute docstring: a string right after an assignment) with
    the qualified name of what it documents."""

    def visit(body: list[ast.stmt], scope: tuple[str, ...]) -> Iterator[Documented]:
        for i, node in enumerate(body):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                inner = (*scope, node.name)
                doc = _string(node.body[0] if node.body else None)
                if doc is not None:
                    yield doc, inner
                yield from visit(node.body, inner)
            elif i > 0 and isinstance(body[i - 1], ast.Assign | ast.AnnAssign):
                doc = _string(node)
                if doc is not None:
                    yield doc, scope  # an attribute docstring
            elif isinstance(node, ast.If | ast.Try | ast.With):
                yield from visit(node.body, scope)

    doc = _string(tree.body[0] if tree.body else None)
    if doc is not None:
        yield doc, ()
    yield from visit(tree.body, ())


def _scopes_by_line(tree: ast.Module) -> dict[int, tuple[str, ...]]:
    """The qualified name of the class or function each line is in (for ``#:`` comments)."""
    scopes: dict[int, tuple[str, ...]] = {}

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                inner = (*scope, child.name)
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    scopes[line] = inner
                visit(child, inner)

    visit(tree, ())
    return scopes


def python_references(path: Path) -> Iterator[Reference]:
    """The roles of one file's docstrings and ``#:`` comments."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    module = _module_name(path)
    name = path.relative_to(ROOT)
    for constant, scope in _docstrings(tree):
        text = constant.value
        assert isinstance(text, str)
        for match in ROLE.finditer(text):
            at = constant.lineno + text.count("\n", 0, match.start())
            yield Reference(f"{name}:{at}", match[1], _target(match[2]), module, scope)
    scopes = _scopes_by_line(tree)
    for number, line in enumerate(source.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#:"):
            # A comment documents the attribute below it, in the scope it is written in.
            scope = scopes.get(number + 1, scopes.get(number, ()))
            for match in ROLE.finditer(stripped):
                yield Reference(f"{name}:{number}", match[1], _target(match[2]), module, scope)


def markdown_references(path: Path) -> Iterator[Reference]:
    """The autorefs references and mkdocstrings directives of one page."""
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT)
    for pattern, role in ((AUTOREF, "autoref"), (DIRECTIVE, "directive"), (CODE_PATH, "code")):
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield Reference(f"{name}:{line}", role, match[1], None, ())
    for match in ROLE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        yield Reference(f"{name}:{line}", match[1], _target(match[2]), None, ())


def all_references() -> list[Reference]:
    found: list[Reference] = []
    for folder in (PACKAGE, ROOT / "examples", ROOT / "tests"):
        for path in sorted(folder.rglob("*.py")):
            found.extend(python_references(path))
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        found.extend(markdown_references(path))
    return found


# -- resolving ---------------------------------------------------------------------------


_MISSING = object()


def _import_path(path: str) -> object:
    """The object a dotted path names: the longest importable module, then attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            obj = _member(obj, part)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


@functools.cache
def _parse(filename: str) -> ast.Module:
    return ast.parse(Path(filename).read_text(encoding="utf-8"))


def _class_tree(klass: type) -> ast.AST:
    """The class statement of ``klass``, found through its functions' code (``__module__``
    names the public namespace re-exporting it, not the file defining it)."""
    for value in vars(klass).values():
        function = value.fget if isinstance(value, property) else value
        function = getattr(function, "__func__", function)
        code = getattr(inspect.unwrap(function), "__code__", None) if callable(function) else None
        if code is None or not Path(code.co_filename).is_file():
            continue
        for node in ast.walk(_parse(code.co_filename)):
            if isinstance(node, ast.ClassDef) and node.name == klass.__name__:
                return node
    return ast.Module(body=[], type_ignores=[])


def _instance_attributes(cls: type) -> set[str]:
    """Names a class's methods assign on ``self`` (``self.x = ...``) or declare in its body
    (annotations, ``__slots__``): attributes of instances, not of the class."""
    names: set[str] = set()
    for klass in inspect.getmro(cls):
        names.update(getattr(klass, "__annotations__", {}))
        slots = klass.__dict__.get("__slots__", ())
        names.update([slots] if isinstance(slots, str) else slots)
        for node in ast.walk(_class_tree(klass)):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    names.add(target.attr)
    return names


def _member(obj: object, name: str) -> object:
    try:
        return getattr(obj, name)
    except AttributeError:
        pass
    if isinstance(obj, types.ModuleType):
        try:
            return importlib.import_module(f"{obj.__name__}.{name}")
        except ImportError:
            return _MISSING
    if isinstance(obj, type) and name in _instance_attributes(obj):
        return f"instance attribute {obj.__qualname__}.{name}"
    return _MISSING


def _scope_objects(ref: Reference) -> list[object]:
    """What a name in the docstring is looked up in, innermost first: the documented
    object, the classes around it, the module."""
    assert ref.module is not None
    module = importlib.import_module(ref.module)
    chain: list[object] = [module]
    obj: object = module
    for part in ref.scope:
        obj = _member(obj, part)
        if obj is _MISSING or isinstance(obj, str):
            break
        chain.append(obj)
    return list(reversed(chain))


def _module_names(module: str) -> dict[str, str]:
    """Names a module imports only for type checking (``if TYPE_CHECKING:``): name → path."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return {}
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    package = module if spec.origin.endswith("__init__.py") else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                names[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.partition(".")[0]] = (
                    alias.name if alias.asname else alias.name.partition(".")[0]
                )
    return names


def resolve(ref: Reference) -> object:
    """The object a reference names, or ``_MISSING``."""
    target = ref.target
    if ref.module is None:  # a Markdown page: absolute paths only
        return _import_path(target)
    if target.startswith("."):
        rest = target.lstrip(".")
        candidates: list[object] = [*_scope_objects(ref)]
        package = ref.module
        while "." in package:
            package = package.rpartition(".")[0]
            candidates.append(importlib.import_module(package))
        for scope in candidates:
            obj: object = scope
            for part in rest.split("."):
                obj = _member(obj, part)
                if obj is _MISSING:
                    break
            if obj is not _MISSING:
                return obj
        return _MISSING
    head, _, tail = target.partition(".")
    for scope in _scope_objects(ref):
        obj = _member(scope, head)
        if obj is _MISSING and isinstance(scope, types.ModuleType):
            path = _module_names(scope.__name__).get(head)
            obj = _import_path(path) if path else _MISSING
        if obj is not _MISSING:
            for part in tail.split(".") if tail else ():
                obj = _member(obj, part)
                if obj is _MISSING:
                    break
            if obj is not _MISSING:
                return obj
    if hasattr(builtins, head) and not tail:
        return getattr(builtins, head)
    return _import_path(target)


def _is_private(path: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in path.split("."))


def public_path(ref: Reference) -> str | None:
    """Where users import an object that an absolute private path reaches, or None when the
    path is fine (public already, relative, or the object is not published)."""
    target = ref.target
    if not target.startswith("aioinformer.") or not _is_private(target):
        return None
    parts = target.split(".")
    for cut in range(2, len(parts) + 1):
        owner = _import_path(".".join(parts[:cut]))
        if isinstance(owner, types.ModuleType):
            continue
        if not isinstance(owner, type | types.FunctionType):
            return None  # a constant, an alias: it has no home of its own
        published = f"{owner.__module__}.{owner.__qualname__}"
        if _is_private(published) or _import_path(published) is not owner:
            return None
        return ".".join([published, *parts[cut:]])
    return None


REFERENCES = all_references()


def test_the_references_are_found() -> None:
    """The collector sees the roles (a broken pattern would pass everything)."""
    roles = {ref.role for ref in REFERENCES}
    assert {"class", "meth", "func", "mod", "attr", "data", "autoref", "directive", "code"} <= roles
    assert len(REFERENCES) > 1000


def test_every_reference_resolves() -> None:
    """Each target imports and its attributes exist."""
    missing = [
        f"{ref.where}: :{ref.role}:`{ref.target}`" for ref in REFERENCES if resolve(ref) is _MISSING
    ]
    assert missing == []


def test_references_to_public_objects_name_their_public_path() -> None:
    """A private module path to a published object renders as plain code on the site (only
    the public namespaces are rendered): name it where users import it."""
    wrong = []
    for ref in REFERENCES:
        obj = resolve(ref)
        if obj is _MISSING:
            continue
        better = public_path(ref)
        if better is not None and better != ref.target:
            wrong.append(f"{ref.where}: {ref.target} -> {better}")
    assert wrong == []


@pytest.mark.parametrize(
    ("text", "target"),
    [
        (":class:`~aioinformer.lowlevel.DeltaFIFO`", "aioinformer.lowlevel.DeltaFIFO"),
        (
            ":meth:`the waiter <aioinformer.SharedIndexInformer.wait_for_cache_sync>`",
            "aioinformer.SharedIndexInformer.wait_for_cache_sync",
        ),
        (":py:func:`aioinformer.connect()`", "aioinformer.connect"),
    ],
)
def test_role_forms(text: str, target: str) -> None:
    """``~``, ``Title <target>``, the domain prefix and a trailing ``()`` name the target."""
    match = ROLE.search(text)
    assert match is not None
    assert _target(match[2]) == target


def test_resolution_rules() -> None:
    """Relative names look in the documented object, its class, its module and the packages
    above it; bare names in the docstring's scope, then builtins; stale paths miss."""
    here = "aioinformer._informer._informer"
    scope = ("SharedIndexInformer", "events")

    def ref(target: str) -> Reference:
        return Reference("x", "meth", target, here, scope)

    from aioinformer import SharedIndexInformer
    from aioinformer.lowlevel import DeltaFIFO

    assert resolve(ref("aclose")) == SharedIndexInformer.aclose
    assert resolve(ref(".wait_for_cache_sync")) == SharedIndexInformer.wait_for_cache_sync
    assert resolve(ref("DeltaFIFO")) is DeltaFIFO
    assert resolve(ref("TimeoutError")) is TimeoutError
    assert resolve(ref("._cache")) is importlib.import_module("aioinformer._cache")
    assert resolve(ref("aioinformer.delta_fifo.DeltaFIFO")) is _MISSING
    assert resolve(ref("no_such_method")) is _MISSING
    assert public_path(ref("aioinformer._cache._delta_fifo.DeltaFIFO.pop_batch")) == (
        "aioinformer.lowlevel.DeltaFIFO.pop_batch"
    )
