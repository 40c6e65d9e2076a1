"""The Kubernetes CEL libraries as cel-expr-python functions.

Declarations follow apiserver ``pkg/cel/library`` (lists, regex, urls, quantity, ip, cidr,
format, semver) and cel-go's ``ext`` sets/lists, as a Kubernetes 1.37 server's stored and new
expressions see them (compatibility version 1.36): names, receivers, argument and result types,
error messages. Implementations are written here.

Each entry is ``(function, overload id, [param types], result type, member?, impl)`` with types
as cel-expr-python signatures. Opaque Kubernetes types are protobuf messages (see
:data:`OPAQUE`). Functions whose Kubernetes result is an ``optional`` are declared with it for
the type checker; at run time (cel-expr-python cannot return optionals from Python) they are
rewritten to ``_[?_](<helper>(...), 0)`` where the helper returns ``[]`` or ``[value]``
(:data:`OPTIONAL_RESULTS`).
"""

from __future__ import annotations

import base64
import datetime
import itertools
import re
from collections.abc import Callable
from decimal import Decimal, localcontext
from typing import Any, NoReturn

from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    message_factory,
    timestamp_pb2,
)

from . import _values as v

try:  # RE2, the engine Go's regexp (and so Kubernetes) follows
    import re2 as _re2
except ImportError:  # pragma: no cover
    _re2 = None

__all__ = ["OPAQUE", "OPTIONAL_RESULTS", "CelRuntimeError", "declarations", "opaque_files"]


class CelRuntimeError(Exception):
    """An error a library function reports; its text is the CEL error's."""


#: opaque type name -> message short name
OPAQUE = {
    "kubernetes.Quantity": ("kubernetes", "Quantity"),
    "kubernetes.URL": ("kubernetes", "URL"),
    "kubernetes.NamedFormat": ("kubernetes", "NamedFormat"),
    "kubernetes.Semver": ("kubernetes", "Semver"),
    "net.IP": ("net", "IP"),
    "net.CIDR": ("net", "CIDR"),
}


def opaque_files(with_fields: bool) -> list[descriptor_pb2.FileDescriptorProto]:
    """The messages standing for the opaque types (the checker's have no fields, so CEL can
    select none)."""
    files: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    fd = descriptor_pb2.FieldDescriptorProto
    for package, name in OPAQUE.values():
        f = files.setdefault(
            package,
            descriptor_pb2.FileDescriptorProto(
                name=f"crdcel_{package}_{'rt' if with_fields else 'ck'}.proto",
                package=package,
                syntax="proto3",
            ),
        )
        msg = f.message_type.add(name=name)
        if with_fields:
            msg.field.add(name="v", number=1, type=fd.TYPE_STRING, label=fd.LABEL_OPTIONAL)
    return list(files.values())


_RT_POOL = descriptor_pool.DescriptorPool()
for _f in opaque_files(True):
    _RT_POOL.Add(_f)
for _dep in (timestamp_pb2, duration_pb2):
    _RT_POOL.AddSerializedFile(_dep.DESCRIPTOR.serialized_pb)
RUNTIME_POOL = _RT_POOL
_MSG = {
    full: message_factory.GetMessageClass(_RT_POOL.FindMessageTypeByName(full)) for full in OPAQUE
}


def _new(type_name: str, value: str) -> Any:
    return _MSG[type_name](v=value)


def fail(text: str) -> NoReturn:
    raise CelRuntimeError(text)


# ---- equality and ordering of CEL values as Python sees them ------------------------------------
def _kind(x: Any) -> str:
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int | float):
        return "num"
    if isinstance(x, str):
        return "string"
    if isinstance(x, bytes | bytearray):
        return "bytes"
    if isinstance(x, list):
        return "list"
    if isinstance(x, dict):
        return "map"
    if x is None:
        return "null"
    return type(x).__name__


