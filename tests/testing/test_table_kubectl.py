"""kubectl 1.32 ``get`` prints the server's Table: columns, ``-o wide``, watches.

kubectl asks for ``as=Table`` (``staging/src/k8s.io/kubectl/pkg/cmd/get``) and prints the
columns it is sent, hiding priority-1 columns unless ``-o wide``; it adds NAMESPACE and
LABELS from each row's object. A tiny server answers with :func:`to_table`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from aioinformer.testing._apiserver._tables._table import include_object, negotiate, to_table

from .tiny_server import KUBECTL, NO_KUBECTL, Kubectl, TinyServer, discovery, status

pytestmark = pytest.mark.skipif(KUBECTL is None, reason=NO_KUBECTL)


def _ago(**delta: float) -> str:
    return (datetime.now(UTC) - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(name: str, namespace: str = "default") -> dict[str, Any]:
    state = {
        "name": "app",
        "ready": True,
        "restartCount": 3,
        "state": {"running": {"startedAt": _ago(minutes=25)}},
        "lastState": {"terminated": {"exitCode": 1, "finishedAt": _ago(minutes=30)}},
    }
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": "web"},
            "creationTimestamp": _ago(minutes=20),
            "resourceVersion": "5",
        },
        "spec": {"containers": [{"name": "app", "image": "img"}], "nodeName": "node-1"},
        "status": {"phase": "Running", "podIP": "10.0.0.5", "containerStatuses": [state]},
    }


def _deployment() -> dict[str, Any]:
    """Built per request: its age is measured from now."""
    return {
        "metadata": {"name": "web", "namespace": "default", "creationTimestamp": _ago(hours=2)},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {}},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    }


def _events(objects: list[dict[str, Any]]) -> Iterator[bytes]:
    for index, obj in enumerate(objects):
        converted = to_table(obj, api_version="v1", kind="ConfigMap", no_headers=index > 0)
        kind = "ADDED" if index == 0 else "MODIFIED"
        yield json.dumps({"type": kind, "object": converted}).encode() + b"\n"


async def _answer(request: web.Request, body: bytes) -> web.StreamResponse:
    """Lists, objects and a watch of ConfigMaps, each converted as negotiated."""
    found = discovery(request)
    if found is not None:
        return found
    path = request.path
    target = negotiate(request.headers.get("Accept"))
    include = include_object(request.query)
    if path.endswith("/configmaps") and request.query.get("watch") == "true":
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        cm = {"metadata": {"name": "cm", "creationTimestamp": _ago(minutes=15)}, "data": {}}
        changed = {**cm, "data": {"a": "1", "b": "2"}}
        for line in _events([cm, changed]):
            await response.write(line)
        await response.write_eof()
        return response
    listed = {
        "/api/v1/namespaces/default/configmaps": ("v1", "ConfigMap", []),
        "/api/v1/namespaces/default/pods": ("v1", "Pod", [_pod("web-2"), _pod("web-1")]),
        "/api/v1/pods": ("v1", "Pod", [_pod("web-2"), _pod("web-1"), _pod("dns", "kube-system")]),
        "/apis/apps/v1/namespaces/default/deployments": ("apps/v1", "Deployment", [_deployment()]),
    }
    result: dict[str, Any]
    if path in listed:
        api_version, kind, items = listed[path]
        result = {"metadata": {"resourceVersion": "6"}, "items": items}
    elif path == "/api/v1/namespaces/default/pods/web-1":
        api_version, kind, result = "v1", "Pod", _pod("web-1")
    else:
        return status(404, "NotFound", "the server could not find the requested resource")
    assert target is not None and target.kind == "Table", request.headers.get("Accept")
    converted = to_table(
        result, api_version=api_version, kind=kind, version=target.version, include=include
    )
    return web.json_response(converted)


def _rows(output: str) -> list[list[str]]:
    """kubectl's columns (two or more spaces apart)."""
    return [re.split(r"\s{2,}", line.strip()) for line in output.strip().splitlines()]


async def test_kubectl_get_prints_the_server_columns(tmp_path: Path) -> None:
    """``kubectl get pods``: the Table's priority-0 columns (printPod); ``-o wide`` adds the
    priority-1 ones; ``-A`` adds NAMESPACE and ``--show-labels`` LABELS from the row's
    PartialObjectMetadata; a single object prints the same way."""
    async with TinyServer(_answer) as server:
        kubectl = Kubectl(server.url, tmp_path)
        plain = _rows(await kubectl.out("get", "pods"))
        wide = _rows(await kubectl.out("get", "pods", "-o", "wide"))
        every = _rows(await kubectl.out("get", "pods", "-A", "--show-labels"))
        single = _rows(await kubectl.out("get", "pod", "web-1"))
        deployments = _rows(await kubectl.out("get", "deployments"))
    assert plain == [
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        ["web-2", "1/1", "Running", "3 (30m ago)", "20m"],
        ["web-1", "1/1", "Running", "3 (30m ago)", "20m"],
    ]
    assert wide[0] == [
        "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE",
        "READINESS GATES",
    ]  # fmt: skip
    assert wide[1][5:] == ["10.0.0.5", "node-1", "<none>", "<none>"]
    assert every[0] == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "LABELS"]
    assert every[3][:2] == ["kube-system", "dns"] and every[3][-1] == "app=web"
    assert single == plain[:1] + plain[2:]
    assert deployments == [
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        ["web", "2/3", "3", "2", "120m"],
    ]


async def test_kubectl_sort_by_asks_for_whole_objects(tmp_path: Path) -> None:
    """``--sort-by`` needs the objects: kubectl asks ``includeObject=Object`` and sorts the
    rows by the field of each row's object."""
    async with TinyServer(_answer) as server:
        kubectl = Kubectl(server.url, tmp_path)
        output = _rows(await kubectl.out("get", "pods", "-A", "--sort-by=.metadata.name"))
    assert [row[1] for row in output[1:]] == ["dns", "web-1", "web-2"]
    asked = [r.query.get("includeObject") for r in server.requests if r.path == "/api/v1/pods"]
    assert asked == ["Object"]


async def test_kubectl_watch_prints_table_events(tmp_path: Path) -> None:
    """``kubectl get -w``: each watch event carries a one-row Table, with the column
    definitions only in the first (``watchEmbeddedEncoder`` sets NoHeaders after it);
    kubectl prints one line per event and ends when the server ends the watch."""
    async with TinyServer(_answer) as server:
        kubectl = Kubectl(server.url, tmp_path)
        output = _rows(await kubectl.out("get", "configmaps", "--watch"))
    assert output == [["NAME", "DATA", "AGE"], ["cm", "0", "15m"], ["cm", "2", "15m"]]
