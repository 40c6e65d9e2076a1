"""``/metrics``: the API server's request metrics, counted from the fake's own traffic.

The families and labels of kubernetes ``staging/src/k8s.io/apiserver/pkg/endpoints/metrics/
metrics.go`` (``MonitorRequest``, ``CleanVerb``, ``CleanScope``, ``cleanDryRun``) and the
``apiserver_resource_objects`` gauge of the storage layer, in the Prometheus text format
(version 0.0.4) as ``promhttp`` writes it: HELP texts with their stability level (component-base
``metrics/opts.go``), families sorted by name, series by label values, labels in alphabetical
order, numbers as Go's ``strconv.FormatFloat(v, 'g', -1, 64)``:

* ``apiserver_request_total`` (counter): every answered resource request, and the health
  paths (``subresource`` the path); ``verb`` GET, LIST, WATCH, POST, PUT, PATCH, APPLY (a
  server-side apply), DELETE, DELETECOLLECTION; ``scope`` ``resource`` (a named object or a
  create), ``namespace``, ``cluster``; ``dry_run`` ``""`` or ``All``; ``component``
  ``apiserver``, or ``apiextensions-apiserver`` for custom resources; ``code`` the HTTP status.
  A watch is counted when it ends;
* ``apiserver_request_duration_seconds`` and ``apiserver_response_sizes`` (histograms, with the
  real buckets);
* ``apiserver_longrunning_requests`` (gauge): watches open now;
* ``apiserver_resource_objects`` (gauge, ALPHA): objects stored per resource (the deprecated
  ``apiserver_storage_objects`` is hidden in 1.37, as there).

Requests the fake refuses before routing (unknown paths) and its admin API are not counted.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from ._routing import RequestInfo

__all__ = ["CONTENT_TYPE", "RequestMetrics", "go_float", "request_labels"]

#: ``promhttp``'s text format.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_DURATIONS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0,
              5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0)  # fmt: skip
_SIZES = tuple(1000.0 * 10**k for k in range(7))
_VERBS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETECOLLECTION",
}
_HELP = {
    "apiserver_longrunning_requests": (
        "gauge",
        "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, "
        "group, version, resource, scope and component. Not all requests are tracked this way.",
    ),
    "apiserver_request_duration_seconds": (
        "histogram",
        "[STABLE] Response latency distribution in seconds for each verb, dry run value, "
        "group, version, resource, subresource, scope and component.",
    ),
    "apiserver_request_total": (
        "counter",
        "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, "
        "group, version, resource, scope, component, and HTTP response code.",
    ),
    "apiserver_resource_objects": (
        "gauge",
        "[ALPHA] Number of stored objects at the time of last check split by kind. In case of "
        "a fetching error, the value will be -1.",
    ),
    "apiserver_response_sizes": (
        "histogram",
        "[STABLE] Response size distribution in bytes for each group, version, verb, "
        "resource, subresource, scope and component.",
    ),
}

Labels = tuple[tuple[str, str], ...]


def go_float(value: float) -> str:
    """Go's ``strconv.FormatFloat(value, 'g', -1, 64)``: the shortest digits that read back,
    in exponent form when the exponent is below -4 or at least 6 (``1e+06``)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    shortest = Decimal(repr(abs(float(value)))).normalize()
    _, digit_tuple, exponent = shortest.as_tuple()
    digits = "".join(str(d) for d in digit_tuple)
    exp = len(digits) + int(exponent) - 1
    if exp < -4 or exp >= 6:
        body = f"{digits[0]}.{digits[1:]}" if len(digits) > 1 else digits
        return f"{sign}{body}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    point = exp + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


@dataclass(slots=True)
class _Histogram:
    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    count: int = 0

    def observe(self, value: float) -> None:
        if not self.counts:
            self.counts = [0] * len(self.bounds)
        index = bisect.bisect_left(self.bounds, value)
        if index < len(self.counts):
            self.counts[index] += 1
        self.total += value
        self.count += 1


