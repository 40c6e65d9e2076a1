"""Kubernetes label and field selectors: parsing and matching.

Label selector syntax (as ``kubectl -l`` and the API's ``labelSelector``): requirements joined
by commas, each one of ``key``, ``!key``, ``key=value``, ``key==value``, ``key!=value``,
``key in (v1,v2)``, ``key notin (v1,v2)``, ``key>N`` and ``key<N``. The empty selector matches
everything. Field selectors are ``field=value``, ``field==value`` and ``field!=value`` joined by
commas. Errors raise :class:`~aioinformer.errors.SelectorSyntaxError` saying where and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .errors import SelectorSyntaxError

__all__ = [
    "FieldSelector",
    "LabelSelector",
    "Operator",
    "Requirement",
    "label_selector_from_spec",
    "field_value",
    "parse_field_selector",
    "parse_label_selector",
]

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_KEY_NAME = re.compile(_NAME + r"\Z")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_VALUE = re.compile(r"(" + _NAME + r")?\Z")
_INT64 = re.compile(r"[+-]?[0-9]+\Z")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse_int64(text: str) -> int | None:
    """The value of ``text`` read as Go's ``strconv.ParseInt(text, 10, 64)`` reads it: an
    optional sign and ASCII digits (no blanks, no ``_``), within the int64 range; None when
    it does not parse."""
    if not _INT64.match(text):
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


class Operator(StrEnum):
    """A label requirement's operator."""

    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


def _check_key(key: str, text: str, pos: int) -> None:
    prefix, slash, name = key.rpartition("/")
    ok = bool(_KEY_NAME.match(name)) and (
        not slash or (0 < len(prefix) <= 253 and bool(_DNS_SUBDOMAIN.match(prefix)))
    )
    if not ok:
        raise SelectorSyntaxError(f"invalid label key {key!r} at position {pos} in {text!r}")


def _check_value(value: str, text: str, pos: int) -> None:
    if not _VALUE.match(value):
        raise SelectorSyntaxError(f"invalid label value {value!r} at position {pos} in {text!r}")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One requirement of a label selector: ``key``, ``operator`` and its ``values``."""

    key: str
    operator: Operator
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether labels satisfy this requirement."""
        op = self.operator
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        if op in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN):
            return value is not None and value in self.values
        if op in (Operator.NOT_EQUALS, Operator.NOT_IN):
            return value is None or value not in self.values
        have = _parse_int64(value) if value is not None else None
        limits = [_parse_int64(limit) for limit in self.values]
        if have is None or len(limits) != 1 or limits[0] is None:
            return False  # as Kubernetes: a label or bound that is no int64 matches nothing
        return have > limits[0] if op is Operator.GREATER_THAN else have < limits[0]

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({','.join(sorted(self.values))})"
        (value,) = self.values
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(op, op.value)
        return f"{self.key}{symbol}{value}"


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed label selector: all requirements must hold (the empty one matches everything)."""

    requirements: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the selector has no requirement (it matches everything)."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether a label mapping satisfies every requirement."""
        labels = labels or {}
        return all(req.matches(labels) for req in self.requirements)

    def matches_object(self, obj: Mapping[str, Any]) -> bool:
        """Whether an object's ``metadata.labels`` satisfy the selector."""
        metadata = obj.get("metadata") or {}
        return self.matches(metadata.get("labels") or {})

    def __str__(self) -> str:
        return ",".join(str(req) for req in self.requirements)


_TOKEN = re.compile(r"\s*(?:(?P<op>==|!=|=|\(|\)|,|!|<|>)|(?P<word>[^\s,=!()<>]+))")


