"""The checked CEL syntax tree that cel-expr-python serializes, read and rewritten here.

``Expression.serialize()`` gives a ``google.protobuf.Any`` holding a ``cel.expr.CheckedExpr``.
The messages below are declared from the public CEL specification (``cel/expr/syntax.proto``
and ``checked.proto``: field numbers only); ``Type`` is kept opaque (its bytes survive a round
trip as unknown fields). The tree is used to find references to ``oldSelf``, to estimate cost,
to rewrite calls whose Kubernetes result is an optional (see :mod:`._env`) and to count
comprehension iterations at run time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_OPT, _REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_MSG, _STR, _I64, _BOOL, _I32 = (
    _F.TYPE_MESSAGE,
    _F.TYPE_STRING,
    _F.TYPE_INT64,
    _F.TYPE_BOOL,
    _F.TYPE_INT32,
)
_U64, _DBL, _BYTES, _ENUM = _F.TYPE_UINT64, _F.TYPE_DOUBLE, _F.TYPE_BYTES, _F.TYPE_ENUM


def _field(
    msg: Any,
    name: str,
    number: int,
    kind: int,
    label: int = _OPT,
    type_name: str = "",
    oneof: int | None = None,
) -> None:
    f = msg.field.add(name=name, number=number, type=kind, label=label)
    if type_name:
        f.type_name = type_name
    if oneof is not None:
        f.oneof_index = oneof


def _map_entry(msg: Any, name: str, key: int, value: int, value_type: str = "") -> str:
    entry = msg.nested_type.add(name=name)
    entry.options.map_entry = True
    _field(entry, "key", 1, key)
    _field(entry, "value", 2, value, type_name=value_type)
    return name


def _build() -> descriptor_pool.DescriptorPool:
    fdp = descriptor_pb2.FileDescriptorProto(
        name="crdcel_ast.proto", package="cel.expr", syntax="proto3"
    )
    const = fdp.message_type.add(name="Constant")
    const.oneof_decl.add(name="constant_kind")
    for name, num, kind in (
        ("null_value", 1, _I32),
        ("bool_value", 2, _BOOL),
        ("int64_value", 3, _I64),
        ("uint64_value", 4, _U64),
        ("double_value", 5, _DBL),
        ("string_value", 6, _STR),
        ("bytes_value", 7, _BYTES),
    ):
        _field(const, name, num, kind, oneof=0)
    expr = fdp.message_type.add(name="Expr")
    expr.oneof_decl.add(name="expr_kind")
    ident = expr.nested_type.add(name="Ident")
    _field(ident, "name", 1, _STR)
    sel = expr.nested_type.add(name="Select")
    _field(sel, "operand", 1, _MSG, type_name=".cel.expr.Expr")
    _field(sel, "field", 2, _STR)
    _field(sel, "test_only", 3, _BOOL)
    call = expr.nested_type.add(name="Call")
    _field(call, "target", 1, _MSG, type_name=".cel.expr.Expr")
    _field(call, "function", 2, _STR)
    _field(call, "args", 3, _MSG, _REP, ".cel.expr.Expr")
    lst = expr.nested_type.add(name="CreateList")
    _field(lst, "elements", 1, _MSG, _REP, ".cel.expr.Expr")
    _field(lst, "optional_indices", 2, _I32, _REP)
    st = expr.nested_type.add(name="CreateStruct")
    entry = st.nested_type.add(name="Entry")
    entry.oneof_decl.add(name="key_kind")
    _field(entry, "id", 1, _I64)
    _field(entry, "field_key", 2, _STR, oneof=0)
    _field(entry, "map_key", 3, _MSG, type_name=".cel.expr.Expr", oneof=0)
    _field(entry, "value", 4, _MSG, type_name=".cel.expr.Expr")
    _field(entry, "optional_entry", 5, _BOOL)
    _field(st, "message_name", 1, _STR)
    _field(st, "entries", 2, _MSG, _REP, ".cel.expr.Expr.CreateStruct.Entry")
    comp = expr.nested_type.add(name="Comprehension")
    for name, num, kind in (
        ("iter_var", 1, _STR),
        ("iter_range", 2, _MSG),
        ("accu_var", 3, _STR),
        ("accu_init", 4, _MSG),
        ("loop_condition", 5, _MSG),
        ("loop_step", 6, _MSG),
        ("result", 7, _MSG),
        ("iter_var2", 8, _STR),
    ):
        _field(comp, name, num, kind, type_name=".cel.expr.Expr" if kind == _MSG else "")
    _field(expr, "id", 2, _I64)
    for name, num, tname in (
        ("const_expr", 3, ".cel.expr.Constant"),
        ("ident_expr", 4, ".cel.expr.Expr.Ident"),
        ("select_expr", 5, ".cel.expr.Expr.Select"),
        ("call_expr", 6, ".cel.expr.Expr.Call"),
        ("list_expr", 7, ".cel.expr.Expr.CreateList"),
        ("struct_expr", 8, ".cel.expr.Expr.CreateStruct"),
        ("comprehension_expr", 9, ".cel.expr.Expr.Comprehension"),
    ):
        _field(expr, name, num, _MSG, type_name=tname, oneof=0)
    info = fdp.message_type.add(name="SourceInfo")
    _field(info, "syntax_version", 1, _STR)
    _field(info, "location", 2, _STR)
    _field(info, "line_offsets", 3, _I32, _REP)
    _map_entry(info, "PositionsEntry", _I64, _I32)
    _field(info, "positions", 4, _MSG, _REP, ".cel.expr.SourceInfo.PositionsEntry")
    _map_entry(info, "MacroCallsEntry", _I64, _MSG, ".cel.expr.Expr")
    _field(info, "macro_calls", 5, _MSG, _REP, ".cel.expr.SourceInfo.MacroCallsEntry")
    fdp.message_type.add(name="Type")  # opaque: kept as unknown fields
    ref = fdp.message_type.add(name="Reference")
    _field(ref, "name", 1, _STR)
    _field(ref, "overload_id", 3, _STR, _REP)
    _field(ref, "value", 4, _MSG, type_name=".cel.expr.Constant")
    checked = fdp.message_type.add(name="CheckedExpr")
    _map_entry(checked, "ReferenceMapEntry", _I64, _MSG, ".cel.expr.Reference")
    _map_entry(checked, "TypeMapEntry", _I64, _MSG, ".cel.expr.Type")
    _field(checked, "reference_map", 2, _MSG, _REP, ".cel.expr.CheckedExpr.ReferenceMapEntry")
    _field(checked, "type_map", 3, _MSG, _REP, ".cel.expr.CheckedExpr.TypeMapEntry")
    _field(checked, "expr", 4, _MSG, type_name=".cel.expr.Expr")
    _field(checked, "source_info", 5, _MSG, type_name=".cel.expr.SourceInfo")
    _field(checked, "expr_version", 6, _STR)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return pool


_POOL = _build()
CheckedExpr = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("cel.expr.CheckedExpr"))
Expr = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("cel.expr.Expr"))
_TYPE_URL = "type.googleapis.com/cel.expr.CheckedExpr"


def decode(serialized: bytes) -> Any:
    """The ``CheckedExpr`` inside ``Expression.serialize()``."""
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(serialized)
    checked = CheckedExpr()
    checked.ParseFromString(wrapper.value)
    return checked


def encode(checked: Any) -> bytes:
    """Back into the form ``Env.deserialize`` takes."""
    wrapper = any_pb2.Any(type_url=_TYPE_URL, value=checked.SerializeToString())
    return bytes(wrapper.SerializeToString())


def children(expr: Any) -> Iterator[Any]:
    """The direct sub-expressions of ``expr``."""
    kind = expr.WhichOneof("expr_kind")
    if kind == "select_expr":
        yield expr.select_expr.operand
    elif kind == "call_expr":
        if expr.call_expr.HasField("target"):
            yield expr.call_expr.target
        yield from expr.call_expr.args
    elif kind == "list_expr":
        yield from expr.list_expr.elements
    elif kind == "struct_expr":
        for entry in expr.struct_expr.entries:
            if entry.HasField("map_key"):
                yield entry.map_key
            yield entry.value
    elif kind == "comprehension_expr":
        c = expr.comprehension_expr
        yield from (c.iter_range, c.accu_init, c.loop_condition, c.loop_step, c.result)


def walk(expr: Any) -> Iterator[Any]:
    """Every node, ``expr`` first."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(list(children(node))))


def max_id(checked: Any) -> int:
    return max((node.id for node in walk(checked.expr)), default=0)


def references(checked: Any) -> set[str]:
    """The names the checker resolved (variables and functions)."""
    return {ref.name for ref in checked.reference_map.values() if ref.name}
