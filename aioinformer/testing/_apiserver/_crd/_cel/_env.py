"""Two cel-expr-python environments per CRD: one type-checks, one evaluates.

* the checker environment declares ``self``/``oldSelf`` with the node's CEL type (objects as
  protobuf messages of a per-CRD pool, :mod:`._schema`) and the libraries with their Kubernetes
  signatures, so compile errors read as a real server's;
* the checked expression is serialized, rewritten (:mod:`._ast`: optional-returning library
  calls, a cost counter in every comprehension) and planned in the runtime environment, where
  ``self``/``oldSelf`` are ``dyn`` and values are plain Python data (:mod:`._project`).

Base environment: cel-go's standard library with cross-type numeric comparisons, optional
types, ``ext.Strings`` version 2 (charAt, indexOf, lastIndexOf, lowerAscii, upperAscii,
replace, split, substring, trim, join, format, quote), the Kubernetes libraries of
:mod:`._libs`. Not available: two-variable comprehensions and ``sortBy`` (macros cannot be
added to cel-expr-python), ``cel.bind`` (not in Kubernetes' environment either).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_optional, ext_strings

from . import _ast
from ._libs import (
    OPAQUE,
    OPTIONAL_RESULTS,
    RUNTIME_POOL,
    CelRuntimeError,
    declarations,
    opaque_files,
)

__all__ = ["Checker", "Program", "runtime_env", "CompileError"]


class CompileError(Exception):
    """A compile failure; ``str()`` is cel-go's ``issues.String()`` spelling."""


_TICK = "__k8s_tick"
_OPT_INDEX = "_[?_]"


def _t(sig: str) -> Any:
    return {
        "int": cel.Type.INT,
        "uint": cel.Type.UINT,
        "double": cel.Type.DOUBLE,
        "string": cel.Type.STRING,
        "bool": cel.Type.BOOL,
        "bytes": cel.Type.BYTES,
        "dyn": cel.Type.DYN,
    }.get(sig) or cel.Type(sig)


class _Budget(threading.local):
    """The per-evaluation counter the rewritten comprehensions bump."""

    def __init__(self) -> None:
        self.used = 0
        self.limit = 1 << 62
        self.exceeded = False


BUDGET = _Budget()


def _tick(cost: int) -> bool:
    BUDGET.used += cost
    if BUDGET.used > BUDGET.limit:
        BUDGET.exceeded = True
        return False
    return True


def _wrap(impl: Callable[..., Any]) -> Callable[..., Any]:
    """Library errors become CEL errors (a raised exception is one in cel-expr-python)."""

    def run(*args: Any) -> Any:
        try:
            return impl(*args)
        except CelRuntimeError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, ArithmeticError) as error:
            raise CelRuntimeError(str(error)) from None

    return run


def runtime_name(overload_id: str) -> str:
    """The unique name a library overload is planned under at run time."""
    return "__k8s__" + re.sub(r"[^A-Za-z0-9_]", "_", overload_id)


_LIBRARY_IDS = {oid: member for _, oid, _p, _r, member, _i in declarations()}


def _library(checking: bool) -> Any:
    decls = []
    if checking:
        by_name: dict[str, list[Any]] = {}
        for name, oid, params, result, member, _impl in declarations():
            by_name.setdefault(name, []).append(
                cel.Overload(oid, _t(result), [_t(p) for p in params], is_member=member)
            )
        decls = [cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()]
    else:
        for _name, oid, params, result, member, impl in declarations():
            if oid in OPTIONAL_RESULTS:
                result = "list<dyn>"
            runtime_params = ["list<dyn>" if p.startswith("list<") else p for p in params]
            decls.append(
                cel.FunctionDecl(
                    runtime_name(oid),
                    [
                        cel.Overload(
                            oid,
                            _t(result),
                            [_t(p) for p in runtime_params],
                            is_member=member,
                            impl=_wrap(impl),
                        )
                    ],
                )
            )
        decls.append(
            cel.FunctionDecl(
                _TICK, [cel.Overload("k8s_tick_int", cel.Type.BOOL, [cel.Type.INT], impl=_tick)]
            )
        )
    return cel.CelExtension("kubernetes", decls)