def request_labels(
    info: RequestInfo, *, method: str, path: str, apply: bool, dry_run: Iterable[str], custom: bool
) -> dict[str, str]:
    """The labels of one request (``MonitorRequest``'s), without ``code``."""
    if not info.is_resource:
        return {"component": "apiserver", "dry_run": "", "group": "", "resource": "",
                "scope": "", "subresource": path, "verb": method, "version": ""}  # fmt: skip
    verb = _VERBS.get(info.verb, method)
    if info.subresource in ("log",) and method == "GET":
        verb = "GET"
    if verb == "PATCH" and apply:
        verb = "APPLY"
    if info.name or info.verb == "create":
        scope = "resource"
    elif info.namespace:
        scope = "namespace"
    else:
        scope = "cluster"
    dry = sorted(set(dry_run))
    return {
        "component": "apiextensions-apiserver" if custom else "apiserver",
        "dry_run": "invalid" if any(d != "All" for d in dry) else ",".join(dry),
        "group": info.group,
        "resource": info.resource,
        "scope": scope,
        "subresource": info.subresource,
        "verb": verb,
        "version": info.version,
    }


def _key(labels: Mapping[str, str]) -> Labels:
    return tuple(sorted(labels.items()))


class RequestMetrics:
    """The request metrics of one server.

    :param objects: called at scrape time: ``(group, resource) → stored objects``.
    """

    def __init__(self, objects: Callable[[], Mapping[tuple[str, str], int]]) -> None:
        self._objects = objects
        self._total: dict[Labels, float] = {}
        self._durations: dict[Labels, _Histogram] = {}
        self._sizes: dict[Labels, _Histogram] = {}
        self._running: dict[Labels, int] = {}

    def observe(self, labels: Mapping[str, str], *, code: int, seconds: float, size: int) -> None:
        """An answered request."""
        counted = _key({**labels, "code": str(code)})
        self._total[counted] = self._total.get(counted, 0.0) + 1.0
        timed = _key(labels)
        self._durations.setdefault(timed, _Histogram(_DURATIONS)).observe(seconds)
        if labels.get("verb") not in ("WATCH", "CONNECT") and labels.get("resource"):
            sized = _key({k: v for k, v in labels.items() if k != "dry_run"})
            self._sizes.setdefault(sized, _Histogram(_SIZES)).observe(float(size))

    def long_running(self, labels: Mapping[str, str], delta: int) -> None:
        """A watch started (+1) or ended (-1)."""
        key = _key({k: v for k, v in labels.items() if k != "dry_run"})
        self._running[key] = self._running.get(key, 0) + delta

    def exposition(self) -> str:
        """The text of ``/metrics``."""
        out: list[str] = []

        def family(name: str, rows: list[str]) -> None:
            kind, text = _HELP[name]
            out.extend((f"# HELP {name} {text}", f"# TYPE {name} {kind}", *rows))

        def series(name: str, labels: Labels, value: float) -> str:
            inner = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
            return f"{name}{{{inner}}} {go_float(value)}"

        def histogram(name: str, table: Mapping[Labels, _Histogram]) -> list[str]:
            rows = []
            for labels, hist in sorted(table.items()):
                running = 0
                counts = hist.counts or [0] * len(hist.bounds)
                for bound, count in zip(hist.bounds, counts, strict=True):
                    running += count
                    rows.append(
                        series(f"{name}_bucket", (*labels, ("le", go_float(bound))), running)
                    )
                rows.append(series(f"{name}_bucket", (*labels, ("le", "+Inf")), hist.count))
                rows.append(series(f"{name}_sum", labels, hist.total))
                rows.append(series(f"{name}_count", labels, hist.count))
            return rows

        running = [
            series("apiserver_longrunning_requests", k, v) for k, v in sorted(self._running.items())
        ]
        if running:
            family("apiserver_longrunning_requests", running)
        if self._durations:
            family(
                "apiserver_request_duration_seconds",
                histogram("apiserver_request_duration_seconds", self._durations),
            )
        if self._total:
            family(
                "apiserver_request_total",
                [series("apiserver_request_total", k, v) for k, v in sorted(self._total.items())],
            )
        stored = sorted(self._objects().items())
        family(
            "apiserver_resource_objects",
            [
                series("apiserver_resource_objects", (("group", g), ("resource", r)), n)
                for (g, r), n in stored
            ],
        )
        if self._sizes:
            family("apiserver_response_sizes", histogram("apiserver_response_sizes", self._sizes))
        return "\n".join(out) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