def cel_equal(a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return False
    if ka == "list":
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if ka == "map":
        return len(a) == len(b) and all(k in b and cel_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _py(x: Any) -> Any:
    """Timestamps and durations as Python compares them."""
    if isinstance(x, timestamp_pb2.Timestamp):
        return (x.seconds, x.nanos)
    if isinstance(x, duration_pb2.Duration):
        return (x.seconds, x.nanos)
    if isinstance(x, datetime.datetime | datetime.timedelta):
        return x
    return x


def _out(x: Any) -> Any:
    """Python values cel-expr-python cannot take back, as protobuf messages."""
    if isinstance(x, datetime.datetime):
        ts = timestamp_pb2.Timestamp()
        ts.FromDatetime(x)
        return ts
    if isinstance(x, datetime.timedelta):
        d = duration_pb2.Duration()
        d.FromTimedelta(x)
        return d
    if isinstance(x, bytearray):
        return bytes(x)
    if isinstance(x, list):
        return [_out(i) for i in x]
    return x


# ---- kubernetes.lists ---------------------------------------------------------------------------
def _is_sorted(items: list[Any]) -> bool:
    return all(not (_py(a) > _py(b)) for a, b in itertools.pairwise(items))


def _sum(zero: Any) -> Callable[[list[Any]], Any]:
    def run(items: list[Any]) -> Any:
        total = zero
        for item in items:
            total = total + item
            if (
                isinstance(total, int)
                and not isinstance(total, bool)
                and not -(2**63) <= total < 2**63
            ):
                fail("integer overflow")
        return _out(total)

    return run


def _pick(name: str, better: Callable[[Any, Any], bool]) -> Callable[[list[Any]], Any]:
    def run(items: list[Any]) -> Any:
        if not items:
            fail(f"{name} called on empty list")
        best = items[0]
        for item in items[1:]:
            if better(_py(item), _py(best)):
                best = item
        return _out(best)

    return run


def _index_of(items: list[Any], item: Any) -> int:
    return next((i for i, x in enumerate(items) if cel_equal(x, item)), -1)


def _last_index_of(items: list[Any], item: Any) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if cel_equal(items[i], item)), -1)


