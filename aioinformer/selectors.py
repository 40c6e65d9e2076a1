"""Kubernetes label and field selectors: parsing and matching.

Label selector syntax (as ``kubectl -l`` and the API's ``labelSelector``): requirements joined
by commas, each one of ``key``, ``!key``, ``key=value``, ``key==value``, ``key!=value``,
``key in (v1,v2)``, ``key notin (v1,v2)``, ``key>N`` and ``key<N``. The empty selector matches
everything. Field selectors are ``field=value``, ``field==value`` and ``field!=value`` joined by
commas. Errors raise :class:`~aioinformer.errors.SelectorSyntaxError` saying where and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
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
        if value is None:
            return False
        try:
            have = int(value)
        except ValueError:
            return False
        (limit,) = self.values
        return have > int(limit) if op is Operator.GREATER_THAN else have < int(limit)

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
            if kind != "word" or not re.fullmatch(r"-?[0-9]+", value):
                raise self.fail(f"'{token}' needs an integer value", vpos)
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


#: Field labels whose object path is not the label split on dots.
_FIELD_PATHS: dict[str, tuple[str, ...]] = {"source": ("source", "component")}


def field_value(obj: Mapping[str, Any], field: str) -> str:
    """The value of a field (``spec.nodeName``, ``metadata.name``, ...) as the API server
    compares it in field selectors: a string, ``"true"``/``"false"`` for booleans, ``""`` when
    absent."""
    node: Any = obj
    for part in _FIELD_PATHS.get(field) or field.split("."):
        if not isinstance(node, Mapping):
            return ""
        node = node.get(part)
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


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


def _split_unescaped(text: str) -> list[str]:
    """Split on commas that are not escaped with a backslash (escapes are kept)."""
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if escaped:
        raise SelectorSyntaxError(f"field selector {text!r} ends with a lone backslash")
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char == "\\":
            escaped = next(chars)
            if escaped not in "\\,=":
                raise SelectorSyntaxError(f"invalid escape sequence '\\{escaped}' in {text!r}")
            out.append(escaped)
        else:
            out.append(char)
    return "".join(out)


def _find_operator(term: str) -> tuple[int, str]:
    """The position and text of the first operator not preceded by a backslash."""
    for index, char in enumerate(term):
        if char in "!=" and (index == 0 or term[index - 1] != "\\"):
            if term.startswith("!=", index):
                return index, "!="
            if term.startswith("==", index):
                return index, "=="
            if char == "=":
                return index, "="
    raise SelectorSyntaxError(f"invalid field selector term {term!r}: no operator")


def parse_field_selector(text: str | None) -> FieldSelector:
    """Parse a field selector such as ``spec.nodeName=node-1,status.phase!=Running``.

    ``==`` is the same as ``=``. In values, ``\\,``, ``\\=`` and ``\\\\`` stand for a
    comma, an equals sign and a backslash.

    :raises SelectorSyntaxError: when a term has no operator or no field name, or a value has
        a bad escape.
    """
    if not text or not text.strip():
        return FieldSelector()
    terms: list[tuple[str, str, str]] = []
    for term in _split_unescaped(text):
        index, op = _find_operator(term)
        name = term[:index].strip()
        if not name:
            raise SelectorSyntaxError(f"invalid field selector term {term!r}: no field name")
        terms.append((name, "!=" if op == "!=" else "=", _unescape(term[index + len(op) :])))
    return FieldSelector(tuple(terms))
