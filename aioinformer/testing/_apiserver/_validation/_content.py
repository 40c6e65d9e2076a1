"""The string rules of Kubernetes validation, with the real explanations.

Ports of the behaviour of apimachinery's ``pkg/util/validation`` and
``pkg/api/validate/content`` (``IsDNS1123Label``, ``IsDNS1123Subdomain``, ``IsDNS1035Label``,
``IsQualifiedName``/``IsLabelKey``, ``IsValidLabelValue``, ``IsConfigMapKey``,
``IsValidPortNum``, ``IsValidPortName``, ``IsValidPercent``, ``IsValidIP``, the relaxed
environment variable names), and of ``pkg/api/validation/generic.go`` (the name functions,
which mask a trailing dash of a ``generateName`` prefix). Each returns the list of
explanations (empty when valid), as the Go functions do.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

__all__ = [
    "NameFunc",
    "inclusive_range_error",
    "is_config_map_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_env_var_name",
    "is_label_value",
    "is_path_segment_name",
    "is_qualified_name",
    "is_valid_ip",
    "is_valid_percent",
    "is_valid_port_name",
    "is_valid_port_num",
    "max_len_error",
    "name_is_dns1035_label",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "regex_error",
]

#: A name rule: ``(name, is_prefix) -> explanations`` (``ValidateNameFunc``).
NameFunc = Callable[[str, bool], list[str]]


def regex_error(message: str, pattern: str, *examples: str) -> str:
    """``RegexError``: the explanation of a value that does not match ``pattern``."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    # each example is followed by "', " and joined with " or ": Go prints ",  or "
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def max_len_error(length: int) -> str:
    """``MaxLenError``."""
    return f"must be no more than {length} bytes"


def inclusive_range_error(low: int, high: int) -> str:
    """``InclusiveRangeError``."""
    return f"must be between {low} and {high}, inclusive"


_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character"
)
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character"
)
_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT = "[-A-Za-z0-9_.]"
_QNAME_FMT = f"({_QNAME_CHAR}{_QNAME_EXT}*)?{_QNAME_CHAR}"
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character"
)
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character"
)
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_PERCENT_FMT = "[0-9]+%"
_PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'"


def _full(pattern: str) -> re.Pattern[str]:
    return re.compile(f"(?:{pattern})\\Z")


_LABEL_RE = _full(_LABEL_FMT)
_SUBDOMAIN_RE = _full(_SUBDOMAIN_FMT)
_DNS1035_RE = _full(_DNS1035_FMT)
_QNAME_RE = _full(_QNAME_FMT)
_LABEL_VALUE_RE = _full(_LABEL_VALUE_FMT)
_CONFIG_KEY_RE = _full(_CONFIG_KEY_FMT)
_PERCENT_RE = _full(_PERCENT_FMT)
_PORT_NAME_CHARS = re.compile(r"[-a-z0-9]+\Z")
_LETTER = re.compile(r"[a-z]")


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: at most 63 bytes of ``[a-z0-9-]``, alphanumeric at both ends."""
    errors = []
    if len(value.encode()) > 63:
        errors.append(max_len_error(63))
    if not _LABEL_RE.match(value):
        if _SUBDOMAIN_RE.match(value):
            errors.append("must not contain dots")
        else:
            errors.append(regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errors


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: at most 253 bytes of dot-separated labels."""
    errors = []
    if len(value.encode()) > 253:
        errors.append(max_len_error(253))
    if not _SUBDOMAIN_RE.match(value):
        errors.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errors


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: a label that starts with a letter (Service names)."""
    errors = []
    if len(value.encode()) > 63:
        errors.append(max_len_error(63))
    if not _DNS1035_RE.match(value):
        errors.append(regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errors


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` (label and annotation keys): ``[prefix/]name``."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errors.append("name part " + max_len_error(63))
    if not _QNAME_RE.match(name):
        errors.append(
            "name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errors


def is_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or at most 63 bytes of ``[-A-Za-z0-9_.]``."""
    errors = []
    if len(value.encode()) > 63:
        errors.append(max_len_error(63))
    if not _LABEL_VALUE_RE.match(value):
        errors.append(
            regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errors


def is_config_map_key(value: str) -> list[str]:
    """``IsConfigMapKey`` (ConfigMap and Secret keys)."""
    errors = []
    if len(value.encode()) > 253:
        errors.append(max_len_error(253))
    if not _CONFIG_KEY_RE.match(value):
        errors.append(
            regex_error(_CONFIG_KEY_MSG, _CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name")
        )
    if value == ".":
        errors.append("must not be '.'")
    elif value == "..":
        errors.append("must not be '..'")
    elif value.startswith(".."):
        errors.append("must not start with '..'")
    return errors


def is_valid_port_num(port: int) -> list[str]:
    """``IsValidPortNum``: 1 to 65535."""
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    """``IsValidPortName`` (IANA_SVC_NAME): at most 15 of ``[-a-z0-9]``, one letter at least."""
    errors = []
    if len(port) > 15:
        errors.append(max_len_error(15))
    if not _PORT_NAME_CHARS.match(port):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _LETTER.search(port):
        errors.append("must contain at least one letter (a-z)")
    if "--" in port:
        errors.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def is_valid_percent(value: str) -> list[str]:
    """``IsValidPercent``: digits and ``%``."""
    if _PERCENT_RE.match(value):
        return []
    return [regex_error(_PERCENT_MSG, _PERCENT_FMT, "1%", "93%")]


def is_env_var_name(value: str) -> list[str]:
    """``IsRelaxedEnvVarName`` (the rule since RelaxedEnvironmentVariableValidation is GA)."""
    errors = []
    if not value:
        errors.append("environment variable name must be non-empty")
    for ch in value:
        if ord(ch) > 0x7F or not ch.isprintable() or ch == "=":
            errors.append(
                "a valid environment variable name must consist only of printable ASCII "
                "characters other than '='"
            )
            break
    return errors


def is_valid_ip(value: str) -> list[str]:
    """``IsValidIP`` (without the legacy leading-zero forms)."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    return []


def is_path_segment_name(name: str, prefix: bool = False) -> list[str]:
    """``IsPathSegmentName``/``IsPathSegmentPrefix``: names usable in a URL path."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def _mask_trailing_dash(name: str) -> str:
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSSubdomain`` (most kinds)."""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSLabel`` (Namespaces, StatefulSets)."""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNS1035Label`` (Services)."""
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)
