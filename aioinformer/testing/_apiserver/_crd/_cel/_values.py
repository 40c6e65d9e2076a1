"""Kubernetes' value types for the CEL libraries: quantities, URLs, IPs, CIDRs, semvers.

Behaviour of apimachinery ``resource.Quantity`` (parsing, comparison, ``AsInt64``) and Go's
``net/url`` / ``net/netip`` as the Kubernetes CEL libraries use them, written from their
documented behaviour. Each value is carried through cel-expr-python as a small protobuf message
(``kubernetes.Quantity`` and so on, see :mod:`._env`) holding a canonical string, so that CEL's
``==`` compares as the Kubernetes types do.
"""

from __future__ import annotations

import ipaddress
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from typing import Any

__all__ = [
    "QuantityError",
    "parse_quantity",
    "quantity_text",
    "parse_url",
    "UrlError",
    "parse_ip",
    "parse_cidr",
    "NetError",
    "parse_semver",
]


# ---- quantity ----------------------------------------------------------------------------------
class QuantityError(ValueError):
    pass


_SPLIT = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_FORMAT_WRONG = f"quantities must match the regular expression '{_SPLIT}'"
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")
_CTX_PREC = 200


def parse_quantity(text: str) -> Decimal:
    """``resource.ParseQuantity``: the exact value (rounded up to nano units, as Go does)."""
    if not text:
        raise QuantityError(f"quantities must match the regular expression '{_SPLIT}'")
    m = re.match(r"([+-]?[0-9.]+)(.*)\Z", text, re.S)
    if m is None:
        raise QuantityError(_FORMAT_WRONG)
    number, suffix = m.group(1), m.group(2)
    if not re.fullmatch(r"[eEinumkKMGTP]*[-+]?[0-9]*", suffix):
        raise QuantityError(_FORMAT_WRONG)
    if not _NUMBER.match(number):
        raise QuantityError("unable to parse numeric part of quantity")
    with localcontext() as ctx:
        ctx.prec = _CTX_PREC
        value = Decimal(number)
        if suffix in _BINARY:
            value *= Decimal(2) ** _BINARY[suffix]
        elif suffix in _DECIMAL:
            value = value.scaleb(_DECIMAL[suffix])
        elif re.fullmatch(r"[eE][-+]?[0-9]+", suffix):
            exp = int(suffix[1:])
            if abs(exp) > 1000:
                raise QuantityError("unable to parse quantity's suffix")
            value = value.scaleb(exp)
        else:
            raise QuantityError("unable to parse quantity's suffix")
        # values below a nano unit round up (away from zero)
        nano = Decimal("1e-9")
        if value != value.quantize(nano, rounding=ROUND_FLOOR) if value >= 0 else False:
            value = value.quantize(nano, rounding=ROUND_CEILING)
        elif value < 0 and value != value.quantize(nano, rounding=ROUND_CEILING):
            value = value.quantize(nano, rounding=ROUND_FLOOR)
        return value.normalize() if value else Decimal(0)


def quantity_text(value: Decimal) -> str:
    """The canonical string a quantity is carried as (equal values, equal strings)."""
    if not value:
        return "0"
    return format(value.normalize(), "f")


def quantity_value(text: str) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = _CTX_PREC
        return Decimal(text)


def quantity_int(value: Decimal) -> int | None:
    """``AsInt64``: the integer, or None when not whole or out of int64."""
    if value != value.to_integral_value():
        return None
    whole = int(value)
    if not -(2**63) <= whole < 2**63:
        return None
    return whole


# ---- URL ---------------------------------------------------------------------------------------
class UrlError(ValueError):
    pass


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*\Z")
_HEX = "0123456789abcdefABCDEF"


def _check_escapes(text: str, original: str) -> None:
    i = 0
    while i < len(text):
        if text[i] == "%":
            chunk = text[i : i + 3]
            if len(chunk) < 3 or chunk[1] not in _HEX or chunk[2] not in _HEX:
                raise UrlError(f"parse {_goq(original)}: invalid URL escape {_goq(chunk)}")
            i += 3
        else:
            i += 1


