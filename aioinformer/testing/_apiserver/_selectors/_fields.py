"""Field selectors as kube-apiserver parses, checks and applies them (the fake's own).

The behaviour of ``fields.ParseSelector`` (``k8s.io/apimachinery/pkg/fields/selector.go``) and
of the registries' field-label conversions, written anew for the fake:

* Terms are split on commas not escaped by a backslash, then **sorted**; empty terms are
  skipped. Each term splits at the first ``!=``, ``==`` or ``=`` (whichever comes first; the
  field name has no escapes). In a value, ``\\\\``, ``\\,`` and ``\\=`` stand for the character;
  any other escape, a lone trailing backslash or a bare ``=`` is refused.
* Then every field must be one the kind converts (in the sorted order; the first refusal is
  the answer): a kind with a conversion function (it has selectable fields beyond the object
  metadata) accepts those, ``metadata.name`` and, when namespaced, ``metadata.namespace``
  (``field label not supported: <f>``); any other kind only the two metadata fields
  (``"<f>" is not a known field selector: only "metadata.name", "metadata.namespace"``).
* A field's value is what the server's ``ToSelectableFields`` puts in its field set: strings
  as they are, booleans ``true``/``false``, numbers in decimal, and for typed fields the Go
  zero value when absent (``spec.hostNetwork=false`` selects a pod that does not set it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._validation._apimachinery import go_quote
from ._labels import SelectorRefused

__all__ = ["FieldMatcher", "field_value", "parse_field_selector", "untyped_field_value"]

#: A compiled field selector: an object → whether it matches.
FieldMatcher = Callable[[Mapping[str, Any]], bool]

_METADATA_FIELDS = ("metadata.name", "metadata.namespace")

#: Field labels whose value is read elsewhere in the object (``JobToSelectableFields``).
_PATHS = {"status.successful": ("status", "succeeded")}

#: Field labels of Go-typed (bool, int) fields: their value when the object leaves them out.
_ZERO_VALUES = {
    "spec.hostNetwork": "false",
    "spec.unschedulable": "false",
    "status.replicas": "0",
    "status.successful": "0",
}

#: Field labels a kind's conversion renames (``spec.host`` is the v1 pods' old name).
_RENAMED = {"Pod": {"spec.host": "spec.nodeName"}}

#: The labels of a version whose objects are stored as another's, by (group, kind): the label
#: of the stored object's field set each one selects on (events.k8s.io/v1 Events are core/v1
#: Events: ``AddFieldLabelConversionsForEvent`` of ``pkg/apis/events/v1/conversion.go``).
_STORED_LABELS = {
    ("events.k8s.io", "Event"): {
        "regarding.kind": "involvedObject.kind",
        "regarding.namespace": "involvedObject.namespace",
        "regarding.name": "involvedObject.name",
        "regarding.uid": "involvedObject.uid",
        "regarding.apiVersion": "involvedObject.apiVersion",
        "regarding.resourceVersion": "involvedObject.resourceVersion",
        "regarding.fieldPath": "involvedObject.fieldPath",
        "reportingController": "reportingComponent",
    },
}


def _terms(text: str) -> list[str]:
    """The terms of a selector: split on unescaped commas (escapes kept), sorted."""
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
    return sorted(terms)


def _split(term: str) -> tuple[str, str, str] | None:
    for index in range(len(term)):
        for operator in ("!=", "==", "="):
            if term.startswith(operator, index):
                return term[:index], operator, term[index + len(operator) :]
    return None


def _unescape(raw: str) -> str:
    out: list[str] = []
    escaped = False
    for char in raw:
        if escaped:
            if char not in "\\,=":
                raise SelectorRefused(f"invalid field selector: invalid escape sequence: \\{char}")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            raise SelectorRefused(
                f"invalid field selector: unescaped character in value: {ord(char)}"
            )
        else:
            out.append(char)
    if escaped:
        raise SelectorRefused("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _convert(
    label: str, *, group: str, kind: str, namespaced: bool, selectable: tuple[str, ...]
) -> str:
    """The field label as the kind's conversion function accepts it (maybe renamed), in the
    stored object's field set.

    :raises SelectorRefused: for a label the kind cannot select on.
    """
    if not selectable:
        if label in _METADATA_FIELDS:
            return label
        only = ", ".join(go_quote(f) for f in _METADATA_FIELDS)
        raise SelectorRefused(f"{go_quote(label)} is not a known field selector: only {only}")
    renamed = _RENAMED.get(kind, {}).get(label, label)
    accepted = renamed in selectable or renamed == "metadata.name"
    if accepted or (renamed == "metadata.namespace" and namespaced):
        return _STORED_LABELS.get((group, kind), {}).get(renamed, renamed)
    raise SelectorRefused(f"field label not supported: {label}")


def untyped_field_value(obj: Mapping[str, Any], label: str) -> str:
    """The value of a field label of a kind without Go types (a custom resource): the value
    printed, ``""`` when missing (no zero values)."""
    node: Any = obj
    for part in label.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return node if isinstance(node, str) else str(node)


def field_value(obj: Mapping[str, Any], label: str) -> str:
    """The value the server's field set holds for a field label of an object."""
    if label == "source":  # an Event's source.component, else its reportingComponent
        component = field_value(obj, "source.component")
        return component or field_value(obj, "reportingComponent")
    node: Any = obj
    for part in _PATHS.get(label) or label.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    if node is None:
        return _ZERO_VALUES.get(label, "")
    if isinstance(node, bool):
        return "true" if node else "false"
    return node if isinstance(node, str) else str(node)


def parse_field_selector(
    text: str,
    *,
    kind: str,
    namespaced: bool,
    selectable: tuple[str, ...],
    value_of: Callable[[Mapping[str, Any], str], str] = field_value,
    group: str = "",
) -> FieldMatcher | None:
    """Compile a field selector for one kind; None when it selects everything.

    :param selectable: the kind's field labels beyond the object metadata (empty: the kind
        has no field-label conversion).
    :param value_of: an object's value for a label (default: the built-in kinds' field
        sets, with Go zero values for absent typed fields).
    :param group: the kind's API group (a version stored as another's selects on the stored
        object's fields).
    :raises SelectorRefused: with kube-apiserver's message, when it does not parse or names a
        field the kind cannot select on.
    """
    if not text:
        return None
    parsed: list[tuple[str, str, str]] = []
    for term in _terms(text):
        if not term:
            continue
        split = _split(term)
        if split is None:
            raise SelectorRefused(f"invalid selector: '{text}'; can't understand '{term}'")
        label, operator, raw = split
        parsed.append((label, operator, _unescape(raw)))
    checks: list[tuple[str, bool, str]] = [
        (
            _convert(label, group=group, kind=kind, namespaced=namespaced, selectable=selectable),
            op != "!=",
            v,
        )
        for label, op, v in parsed
    ]
    if not checks:
        return None
    return lambda obj: all((value_of(obj, f) == v) is equal for f, equal, v in checks)