# ---- cel-go ext lists (v3) and sets ------------------------------------------------------------
def _slice(items: list[Any], start: int, end: int) -> Any:
    if start < 0 or end < 0:
        fail(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        fail(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if len(items) < end:
        fail(f"cannot slice({start}, {end}), list is length {len(items)}")
    return _out(items[start:end])


def _flatten(items: list[Any], depth: int = 1) -> Any:
    if depth < 0:
        fail("level must be non-negative")
    out: list[Any] = []
    for item in items:
        if isinstance(item, list) and depth > 0:
            out.extend(_flatten(item, depth - 1))
        else:
            out.append(item)
    return _out(out)


def _distinct(items: list[Any]) -> Any:
    out: list[Any] = []
    for item in items:
        if not any(cel_equal(item, seen) for seen in out):
            out.append(item)
    return _out(out)


def _sort(items: list[Any]) -> Any:
    kinds = {_kind(i) for i in items}
    if len(kinds) > 1:
        fail("list elements must have the same type")
    return _out(sorted(items, key=_py))


def _contains_all(a: list[Any], b: list[Any]) -> bool:
    return all(any(cel_equal(x, y) for x in a) for y in b)


# ---- regex -------------------------------------------------------------------------------------
def _compile_regex(pattern: str) -> Any:
    try:
        if _re2 is not None:
            return _re2.compile(pattern)
        return re.compile(pattern)
    except Exception as error:
        fail(f"Illegal regex: error parsing regexp: {error}")


def _find(text: str, pattern: str) -> str:
    m = _compile_regex(pattern).search(text)
    return m.group(0) if m else ""


def _find_all(text: str, pattern: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    found = [m.group(0) for m in _compile_regex(pattern).finditer(text)]
    return found if n < 0 else found[:n]


# ---- URLs --------------------------------------------------------------------------------------
def _url(text: str) -> Any:
    try:
        v.parse_url(text, request_uri=True)
        v.parse_url(text, request_uri=False)
    except v.UrlError as error:
        fail(f"URL parse error during conversion from string: {error}")
    return _new("kubernetes.URL", text)


def _is_url(text: str) -> bool:
    try:
        v.parse_url(text, request_uri=True)
    except v.UrlError:
        return False
    return True


def _url_parts(msg: Any) -> dict[str, Any]:
    return v.parse_url(msg.v, request_uri=False)


# ---- quantity ----------------------------------------------------------------------------------
def _quantity(text: str) -> Any:
    try:
        value = v.parse_quantity(text)
    except v.QuantityError as error:
        fail(str(error))
    return _new("kubernetes.Quantity", v.quantity_text(value))


def _is_quantity(text: str) -> bool:
    try:
        v.parse_quantity(text)
    except v.QuantityError:
        return False
    return True


def _q(msg: Any) -> Decimal:
    return v.quantity_value(msg.v)


def _q_new(value: Decimal) -> Any:
    return _new("kubernetes.Quantity", v.quantity_text(value))


def _cmp(a: Any, b: Any) -> int:
    return int(a > b) - int(a < b)


def _as_integer(msg: Any) -> int:
    whole = v.quantity_int(_q(msg))
    if whole is None:
        fail("cannot convert value to integer")
    return whole


def _q_add(a: Any, b: Any) -> Any:
    with localcontext() as ctx:
        ctx.prec = 200
        other = _q(b) if not isinstance(b, int) else Decimal(b)
        return _q_new(_q(a) + other)


def _q_sub(a: Any, b: Any) -> Any:
    with localcontext() as ctx:
        ctx.prec = 200
        other = _q(b) if not isinstance(b, int) else Decimal(b)
        return _q_new(_q(a) - other)


# ---- IP / CIDR ---------------------------------------------------------------------------------
def _ip(text: str) -> Any:
    try:
        addr = v.parse_ip(text)
    except v.NetError as error:
        fail(str(error))
    return _new("net.IP", str(addr))


def _is_ip(text: str) -> bool:
    try:
        v.parse_ip(text)
    except v.NetError:
        return False
    return True


def _ip_canonical(text: str) -> bool:
    try:
        addr = v.parse_ip(text)
    except v.NetError as error:
        fail(str(error))
    return str(addr) == text


def _addr(msg: Any) -> Any:
    import ipaddress

    return ipaddress.ip_address(msg.v)


def _link_local_multicast(a: Any) -> bool:
    import ipaddress

    if isinstance(a, ipaddress.IPv4Address):
        return a in ipaddress.ip_network("224.0.0.0/24")
    return bool(a.packed[0] == 0xFF and (a.packed[1] & 0x0F) == 0x02)


def _global_unicast(a: Any) -> bool:
    import ipaddress

    if isinstance(a, ipaddress.IPv4Address) and a == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local)


def _cidr(text: str) -> Any:
    try:
        addr, bits = v.parse_cidr(text)
    except v.NetError as error:
        fail(str(error))
    return _new("net.CIDR", f"{addr}/{bits}")


def _is_cidr(text: str) -> bool:
    try:
        v.parse_cidr(text)
    except v.NetError:
        return False
    return True


def _net(msg: Any) -> Any:
    import ipaddress

    return ipaddress.ip_network(msg.v, strict=False)


def _contains_ip(c: Any, ip: Any) -> bool:
    if isinstance(ip, str):
        try:
            addr = v.parse_ip(ip)
        except v.NetError as error:
            fail(str(error))
    else:
        addr = _addr(ip)
    net = _net(c)
    return addr.version == net.version and addr in net


def _contains_cidr(c: Any, other: Any) -> bool:
    if isinstance(other, str):
        try:
            addr, bits = v.parse_cidr(other)
        except v.NetError as error:
            fail(str(error))
        text = f"{addr}/{bits}"
    else:
        text = other.v
    import ipaddress

    inner = ipaddress.ip_network(text, strict=False)
    outer = _net(c)
    return (
        inner.version == outer.version
        and inner.prefixlen >= outer.prefixlen
        and inner.network_address in outer
    )


def _masked(c: Any) -> Any:
    return _new("net.CIDR", str(_net(c)))


# ---- format ------------------------------------------------------------------------------------
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUB = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_QNAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


def _regex_error(msg: str, fmt: str, examples: list[str]) -> str:
    text = msg + f" (regex used for validation is '{fmt}')"
    if examples:
        text = (
            msg
            + ", "
            + "(e.g. "
            + " or ".join(f"'{e}'" for e in examples)
            + ")"
            + f" (regex used for validation is '{fmt}')"
        )
    return text


def _dns1123_label(s: str) -> list[str]:
    errs = []
    if len(s) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1123_LABEL.match(s):
        errs.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
            "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
            "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        )
    return errs


def _dns1123_subdomain(s: str) -> list[str]:
    errs = []
    if len(s) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUB.match(s):
        errs.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
    return errs


def _dns1035_label(s: str) -> list[str]:
    errs = []
    if len(s) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035.match(s):
        errs.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
            "start with an alphabetic character, and end with an alphanumeric character "
            "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
            "'[a-z]([-a-z0-9]*[a-z0-9])?')"
        )
    return errs


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """``NameIsDNS*(s, prefix=true)``: the name with a generated suffix's stand-in."""
    return lambda s: check(s + "a" if s else s)


def _qualified_name(s: str) -> list[str]:
    errs = []
    parts = s.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + e for e in _dns1123_subdomain(prefix)]
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'MyName',  or "
            "'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
            "prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if name and not _QNAME.match(name):
        errs.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
            "or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
    return errs


