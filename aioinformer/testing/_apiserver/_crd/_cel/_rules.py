"""``x-kubernetes-validations``: compiled when a CRD is written, evaluated on every write.

Behaviour of apiextensions-apiserver ``pkg/apiserver/schema/cel/compilation.go`` and
``validation.go`` and of ``pkg/apis/apiextensions/validation/validation.go`` (the CEL part of
``ValidateCustomResourceDefinitionOpenAPISchema``, ``cel_validation.go``).
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import _ast, _cost
from ._cost import PER_CALL_LIMIT, RUNTIME_BUDGET, STATIC_CRD_LIMIT, STATIC_LIMIT
from ._env import BUDGET, Checker, CompileError, Program
from ._errors import OMIT, FieldError, duplicate, forbidden, invalid, required, rule_repr
from ._project import align, project, same
from ._schema import MAX_REQUEST, CelType, Node, Rule, TypeBuilder

__all__ = [
    "CompiledSchema",
    "blocking_error",
    "compile_rules",
    "rules_of",
    "valid_field_path",
    "validate",
]

#: The error of a rule the remaining cost budget cannot pay for (apiextensions-apiserver's
#: ``cel/validation.go``, ``validateExpressions``).
_OUT_OF_BUDGET = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)

#: Compiled schemas by their JSON text (a CRD's schema is compiled when the CRD is validated
#: and again when its resource is served; identical schemas share their programs).
_COMPILED: OrderedDict[str, CompiledSchema] = OrderedDict()
_CACHED = 64

_MAX_MESSAGE = 5 * 1024


# ---- fieldPath ---------------------------------------------------------------------------------
class _PathError(ValueError):
    pass


def _tokens(text: str) -> list[str]:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch in ".[]":
            out.append(ch)
            i += 1
        elif ch == "'":
            j = i + 1
            while j < len(text) and not (text[j] == "'" and text[j - 1] != "\\"):
                j += 1
            out.append(text[i : j + 1])
            i = j + 1
        else:
            j = i
            while j < len(text) and text[j] not in ".[]":
                j += 1
            out.append(text[i:j])
            i = j
    return out


_UNESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "'": "'",
    "\\": "\\",
}


def valid_field_path(text: str, node: Node) -> str:
    """``ValidFieldPath``: the field.Path spelling of a rule's ``fieldPath``.

    :raises ValueError: with the reason, when it does not name a field of the schema.
    """
    parts: list[str] = []
    toks = _tokens(text)
    i = 0

    def step(name: str, named: bool) -> None:
        nonlocal node
        if named:
            if node.properties is None or name not in node.properties:
                raise _PathError("does not refer to a valid field")
            parts.append(("." if parts else "") + name)
            node = node.properties[name]
        else:
            parts.append(f"[{name}]")
            assert node.additional is not None
            node = node.additional

    while i < len(toks):
        tok = toks[i]
        if tok == "[":
            if i + 1 >= len(toks):
                raise _PathError("unexpected end of JSON path")
            lit = toks[i + 1]
            if len(lit) < 2 or lit[0] != "'" or lit[-1] != "'":
                raise _PathError(f"expected single quoted string but got {lit}")

            def unq(m: re.Match[str]) -> str:
                if m.group(1) not in _UNESCAPES:
                    raise _PathError(f"invalid string literal: invalid escape char \\{m.group(1)}")
                return _UNESCAPES[m.group(1)]

            name = re.sub(r"\\(.)", unq, lit[1:-1])
            if node.properties is not None:
                step(name, True)
            elif node.additional is not None:
                step(name, False)
            else:
                raise _PathError("does not refer to a valid field")
            if i + 2 >= len(toks):
                raise _PathError("unexpected end of JSON path")
            if toks[i + 2] != "]":
                raise _PathError(f"expected ] but got {toks[i + 2]}")
            i += 3
        elif tok == ".":
            if i + 1 >= len(toks):
                raise _PathError("unexpected end of JSON path")
            name = toks[i + 1]
            if node.properties is not None:
                step(name, True)
            elif node.additional is not None:
                step(name, False)
            else:
                raise _PathError("does not refer to a valid field")
            i += 2
        else:
            raise _PathError(f"expected [ or . but got: {tok}")
    return "".join(parts)


# ---- compiled tree -----------------------------------------------------------------------------
@dataclass
class CompiledRule:
    rule: Rule
    program: Program | None = None
    error: str | None = None  # "compilation failed: ..." and friends
    message: Program | None = None
    message_error: str | None = None
    field_path: str = ""
    max_cost: int = 0
    base_cost: int = 0
    message_cost: int = 0
    message_base: int = 0


@dataclass
class CompiledNode:
    node: Node
    ctype: CelType | None
    resource_root: bool
    rules: list[CompiledRule] = field(default_factory=list)
    properties: dict[str, CompiledNode] = field(default_factory=dict)
    items: CompiledNode | None = None
    additional: CompiledNode | None = None
    all_of: list[CompiledNode] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.rules or self.properties or self.items or self.additional or self.all_of)


@dataclass
class CompiledSchema:
    """A version's schema with every rule compiled (see :func:`compile_rules`)."""

    root: CompiledNode | None
    schema: Node


