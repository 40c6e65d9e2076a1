"""Label selectors as kube-apiserver parses and applies them (the fake's own implementation).

The behaviour of ``labels.Parse`` (``k8s.io/apimachinery/pkg/labels/selector.go``), written
anew for the fake so that it shares nothing with the client's :mod:`aioinformer._cache._selectors`:

* Tokens: whitespace (space, tab, CR, LF) separates; the operators are ``=``, ``==``, ``!=``,
  ``!``, ``<``, ``>``, ``(``, ``)`` and ``,``; anything else up to the next operator or
  whitespace is one word; the words ``in`` and ``notin`` are keywords where an operator is
  expected and plain words elsewhere (``in in (in)`` is valid). A NUL character where a token
  would start ends the selector; one right after a token is skipped.
* Requirements, joined by ``,``: ``key`` (exists), ``!key`` (does not exist),
  ``key=v``/``key==v``/``key!=v`` (an omitted value is the empty value), ``key in (a,b)``,
  ``key notin (a,b)`` (an omitted value in the set is the empty value; ``()`` is ``{""}``),
  ``key>n`` and ``key<n``. The empty selector matches everything.
* Keys and values follow the label rules (:mod:`._validation._apimachinery`); ``>``/``<`` take a
  64-bit integer that is also a valid label value (so no negative numbers), and match only labels
  whose value parses as one.
* Failures are answered 400 with the exact message kube-apiserver sends, e.g.
  ``unable to parse requirement: found '', expected: ',' or ')'``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._validation._apimachinery import (
    aggregate,
    invalid_value,
    label_key_problems,
    label_value_problems,
    parse_int64,
)

__all__ = ["LabelMatcher", "SelectorRefused", "parse_label_selector"]

#: A compiled label selector: the labels of an object → whether they match.
LabelMatcher = Callable[[Mapping[str, Any]], bool]

_WHITESPACE = frozenset(" \t\r\n")
_OPERATOR_CHARS = frozenset("=!(),<>")
_WORD, _END, _IN, _NOTIN = "word", "end", "in", "notin"
_KEYWORDS = {"in": _IN, "notin": _NOTIN}

#: The binary operators, as the server lists them when it finds none.
_OPERATORS = {_IN: "in", _NOTIN: "notin", "=": "=", "==": "==", "!=": "!=", ">": "gt", "<": "lt"}


class SelectorRefused(ValueError):
    """A selector the API server refuses; the message is the one it answers with."""


class _Failed(Exception):
    """A requirement that does not parse (reported as ``unable to parse requirement: ...``)."""


def _scan(text: str) -> list[tuple[str, str]]:
    """The tokens of a selector as ``(kind, text)``; kinds are ``word``, ``in``, ``notin``,
    ``end`` or the operator itself."""
    tokens: list[tuple[str, str]] = []
    position, size = 0, len(text)
    while True:
        while position < size and text[position] in _WHITESPACE:
            position += 1
        if position >= size or text[position] == "\0":
            tokens.append((_END, ""))
            return tokens
        char = text[position]
        if char in _OPERATOR_CHARS:
            pair = text[position : position + 2]
            token = pair if pair in ("==", "!=") else char
            tokens.append((token, token))
        else:
            end = position
            while end < size and not (
                text[end] in _WHITESPACE or text[end] in _OPERATOR_CHARS or text[end] == "\0"
            ):
                end += 1
            token = text[position:end]
            tokens.append((_KEYWORDS.get(token, _WORD), token))
        position += len(token)
        if position < size and text[position] == "\0":
            position += 1


class _Reader:
    """Walks the tokens; ``as_value`` reads the keywords ``in``/``notin`` as words."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self._tokens = tokens
        self._next = 0

    def peek(self, *, as_value: bool = True) -> tuple[str, str]:
        kind, text = self._tokens[self._next]
        return (_WORD if as_value and kind in (_IN, _NOTIN) else kind), text

    def take(self, *, as_value: bool = True) -> tuple[str, str]:
        token = self.peek(as_value=as_value)
        self._next += 1
        return token


