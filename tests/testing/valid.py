"""Objects a real API server accepts, and status written the way a real controller writes it.

A real server validates what it is sent (a Pod needs a container with a name and an image),
resets ``status`` on create and keeps it on main-resource writes; a kubelet or controller
writes it through the ``status`` subresource. Tests that need a Pod in some phase create it
and then write its status, as here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aioinformer.testing import FakeApiServer

Obj = dict[str, Any]


def pod(
    name: str,
    namespace: str = "default",
    *,
    labels: Mapping[str, str] | None = None,
    node: str = "",
    image: str = "nginx",
) -> Obj:
    """A Pod with one container (what ``kubectl run NAME --image=IMAGE`` sends)."""
    spec: Obj = {"containers": [{"name": "app", "image": image}]}
    if node:
        spec["nodeName"] = node
    metadata: Obj = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def deployment(name: str, namespace: str = "default", *, replicas: int | None = None) -> Obj:
    """A Deployment whose selector matches its template's labels."""
    spec: Obj = {
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def set_status(
    server: FakeApiServer,
    resource: str,
    name: str,
    status: Mapping[str, Any],
    *,
    namespace: str = "default",
) -> Obj:
    """Merge ``status`` into an object's status through its ``status`` subresource."""
    return server.objects.patch(
        resource, name, {"status": dict(status)}, namespace=namespace, subresource="status"
    )


def create_with_status(
    server: FakeApiServer, resource: str, obj: Mapping[str, Any], status: Mapping[str, Any]
) -> Obj:
    """Create an object, then write its status (two writes, as on a real cluster)."""
    created = server.objects.create(resource, obj)
    meta = created["metadata"]
    return set_status(
        server, resource, meta["name"], status, namespace=str(meta.get("namespace") or "")
    )
