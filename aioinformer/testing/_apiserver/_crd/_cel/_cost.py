"""Cost, approximated (Kubernetes: cel-go's estimator and runtime cost tracker).

A real server charges every evaluated step, sizes strings and lists from the schema's
``maxLength``/``maxItems``/``maxProperties`` (unbounded ones from the 3 MiB request limit) and
refuses at CRD creation a rule whose estimated cost times its cardinality passes 10,000,000
(per expression) or 100,000,000 (per schema). At run time each call may spend 1,000,000 and a
request 10,000,000.

Here, from the checked tree: a constant costs 0, an identifier, a field selection and a
function call 1 (string scanning functions add a tenth of the receiver's size), a list literal
10, a map or message literal 40, each operand its own; a comprehension its range, its
accumulator and its result once plus its condition and step once per element, elements being
bounded by the schema when the range is a path from ``self``/``oldSelf`` (unknown ranges: the
request limit). At run time the fixed part is charged before evaluation and every comprehension
iteration charges its per-iteration cost as it runs (see :mod:`._env`), so the charge follows the
data actually present.
"""

from __future__ import annotations

import math
from typing import Any

from . import _ast
from ._schema import MAX_REQUEST, CelType

__all__ = [
    "PER_CALL_LIMIT",
    "RUNTIME_BUDGET",
    "STATIC_LIMIT",
    "STATIC_CRD_LIMIT",
    "Estimate",
    "cost_error_message",
    "estimate",
]

PER_CALL_LIMIT = 1_000_000
RUNTIME_BUDGET = 10_000_000
STATIC_LIMIT = 10_000_000
STATIC_CRD_LIMIT = 100_000_000
_UNKNOWN = CelType("dyn", max_elements=MAX_REQUEST - 2)
_SCANNING = {
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "find",
    "findAll",
    "split",
    "replace",
    "lowerAscii",
    "upperAscii",
    "trim",
    "indexOf",
    "lastIndexOf",
    "join",
    "substring",
    "charAt",
    "format",
}


class Estimate:
    """Static cost of one expression: ``total`` (worst case), ``base`` (run-time fixed part),
    ``per_iteration`` (comprehension node id -> cost of one iteration)."""

    def __init__(self, self_type: CelType | None) -> None:
        self.self_type = self_type
        self.per_iteration: dict[int, int] = {}
        self.total = 0
        self.base = 0


def _type_of(expr: Any, scope: dict[str, CelType], root: CelType | None) -> CelType | None:
    kind = expr.WhichOneof("expr_kind")
    if kind == "ident_expr":
        name = expr.ident_expr.name
        if name in scope:
            return scope[name]
        return root if name in ("self", "oldSelf") else None
    if kind == "select_expr":
        parent = _type_of(expr.select_expr.operand, scope, root)
        if parent is None:
            return None
        if parent.kind == "object":
            return parent.fields.get(expr.select_expr.field)
        if parent.kind == "map":
            return parent.elem
        return None
    if kind == "call_expr" and expr.call_expr.function == "_[_]":
        parent = _type_of(expr.call_expr.args[0], scope, root)
        return parent.elem if parent is not None and parent.kind in ("list", "map") else None
    if kind == "list_expr":
        return CelType("list", _UNKNOWN, max_elements=len(expr.list_expr.elements))
    if kind == "const_expr" and expr.const_expr.WhichOneof("constant_kind") == "string_value":
        return CelType("string", max_elements=len(expr.const_expr.string_value))
    return None


def _size(t: CelType | None) -> int:
    return t.max_elements if t is not None else MAX_REQUEST - 2


def _cost(
    expr: Any, scope: dict[str, CelType], root: CelType | None, est: Estimate, iterate: bool
) -> int:
    """Cost of ``expr``; ``iterate`` False leaves comprehension iterations out."""
    kind = expr.WhichOneof("expr_kind")
    if kind == "const_expr":
        return 0
    if kind == "ident_expr":
        return 1
    if kind == "select_expr":
        return 1 + _cost(expr.select_expr.operand, scope, root, est, iterate)
    if kind == "call_expr":
        call = expr.call_expr
        total = 1
        if call.HasField("target"):
            total += _cost(call.target, scope, root, est, iterate)
            if call.function in _SCANNING:
                total += math.ceil(0.1 * _size(_type_of(call.target, scope, root)))
        total += sum(_cost(a, scope, root, est, iterate) for a in call.args)
        return total
    if kind == "list_expr":
        return 10 + sum(_cost(e, scope, root, est, iterate) for e in expr.list_expr.elements)
    if kind == "struct_expr":
        return 40 + sum(_cost(c, scope, root, est, iterate) for c in _ast.children(expr))
    if kind == "comprehension_expr":
        c = expr.comprehension_expr
        range_type = _type_of(c.iter_range, scope, root)
        inner = dict(scope)
        if range_type is not None and range_type.kind == "list":
            inner[c.iter_var] = range_type.elem or _UNKNOWN
        elif range_type is not None and range_type.kind == "map":
            inner[c.iter_var] = CelType("string", max_elements=0)  # keys: not sized
        else:
            inner.pop(c.iter_var, None)
        fixed = (
            _cost(c.iter_range, scope, root, est, iterate)
            + _cost(c.accu_init, scope, root, est, iterate)
            + _cost(c.result, inner, root, est, iterate)
        )
        once = _cost(c.loop_condition, inner, root, est, False) + _cost(
            c.loop_step, inner, root, est, False
        )
        est.per_iteration[expr.id] = max(once, 1)
        if not iterate:
            return fixed
        each = _cost(c.loop_condition, inner, root, est, True) + _cost(
            c.loop_step, inner, root, est, True
        )
        return fixed + _size(range_type) * each
    return 1


def estimate(checked: Any, self_type: CelType | None) -> Estimate:
    est = Estimate(self_type)
    est.total = _cost(checked.expr, {}, self_type, est, True)
    est.base = _cost(checked.expr, {}, self_type, est, False)
    return est


def cost_error_message(name: str, cost: int, limit: int) -> str:
    """``getCostErrorMessage``."""
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (
        f"{name} exceeds budget by factor of {text} (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
