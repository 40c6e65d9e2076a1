"""Label and field selectors as the fake API server applies them (private).

Parsing and matching are :mod:`aioinformer.selectors`' (the one implementation); the server
adds what is its own: field selectors may only name the fields a resource declares selectable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import SelectorSyntaxError
from ..selectors import field_value, parse_field_selector, parse_label_selector

__all__ = ["Matcher", "compile_selectors", "field_value"]

#: A compiled predicate over a whole object.
Matcher = Callable[[Mapping[str, Any]], bool]


def compile_selectors(
    label_selector: str, field_selector: str, selectable: Iterable[str]
) -> Matcher | None:
    """Compile both selectors into one predicate, or None when they select everything.

    :raises SelectorSyntaxError: when either selector is invalid, or a field selector names a
        field that is not selectable for the resource.
    """
    labels = parse_label_selector(label_selector)
    fields = parse_field_selector(field_selector)
    unsupported = sorted(fields.fields - set(selectable))
    if unsupported:
        raise SelectorSyntaxError(f"field label not supported: {unsupported[0]}")
    if labels.empty and fields.empty:
        return None
    if fields.empty:
        return labels.matches_object
    if labels.empty:
        return fields.matches_object

    def matches(obj: Mapping[str, Any]) -> bool:
        return labels.matches_object(obj) and fields.matches_object(obj)

    return matches