def _tokens(text: str) -> Iterator[tuple[str, str, int]]:
    """Yields ``(kind, token, position)``; kind is ``op``, ``word`` or ``end``."""
    pos = 0
    while True:
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            rest = text[pos:]
            if rest.strip():
                raise SelectorSyntaxError(
                    f"unexpected {rest.strip()[0]!r} at position {pos} in {text!r}"
                )
            yield "end", "", len(text)
            return
        kind = "op" if match.group("op") is not None else "word"
        yield kind, match.group(kind), match.start(kind)
        pos = match.end()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = list(_tokens(text))
        self.index = 0

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.index]

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def fail(self, message: str, pos: int) -> SelectorSyntaxError:
        return SelectorSyntaxError(f"{message} at position {pos} in {self.text!r}")

    def parse(self) -> LabelSelector:
        requirements: list[Requirement] = []
        if self.peek()[0] == "end":
            return LabelSelector()
        while True:
            requirements.append(self.requirement())
            kind, token, pos = self.take()
            if kind == "end":
                return LabelSelector(tuple(requirements))
            if token != ",":
                raise self.fail(f"expected ',' but found {token!r}", pos)

    def requirement(self) -> Requirement:
        kind, token, pos = self.take()
        if token == "!":
            kind, key, pos = self.take()
            if kind != "word":
                raise self.fail("expected a label key after '!'", pos)
            _check_key(key, self.text, pos)
            return Requirement(key, Operator.DOES_NOT_EXIST)
        if kind != "word":
            raise self.fail(f"expected a label key but found {token or 'the end'!r}", pos)
        key = token
        _check_key(key, self.text, pos)
        kind, token, pos = self.peek()
        if kind == "end" or token == ",":
            return Requirement(key, Operator.EXISTS)
        self.take()
        if token in ("=", "==", "!="):
            value = self.single_value()
            return Requirement(key, Operator(token), frozenset((value,)))
        if token in ("<", ">"):
            kind, value, vpos = self.take()
            if kind != "word" or _parse_int64(value) is None:
                raise self.fail(f"'{token}' needs an integer value (64-bit)", vpos)
            if not _VALUE.match(value):
                # Kubernetes checks the bound as a label value too: no sign, so not negative.
                raise self.fail(
                    f"invalid bound {value!r} for '{token}': it must also be a valid label "
                    "value (digits only, no sign, at most 63 characters)",
                    vpos,
                )
            op = Operator.GREATER_THAN if token == ">" else Operator.LESS_THAN
            return Requirement(key, op, frozenset((value,)))
        if token in ("in", "notin"):
            return Requirement(key, Operator(token), self.value_set(token))
        raise self.fail(f"unknown operator {token!r}", pos)

    def single_value(self) -> str:
        kind, token, pos = self.peek()
        if kind == "end" or token == ",":
            return ""  # key= means the empty value
        if kind != "word":
            raise self.fail(f"expected a value but found {token!r}", pos)
        self.take()
        _check_value(token, self.text, pos)
        return token

    def value_set(self, op: str) -> frozenset[str]:
        kind, token, pos = self.take()
        if token != "(":
            raise self.fail(f"'{op}' must be followed by '('", pos)
        values: list[str] = []
        while True:
            kind, token, pos = self.take()
            # Like Kubernetes, an omitted value is the empty value: "()" is {""}, and
            # "(a,)" is {"a", ""} (which is how such sets print, too).
            if kind == "word":
                _check_value(token, self.text, pos)
                values.append(token)
                kind, token, pos = self.take()
            elif token in (",", ")"):
                values.append("")
            else:
                raise self.fail(f"unexpected {token or 'end'!r} in value set", pos)
            if token == ")":
                return frozenset(values)
            if token != ",":
                raise self.fail(f"expected ',' or ')' but found {token or 'the end'!r}", pos)


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a label selector string (None or ``""`` gives the match-everything selector).

    :raises SelectorSyntaxError: when the text is not a valid selector.
    """
    if not text or not text.strip():
        return LabelSelector()
    return _Parser(text).parse()


def label_selector_from_spec(spec: Mapping[str, Any] | None) -> LabelSelector:
    """Build a selector from an API ``LabelSelector`` object (``matchLabels``/``matchExpressions``).

    :raises SelectorSyntaxError: for an unknown operator or a bad key or value.
    """
    if not spec:
        return LabelSelector()
    requirements: list[Requirement] = []
    for key, value in sorted((spec.get("matchLabels") or {}).items()):
        _check_key(key, str(spec), 0)
        _check_value(value, str(spec), 0)
        requirements.append(Requirement(key, Operator.EQUALS, frozenset((value,))))
    operators = {
        "In": Operator.IN,
        "NotIn": Operator.NOT_IN,
        "Exists": Operator.EXISTS,
        "DoesNotExist": Operator.DOES_NOT_EXIST,
    }
    for expression in spec.get("matchExpressions") or []:
        key = expression.get("key", "")
        _check_key(key, str(spec), 0)
        op = operators.get(expression.get("operator", ""))
        if op is None:
            raise SelectorSyntaxError(f"unknown matchExpressions operator in {expression!r}")
        values = frozenset(expression.get("values") or ())
        if op in (Operator.IN, Operator.NOT_IN) and not values:
            raise SelectorSyntaxError(f"'{op.value}' needs at least one value in {expression!r}")
        requirements.append(Requirement(key, op, values))
    return LabelSelector(tuple(requirements))


@dataclass(frozen=True, slots=True)
class _BuiltinField:
    """How a built-in kind's field set holds one field label (its ``ToSelectableFields``)."""

    #: The ``(apiVersion, kind)`` pairs whose field set defines the label this way.
    kinds: frozenset[tuple[str, str]]
    #: Object paths read in turn; the first one that gives a non-empty value wins.
    paths: tuple[tuple[str, ...], ...]
    #: The value when every path is absent or empty: the Go zero value of a typed field.
    zero: str = ""


