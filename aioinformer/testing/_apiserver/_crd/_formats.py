"""String formats a custom resource's schema may declare, checked as the API server does.

Ports of the behaviour of kube-openapi's ``pkg/validation/strfmt`` registry (the checkers of
``default.go``, ``time.go``, ``date.go``, ``duration.go``, ``bson.go`` and
``kubernetes-extensions.go``, some by way of ``govalidator``) and of apiextensions-apiserver's
``pkg/apiserver/validation/formats.go``: a format the served version does not support is
dropped from the schema before validation (``StripUnsupportedFormatsPostProcessorForVersion``)
and named in a ``unrecognized format "…"`` warning when a CRD declares it. Format names are
compared with their dashes removed, as go-openapi normalises them (``date-time`` is
``datetime``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from datetime import date

__all__ = ["check_format", "known_format", "strip_format", "unrecognized_format"]

_UUID = r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?{v}[0-9a-f]{3}-?{r}[0-9a-f]{3}-?[0-9a-f]{12}$"
_L = r"[^\W_]"  # letters and digits (RE2's [a-zA-Z0-9\p{S}\p{L}] without symbols)
_HOSTNAME = re.compile(
    rf"^({_L}((-?{_L}{{0,62}})?)|({_L}(((?:-|{_L}){{0,61}}{_L})?)(\.)){{1,}}([^\W\d_]){{2,63}})$"
)
_SHORT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_OCTET = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_PATTERNS = {
    "uuid": _UUID.replace("{v}", "[0-9a-f]").replace("{r}", "[0-9a-f]"),
    "uuid3": _UUID.replace("{v}", "3").replace("{r}", "[0-9a-f]"),
    "uuid4": _UUID.replace("{v}", "4").replace("{r}", "[89ab]"),
    "uuid5": _UUID.replace("{v}", "5").replace("{r}", "[89ab]"),
    "bsonobjectid": r"^[0-9a-fA-F]{24}$",
    "hexcolor": r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$",
    "rgbcolor": rf"^rgb\({_OCTET},{_OCTET},{_OCTET}\)$",
    "ssn": r"^\d{3}[- ]?\d{2}[- ]?\d{4}$",
    "byte": r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$",
    "k8sshortname": f"^{_SHORT}$",
    "k8slongname": rf"^{_SHORT}(\.{_SHORT})*$",
    "mac": r"^([0-9A-Fa-f]{2}[:-]){5,19}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2,9}[0-9A-Fa-f]{4}$",
}
_COMPILED = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}
_EMAIL = re.compile(r"^(?:[^<>@\s]*<)?[^<>@\s]+@[^<>@\s]+(?:>)?$")
_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_DATE_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
_GO_DURATION = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$")
_SCALA_DURATION = re.compile(r"(\d+)\s*([A-Za-zµ]+)")
_UNITS = (
    ("ns", "nano"),
    ("us", "µs", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)
_MAC_LENGTHS = (6, 8, 20)


def _is_date(text: str) -> bool:
    """``time.Parse("2006-01-02", …)``."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        date(int(text[:4]), int(text[5:7]), int(text[8:]))
    except ValueError:
        return False
    return True


def _is_date_time(text: str) -> bool:
    """``IsDateTime``: a full date, ``T``, then ``hh:mm:ss[.frac](z|±hh:mm)``."""
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    match = _DATE_TIME.match(parts[1])
    if match is None:
        return False
    return match[1] <= "23" and match[2] <= "59" and match[3] <= "59"


def _is_duration(text: str) -> bool:
    """``ParseDuration``: Go's ``time.ParseDuration`` or the Scala-like ``3 days`` form."""
    if _GO_DURATION.match(text):
        return True
    for _, unit in _SCALA_DURATION.findall(text):
        unit = unit.strip().lower()
        for variants in _UNITS:
            last = len(variants) - 1
            for i, variant in enumerate(variants):
                if (i == last and unit.startswith(variant)) or variant == unit:
                    return True
    return False


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``netutils.ParseIPSloppy``: IPv4 octets may carry leading zeros."""
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", text):
        text = ".".join(str(int(part)) if len(part) < 4 else "x" for part in text.split("."))
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _is_cidr(text: str) -> bool:
    address, slash, bits = text.partition("/")
    if not slash or not bits.isdigit() or _ip(address) is None:
        return False
    limit = 32 if "." in address and ":" not in address else 128
    return int(bits) <= limit


def _is_mac(text: str) -> bool:
    if not _COMPILED["mac"].match(text):
        return False
    digits = re.sub(r"[:.-]", "", text)
    return len(digits) // 2 in _MAC_LENGTHS


def _isbn10(text: str) -> bool:
    digits = re.sub(r"[\s-]", "", text)
    if not re.fullmatch(r"\d{9}[\dX]", digits):
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
    return total % 11 == 0


def _isbn13(text: str) -> bool:
    digits = re.sub(r"[\s-]", "", text)
    if not re.fullmatch(r"\d{13}", digits):
        return False
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(digits[:12]))
    return (10 - total % 10) % 10 == int(digits[12])


def _is_credit_card(text: str) -> bool:
    digits = re.sub(r"[^0-9]", "", text)
    pattern = (
        r"(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|"
        r"27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|"
        r"3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})"
    )
    if not re.fullmatch(pattern, digits):
        return False
    total = 0
    for i, c in enumerate(reversed(digits)):
        n = int(c) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def _is_uri(text: str) -> bool:
    """``url.ParseRequestURI``: an absolute URI or an absolute path, no spaces."""
    if not text or any(ch in text for ch in " \t\r\n") or "#" in text:
        return False
    return text.startswith("/") or bool(_URI_SCHEME.match(text))


def _is_hostname(text: str) -> bool:
    if not _HOSTNAME.match(text) or len(text) > 255:
        return False
    return all(len(part) <= 63 for part in text.split("."))


def _pattern(name: str) -> Callable[[str], bool]:
    compiled = _COMPILED[name]
    return lambda text: compiled.match(text) is not None


_CHECKERS: dict[str, Callable[[str], bool]] = {name: _pattern(name) for name in _PATTERNS} | {
    "uri": _is_uri,
    "email": lambda text: _EMAIL.match(text) is not None,
    "hostname": _is_hostname,
    "ipv4": lambda text: _ip(text) is not None and "." in text,
    "ipv6": lambda text: _ip(text) is not None and ":" in text,
    "cidr": _is_cidr,
    "mac": _is_mac,
    "isbn": lambda text: _isbn10(text) or _isbn13(text),
    "isbn10": _isbn10,
    "isbn13": _isbn13,
    "creditcard": _is_credit_card,
    "password": lambda text: True,
    "date": _is_date,
    "duration": _is_duration,
    "datetime": _is_date_time,
}


def _normal(name: str) -> str:
    return name.replace("-", "")


def known_format(name: str) -> bool:
    """Whether the registry knows the format (``ContainsName``)."""
    return _normal(name) in _CHECKERS


def check_format(name: str, text: str) -> bool:
    """Whether ``text`` has the format (``Validates``; unknown formats never validate)."""
    checker = _CHECKERS.get(_normal(name))
    return checker is not None and checker(text)


def strip_format(type_name: str, fmt: str) -> str:
    """The format validation uses: the format when the type supports it, else ``""``."""
    if not fmt:
        return ""
    if type_name in ("", "string"):
        return fmt if known_format(fmt) else ""
    if type_name == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if type_name == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""


def unrecognized_format(type_name: str, fmt: str) -> bool:
    """Whether a CRD's format earns an ``unrecognized format`` warning."""
    return bool(fmt) and not strip_format(type_name, fmt)
