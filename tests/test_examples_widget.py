"""The widget operator example: run as a script, and what it writes, checked on the server.

What the fake API server records follows kube-apiserver: ``metadata.managedFields`` entries per
manager, operation (``Apply`` for server-side apply, ``Update`` for create/update/patch) and
subresource (``fieldmanager``), and finalizers holding a deleted object until removed
(``registry/generic/registry/store.go``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

import aioinformer
from aioinformer._objects import KubeObject
from aioinformer.errors import NotFoundError
from aioinformer.testing import FakeApiServer

from ._examples import imported_example, run_example

GUARD = 10.0


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    """The example imported as a module."""
    with imported_example("widget_controller.py") as module:
        yield module


def managers(obj: KubeObject) -> set[tuple[str, str, str]]:
    """``(manager, operation, subresource)`` of each managedFields entry."""
    return {
        (entry["manager"], entry["operation"], entry.get("subresource", ""))
        for entry in obj["metadata"].get("managedFields", [])
    }


@pytest.mark.slow
def test_widget_example_runs() -> None:
    """`python examples/widget_controller.py` exits 0 and prints what it wrote."""
    result = run_example("widget_controller.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "finalizers: ['example.com/widget-cleanup']",
        "configmap: {'greeting': 'hello, world', 'replicas': '2'}",
        "status: Ready=True",
        "after the edit: 'hi', generation 2 observed",
        # the server's own kube-root-ca.crt stays, as on a cluster
        "after the delete: widget gone, configmaps ['kube-root-ca.crt']",
        "OK",
    ]
    assert result.stderr == ""


async def test_what_the_widget_controller_writes(
    fake_apiserver: FakeApiServer, example: ModuleType
) -> None:
    """Against the fake server: a patched finalizer, an applied ConfigMap owned by the Widget
    (whose other managers' fields survive the next apply), a Secret created once, the status
    through its subresource — each under the ``widget-controller`` manager — and a clean-up
    on delete."""
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
    widgets, manager = example.WIDGETS, example.MANAGER
    converged = example.Converged()

    async def observed(generation: int) -> bool:
        found = await example.widget_state(fake_apiserver, "w")
        return bool(((found or {}).get("status") or {}).get("observedGeneration") == generation)

    async def get(resource: Any, name: str) -> KubeObject:
        return fake_apiserver.objects.get(str(resource), name, namespace="default")

    async with (
        aioinformer.connect(server=fake_apiserver.url) as client,
        example.running_controller(client, on_reconciled=converged.reconciled) as controller,
    ):
        await client.create(widgets, example.widget("w", "hello", replicas=3))
        await converged.wait(lambda: observed(1), GUARD)

        widget = await get(widgets, "w")
        assert widget["metadata"]["finalizers"] == [example.FINALIZER]
        assert widget["status"] == example.desired_status(widget)
        assert {(manager, "Update", ""), (manager, "Update", "status")} <= managers(widget)

        configmap = await get("configmaps", "widget-w")
        assert configmap["data"] == {"greeting": "hello", "replicas": "3"}
        assert configmap["metadata"]["ownerReferences"][0]["uid"] == widget["metadata"]["uid"]
        assert managers(configmap) == {(manager, "Apply", "")}

        secret = await get("secrets", "widget-w-token")
        token = base64.b64decode(secret["data"]["token"])
        assert len(token) == 32
        assert managers(secret) == {(manager, "Update", "")}

        # Someone else labels the ConfigMap: the next apply leaves that label alone.
        await client.patch(
            "configmaps", "widget-w", {"metadata": {"labels": {"team": "a"}}}, field_manager="ops"
        )
        await client.patch(widgets, "w", {"spec": {"greeting": "hi"}})
        await converged.wait(lambda: observed(2), GUARD)
        configmap = await get("configmaps", "widget-w")
        assert configmap["data"]["greeting"] == "hi"
        assert configmap["metadata"]["labels"]["team"] == "a"
        assert managers(configmap) == {(manager, "Apply", ""), ("ops", "Update", "")}
        assert (await get("secrets", "widget-w-token"))["data"] == secret["data"]  # kept

        await client.delete(widgets, "w")

        async def gone() -> bool:
            return await example.widget_state(fake_apiserver, "w") is None

        await converged.wait(gone, GUARD)
        await fake_apiserver.objects.wait_idle()  # the garbage collector, after the delete
        for resource, name in (("configmaps", "widget-w"), ("secrets", "widget-w-token")):
            with pytest.raises(NotFoundError):
                await client.get(resource, name)
        assert controller.statistics().errors == 0