#: Field labels whose value on a built-in kind is not simply the object's value at the
#: label's dotted path (``pkg/registry/.../strategy.go`` ``ToSelectableFields`` of each kind):
#: bool and int fields hold their Go zero value when absent, Job's ``status.successful`` is
#: ``status.succeeded``, an Event's ``source`` falls back to its ``reportingComponent``, and
#: ``spec.host`` is the v1 Pod field-label conversion's old name for ``spec.nodeName``.
_BUILTIN_FIELDS: dict[str, _BuiltinField] = {
    "spec.hostNetwork": _BuiltinField(
        frozenset({("v1", "Pod")}), (("spec", "hostNetwork"),), "false"
    ),
    "spec.host": _BuiltinField(frozenset({("v1", "Pod")}), (("spec", "nodeName"),)),
    "spec.unschedulable": _BuiltinField(
        frozenset({("v1", "Node")}), (("spec", "unschedulable"),), "false"
    ),
    "status.replicas": _BuiltinField(
        frozenset({("apps/v1", "ReplicaSet"), ("v1", "ReplicationController")}),
        (("status", "replicas"),),
        "0",
    ),
    "status.successful": _BuiltinField(
        frozenset({("batch/v1", "Job")}), (("status", "succeeded"),), "0"
    ),
    "source": _BuiltinField(
        frozenset({("v1", "Event")}), (("source", "component"), ("reportingComponent",))
    ),
}


def _value_at(obj: Mapping[str, Any], path: Iterable[str]) -> str:
    """The field-set spelling of the value at a path: a string as it is, ``true``/``false``
    for a boolean, a number in decimal, ``""`` when absent."""
    node: Any = obj
    for part in path:
        if not isinstance(node, Mapping):
            return ""
        node = node.get(part)
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return node if isinstance(node, str) else str(node)


