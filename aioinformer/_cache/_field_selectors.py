r"""Kubernetes field selectors: parsing, and each object's field values.

Field selectors are ``field=value``, ``field==value`` and ``field!=value`` joined by commas
(``\`` escapes ``,``, ``=`` and ``\``). A field's value is the object's value at the field's
dotted path, except for the built-in kinds' field labels that say otherwise. Errors raise
:class:`~aioinformer.errors.SelectorSyntaxError` saying where and why. Label selectors are in
:mod:`aioinformer._cache._selectors`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import SelectorSyntaxError

__all__ = ["FieldSelector", "field_value", "parse_field_selector"]


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