def _extensions(checking: bool) -> list[Any]:
    return [ext_strings.ExtStrings(2), ext_optional.ExtOptional(), _library(checking)]


_RUNTIME: Any = None
_RUNTIME_LOCK = threading.Lock()


def runtime_env() -> Any:
    global _RUNTIME
    with _RUNTIME_LOCK:
        if _RUNTIME is None:
            _RUNTIME = cel.NewEnv(
                RUNTIME_POOL,
                variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
                extensions=_extensions(False),
            )
        return _RUNTIME


# cel-cpp wording -> cel-go wording (compile issues)
_ISSUE_FIXES = [
    (re.compile(r"undefined field '([^']*)' not found in struct '[^']*'"), r"undefined field '\1'"),
]


def _issues(error: Exception) -> str:
    text = str(error)
    text = re.sub(r"^[A-Z_]+: ", "", text)
    text = re.sub(r" \[[A-Z_]+\]$", "", text)
    for pattern, repl in _ISSUE_FIXES:
        text = pattern.sub(repl, text)
    return text


# runtime error wording: cel-cpp -> cel-go
_RUNTIME_FIXES = [
    (re.compile(r"^No matching overloads found.*", re.S), "no such overload"),
    (re.compile(r'^Key not found in map : "(.*)"$', re.S), r"no such key: \1"),
    (re.compile(r"^Index error: index=(-?\d+) size=\d+$"), r"index out of bounds: \1"),
    (re.compile(r"^divide by zero$"), "division by zero"),
]


def runtime_error_text(text: str) -> str:
    text = re.sub(r"^[A-Z_]+: ", "", text)
    m = re.match(r"^.*?Python function '[^']*' raised (?:an? )?(?:exception: )?(.*)$", text, re.S)
    if m:
        text = m.group(1)
    for pattern, repl in _RUNTIME_FIXES:
        if pattern.match(text):
            return pattern.sub(repl, text)
    return text


@dataclass
class Program:
    """A compiled expression: its checked tree, return type and runtime form."""

    source: str
    checked: Any = field(repr=False)
    return_type: str = ""
    runtime: Any = field(default=None, repr=False)
    uses_old_self: bool = False

    def eval(self, data: dict[str, Any]) -> tuple[Any, str | None]:
        """(value, error text): the value as Python data, or the CEL error's cel-go text."""
        try:
            result = self.runtime.eval(data=data)
        except Exception as error:
            return None, runtime_error_text(str(error))
        kind = result.type().name()
        if kind == "ERROR":
            try:
                text = str(result.plain_value())
            except Exception:
                return result, None
            return None, runtime_error_text(text)
        try:
            return result.plain_value(), None
        except Exception:
            return result, None


class Checker:
    """The checker environment of one CRD schema (its object types in ``pool``)."""

    def __init__(self, pool: Any) -> None:
        for f in opaque_files(False):
            pool.Add(f)
        self.pool = pool
        self._envs: dict[tuple[str, bool], Any] = {}

    def env(self, self_type: str, optional_old: bool) -> Any:
        key = (self_type, optional_old)
        env = self._envs.get(key)
        if env is None:
            t = _t(self_type)
            # cel-expr-python cannot declare an optional-typed variable: with optionalOldSelf,
            # oldSelf is checked as dyn (its uses are then checked at run time only)
            old = cel.Type.DYN if optional_old else t
            env = cel.NewEnv(
                self.pool, variables={"self": t, "oldSelf": old}, extensions=_extensions(True)
            )
            self._envs[key] = env
        return env

    def compile(
        self,
        source: str,
        self_type: str,
        optional_old: bool = False,
        tick_costs: Callable[[Any], dict[int, int]] | None = None,
    ) -> Program:
        """Type-check ``source``; raises :class:`CompileError` with cel-go's issue text."""
        env = self.env(self_type, optional_old)
        try:
            expr = env.compile(source)
        except Exception as error:
            raise CompileError(_issues(error)) from None
        checked = _ast.decode(expr.serialize())
        return_type = expr.return_type().name()
        uses_old = _uses(checked.expr, "oldSelf")
        _rewrite_library_calls(checked)
        if tick_costs is not None:
            _instrument(checked, tick_costs(checked))
        runtime = runtime_env().deserialize(_ast.encode(checked))
        return Program(source, checked, return_type, runtime, uses_old)