def _is_one_of(obj: Mapping[str, Any], kinds: frozenset[tuple[str, str]]) -> bool:
    """Whether an object may be of one of these built-in kinds. Custom resources always
    carry ``apiVersion`` and ``kind``; built-in objects in a list usually carry neither, so
    an object that does not say what it is counts as the built-in kind."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if not kind:
        return True
    return any(kind == k and (not api_version or api_version == v) for v, k in kinds)


def field_value(obj: Mapping[str, Any], field: str) -> str:
    """The value of a field label (``spec.nodeName``, ``metadata.name``, ...) as the API
    server's field set holds it for field selectors: a string as it is, ``"true"``/``"false"``
    for booleans, numbers in decimal, ``""`` when absent.

    The built-in kinds' typed fields read as their Go zero value when absent
    (``spec.hostNetwork`` and ``spec.unschedulable`` ``"false"``, ``status.replicas`` and a
    Job's ``status.successful`` ``"0"``); an Event's ``source`` is ``source.component`` or
    else ``reportingComponent``; a Pod's ``spec.host`` is ``spec.nodeName``. An object whose
    ``apiVersion``/``kind`` names another kind (a custom resource's ``selectableFields``) is
    read at the label's dotted path, ``""`` when absent.
    """
    builtin = _BUILTIN_FIELDS.get(field)
    if builtin is None or not _is_one_of(obj, builtin.kinds):
        return _value_at(obj, field.split("."))
    for path in builtin.paths:
        value = _value_at(obj, path)
        if value:
            return value
    return builtin.zero


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """A parsed field selector: ``(field, operator, value)`` terms that must all hold
    (``operator`` is ``"="`` or ``"!="``)."""

    terms: tuple[tuple[str, str, str], ...] = ()

    @property
    def empty(self) -> bool:
        """True when the selector has no term."""
        return not self.terms

    @property
    def fields(self) -> frozenset[str]:
        """The field names the selector uses."""
        return frozenset(name for name, _, _ in self.terms)

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether field values satisfy every term (a missing field has the value ``""``)."""
        return all((fields.get(name, "") == value) == (op == "=") for name, op, value in self.terms)

    def matches_object(self, obj: Mapping[str, Any]) -> bool:
        """Whether an object's fields (see :func:`field_value`) satisfy every term."""
        return all(
            (field_value(obj, name) == value) == (op == "=") for name, op, value in self.terms
        )

    def __str__(self) -> str:
        def escape(value: str) -> str:
            return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")

        return ",".join(f"{name}{op}{escape(value)}" for name, op, value in self.terms)


def _split_terms(text: str) -> list[str]:
    """Split a field selector on the commas that no backslash escapes (escapes are kept)."""
    terms: list[str] = []
    start, escaped = 0, False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(text[start:index])
            start = index + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str]:
    """``(field, operator, raw value)`` split at the first operator in the term.

    As in Kubernetes, the field name has no escapes: the first ``!=``, ``==`` or ``=`` ends
    it wherever it is, even right after a backslash.
    """
    for index in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, index):
                return term[:index], op, term[index + len(op) :]
    raise SelectorSyntaxError(f"invalid field selector term {term!r}: no operator")


def _unescape(value: str, term: str) -> str:
    """A field selector value with its escapes resolved: ``\\\\``, ``\\,`` and ``\\=`` stand
    for the character; any other escape, a trailing lone backslash and a bare ``,`` or ``=``
    are refused."""
    out: list[str] = []
    escaped = False
    for char in value:
        if escaped:
            if char not in "\\,=":
                raise SelectorSyntaxError(f"invalid escape sequence '\\{char}' in {term!r}")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            raise SelectorSyntaxError(
                f"unescaped {char!r} in the value of {term!r} (write it as '\\{char}')"
            )
        else:
            out.append(char)
    if escaped:
        raise SelectorSyntaxError(f"invalid escape sequence: {term!r} ends with a lone backslash")
    return "".join(out)


def parse_field_selector(text: str | None) -> FieldSelector:
    """Parse a field selector such as ``spec.nodeName=node-1,status.phase!=Running``.

    ``==`` is the same as ``=``. Each term splits at its first operator (the field name has
    no escapes). In values, ``\\,``, ``\\=`` and ``\\\\`` stand for a comma, an equals sign
    and a backslash; an unescaped ``=`` is refused. Empty terms (``a=b,`` or ``,``) are
    skipped, as Kubernetes does; a selector of only empty terms selects everything.

    :raises SelectorSyntaxError: when a term has no operator or no field name, or a value has
        a bad escape or an unescaped ``=``.
    """
    if not text or not text.strip():
        return FieldSelector()
    terms: list[tuple[str, str, str]] = []
    for term in _split_terms(text):
        if not term:
            continue
        name, op, value = _split_term(term)
        name = name.strip()
        if not name:
            raise SelectorSyntaxError(f"invalid field selector term {term!r}: no field name")
        terms.append((name, "!=" if op == "!=" else "=", _unescape(value, term)))
    return FieldSelector(tuple(terms))
