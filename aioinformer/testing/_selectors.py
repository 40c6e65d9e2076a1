"""Label and field selectors as the fake API server parses and matches them (private).

Label selectors follow ``k8s.io/apimachinery/pkg/labels``: comma-separated requirements
``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k``, ``!k``, ``k>n``, ``k<n``.
Field selectors follow ``k8s.io/apimachinery/pkg/fields``: ``f=v``, ``f==v``, ``f!=v`` with
``\\`` escapes, over the fields the resource declares selectable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import SelectorSyntaxError

__all__ = [
    "Matcher",
    "compile_selectors",
    "field_value",
    "parse_field_selector",
    "parse_label_selector",
]

#: A compiled predicate over a whole object.
Matcher = Callable[[Mapping[str, Any]], bool]

_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_SPECIAL = frozenset(" \t\n,=!()<>")


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One requirement of a label selector."""

    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", ">", "<"
    values: frozenset[str]

    def matches(self, labels: Mapping[str, Any]) -> bool:
        """Whether a label map satisfies this requirement."""
        op = self.op
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        if op in ("=", "in"):
            return self.key in labels and str(labels[self.key]) in self.values
        if op in ("!=", "notin"):
            return self.key not in labels or str(labels[self.key]) not in self.values
        if self.key not in labels:
            return False
        try:
            have = int(str(labels[self.key]))
        except ValueError:
            return False
        (want,) = self.values
        return have > int(want) if op == ">" else have < int(want)


def _validate_key(key: str) -> None:
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        raise SelectorSyntaxError(f"invalid label key {key!r}: bad prefix")
    if not name or len(name) > 63 or not _NAME.match(name):
        raise SelectorSyntaxError(f"invalid label key {key!r}")


def _validate_value(value: str) -> None:
    if value and (len(value) > 63 or not _NAME.match(value)):
        raise SelectorSyntaxError(f"invalid label value {value!r}")


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\n":
            i += 1
        elif text.startswith(("==", "!="), i):
            tokens.append(text[i : i + 2])
            i += 2
        elif c in ",=!()<>":
            tokens.append(c)
            i += 1
        else:
            j = i
            while j < n and text[j] not in _SPECIAL:
                j += 1
            tokens.append(text[i:j])
            i = j
    return tokens


def _is_word(token: str | None) -> bool:
    return token is not None and token[0] not in _SPECIAL


class _LabelParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.pos += 1
        return token

    def fail(self, why: str) -> SelectorSyntaxError:
        return SelectorSyntaxError(f"unable to parse label selector {self.text!r}: {why}")

    def parse(self) -> list[LabelRequirement]:
        requirements: list[LabelRequirement] = []
        if self.peek() is None:
            return requirements
        while True:
            requirements.append(self.requirement())
            token = self.take()
            if token is None:
                return requirements
            if token != ",":
                raise self.fail(f"expected ',' but found {token!r}")

    def requirement(self) -> LabelRequirement:
        token = self.take()
        if token == "!":
            key = self.take()
            if not _is_word(key):
                raise self.fail("expected a key after '!'")
            assert key is not None
            _validate_key(key)
            return LabelRequirement(key, "!", frozenset())
        if not _is_word(token):
            raise self.fail(f"expected a key but found {token!r}")
        assert token is not None
        key = token
        _validate_key(key)
        op = self.peek()
        if op is None or op == ",":
            return LabelRequirement(key, "exists", frozenset())
        self.pos += 1
        if op in ("=", "==", "!="):
            value = self.peek()
            if _is_word(value):
                self.pos += 1
            else:
                value = ""
            assert value is not None
            _validate_value(value)
            return LabelRequirement(key, "!=" if op == "!=" else "=", frozenset((value,)))
        if op in (">", "<"):
            value = self.take()
            if not _is_word(value) or not re.fullmatch(r"-?\d+", value or ""):
                raise self.fail(f"operator {op!r} needs one integer value")
            assert value is not None
            return LabelRequirement(key, op, frozenset((value,)))
        if op in ("in", "notin"):
            if self.take() != "(":
                raise self.fail(f"expected '(' after {op!r}")
            values: set[str] = set()
            while True:
                value = self.take()
                if value == ")" and not values:
                    raise self.fail(f"operator {op!r} needs at least one value")
                if value == ",":
                    values.add("")
                    continue
                if not _is_word(value):
                    if value == ")":
                        values.add("")
                        break
                    raise self.fail(f"unexpected {value!r} in value set")
                assert value is not None
                _validate_value(value)
                values.add(value)
                closing = self.take()
                if closing == ")":
                    break
                if closing != ",":
                    raise self.fail(f"expected ',' or ')' but found {closing!r}")
            return LabelRequirement(key, op, frozenset(values))
        raise self.fail(f"unknown operator {op!r}")


def parse_label_selector(text: str) -> list[LabelRequirement]:
    """Parse a label selector; ``""`` selects everything (an empty list).

    :raises SelectorSyntaxError: when the selector does not parse.
    """
    return _LabelParser(text).parse()


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """One term of a field selector."""

    field: str
    value: str
    equal: bool


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for c in text:
        if escaped:
            current.append("\\" + c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
    if escaped:
        raise SelectorSyntaxError(f"field selector {text!r} ends with a lone '\\'")
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    out: list[str] = []
    it = iter(text)
    for c in it:
        if c == "\\":
            nxt = next(it)
            if nxt not in "\\,=":
                raise SelectorSyntaxError(f"invalid escape sequence '\\{nxt}' in field selector")
            out.append(nxt)
        else:
            out.append(c)
    return "".join(out)


def parse_field_selector(text: str, selectable: Iterable[str]) -> list[FieldRequirement]:
    """Parse a field selector over the fields in ``selectable``.

    :raises SelectorSyntaxError: when it does not parse or names a field that is not selectable.
    """
    allowed = set(selectable)
    requirements: list[FieldRequirement] = []
    if not text.strip():
        return requirements
    for term in _split_unescaped(text, ","):
        for op in ("!=", "==", "="):
            index = term.find(op)
            while index > 0 and term[index - 1] == "\\":
                index = term.find(op, index + 1)
            if index >= 0:
                break
        else:
            raise SelectorSyntaxError(f"invalid field selector term {term!r}: no operator")
        field = term[:index].strip()
        value = _unescape(term[index + len(op) :])
        if field not in allowed:
            raise SelectorSyntaxError(f"field label not supported: {field}")
        requirements.append(FieldRequirement(field, value, op != "!="))
    return requirements


#: Field labels whose object path is not the label itself split on dots.
_FIELD_PATHS: dict[str, tuple[str, ...]] = {"source": ("source", "component")}


def field_value(obj: Mapping[str, Any], field: str) -> str:
    """The string value of a selectable field (``""`` when absent), as the server compares it."""
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


def compile_selectors(
    label_selector: str, field_selector: str, selectable: Iterable[str]
) -> Matcher | None:
    """Compile both selectors into one predicate, or None when they select everything.

    :raises SelectorSyntaxError: when either selector is invalid.
    """
    labels = parse_label_selector(label_selector)
    fields = parse_field_selector(field_selector, selectable)
    if not labels and not fields:
        return None

    def matches(obj: Mapping[str, Any]) -> bool:
        if labels:
            meta = obj.get("metadata") or {}
            obj_labels = meta.get("labels") or {}
            for req in labels:
                if not req.matches(obj_labels):
                    return False
        return all((field_value(obj, t.field) == t.value) == t.equal for t in fields)

    return matches