def _label_value(s: str) -> list[str]:
    errs = []
    if len(s) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE.match(s):
        errs.append(
            "a valid label must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
            "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        )
    return errs


def _uri(s: str) -> list[str]:
    try:
        v.parse_url(s, request_uri=True)
    except v.UrlError as error:
        return [str(error)]
    return []


def _uuid_check(s: str) -> list[str]:
    ok = re.fullmatch(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", s)
    return [] if ok else ["does not match the UUID format"]


def _byte_check(s: str) -> list[str]:
    try:
        base64.b64decode(s, validate=True)
    except Exception:
        return ["invalid base64"]
    return []


def _date_check(s: str) -> list[str]:
    try:
        datetime.date.fromisoformat(s)
        if len(s) != 10:
            raise ValueError
    except ValueError:
        return ["invalid date"]
    return []


_DT = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


def _datetime_check(s: str) -> list[str]:
    return [] if _DT.match(s) else ["invalid datetime"]


FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _dns1123_label,
    "dns1123Subdomain": _dns1123_subdomain,
    "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name,
    "dns1123LabelPrefix": _prefix(_dns1123_label),
    "dns1123SubdomainPrefix": _prefix(_dns1123_subdomain),
    "dns1035LabelPrefix": _prefix(_dns1035_label),
    "labelValue": _label_value,
    "uri": _uri,
    "uuid": _uuid_check,
    "byte": _byte_check,
    "date": _date_check,
    "datetime": _datetime_check,
}


def _format_errors_opt(fmt: Any, text: str) -> list[Any]:
    errors = FORMATS[fmt.v](text)
    return [errors] if errors else []


def _format_named_opt(name: str) -> list[Any]:
    return [_new("kubernetes.NamedFormat", name)] if name in FORMATS else []


# ---- semver ------------------------------------------------------------------------------------
def _semver(text: str, normalize: bool = False) -> Any:
    try:
        parts = v.parse_semver(text, normalize)
    except ValueError as error:
        fail(str(error))
    major, minor, patch, pre, build = parts
    canon = f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else "") + (f"+{build}" if build else "")
    return _new("kubernetes.Semver", canon)


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        v.parse_semver(text, normalize)
    except ValueError:
        return False
    return True


def _sv(msg: Any) -> tuple[int, int, int, str, str]:
    return v.parse_semver(msg.v)


# ---- the table ---------------------------------------------------------------------------------
Q, URL, IP, CIDR, FMT, SV = (
    "kubernetes.Quantity",
    "kubernetes.URL",
    "net.IP",
    "net.CIDR",
    "kubernetes.NamedFormat",
    "kubernetes.Semver",
)
INT, D, S, B, BY, U = "int", "double", "string", "bool", "bytes", "uint"
DUR, TS, DYN = "google.protobuf.Duration", "google.protobuf.Timestamp", "dyn"
L = "list<dyn>"

#: overload id -> (runtime helper function name, the optional's value type)
OPTIONAL_RESULTS = {
    "format-validate": "__k8s_format_validate",
    "format-named": "__k8s_format_named",
}

Decl = tuple[str, str, list[str], str, bool, Callable[..., Any]]