def _goq(text: str) -> str:
    from ._errors import go_quote

    return go_quote(text)


def parse_url(text: str, request_uri: bool) -> dict[str, Any]:
    """``url.Parse`` (``request_uri``: ``url.ParseRequestURI``) of ``text``: its parts.

    :raises UrlError: with Go's ``parse "<text>": <reason>`` message.
    """
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise UrlError(f"parse {_goq(text)}: net/url: invalid control character in URL")
    rest = text
    fragment = ""
    if not request_uri and "#" in rest:
        rest, _, fragment = rest.partition("#")
    if rest == "" and request_uri:
        raise UrlError(f"parse {_goq(text)}: empty url")
    scheme = ""
    m = re.match(r"([^:/?#]*):", rest)
    if m is not None:
        candidate = m.group(1)
        if candidate == "":
            raise UrlError(f"parse {_goq(text)}: missing protocol scheme")
        if _SCHEME.match(candidate):
            scheme = candidate.lower()
            rest = rest[m.end() :]
    query = ""
    if "?" in rest:
        rest, _, query = rest.partition("?")
    opaque = ""
    host = ""
    user = ""
    if not rest.startswith("/"):
        if scheme:
            opaque = rest
            return {
                "scheme": scheme,
                "opaque": opaque,
                "host": "",
                "path": "",
                "query": query,
                "fragment": fragment,
                "user": "",
            }
        if request_uri:
            raise UrlError(f"parse {_goq(text)}: invalid URI for request")
        if ":" in rest.split("/", 1)[0]:
            raise UrlError(f"parse {_goq(text)}: first path segment in URL cannot contain colon")
    if ((scheme or not request_uri) and rest.startswith("//")) or (
        request_uri and scheme and rest.startswith("//")
    ):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        if "@" in authority:
            user, _, authority = authority.rpartition("@")
        host = _parse_host(authority, text)
    path = rest
    _check_escapes(path, text)
    return {
        "scheme": scheme,
        "opaque": opaque,
        "host": host,
        "path": path,
        "query": query,
        "fragment": fragment,
        "user": user,
    }


def _parse_host(host: str, original: str) -> str:
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            raise UrlError(f"parse {_goq(original)}: missing ']' in host")
        port = host[end + 1 :]
        if port and (not port.startswith(":") or (not port[1:].isdigit() and port != ":")):
            raise UrlError(f"parse {_goq(original)}: invalid port {_goq(port)} after host")
        return host
    name, colon, port = host.rpartition(":")
    if colon:
        if port and not port.isdigit():
            raise UrlError(f"parse {_goq(original)}: invalid port {_goq(':' + port)} after host")
        if ":" in name:
            raise UrlError(f"parse {_goq(original)}: invalid port {_goq(':' + port)} after host")
    for ch in host:
        if ch in ' <>"{}|\\^`' or ord(ch) < 0x20:
            raise UrlError(f"parse {_goq(original)}: invalid character {_goq(ch)} in host name")
    return host


def url_hostname(host: str) -> str:
    if host.startswith("["):
        return host[1 : host.find("]")]
    name, colon, port = host.rpartition(":")
    return name if colon and (port.isdigit() or port == "") else host


def url_port(host: str) -> str:
    if host.startswith("["):
        rest = host[host.find("]") + 1 :]
        return rest[1:] if rest.startswith(":") else ""
    _, colon, port = host.rpartition(":")
    return port if colon and port.isdigit() else ""


_UNRESERVED_PATH = set(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~$&+,/:;=@!'()*"
)


def url_escaped_path(path: str) -> str:
    """``EscapedPath``: the raw path when it is a valid encoding, else the path escaped."""
    out = []
    for ch in path:
        if ch in _UNRESERVED_PATH or ch == "%":
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode())
    return "".join(out)