def _has_rules(node: Node | None) -> bool:
    if node is None:
        return False
    return bool(
        node.rules
        or _has_rules(node.items)
        or _has_rules(node.additional)
        or any(_has_rules(p) for p in (node.properties or {}).values())
        or any(_has_rules(a) for a in node.all_of)
    )


def _compile_rule(checker: Checker, rule: Rule, node: Node, ctype: CelType) -> CompiledRule:
    out = CompiledRule(rule)
    if not rule.rule.strip():
        return out
    optional_old = rule.optional_old_self is True
    est_holder: dict[str, Any] = {}

    def costs(checked: Any) -> dict[int, int]:
        est = _cost.estimate(checked, ctype)
        est_holder["est"] = est
        return est.per_iteration

    try:
        program = checker.compile(rule.rule, ctype.signature(), optional_old, costs)
    except CompileError as error:
        out.error = f"compilation failed: {error}"
        return out
    if program.return_type != "BOOL":
        out.error = "cel expression must evaluate to a bool"
        return out
    if optional_old and program.uses_old_self:
        program = checker.compile(rule.rule, ctype.signature(), True, costs)
        _optional_old_self(program)
    out.program = program
    est = est_holder["est"]
    out.max_cost, out.base_cost = est.total, est.base
    if rule.message_expression:
        try:
            msg = checker.compile(rule.message_expression, ctype.signature(), optional_old, costs)
        except CompileError as error:
            out.message_error = f"messageExpression compilation failed: {error}"
            return out
        if msg.return_type != "STRING":
            out.message_error = "messageExpression must evaluate to a string"
            return out
        if optional_old and msg.uses_old_self:
            _optional_old_self(msg)
        out.message = msg
        out.message_cost, out.message_base = est_holder["est"].total, est_holder["est"].base
    if rule.field_path:
        try:
            out.field_path = valid_field_path(rule.field_path, node)
        except ValueError:
            pass
    return out


def _optional_old_self(program: Program) -> None:
    """``oldSelf`` (an optional for the checker) is handed over as ``[]``/``[value]``:
    every free ``oldSelf`` becomes ``_[?_](oldSelf, 0)``."""
    from ._env import runtime_env

    checked = program.checked
    next_id = _ast.max_id(checked) + 1

    def visit(expr: Any, bound: frozenset[str]) -> None:
        nonlocal next_id
        kind = expr.WhichOneof("expr_kind")
        if kind == "ident_expr":
            if expr.ident_expr.name == "oldSelf" and "oldSelf" not in bound:
                ident = _ast.Expr(id=next_id)
                ident.ident_expr.name = "oldSelf"
                zero = _ast.Expr(id=next_id + 1)
                zero.const_expr.int64_value = 0
                next_id += 2
                checked.reference_map.pop(expr.id, None)
                expr.ClearField("ident_expr")
                expr.call_expr.function = "_[?_]"
                expr.call_expr.args.append(ident)
                expr.call_expr.args.append(zero)
            return
        if kind == "comprehension_expr":
            c = expr.comprehension_expr
            inner = bound | {c.iter_var, c.accu_var}
            visit(c.iter_range, bound)
            visit(c.accu_init, bound)
            visit(c.loop_condition, inner)
            visit(c.loop_step, inner)
            visit(c.result, bound | {c.accu_var})
            return
        for child in list(_ast.children(expr)):
            visit(child, bound)

    visit(checked.expr, frozenset())
    program.runtime = runtime_env().deserialize(_ast.encode(checked))


