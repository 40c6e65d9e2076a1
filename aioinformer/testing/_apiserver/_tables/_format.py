"""Formatting primitives of the real printers: durations, label sets, selectors, columns.

Ported from the behaviour of ``k8s.io/apimachinery/pkg/util/duration.HumanDuration``,
``labels.Set.String``/``labels.FormatLabels``, ``metav1.LabelSelectorAsSelector`` and
``metav1.FormatLabelSelector``, and ``translateTimestampSince`` of
``pkg/printers/internalversion/printers.go``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

__all__ = [
    "AGE",
    "CONTAINERS",
    "IMAGES",
    "NAME",
    "Column",
    "age_of",
    "col",
    "container_cells",
    "format_label_selector",
    "format_labels",
    "human_duration",
    "integer",
    "name_of",
    "part",
    "parse_time",
    "selector_string",
    "since",
]


def human_duration(delta: timedelta) -> str:
    """``duration.HumanDuration``: ``45s``, ``5m2s``, ``3h4m``, ``2d5h``, ``3y12d``…"""
    nanos = (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000
    seconds = int(nanos / 1_000_000_000)  # Go's int() truncates toward zero
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = nanos // 60_000_000_000
    if minutes < 10:
        rest = nanos // 1_000_000_000 % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = nanos // 3_600_000_000_000
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = hours // 24 % 365
        years = hours // 24 // 365
        return f"{years}y" if rest == 0 else f"{years}y{rest}d"
    return f"{hours // 24 // 365}y"


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp (``metav1.Time`` or ``MicroTime``), None when unset or invalid."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def since(value: Any, now: datetime) -> str:
    """``translateTimestampSince``: ``<unknown>`` for an unset time, else the age."""
    moment = parse_time(value)
    return "<unknown>" if moment is None else human_duration(now - moment)


def format_labels(labels: Mapping[str, str] | None) -> str:
    """``labels.FormatLabels``: ``a=b,c=d`` sorted by key, ``<none>`` when empty."""
    text = ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items()))
    return text or "<none>"


def _requirements(selector: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """``(key, text)`` per requirement, None when the selector is invalid."""
    found: list[tuple[str, str]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        found.append((key, f"{key}={value}"))
    for expression in selector.get("matchExpressions") or ():
        key = expression.get("key", "")
        operator = expression.get("operator")
        values = sorted(set(expression.get("values") or ()))
        if operator in ("In", "NotIn"):
            if not values:
                return None
            word = "in" if operator == "In" else "notin"
            found.append((key, f"{key} {word} ({','.join(values)})"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                return None
            found.append((key, key if operator == "Exists" else f"!{key}"))
        else:
            return None
    return sorted(found, key=lambda pair: pair[0])


def selector_string(selector: Mapping[str, Any] | None) -> str | None:
    """``LabelSelectorAsSelector(s).String()``; ``""`` for nil or empty, None if invalid."""
    if not selector:
        return ""
    requirements = _requirements(selector)
    return None if requirements is None else ",".join(text for _, text in requirements)


def format_label_selector(selector: Mapping[str, Any] | None) -> str:
    """``metav1.FormatLabelSelector``: ``<none>`` when it selects by nothing, ``<error>``."""
    text = selector_string(selector)
    if text is None:
        return "<error>"
    return text or "<none>"


@functools.cache
def _definitions() -> dict[str, Any]:
    try:
        from .._schema._published import schemas

        return schemas().definitions
    except ImportError:  # the descriptions are cosmetic; tables work without the schemas
        return {}


_PACKAGES = {
    "meta": "io.k8s.apimachinery.pkg.apis.meta.v1",
    "core": "io.k8s.api.core.v1",
    "apps": "io.k8s.api.apps.v1",
    "batch": "io.k8s.api.batch.v1",
    "rbac": "io.k8s.api.rbac.v1",
    "coordination": "io.k8s.api.coordination.v1",
    "scheduling": "io.k8s.api.scheduling.v1",
    "autoscaling": "io.k8s.api.autoscaling.v2",
    "storage": "io.k8s.api.storage.v1",
}


@dataclass(frozen=True, slots=True)
class Column:
    """A ``TableColumnDefinition``.

    :param doc: where the real printer takes its description from (``SwaggerDoc()``), as
        ``package.Type.field`` (``meta.ObjectMeta.name``), read from the OpenAPI schemas.
    :param text: a literal description (when the printer spells it out).
    """

    name: str
    type: str = "string"
    priority: int = 0
    format: str = ""
    doc: str = ""
    text: str = ""

    def definition(self) -> dict[str, Any]:
        """The JSON of the column definition (every field is written, none is omitempty)."""
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.text or _describe(self.doc),
            "priority": self.priority,
        }


@functools.cache
def _describe(doc: str) -> str:
    if not doc:
        return ""
    package, kind, field = doc.split(".", 2)
    schema = _definitions().get(f"{_PACKAGES[package]}.{kind}") or {}
    description = (schema.get("properties") or {}).get(field, {}).get("description", "")
    return description if isinstance(description, str) else ""


def col(name: str, kind: str = "string", doc: str = "", text: str = "", p: int = 0) -> Column:
    """A column of a printer (``p`` the priority: 1 for ``-o wide`` only)."""
    return Column(name, kind, p, doc=doc, text=text)


NAME = Column("Name", format="name", doc="meta.ObjectMeta.name")
AGE = Column("Age", doc="meta.ObjectMeta.creationTimestamp")
CONTAINERS = Column("Containers", priority=1, text="Names of each container in the template.")
IMAGES = Column("Images", priority=1, text="Images referenced by each container in the template.")


def container_cells(containers: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """``layoutContainerCells``: names and images, comma-joined."""
    items = list(containers or ())
    return [",".join(c.get("name", "") for c in items), ",".join(c.get("image", "") for c in items)]


def name_of(obj: Mapping[str, Any]) -> str:
    """``metadata.name``."""
    return str((obj.get("metadata") or {}).get("name", ""))


def age_of(obj: Mapping[str, Any], now: datetime) -> str:
    """The AGE cell: ``translateTimestampSince(creationTimestamp)``."""
    return since((obj.get("metadata") or {}).get("creationTimestamp"), now)


def part(obj: Mapping[str, Any], *path: str) -> Any:
    """The value at a path of keys, None where a step is missing."""
    value: Any = obj
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def integer(obj: Mapping[str, Any], *path: str, default: int = 0) -> int:
    """An integer at a path (the Go zero value, or the server default, when missing)."""
    value = part(obj, *path)
    return value if isinstance(value, int) else default
