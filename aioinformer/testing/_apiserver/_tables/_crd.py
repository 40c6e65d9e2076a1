"""Table columns of custom resources: a CRD's ``additionalPrinterColumns``.

From ``apiextensions-apiserver/pkg/registry/customresource/tableconvertor``: a ``Name``
column, then one per printer column; a cell is the first JSONPath result (missing:
``null``); ``string`` columns print the value as ``kubectl get -o jsonpath`` does (maps
and lists as JSON), ``integer``/``number``/``boolean`` keep the JSON value when it has the
type (else ``null``), ``date`` becomes the age (``<invalid>`` when unparsable). A CRD
without printer columns gets ``Age`` (``customresource_handler.go``).

JSONPath: the subset printer columns use: ``.field``, ``['field']``, ``\\.`` in names,
``[N]``, ``[*]`` and filters ``[?(@.path=="value")]`` / ``!=``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ._format import NAME, Column, human_duration, parse_time

__all__ = ["DEFAULT_CRD_COLUMNS", "crd_columns", "find"]

#: The printer columns of a CRD that declares none.
DEFAULT_CRD_COLUMNS: tuple[Mapping[str, Any], ...] = (
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
)
_MISSING = object()
_STEP = re.compile(
    r"\.((?:\\.|[^.\[\\])+)"  # .name (\. escapes a dot)
    r"|\[\s*'([^']*)'\s*\]|\[\s*\"([^\"]*)\"\s*\]"  # ['name'] ["name"]
    r"|\[\s*(-?\d+|\*)\s*\]"  # [N] [*]
    r"|\[\s*\?\(\s*@((?:\.[\w-]+)+)\s*(==|!=)\s*(\"[^\"]*\"|'[^']*'|[^)\s]+)\s*\)\s*\]"
)


def _parse(path: str) -> list[tuple[str, Any]] | None:
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    steps: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text):
        match = _STEP.match(text, pos)
        if match is None:
            return None
        name, quoted1, quoted2, index, f_path, f_op, f_value = match.groups()
        if name is not None:
            steps.append(("key", name.replace("\\.", ".")))
        elif quoted1 is not None or quoted2 is not None:
            steps.append(("key", quoted1 if quoted1 is not None else quoted2))
        elif index is not None:
            steps.append(("all", None) if index == "*" else ("index", int(index)))
        else:
            try:
                literal = f_value[1:-1] if f_value[:1] in "\"'" else json.loads(f_value)
            except json.JSONDecodeError:
                return None
            steps.append(("filter", (f_path.split(".")[1:], f_op, literal)))
        pos = match.end()
    return steps


def _get(value: Any, keys: Sequence[str]) -> Any:
    for key in keys:
        if not isinstance(value, Mapping) or key not in value:
            return _MISSING
        value = value[key]
    return value


def find(data: Any, path: str) -> list[Any]:
    """Every value ``path`` selects in ``data`` (missing keys select nothing)."""
    steps = _parse(path)
    if steps is None:
        return []
    current = [data]
    for kind, arg in steps:
        found: list[Any] = []
        for value in current:
            if kind == "key":
                if isinstance(value, Mapping) and arg in value:
                    found.append(value[arg])
            elif kind == "index":
                if isinstance(value, list) and -len(value) <= arg < len(value):
                    found.append(value[arg])
            elif kind == "all" and isinstance(value, list):
                found.extend(value)
            elif kind == "filter" and isinstance(value, list):
                keys, op, literal = arg
                found.extend(
                    item
                    for item in value
                    if (_get(item, keys) == literal) == (op == "==")
                    and _get(item, keys) is not _MISSING
                )
        current = found
    return current


def _text(value: Any) -> str | None:
    """``PrintResults`` of one value: JSON for maps and lists, Go's ``fmt`` otherwise."""
    if value is None:
        return None
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _cell(kind: str, value: Any, now: datetime) -> Any:
    """``cellForJSONValue``."""
    if value is None:
        return None
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        if value in ("", "null"):
            return "<unknown>"
        moment = parse_time(value)
        return "<invalid>" if moment is None else human_duration(now - moment)
    return None


def crd_columns(
    printer_columns: Sequence[Mapping[str, Any]],
) -> tuple[list[Column], Callable[[Mapping[str, Any], datetime], list[Any]]]:
    """The columns and the cell printer of a CRD version's ``additionalPrinterColumns``."""
    declared = list(printer_columns) or list(DEFAULT_CRD_COLUMNS)
    columns = [NAME]
    for spec in declared:
        path = str(spec.get("jsonPath", ""))
        description = spec.get("description") or (
            f"Custom resource definition column (in JSONPath format): {path}"
        )
        if spec in DEFAULT_CRD_COLUMNS:
            description = ""
        columns.append(
            Column(
                str(spec.get("name", "")),
                str(spec.get("type", "string")),
                int(spec.get("priority") or 0),
                str(spec.get("format") or ""),
                doc="meta.ObjectMeta.creationTimestamp" if not description else "",
                text=description,
            )
        )

    def printer(obj: Mapping[str, Any], now: datetime) -> list[Any]:
        cells: list[Any] = [(obj.get("metadata") or {}).get("name", "")]
        for spec in declared:
            found = find(obj, str(spec.get("jsonPath", "")))
            if not found:
                cells.append(None)
            elif spec.get("type", "string") == "string":
                cells.append(_text(found[0]))
            else:
                cells.append(_cell(str(spec.get("type")), found[0], now))
        return cells

    return columns, printer