def _build(
    checker: Checker, tb: TypeBuilder, node: Node, ctype: CelType | None, root: bool
) -> CompiledNode | None:
    if not _has_rules(node):
        return None
    cn = CompiledNode(node, ctype, root)
    if ctype is not None:
        cn.rules = [_compile_rule(checker, r, node, ctype) for r in node.rules]
    for name, prop in (node.properties or {}).items():
        escaped = _esc(name)
        sub_type = (
            ctype.fields.get(escaped)
            if escaped is not None and ctype is not None and ctype.kind == "object"
            else None
        )
        if sub_type is None and escaped is None:
            sub_type = tb.decl(prop, prop.embedded)
        if sub_type is None:
            continue
        child = _build(checker, tb, prop, sub_type, prop.embedded)
        if child is not None:
            cn.properties[name] = child
    elem = ctype.elem if ctype is not None else None
    if node.items is not None:
        cn.items = _build(checker, tb, node.items, elem, node.items.embedded)
    if node.additional is not None:
        cn.additional = _build(checker, tb, node.additional, elem, node.additional.embedded)
    for sub in node.all_of:
        merged = _merged(node, sub)
        child = _build(checker, tb, merged, ctype, root)
        if child is not None:
            cn.all_of.append(child)
    return None if cn.empty() else cn


def _esc(name: str) -> str | None:
    from ._escape import escape

    return escape(name)


def _merged(node: Node, sub: Node) -> Node:
    """An ``allOf`` entry's rules over the node's own structure."""
    clone = object.__new__(Node)
    for slot in Node.__slots__:
        setattr(clone, slot, getattr(node, slot))
    clone.rules = sub.rules
    clone.source = getattr(node, "source", None) or node
    clone.all_of = sub.all_of
    props = {}
    for name, p in (sub.properties or {}).items():
        if node.properties and name in node.properties:
            props[name] = _merged(node.properties[name], p)
    clone.properties = props if node.properties is not None else None
    clone.items = _merged(node.items, sub.items) if node.items and sub.items else None
    clone.additional = (
        _merged(node.additional, sub.additional) if node.additional and sub.additional else None
    )
    return clone


# ---- CRD-time errors ---------------------------------------------------------------------------
def _max_elements(node: Node) -> int | None:
    if node.type == "object":
        if node.additional is not None or node.raw.get("additionalProperties") is True:
            return max(node.max_properties, 0) if node.max_properties is not None else None
        return 1
    if node.type == "array":
        return max(node.max_items, 0) if node.max_items is not None else None
    return 1


def rules_of(schema: Mapping[str, Any]) -> CompiledSchema | None:
    """The compiled rules of a (valid) version schema; None when it has no rule or they do
    not compile (a CRD whose rules do not compile is refused before it is served)."""
    if "x-kubernetes-validations" not in json.dumps(schema):
        return None
    compiled = compile_rules(schema)
    return compiled if isinstance(compiled, CompiledSchema) else None


def compile_rules(
    schema: Mapping[str, Any], path: str = "spec.validation.openAPIV3Schema"
) -> CompiledSchema | list[FieldError]:
    """Compile every rule of ``schema`` (a version's ``openAPIV3Schema``); schemas that
    compiled are kept (by content) and not compiled again.

    :param path: where the schema sits in the CRD (``spec.versions[0].schema.openAPIV3Schema``
        when versions differ).
    :returns: the compiled schema, or the CRD's field errors (compile failures, cost, misuse of
        ``oldSelf``/``optionalOldSelf``, invalid ``fieldPath``), in the real server's order.
    """
    key = json.dumps(schema, sort_keys=True, default=str)
    hit = _COMPILED.get(key)
    if hit is not None:
        _COMPILED.move_to_end(key)
        return hit
    result = _compile(schema, path)
    if isinstance(result, CompiledSchema):
        _COMPILED[key] = result
        while len(_COMPILED) > _CACHED:
            _COMPILED.popitem(last=False)
    return result


