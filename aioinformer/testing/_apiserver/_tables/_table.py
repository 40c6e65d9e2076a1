"""Server-side ``Table`` and ``PartialObjectMetadata`` answers, as a real API server gives.

kubectl ``get`` asks ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io,
application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`` and prints the
columns the server sends. The pieces, in the order a GET handler uses them:

1. :func:`negotiate` the ``Accept`` header (``negotiation.NegotiateMediaTypeOptions``):
   the first clause the server can serve wins, after ordering by ``q``;
2. :func:`include_object` reads and validates ``?includeObject=`` (``TableOptions``);
3. :func:`to_table` converts the object or list (``asTable`` of the apiserver's
   ``handlers/response.go``, the printers' ``GenerateTable``, or the default convertor
   ``NAME``/``CREATED AT`` of ``registry/rest/table.go``); :func:`to_partial` converts to
   ``PartialObjectMetadata(List)``.

Watches take the same conversion per event; the first event carries the column
definitions and later ones not (``watchEmbeddedEncoder``: ``NoHeaders`` after the first).
The answer's ``Content-Type`` stays ``application/json``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .._api._status import bad_request, status_error
from ._crd import crd_columns
from ._format import NAME, Column
from ._printers import PRINTERS, row_conditions

__all__ = ["Target", "has_printer", "include_object", "negotiate", "to_partial", "to_table"]

_META = "meta.k8s.io"
_VERSIONS = ("v1", "v1beta1")
_TRANSFORMS = ("Table", "PartialObjectMetadata", "PartialObjectMetadataList")
_INCLUDE = ("", "Metadata", "None", "Object")


@dataclass(frozen=True, slots=True)
class Target:
    """What the answer is converted to: ``kind`` is ``Table``, ``PartialObjectMetadata`` or
    ``PartialObjectMetadataList``; ``version`` is ``v1`` or ``v1beta1`` of meta.k8s.io."""

    kind: str
    version: str = "v1"

    @property
    def api_version(self) -> str:
        """``meta.k8s.io/v1``."""
        return f"{_META}/{self.version}"


def _clauses(accept: str) -> list[tuple[str, str, dict[str, str], float]]:
    """``goautoneg.ParseAccept``: clauses sorted by q, then the specific before wildcards."""
    found = []
    for index, entry in enumerate(accept.split(",")):
        media, *params = (part.strip() for part in entry.split(";"))
        kind, _, sub = media.lower().partition("/")
        values = {}
        quality = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
            else:
                values[key.strip()] = value.strip()
        found.append((index, kind, sub or "*", values, quality))
    found.sort(key=lambda c: (-c[4], c[1] == "*", c[2] == "*", c[0]))
    return [(kind, sub, values, quality) for _, kind, sub, values, quality in found]


def negotiate(accept: str | None, *, tables: bool = True) -> Target | None:
    """The conversion the ``Accept`` header asks for, None for the plain object.

    Only JSON answers are served (also for ``*/*``). ``tables`` is False where the endpoint
    has no table convertor.

    :raises StatusFailure: 406 when no clause can be served (``errNotAcceptable``).
    """
    if not accept:
        return None
    for kind, sub, params, quality in _clauses(accept):
        if quality <= 0 or not (kind in ("application", "*") and sub in ("json", "*")):
            continue
        convert = params.get("as")
        if convert is None and "g" not in params and "v" not in params:
            return None
        if convert not in _TRANSFORMS or params.get("g") != _META:
            continue
        if params.get("v") not in _VERSIONS or (convert == "Table" and not tables):
            continue
        return Target(convert, params["v"])
    raise status_error(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf",
    )


def include_object(query: Mapping[str, str]) -> str:
    """``?includeObject=``: ``""`` (means Metadata), ``Metadata``, ``None`` or ``Object``.

    :raises StatusFailure: 400 as ``ValidateTableOptions`` words it.
    """
    value = query.get("includeObject", "")
    if value not in _INCLUDE:
        raise bad_request(
            "Unable to convert to Table as requested: includeObject: Unsupported value: "
            f'"{value}": supported values: "Metadata", "None", "Object"'
        )
    return value


def _is_list(result: Mapping[str, Any]) -> bool:
    return isinstance(result.get("items"), list)


def _partial(obj: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """``meta.AsPartialObjectMetadata``: the whole ObjectMeta under the meta kind."""
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": target.api_version,
        "metadata": dict(obj.get("metadata") or {}),
    }


def _list_meta(result: Mapping[str, Any]) -> dict[str, Any]:
    meta = result.get("metadata") or {}
    keep = ("resourceVersion", "continue", "remainingItemCount")
    return {k: meta[k] for k in keep if meta.get(k) not in (None, "")}


def to_partial(result: Mapping[str, Any], target: Target, *, go_type: str = "") -> dict[str, Any]:
    """``asPartialObjectMetadata(List)``: metadata only, as a metadata client asks for.

    :param go_type: the Go type of the handler's result for the 406 message (``%T``:
        ``*core.Secret``, ``*unstructured.UnstructuredList``); ``""``: not named.
    :raises StatusFailure: 406 for a list asked as ``PartialObjectMetadata`` or the reverse.
    """
    listed = _is_list(result)
    if listed != (target.kind == "PartialObjectMetadataList"):
        shape = "a list" if listed else "not a list"
        named = f" ({go_type})" if go_type else ""
        raise status_error(
            406,
            "NotAcceptable",
            f"you requested {target.kind}, but the requested object is {shape}{named}",
        )
    if not listed:
        return _partial(result, Target("PartialObjectMetadata", target.version))
    item_target = Target("PartialObjectMetadata", target.version)
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": target.api_version,
        "metadata": _list_meta(result),
        "items": [_partial(item, item_target) for item in result["items"]],
    }


def has_printer(api_version: str, kind: str) -> bool:
    """Whether the kind has its own columns (else NAME and CREATED AT, or a CRD's)."""
    return (api_version.rpartition("/")[0], kind) in PRINTERS


_DEFAULT_COLUMNS = (NAME, Column("Created At", "date", doc="meta.ObjectMeta.creationTimestamp"))


def _default_cells(obj: Mapping[str, Any], now: datetime) -> list[Any]:
    """The default convertor: the name and ``creationTimestamp`` in RFC 3339 (UTC)."""
    meta = obj.get("metadata") or {}
    created = meta.get("creationTimestamp")
    return [meta.get("name", ""), created if created else "0001-01-01T00:00:00Z"]


def to_table(
    result: Mapping[str, Any],
    *,
    api_version: str,
    kind: str,
    version: str = "v1",
    include: str = "",
    no_headers: bool = False,
    now: datetime | None = None,
    printer_columns: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``meta.k8s.io`` Table of an object or a list (``{"items": […]}``).

    :param api_version: the resource's API version (``"apps/v1"``), for row objects.
    :param kind: the resource's kind (``"Deployment"``), which picks the printer.
    :param version: ``v1`` or ``v1beta1`` (from :func:`negotiate`).
    :param include: from :func:`include_object`: ``Object`` puts each full object in its
        row, ``None`` nothing, ``Metadata`` (and ``""``) a ``PartialObjectMetadata``.
    :param no_headers: leave out the column definitions (watch events after the first).
    :param now: the server's time for the ages (default: the wall clock).
    :param printer_columns: a custom resource's ``additionalPrinterColumns`` (its CRD
        version's, defaulting included); None for a built-in resource.
    """
    now = now or datetime.now(UTC)
    group = api_version.rpartition("/")[0]
    columns: Sequence[Column]
    if printer_columns is not None:
        columns, printer = crd_columns(printer_columns)
    elif (group, kind) in PRINTERS:
        columns, printer = PRINTERS[(group, kind)]
    else:
        columns, printer = _DEFAULT_COLUMNS, _default_cells
    items = result["items"] if _is_list(result) else [result]
    target = Target("Table", version)
    rows = []
    for item in items:
        row: dict[str, Any] = {"cells": printer(item, now)}
        if printer_columns is None:
            conditions = row_conditions(group, kind, item)
            if conditions:
                row["conditions"] = conditions
        if include == "Object":
            row["object"] = {"kind": kind, "apiVersion": api_version, **item}
        elif include == "None":
            row["object"] = None
        else:
            row["object"] = _partial(item, target)
        rows.append(row)
    meta = _list_meta(result)
    if not _is_list(result):
        rv = (result.get("metadata") or {}).get("resourceVersion")
        meta = {"resourceVersion": rv} if rv else {}
    return {
        "kind": "Table",
        "apiVersion": target.api_version,
        "metadata": meta,
        "columnDefinitions": None if no_headers else [c.definition() for c in columns],
        "rows": rows,
    }