def declarations() -> list[Decl]:
    """Every library function: ``(name, overload id, params, result, member, impl)``."""
    out: list[Decl] = []
    add = out.append
    comparable = {
        "int": INT,
        "uint": U,
        "double": D,
        "bool": B,
        "duration": DUR,
        "timestamp": TS,
        "string": S,
        "bytes": BY,
    }
    summable = {
        "int": (INT, 0),
        "uint": (U, 0),
        "double": (D, 0.0),
        "duration": (DUR, datetime.timedelta(0)),
    }
    for name, t in comparable.items():
        add(("isSorted", f"list_{name}_is_sorted_bool", [f"list<{t}>"], B, True, _is_sorted))
        add(
            (
                "max",
                f"list_{name}_max_{name}",
                [f"list<{t}>"],
                t,
                True,
                _pick("max", lambda a, b: a > b),
            )
        )
        add(
            (
                "min",
                f"list_{name}_min_{name}",
                [f"list<{t}>"],
                t,
                True,
                _pick("min", lambda a, b: a < b),
            )
        )
    for name, (t, zero) in summable.items():
        add(("sum", f"list_{name}_sum_{name}", [f"list<{t}>"], t, True, _sum(zero)))
    add(("indexOf", "list_a_index_of_int", [L, DYN], INT, True, _index_of))
    add(("lastIndexOf", "list_a_last_index_of_int", [L, DYN], INT, True, _last_index_of))
    # cel-go ext.Lists(v3) and ext.Sets
    add(("slice", "list_slice", [L, INT, INT], L, True, _slice))
    add(("flatten", "list_flatten", [L], L, True, _flatten))
    add(("flatten", "list_flatten_int", [L, INT], L, True, _flatten))
    add(("distinct", "list_distinct", [L], L, True, _distinct))
    add(("reverse", "list_reverse", [L], L, True, lambda items: _out(list(reversed(items)))))
    add(("sort", "list_sort", [L], L, True, _sort))
    add(("lists.range", "lists_range", [INT], "list<int>", False, lambda n: list(range(n))))
    # first()/last() come with cel-expr-python's optional extension
    add(("sets.contains", "list_sets_contains_list", [L, L], B, False, _contains_all))
    add(
        (
            "sets.equivalent",
            "list_sets_equivalent_list",
            [L, L],
            B,
            False,
            lambda a, b: _contains_all(a, b) and _contains_all(b, a),
        )
    )
    add(
        (
            "sets.intersects",
            "list_sets_intersects_list",
            [L, L],
            B,
            False,
            lambda a, b: any(any(cel_equal(x, y) for y in b) for x in a),
        )
    )
    # regex
    add(("find", "string_find_string", [S, S], S, True, _find))
    add(("findAll", "string_find_all_string", [S, S], "list<string>", True, _find_all))
    add(("findAll", "string_find_all_string_int", [S, S, INT], "list<string>", True, _find_all))
    # urls
    add(("url", "string_to_url", [S], URL, False, _url))
    add(("isURL", "is_url_string", [S], B, False, _is_url))
    add(("getScheme", "url_get_scheme", [URL], S, True, lambda u: _url_parts(u)["scheme"]))
    add(("getHost", "url_get_host", [URL], S, True, lambda u: _url_parts(u)["host"]))
    add(
        (
            "getHostname",
            "url_get_hostname",
            [URL],
            S,
            True,
            lambda u: v.url_hostname(_url_parts(u)["host"]),
        )
    )
    add(("getPort", "url_get_port", [URL], S, True, lambda u: v.url_port(_url_parts(u)["host"])))
    add(
        (
            "getEscapedPath",
            "url_get_escaped_path",
            [URL],
            S,
            True,
            lambda u: v.url_escaped_path(_url_parts(u)["path"]),
        )
    )
    add(
        (
            "getQuery",
            "url_get_query",
            [URL],
            "map<string,list<string>>",
            True,
            lambda u: v.url_query(_url_parts(u)["query"]),
        )
    )
    # quantity
    add(("quantity", "string_to_quantity", [S], Q, False, _quantity))
    add(("isQuantity", "is_quantity_string", [S], B, False, _is_quantity))
    add(("sign", "quantity_sign", [Q], INT, True, lambda q: _cmp(_q(q), 0)))
    add(("isGreaterThan", "quantity_is_greater_than", [Q, Q], B, True, lambda a, b: _q(a) > _q(b)))
    add(("isLessThan", "quantity_is_less_than", [Q, Q], B, True, lambda a, b: _q(a) < _q(b)))
    add(("compareTo", "quantity_compare_to", [Q, Q], INT, True, lambda a, b: _cmp(_q(a), _q(b))))
    add(("asApproximateFloat", "quantity_get_float", [Q], D, True, lambda q: float(_q(q))))
    add(("asInteger", "quantity_get_int", [Q], INT, True, _as_integer))
    add(
        (
            "isInteger",
            "quantity_is_integer",
            [Q],
            B,
            True,
            lambda q: v.quantity_int(_q(q)) is not None,
        )
    )
    add(("add", "quantity_add", [Q, Q], Q, True, _q_add))
    add(("add", "quantity_add_int", [Q, INT], Q, True, _q_add))
    add(("sub", "quantity_sub", [Q, Q], Q, True, _q_sub))
    add(("sub", "quantity_sub_int", [Q, INT], Q, True, _q_sub))
    # ip
    add(("ip", "string_to_ip", [S], IP, False, _ip))
    add(("isIP", "is_ip", [S], B, False, _is_ip))
    add(("ip.isCanonical", "ip_is_canonical", [S], B, False, _ip_canonical))
    add(("family", "ip_family", [IP], INT, True, lambda a: _addr(a).version))
    add(("isUnspecified", "ip_is_unspecified", [IP], B, True, lambda a: _addr(a).is_unspecified))
    add(("isLoopback", "ip_is_loopback", [IP], B, True, lambda a: _addr(a).is_loopback))
    add(
        (
            "isLinkLocalMulticast",
            "ip_is_link_local_multicast",
            [IP],
            B,
            True,
            lambda a: _link_local_multicast(_addr(a)),
        )
    )
    add(
        (
            "isLinkLocalUnicast",
            "ip_is_link_local_unicast",
            [IP],
            B,
            True,
            lambda a: _addr(a).is_link_local and not _addr(a).is_multicast,
        )
    )
    add(
        (
            "isGlobalUnicast",
            "ip_is_global_unicast",
            [IP],
            B,
            True,
            lambda a: _global_unicast(_addr(a)),
        )
    )
    add(("string", "ip_to_string", [IP], S, False, lambda a: a.v))
    # cidr
    add(("cidr", "string_to_cidr", [S], CIDR, False, _cidr))
    add(("isCIDR", "is_cidr", [S], B, False, _is_cidr))
    add(("containsIP", "cidr_contains_ip_string", [CIDR, S], B, True, _contains_ip))
    add(("containsIP", "cidr_contains_ip_ip", [CIDR, IP], B, True, _contains_ip))
    add(("containsCIDR", "cidr_contains_cidr_string", [CIDR, S], B, True, _contains_cidr))
    add(("containsCIDR", "cidr_contains_cidr", [CIDR, CIDR], B, True, _contains_cidr))
    add(("ip", "cidr_ip", [CIDR], IP, True, lambda c: _new("net.IP", c.v.partition("/")[0])))
    add(
        (
            "prefixLength",
            "cidr_prefix_length",
            [CIDR],
            INT,
            True,
            lambda c: int(c.v.partition("/")[2]),
        )
    )
    add(("masked", "cidr_masked", [CIDR], CIDR, True, _masked))
    add(("string", "cidr_to_string", [CIDR], S, False, lambda c: c.v))
    # format
    for name in FORMATS:
        add(
            (
                f"format.{name}",
                f"format.{name}",
                [],
                FMT,
                False,
                (lambda n: lambda: _new(FMT, n))(name),
            )
        )
    add(
        (
            "validate",
            "format-validate",
            [FMT, S],
            "optional_type<list<string>>",
            True,
            _format_errors_opt,
        )
    )
    add(("format.named", "format-named", [S], f"optional_type<{FMT}>", False, _format_named_opt))
    # semver (SemverVersion(1))
    add(("semver", "string_to_semver", [S], SV, False, _semver))
    add(("semver", "string_bool_to_semver", [S, B], SV, False, _semver))
    add(("isSemver", "is_semver_string", [S], B, False, _is_semver))
    add(("isSemver", "is_semver_string_bool", [S, B], B, False, _is_semver))
    add(
        (
            "isGreaterThan",
            "semver_is_greater_than",
            [SV, SV],
            B,
            True,
            lambda a, b: v.semver_compare(_sv(a), _sv(b)) == 1,
        )
    )
    add(
        (
            "isLessThan",
            "semver_is_less_than",
            [SV, SV],
            B,
            True,
            lambda a, b: v.semver_compare(_sv(a), _sv(b)) == -1,
        )
    )
    add(
        (
            "compareTo",
            "semver_compare_to",
            [SV, SV],
            INT,
            True,
            lambda a, b: v.semver_compare(_sv(a), _sv(b)),
        )
    )
    add(("major", "semver_major", [SV], INT, True, lambda s: _sv(s)[0]))
    add(("minor", "semver_minor", [SV], INT, True, lambda s: _sv(s)[1]))
    add(("patch", "semver_patch", [SV], INT, True, lambda s: _sv(s)[2]))
    return out
