"""Kubernetes label and field selectors: parsing and matching.

Label selector syntax (as ``kubectl -l`` and the API's ``labelSelector``): requirements joined
by commas, each one of ``key``, ``!key``, ``key=value``, ``key==value``, ``key!=value``,
``key in (v1,v2)``, ``key notin (v1,v2)``, ``key>N`` and ``key<N``. The empty selector matches
everything. Field selectors (:mod:`aioinformer._cache._field_selectors`, re-exported here) are
``field=value``, ``field==value`` and ``field!=value`` joined by commas. Errors raise
:class:`~aioinformer.errors.SelectorSyntaxError` saying where and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..errors import SelectorSyntaxError
from ._field_selectors import FieldSelector as FieldSelector
from ._field_selectors import field_value as field_value
from ._field_selectors import parse_field_selector as parse_field_selector

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
