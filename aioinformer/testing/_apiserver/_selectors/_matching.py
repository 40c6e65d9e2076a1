"""Label and field selectors as the fake API server applies them (private).

The fake parses and matches selectors itself (:mod:`._labels`, :mod:`._fields`), sharing no
code with the client's :mod:`aioinformer._cache._selectors`: it is the oracle the client is tested
against, and golden cases check both against what kube-apiserver does. As on the server, the
label selector is decoded before the field selector, so its error wins; every refusal is a
400 BadRequest carrying the server's message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._api._failure import StatusFailure
from .._api._resources import ResourceInfo
from .._schema._published import schemas
from ._fields import field_value, parse_field_selector, untyped_field_value
from ._labels import SelectorRefused, parse_label_selector

__all__ = ["Matcher", "compile_selectors", "field_value"]

#: A compiled predicate over a whole object.
Matcher = Callable[[Mapping[str, Any]], bool]


def _labels_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def _value_of(info: ResourceInfo) -> Callable[[Mapping[str, Any], str], str]:
    """How a resource's objects give field-label values: a CRD's resource by its
    ``selectableFields`` (``GetAttrs``: printed as ``fmt.Sprint``, missing: ``""``), any other
    kind without a built-in schema the same way, built-in kinds by their Go types."""
    custom = info.custom
    if custom is not None:
        version = info.version
        return lambda obj, label: str(custom.field_values(version, obj).get(label, ""))
    if schemas().root(info.group, info.version, info.kind) is None:
        return untyped_field_value
    return field_value


def compile_selectors(
    label_selector: str, field_selector: str, info: ResourceInfo
) -> Matcher | None:
    """Both selectors of a request for one resource as one predicate, or None when they
    select everything.

    :raises StatusFailure: 400 BadRequest with kube-apiserver's message for a selector that
        does not parse, or a field selector on a field the resource cannot select on.
    """
    try:
        labels = parse_label_selector(label_selector)
        fields = parse_field_selector(
            field_selector,
            kind=info.kind,
            namespaced=info.namespaced,
            selectable=info.selectable_fields,
            value_of=_value_of(info),
        )
    except SelectorRefused as refused:
        raise StatusFailure.bad_request(str(refused)) from None
    if labels is None:
        return fields
    if fields is None:
        return lambda obj: labels(_labels_of(obj))
    return lambda obj: labels(_labels_of(obj)) and fields(obj)
