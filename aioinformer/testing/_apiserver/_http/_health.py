"""``/healthz``, ``/livez`` and ``/readyz``: the health endpoints of a real API server.

A port of the behaviour of ``k8s.io/apiserver/pkg/server/healthz/healthz.go``
(``handleRootHealth``, ``adaptCheckToHandler``, ``getExcludedChecks``):

* each root path runs its checks: ``ok`` (``text/plain; charset=utf-8``, no newline), or with
  ``?verbose`` (any value) one ``[+]<check> ok`` line per check and ``<name> check passed``;
* ``?exclude=<check>`` (repeatable) skips a check (``[+]<check> excluded: ok``); names that
  match no check add ``warn: some health checks cannot be excluded: no matches for "<a>","<b>"``;
* a failing check answers 500 with every line, ``[-]<check> failed: reason withheld`` for the
  failing ones, and ``<name> check failed`` (``http.Error``: a trailing newline);
* each check has its own path, ``/<root>/<check>`` (``/readyz/etcd``,
  ``/livez/poststarthook/rbac/bootstrap-roles``): ``ok``, or 500 ``internal server error: <why>``.

The checks are those a kubeadm cluster of Kubernetes 1.35 lists (the newest release whose list
was observed; 1.37's may differ by a feature-gated hook): ``/healthz`` and ``/livez`` share them,
``/readyz`` adds ``etcd-readiness``, ``informer-sync`` and, last, ``shutdown``. All pass unless a
test makes some fail (``server.faults.fail_health_checks``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from aiohttp import web
from multidict import MultiMapping

__all__ = ["HEALTH_ROOTS", "HealthChecks", "health_response"]

_HOOKS = (
    "start-apiserver-admission-initializer",
    "generic-apiserver-start-informers",
    "priority-and-fairness-config-consumer",
    "priority-and-fairness-filter",
    "storage-object-count-tracker-hook",
    "start-apiextensions-informers",
    "start-apiextensions-controllers",
    "crd-informer-synced",
    "start-system-namespaces-controller",
    "start-cluster-authentication-info-controller",
    "start-kube-apiserver-identity-lease-controller",
    "start-kube-apiserver-identity-lease-garbage-collector",
    "start-legacy-token-tracking-controller",
    "start-service-ip-repair-controllers",
    "rbac/bootstrap-roles",
    "scheduling/bootstrap-system-priority-classes",
    "priority-and-fairness-config-producer",
    "bootstrap-controller",
    "start-kubernetes-service-cidr-controller",
    "aggregator-reload-proxy-client-cert",
    "start-kube-aggregator-informers",
    "apiservice-status-local-available-controller",
    "apiservice-status-remote-available-controller",
    "apiservice-registration-controller",
    "apiservice-discovery-controller",
    "kube-apiserver-autoregistration",
)
_TAIL = ("apiservice-openapi-controller", "apiservice-openapiv3-controller")
#: ``/healthz`` and ``/livez``.
_LIVE = (
    "ping",
    "log",
    "etcd",
    *(f"poststarthook/{h}" for h in _HOOKS),
    "autoregister-completion",
    *(f"poststarthook/{h}" for h in _TAIL),
)
_READY = (
    "ping",
    "log",
    "etcd",
    "etcd-readiness",
    "informer-sync",
    *_LIVE[3:],
    "shutdown",
)
#: Each root path and its checks, in order.
HEALTH_ROOTS: dict[str, tuple[str, ...]] = {"healthz": _LIVE, "livez": _LIVE, "readyz": _READY}
_TEXT = "text/plain; charset=utf-8"


class HealthChecks:
    """Which checks fail now (none, unless a test says so)."""

    def __init__(self) -> None:
        self.failing: dict[str, str] = {}

    def fail(self, names: Iterable[str], reason: str = "failed by the test") -> None:
        """Make the named checks fail (``ping``, ``etcd``, ``shutdown``...)."""
        known = set(_READY)
        for name in names:
            if name not in known:
                raise ValueError(f"no health check named {name!r}; checks: {', '.join(_READY)}")
            self.failing[name] = reason

    def clear(self) -> None:
        """Every check passes again."""
        self.failing.clear()


def _error(text: str) -> web.Response:
    """Go's ``http.Error``: 500, the text and a newline."""
    return web.Response(
        status=500,
        text=text + "\n",
        headers={"Content-Type": _TEXT, "X-Content-Type-Options": "nosniff"},
    )


def _root(
    name: str, checks: Sequence[str], query: MultiMapping[str], health: HealthChecks
) -> web.Response:
    excluded = {value.strip() for value in query.getall("exclude", ()) if value.strip()}
    lines: list[str] = []
    failed = False
    for check in checks:
        if check in excluded:
            excluded.discard(check)
            lines.append(f"[+]{check} excluded: ok")
        elif check in health.failing:
            failed = True
            lines.append(f"[-]{check} failed: reason withheld")
        else:
            lines.append(f"[+]{check} ok")
    if excluded:
        missing = ",".join(f'"{n}"' for n in sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {missing}")
    body = "".join(f"{line}\n" for line in lines)
    if failed:
        return _error(f"{body}{name} check failed")
    headers = {"Content-Type": _TEXT, "X-Content-Type-Options": "nosniff"}
    if "verbose" not in query:
        return web.Response(text="ok", headers=headers)
    return web.Response(text=f"{body}{name} check passed\n", headers=headers)


def health_response(
    path: str, query: MultiMapping[str], health: HealthChecks
) -> web.Response | None:
    """The answer for a health path, or None when ``path`` is not one."""
    root, _, check = path.strip("/").partition("/")
    checks = HEALTH_ROOTS.get(root)
    if checks is None:
        return None
    if not check:
        return _root(root, checks, query, health)
    if check not in checks:
        return None
    if check in health.failing:
        return _error(f"internal server error: {health.failing[check]}")
    return web.Response(text="ok", headers={"Content-Type": _TEXT})