def url_query(query: str) -> dict[str, list[str]]:
    """``Query()``: values by key, in order (bad pairs skipped, as Go's ParseQuery does)."""
    from urllib.parse import unquote_plus

    result: dict[str, list[str]] = {}
    for part in query.split("&"):
        if not part or ";" in part:
            continue
        key, _, value = part.partition("=")
        try:
            k, v = unquote_plus(key, errors="strict"), unquote_plus(value, errors="strict")
        except UnicodeDecodeError:
            continue
        if re.search(r"%(?![0-9A-Fa-f]{2})", key + value):
            continue
        result.setdefault(k, []).append(v)
    return result


# ---- IP / CIDR ---------------------------------------------------------------------------------
class NetError(ValueError):
    pass


def parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """``parseIPAddr``: no zones, no IPv4-mapped IPv6, no leading zeros."""
    if "%" in text:
        try:
            ipaddress.ip_address(text)
        except ValueError:
            raise NetError(
                f"IP Address {_goq(text)} parse error during conversion from string: "
                f"ParseAddr({_goq(text)}): unable to parse IP"
            ) from None
        raise NetError(f"IP address {_goq(text)} with zone value is not allowed")
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        raise NetError(
            f"IP Address {_goq(text)} parse error during conversion from string: "
            f"ParseAddr({_goq(text)}): unable to parse IP"
        ) from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise NetError(f"IPv4-mapped IPv6 address {_goq(text)} is not allowed")
    return addr


def parse_cidr(text: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """``netip.ParsePrefix`` with the same restrictions: the address (unmasked) and bits."""
    addr_text, slash, bits_text = text.partition("/")
    problem = None
    if not slash:
        problem = "no '/'"
    elif "%" in addr_text:
        problem = "IPv6 zones cannot be present in a prefix"
    elif not bits_text.isdigit() or (len(bits_text) > 1 and bits_text[0] == "0"):
        problem = f"bad bits after slash: {_goq(bits_text)}"
    if problem is None:
        try:
            addr = ipaddress.ip_address(addr_text)
        except ValueError:
            problem = f"ParseAddr({_goq(addr_text)}): unable to parse IP"
        else:
            bits = int(bits_text)
            if bits > addr.max_prefixlen:
                problem = "prefix length out of range"
    if problem is not None:
        raise NetError(
            "network address parse error during conversion from string: "
            f"netip.ParsePrefix({_goq(text)}): {problem}"
        )
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise NetError(f"IPv4-mapped IPv6 address {_goq(text)} is not allowed")
    return addr, int(bits_text)


# ---- semver ------------------------------------------------------------------------------------
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\Z"
)


def parse_semver(text: str, normalize: bool = False) -> tuple[int, int, int, str, str]:
    if normalize:
        text = text[1:] if text.startswith("v") else text
        m0 = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)\Z", text, re.S)
        if m0 is not None and m0.group(4) == "":
            parts = [str(int(p)) for p in m0.groups()[:3] if p is not None]
            text = ".".join(parts + ["0"] * (3 - len(parts)))
    m = _SEMVER.match(text)
    if m is None:
        raise ValueError("No Major.Minor.Patch elements found")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or "", m.group(5) or ""


def semver_compare(a: tuple[int, int, int, str, str], b: tuple[int, int, int, str, str]) -> int:
    if a[:3] != b[:3]:
        return -1 if a[:3] < b[:3] else 1
    pa, pb = a[3], b[3]
    if pa == pb:
        return 0
    if not pa:
        return 1
    if not pb:
        return -1
    for x, y in zip(pa.split("."), pb.split("."), strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit():
            return -1
        if y.isdigit():
            return 1
        return -1 if x < y else 1
    na, nb = len(pa.split(".")), len(pb.split("."))
    return 0 if na == nb else (-1 if na < nb else 1)