def _value_set(reader: _Reader) -> set[str]:
    kind, text = reader.take()
    if kind != "(":
        raise _Failed(f"found '{text}' expected: '('")
    kind, text = reader.peek()
    if kind == ")":
        reader.take()
        return {""}
    if kind not in (_WORD, ","):
        raise _Failed(f"found '{text}', expected: ',', ')' or identifier")
    values: set[str] = set()
    while True:
        kind, text = reader.take()
        if kind == _WORD:
            values.add(text)
            after, after_text = reader.peek()
            if after == ")":
                break
            if after != ",":
                raise _Failed(f"found '{after_text}', expected: ',' or ')'")
        elif kind == ",":
            after, _ = reader.peek()
            if not values or after in (",", ")"):
                values.add("")
            if after == ")":
                break
        else:
            raise _Failed(f"found '{text}', expected: ',', or identifier")
    reader.take()
    return values


def _single_value(reader: _Reader) -> set[str]:
    kind, text = reader.peek()
    if kind in (_END, ","):
        return {""}
    reader.take()
    if kind != _WORD:
        raise _Failed(f"found '{text}', expected: identifier")
    return {text}


def _check_values(key: str, operator: str, values: list[str]) -> None:
    problems: list[str] = []
    if operator in (">", "<"):
        detail = "for 'Gt', 'Lt' operators, the value must be an integer"
        for index, value in enumerate(values):
            if parse_int64(value) is None:
                problems.append(invalid_value(f"values[{index}]", value, detail))
    for index, value in enumerate(values):
        wrong = label_value_problems(value)
        if wrong:
            problems.append(invalid_value(f"values[{index}][{key}]", value, "; ".join(wrong)))
    if problems:
        raise _Failed(aggregate(problems))


def _requirement(reader: _Reader) -> LabelMatcher:
    kind, key = reader.take()
    negated = kind == "!"
    if negated:
        kind, key = reader.take()
    if kind != _WORD:
        raise _Failed(f"found '{key}', expected: identifier")
    wrong = label_key_problems(key)
    if wrong:
        raise _Failed(invalid_value("<nil>", key, "; ".join(wrong)))
    if negated:
        return lambda labels: key not in labels
    if reader.peek()[0] in (_END, ","):
        return lambda labels: key in labels
    kind, text = reader.take(as_value=False)
    if kind not in _OPERATORS:
        raise _Failed(f"found '{text}', expected: {', '.join(_OPERATORS.values())}")
    values = _value_set(reader) if kind in (_IN, _NOTIN) else _single_value(reader)
    _check_values(key, kind, sorted(values))
    if kind in (_IN, "=", "=="):
        return lambda labels: key in labels and labels[key] in values
    if kind in (_NOTIN, "!="):
        return lambda labels: key not in labels or labels[key] not in values
    (bound,) = (parse_int64(v) or 0 for v in values)
    above = kind == ">"

    def compare(labels: Mapping[str, Any]) -> bool:
        have = labels.get(key)
        number = parse_int64(have) if isinstance(have, str) else None
        if number is None:
            return False
        return number > bound if above else number < bound

    return compare


def parse_label_selector(text: str) -> LabelMatcher | None:
    """Compile a label selector; None when it selects everything.

    :raises SelectorRefused: with kube-apiserver's message, when it does not parse.
    """
    reader = _Reader(_scan(text))
    checks: list[LabelMatcher] = []
    while True:
        kind, token = reader.peek()
        if kind == _END:
            break
        if kind not in (_WORD, "!"):
            raise SelectorRefused(f"found '{token}', expected: !, identifier, or 'end of string'")
        try:
            checks.append(_requirement(reader))
        except _Failed as failed:
            raise SelectorRefused(f"unable to parse requirement: {failed}") from None
        kind, token = reader.take()
        if kind == _END:
            break
        if kind != ",":
            raise SelectorRefused(f"found '{token}', expected: ',' or 'end of string'")
        following, token = reader.peek()
        if following not in (_WORD, "!"):
            raise SelectorRefused(f"found '{token}', expected: identifier after ','")
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]
    return lambda labels: all(check(labels) for check in checks)