def _compile(schema: Mapping[str, Any], path: str) -> CompiledSchema | list[FieldError]:
    node = Node(schema)
    tb = TypeBuilder()
    root_type = tb.decl(node, True)
    tb.finish()
    checker = Checker(tb.pool)
    errors: list[FieldError] = []
    totals: list[tuple[str, int]] = []
    _crd_errors(checker, tb, node, root_type, path, 1, None, errors, totals, True)
    total = sum(c for _, c in totals)
    if total > STATIC_CRD_LIMIT:
        expensive = sorted(
            (t for t in totals if t[1] >= STATIC_CRD_LIMIT // 100), key=lambda t: -t[1]
        )[:4]
        for where, _c in expensive:
            errors.append(
                forbidden(
                    where,
                    "contributed to estimated rule cost total exceeding "
                    "cost limit for entire OpenAPIv3 schema",
                )
            )
        errors.append(
            forbidden(
                path,
                _cost.cost_error_message(
                    "x-kubernetes-validations estimated rule cost total"
                    " for entire OpenAPIv3 schema",
                    total,
                    STATIC_CRD_LIMIT,
                ),
            )
        )
    if errors:
        return errors
    return CompiledSchema(_build(checker, tb, node, root_type, True), node)


def _crd_errors(
    checker: Checker,
    tb: TypeBuilder,
    node: Node,
    ctype: CelType | None,
    path: str,
    cardinality: int | None,
    uncorrelatable: str | None,
    errors: list[FieldError],
    totals: list[tuple[str, int]],
    root: bool,
) -> None:
    # children first, then this node's rules (as the real server appends them)
    most = _max_elements(node)
    child_card = None if cardinality is None or most is None else cardinality * most
    if node.additional is not None:
        elem = ctype.elem if ctype is not None else None
        _crd_errors(
            checker,
            tb,
            node.additional,
            elem,
            f"{path}.additionalProperties",
            child_card,
            uncorrelatable,
            errors,
            totals,
            False,
        )
    for name in sorted(node.properties or {}):
        prop = (node.properties or {})[name]
        sub = (
            ctype.fields.get(_esc(name) or "")
            if ctype is not None and ctype.kind == "object"
            else None
        )
        if sub is None and ctype is not None and _esc(name) is None:
            sub = tb.decl(prop, prop.embedded)
        unc = uncorrelatable
        if unc is None and node.map_type not in (None, "granular", "atomic"):
            unc = path
        _crd_errors(
            checker,
            tb,
            prop,
            sub,
            f"{path}.properties[{name}]",
            child_card,
            unc,
            errors,
            totals,
            False,
        )
    if node.items is not None:
        unc = uncorrelatable if uncorrelatable is not None or node.list_type == "map" else path
        elem = ctype.elem if ctype is not None else None
        _crd_errors(
            checker, tb, node.items, elem, f"{path}.items", child_card, unc, errors, totals, False
        )
    if not node.rules:
        return
    shape_errors = []
    for i, rule in enumerate(node.rules):
        if rule.field_path.strip():
            try:
                valid_field_path(rule.field_path, node)
            except ValueError:
                shape_errors.append(
                    invalid(
                        f"{path}.x-kubernetes-validations[{i}].fieldPath",
                        rule.field_path,
                        "must be a valid path",
                    )
                )
    if shape_errors:
        errors.extend(shape_errors)
        return
    if ctype is None:
        return
    min_size = ctype.min_size
    for i, rule in enumerate(node.rules):
        where = f"{path}.x-kubernetes-validations[{i}]"
        compiled = _compile_rule(checker, rule, node, ctype)
        card = cardinality if cardinality is not None else MAX_REQUEST // (min_size + 1)
        cost = compiled.max_cost * card if compiled.max_cost else 0
        if cost > STATIC_LIMIT:
            errors.append(
                forbidden(
                    f"{where}.rule",
                    _cost.cost_error_message("estimated rule cost", cost, STATIC_LIMIT),
                )
            )
        totals.append((f"{where}.rule", cost))
        if compiled.error is not None:
            errors.append(
                FieldError(
                    "FieldValueInvalid", f"{where}.rule", rule_repr(rule.raw), compiled.error
                )
            )
        if compiled.message_error is not None:
            errors.append(
                FieldError(
                    "FieldValueInvalid",
                    f"{where}.messageExpression",
                    rule_repr(rule.raw),
                    compiled.message_error,
                )
            )
        elif compiled.message is not None:
            mcost = compiled.message_cost * card
            if mcost > STATIC_LIMIT:
                errors.append(
                    forbidden(
                        f"{where}.messageExpression",
                        _cost.cost_error_message(
                            "estimated messageExpression cost", mcost, STATIC_LIMIT
                        ),
                    )
                )
            totals.append((f"{where}.messageExpression", mcost))
        if compiled.program is None:
            continue
        if compiled.program.uses_old_self:
            if uncorrelatable is not None:
                errors.append(
                    invalid(
                        f"{where}.rule",
                        rule.rule,
                        f"oldSelf cannot be used on the uncorrelatable portion of "
                        f"the schema within {uncorrelatable}",
                    )
                )
        elif rule.optional_old_self is not None:
            errors.append(
                invalid(
                    f"{where}.optionalOldSelf",
                    rule.optional_old_self,
                    "may not be set if oldSelf is not used in rule",
                )
            )


# ---- evaluation --------------------------------------------------------------------------------
def blocking_error() -> FieldError:
    """What the strategies add instead of running the rules when the object already has an
    error of type NotSupported, Required, TooLong, TooMany or TypeInvalid (``hasBlockingErr``)."""
    return FieldError(
        "FieldValueInvalid",
        "<nil>",
        "null",
        "some validation rules were not checked because the object was invalid; "
        "correct the existing errors to complete validation",
    )


BLOCKING_TYPES = frozenset(
    {
        "FieldValueNotSupported",
        "FieldValueRequired",
        "FieldValueTooLong",
        "FieldValueTooMany",
        "FieldValueTypeInvalid",
    }
)


class _Corr:
    """``common.CorrelatedObject``: an updated value with the old value it corresponds to."""

    def __init__(self, new: Any, old: Any, node: Node) -> None:
        self.new, self.old, self.node = new, old, node
        self._eq: bool | None = None

    def key(self, name: str) -> _Corr | None:
        if not isinstance(self.new, dict) or not isinstance(self.old, dict):
            return None
        if name not in self.new or name not in self.old:
            return None
        prop = (self.node.properties or {}).get(name)
        if prop is None:
            prop = self.node.additional
        if prop is None:
            return None
        return _Corr(self.new[name], self.old[name], prop)

    def index(self, i: int) -> _Corr | None:
        if not isinstance(self.new, list) or not isinstance(self.old, list) or i >= len(self.new):
            return None
        if self.node.list_type != "map" or self.node.items is None:
            return None
        old = _map_item(self.node, self.old, self.new[i])
        if old is None:
            return None
        return _Corr(self.new[i], old, self.node.items)

    def equal(self) -> bool:
        if self._eq is None:
            self._eq = self._compute()
        return self._eq

    def _compute(self) -> bool:
        new, old = self.new, self.old
        if new is None and old is None:
            return True
        if new is None or old is None:
            return False
        if isinstance(new, list) != isinstance(old, list) or isinstance(new, dict) != isinstance(
            old, dict
        ):
            return False
        if isinstance(new, list):
            if len(new) != len(old):
                return False
            for i in range(len(new)):
                child = self.index(i)
                if child is None:
                    return self.node.list_type != "map" and same(old, new)
                if not child.equal():
                    return False
            return True
        if isinstance(new, dict):
            if len(new) != len(old):
                return False
            for k in new:
                child = self.key(k)
                if child is None or not child.equal():
                    return False
            return True
        return same(old, new)


def _map_item(node: Node, old_items: list[Any], item: Any) -> Any:
    if not isinstance(item, dict) or not node.list_keys:
        return None
    wanted = [item.get(k) for k in node.list_keys]
    for old in old_items:
        if isinstance(old, dict) and all(
            same(old.get(k), w) for k, w in zip(node.list_keys, wanted, strict=True)
        ):
            return old
    return None


@dataclass
class _Ratchet:
    current: _Corr | None = None
    parent: _Corr | None = None
    top: bool = True

    def key(self, name: str) -> _Ratchet:
        if self.current is None:
            return self
        if self.top and name in ("apiVersion", "kind"):
            return _Ratchet(None, None, False)
        return _Ratchet(self.current.key(name), self.current, False)

    def index(self, i: int) -> _Ratchet:
        if self.current is None:
            return self
        return _Ratchet(self.current.index(i), self.current, False)

    def ratchets(self) -> bool:
        if self.current is not None:
            return self.current.equal()
        return self.parent.equal() if self.parent is not None else False


def _child(path: str | None, name: str) -> str:
    return f"{path}.{name}" if path else name


def _key(path: str | None, key: str) -> str:
    return f"{path or ''}[{key}]"


class _Run:
    def __init__(
        self, budget: int, warnings: list[str] | None, per_call: int = PER_CALL_LIMIT
    ) -> None:
        self.per_call = per_call
        self.remaining = budget
        self.warnings = warnings

    # -- the walk (``Validator.validate``) --
    def node(
        self,
        cn: CompiledNode,
        path: str | None,
        obj: Any,
        old: Any,
        r: _Ratchet,
        errs: list[FieldError],
    ) -> None:
        if obj is None:
            return
        self.expressions(cn, path, obj, old, r, errs)
        if self.remaining < 0:
            return
        for sub in cn.all_of:
            self.node(sub, path, obj, old, _Ratchet(None, r.parent, False), errs)
            if self.remaining < 0:
                return
        if isinstance(obj, list) and cn.items is not None:
            node = cn.node
            for i, item in enumerate(obj):
                was = (
                    _map_item(node, old, item)
                    if node.list_type == "map" and isinstance(old, list)
                    else None
                )
                self.node(cn.items, f"{path or ''}[{i}]", item, was, r.index(i), errs)
                if self.remaining < 0:
                    return
        elif isinstance(obj, dict):
            olds = old if isinstance(old, dict) else {}
            correlatable = cn.node.map_type in (None, "granular", "atomic")
            if cn.additional is not None:
                for k, v in obj.items():
                    self.node(
                        cn.additional,
                        _key(path, k),
                        v,
                        olds.get(k) if correlatable else None,
                        r.key(k),
                        errs,
                    )
                    if self.remaining < 0:
                        return
            for k, v in obj.items():
                prop = cn.properties.get(k)
                if prop is not None:
                    self.node(
                        prop,
                        _child(path, k),
                        v,
                        olds.get(k) if correlatable else None,
                        r.key(k),
                        errs,
                    )
                    if self.remaining < 0:
                        return

    def expressions(
        self,
        cn: CompiledNode,
        path: str | None,
        obj: Any,
        old: Any,
        r: _Ratchet,
        errs: list[FieldError],
    ) -> None:
        node = cn.node
        shown = path if path is not None else "<nil>"
        sts_type = node.type
        if not cn.rules:
            return
        if self.remaining <= 0:
            errs.append(invalid(shown, sts_type, _OUT_OF_BUDGET))
            self.remaining = -1
            return
        data_node = getattr(node, "source", None) or node
        self_value = project(obj, data_node, cn.resource_root)
        old_value = None
        if old is not None:
            old_value = project(align(obj, old, data_node), data_node, cn.resource_root)
        for compiled in cn.rules:
            rule = compiled.rule
            if compiled.error is not None:
                errs.append(invalid(shown, sts_type, f"rule compile error: {compiled.error}"))
                continue
            program = compiled.program
            if program is None:
                continue
            optional = rule.optional_old_self is True
            if program.uses_old_self and old is None and not optional:
                continue
            data: dict[str, Any] = {"self": self_value}
            if program.uses_old_self:
                data["oldSelf"] = ([] if old is None else [old_value]) if optional else old_value
            value, error, cost, cut = self._eval(program, compiled.base_cost, data)
            if cut:
                errs.append(
                    invalid(
                        shown,
                        sts_type,
                        "'operation cancelled: actual cost limit exceeded': no further "
                        "validation rules will be run due to call cost exceeds limit "
                        f"for rule: {_rule_text(rule)}",
                    )
                )
                self.remaining = -1
                return
            if cost > self.remaining:
                errs.append(invalid(shown, sts_type, _OUT_OF_BUDGET))
                self.remaining = -1
                return
            self.remaining -= cost
            if error is not None:
                if error.startswith("no such overload"):
                    errs.append(
                        invalid(
                            shown,
                            sts_type,
                            f"'{error}': call arguments did not match a "
                            "supported operator, function or macro signature for rule: "
                            f"{_rule_text(rule)}",
                        )
                    )
                else:
                    errs.append(
                        invalid(shown, sts_type, f"{error} evaluating rule: {_rule_text(rule)}")
                    )
                continue
            if value is True:
                continue
            where = shown if not compiled.field_path else _child(path, compiled.field_path)
            detail = None
            if compiled.message is not None:
                text, _, stop = self._message(compiled, data)
                if stop is not None:
                    self._add(
                        stop
                        if stop.field
                        else FieldError(stop.type, where, stop.bad_value, stop.detail),
                        program,
                        r,
                        errs,
                    )
                    self.remaining = -1
                    return
                detail = text
            if detail is None:
                detail = (
                    rule.message.strip() if rule.message else f"failed rule: {_rule_text(rule)}"
                )
            bad = OMIT if node.type in ("object", "array") else obj
            self._add(_for_reason(where, bad, detail, rule.reason), program, r, errs)

    def _add(
        self, error: FieldError, program: Program, r: _Ratchet, errs: list[FieldError]
    ) -> None:
        if not program.uses_old_self and r.ratchets():
            if self.warnings is not None:
                self.warnings.append(str(error))
        else:
            errs.append(error)

    def _eval(
        self, program: Program, base: int, data: dict[str, Any]
    ) -> tuple[Any, str | None, int, bool]:
        BUDGET.used = base
        BUDGET.limit = self.per_call
        BUDGET.exceeded = False
        value, error = program.eval(data)
        cost = BUDGET.used
        return value, error, cost, BUDGET.exceeded or cost > self.per_call

    def _message(
        self, compiled: CompiledRule, data: dict[str, Any]
    ) -> tuple[str | None, str | None, FieldError | None]:
        assert compiled.message is not None
        value, error, cost, cut = self._eval(compiled.message, compiled.message_base, data)
        if cut:
            return (
                None,
                None,
                invalid(
                    "",
                    "",
                    "no further validation rules will be run due to call "
                    "cost exceeds limit for messageExpression: "
                    f"{_goq(compiled.rule.message_expression)}",
                ),
            )
        if cost > self.remaining:
            return (
                None,
                None,
                invalid(
                    "",
                    "",
                    "messageExpression evaluation failed due to running "
                    "out of cost budget, no further validation rules will be run",
                ),
            )
        self.remaining -= cost
        if error is not None or not isinstance(value, str):
            return None, error, None
        text = value.strip()
        if len(text.encode()) > _MAX_MESSAGE or "\n" in text or not text:
            return None, "bad message", None
        return text, None, None


def _goq(text: str) -> str:
    from ._errors import go_quote

    return go_quote(text)


def _rule_text(rule: Rule) -> str:
    """``ruleErrorString``."""
    return rule.message.strip() if rule.message else rule.rule.strip()


def _for_reason(path: str, value: Any, detail: str, reason: str | None) -> FieldError:
    """``fieldErrorForReason``."""
    if reason == "FieldValueForbidden":
        return forbidden(path, detail)
    if reason == "FieldValueRequired":
        return required(path, detail)
    if reason == "FieldValueDuplicate":
        return duplicate(path, value)
    return invalid(path, value, detail)


def validate(
    compiled: CompiledSchema,
    obj: Any,
    old_obj: Any = None,
    *,
    warnings: list[str] | None = None,
    budget: int = RUNTIME_BUDGET,
    per_call_limit: int = PER_CALL_LIMIT,
) -> list[FieldError]:
    """The field errors of ``x-kubernetes-validations`` for a create (``old_obj`` None), an
    update or a status update (whole objects both; as the real server, every rule runs).

    :param warnings: receives the texts of errors ratcheted into warnings (rules without
        ``oldSelf`` on values unchanged since ``old_obj``).
    """
    if compiled.root is None or obj is None:
        return []
    errs: list[FieldError] = []
    ratchet = (
        _Ratchet(_Corr(obj, old_obj, compiled.schema), None) if old_obj is not None else _Ratchet()
    )
    _Run(budget, warnings, per_call_limit).node(compiled.root, None, obj, old_obj, ratchet, errs)
    return errs