def _uses(expr: Any, name: str, bound: frozenset[str] = frozenset()) -> bool:
    """Whether ``name`` is referenced where no comprehension variable hides it."""
    kind = expr.WhichOneof("expr_kind")
    if kind == "ident_expr":
        return expr.ident_expr.name == name and name not in bound
    if kind == "comprehension_expr":
        c = expr.comprehension_expr
        inner = bound | {c.iter_var, c.accu_var} | ({c.iter_var2} if c.iter_var2 else set())
        return (
            _uses(c.iter_range, name, bound)
            or _uses(c.accu_init, name, bound | {c.accu_var})
            or any(_uses(e, name, inner) for e in (c.loop_condition, c.loop_step))
            or _uses(c.result, name, bound | {c.accu_var})
        )
    return any(_uses(child, name, bound) for child in _ast.children(expr))


def _rewrite_library_calls(checked: Any) -> None:
    """Library calls -> their overload's runtime name; optional results ->
    ``_[?_](<helper>(args), 0)``."""
    next_id = _ast.max_id(checked) + 1
    for node in reversed(list(_ast.walk(checked.expr))):
        if node.WhichOneof("expr_kind") != "call_expr":
            continue
        ref = checked.reference_map.get(node.id)
        if ref is None:
            continue
        ids = [o for o in ref.overload_id if o in _LIBRARY_IDS]
        if not ids:
            continue
        oid = ids[0]
        del checked.reference_map[node.id]
        if not _LIBRARY_IDS[oid] and node.call_expr.HasField("target"):
            node.call_expr.ClearField("target")  # a namespaced global: format.named(...)
        if oid not in OPTIONAL_RESULTS:
            node.call_expr.function = runtime_name(oid)
            continue
        inner = _ast.Expr(id=next_id)
        next_id += 1
        inner.call_expr.CopyFrom(node.call_expr)
        inner.call_expr.function = runtime_name(oid)
        zero = _ast.Expr(id=next_id)
        next_id += 1
        zero.const_expr.int64_value = 0
        node.ClearField("call_expr")
        node.call_expr.function = _OPT_INDEX
        node.call_expr.args.append(inner)
        node.call_expr.args.append(zero)


def _instrument(checked: Any, costs: dict[int, int]) -> None:
    """Each comprehension's loop condition ``c`` -> ``__k8s_tick(<per-iteration cost>) && c``."""
    next_id = _ast.max_id(checked) + 1
    for node in reversed(list(_ast.walk(checked.expr))):
        if node.WhichOneof("expr_kind") != "comprehension_expr":
            continue
        comp = node.comprehension_expr
        cond = _ast.Expr()
        cond.CopyFrom(comp.loop_condition)
        tick = _ast.Expr(id=next_id)
        cost = _ast.Expr(id=next_id + 1)
        cost.const_expr.int64_value = max(costs.get(node.id, 1), 1)
        tick.call_expr.function = _TICK
        tick.call_expr.args.append(cost)
        comp.loop_condition.Clear()
        comp.loop_condition.id = next_id + 2
        comp.loop_condition.call_expr.function = "_&&_"
        comp.loop_condition.call_expr.args.append(tick)
        comp.loop_condition.call_expr.args.append(cond)
        next_id += 3


__all__ += ["BUDGET", "OPAQUE", "runtime_error_text"]
