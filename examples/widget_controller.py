"""An operator for a custom resource, writing through the client: create, patch, apply, status.

Runs on its own against the built-in fake API server (no cluster needed)::

    python examples/widget_controller.py [--verbose]

A Widget (``widgets.example.com/v1``, namespaced) asks for a greeting::

    spec: {greeting: "hello", replicas: 2}

For each Widget the controller, reading only its informer's cache:

* **patches** the Widget to add its finalizer (a JSON patch whose ``test`` operation on the
  ``resourceVersion`` makes it optimistic);
* **applies** (server-side apply, field manager ``widget-controller``) the ConfigMap
  ``widget-<name>`` holding the greeting, owned by the Widget: the controller states the
  fields it wants and the API server merges them, leaving other managers' fields alone;
* **creates** the Secret ``widget-<name>-token`` once — a random token that must never be
  overwritten, so ``AlreadyExistsError`` means done;
* writes the Widget's **status** (``observedGeneration``, the ConfigMap's name, a ``Ready``
  condition) through the ``status`` subresource;
* when the Widget is deleted (it has a ``deletionTimestamp`` while the finalizer holds it),
  deletes the ConfigMap and the Secret, then patches the finalizer away so the Widget goes.

Against a real cluster (with the CRD installed), take the client of
``async with aioinformer.connect() as client:`` and run :func:`running_controller`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import logging
import secrets
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

import aioinformer
from aioinformer import (
    Controller,
    KubeClient,
    KubeObject,
    PatchType,
    Resource,
    SharedIndexInformer,
    SharedInformerFactory,
    split_meta_namespace_key,
)
from aioinformer.errors import AlreadyExistsError, NotFoundError
from aioinformer.testing import FakeApiServer

#: The custom resource.
WIDGETS = Resource("example.com", "v1", "widgets", kind="Widget")
#: Who owns the fields this controller writes.
MANAGER = "widget-controller"
FINALIZER = "example.com/widget-cleanup"

logger = logging.getLogger("widgets")


def configmap_name(widget: str) -> str:
    return f"widget-{widget}"


def secret_name(widget: str) -> str:
    return f"widget-{widget}-token"


def owner_reference(widget: KubeObject) -> dict[str, Any]:
    """Makes the Widget the controller of an object (the garbage collector's link)."""
    return {
        "apiVersion": WIDGETS.api_version,
        "kind": "Widget",
        "name": widget["metadata"]["name"],
        "uid": widget["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def desired_configmap(widget: KubeObject) -> KubeObject:
    """The ConfigMap a Widget asks for: exactly the fields this controller owns."""
    spec = widget.get("spec") or {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": configmap_name(widget["metadata"]["name"]),
            "namespace": widget["metadata"]["namespace"],
            "labels": {"app.kubernetes.io/managed-by": MANAGER},
            "ownerReferences": [owner_reference(widget)],
        },
        "data": {
            "greeting": str(spec.get("greeting", "")),
            "replicas": str(spec.get("replicas", 1)),
        },
    }


def desired_status(widget: KubeObject) -> dict[str, Any]:
    """The status a Widget has once its ConfigMap and Secret are in place."""
    return {
        "observedGeneration": widget["metadata"].get("generation"),
        "configMap": configmap_name(widget["metadata"]["name"]),
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "Configured", "message": "configured"}
        ],
    }


class WidgetReconciler:
    """Brings the objects of one Widget in line with it; raising means "retry later".

    :param client: writes go through it.
    :param widgets: the Widget informer (reads go to its cache).
    :param on_reconciled: called after each successful reconcile (the demo waits on it).
    """

    def __init__(
        self,
        client: KubeClient,
        widgets: SharedIndexInformer,
        *,
        on_reconciled: Callable[[str], None] | None = None,
    ) -> None:
        self._client = client
        self._widgets = widgets
        self._on_reconciled = on_reconciled

    async def reconcile(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        widget = self._widgets.lister().get(name, namespace)
        if widget is not None:
            if widget["metadata"].get("deletionTimestamp"):
                await self._finalize(widget)
            else:
                await self._configure(widget)
        if self._on_reconciled is not None:
            self._on_reconciled(key)

    async def _configure(self, widget: KubeObject) -> None:
        client, meta = self._client, widget["metadata"]
        name, namespace = meta["name"], meta["namespace"]
        finalizers = meta.get("finalizers") or []
        if FINALIZER not in finalizers:
            await self._set_finalizers(widget, [*finalizers, FINALIZER])
            logger.info("%s/%s: finalizer added", namespace, name)
        configmap = desired_configmap(widget)
        await client.apply("configmaps", configmap, field_manager=MANAGER, force=True)
        token = base64.b64encode(secrets.token_hex(16).encode()).decode()
        secret = {
            "metadata": {"name": secret_name(name), "ownerReferences": [owner_reference(widget)]},
            "data": {"token": token},
        }
        try:
            await client.create("secrets", secret, namespace=namespace, field_manager=MANAGER)
            logger.info("%s/%s: token created", namespace, name)
        except AlreadyExistsError:
            pass  # made before: a token is never replaced
        status = desired_status(widget)
        if widget.get("status") != status:
            await client.patch_status(
                WIDGETS, name, {"status": status}, namespace=namespace, field_manager=MANAGER
            )
            logger.info("%s/%s: ready (generation %s)", namespace, name, meta.get("generation"))

    async def _finalize(self, widget: KubeObject) -> None:
        client, meta = self._client, widget["metadata"]
        name, namespace = meta["name"], meta["namespace"]
        finalizers = meta.get("finalizers") or []
        if FINALIZER not in finalizers:
            return  # done: others' finalizers hold it
        owned = (("configmaps", configmap_name(name)), ("secrets", secret_name(name)))
        for resource, owned_name in owned:
            try:
                await client.delete(resource, owned_name, namespace=namespace)
            except NotFoundError:
                pass
        await self._set_finalizers(widget, [f for f in finalizers if f != FINALIZER])
        logger.info("%s/%s: cleaned up", namespace, name)

    async def _set_finalizers(self, widget: KubeObject, finalizers: list[str]) -> None:
        """A JSON patch whose ``test`` makes it apply only to the version the cache holds
        (else 422, and the key is retried once the cache caught up)."""
        meta = widget["metadata"]
        await self._client.patch(
            WIDGETS,
            meta["name"],
            [
                {
                    "op": "test",
                    "path": "/metadata/resourceVersion",
                    "value": meta["resourceVersion"],
                },
                {"op": "add", "path": "/metadata/finalizers", "value": finalizers},
            ],
            namespace=meta["namespace"],
            patch_type=PatchType.JSON,
            field_manager=MANAGER,
        )


@asynccontextmanager
async def running_controller(
    client: KubeClient, *, on_reconciled: Callable[[str], None] | None = None
) -> AsyncIterator[Controller[str]]:
    """Run the Widget informer and the controller for the duration of the block."""
    async with SharedInformerFactory(client) as factory:
        widgets = factory.for_resource(WIDGETS)
        reconciler = WidgetReconciler(client, widgets, on_reconciled=on_reconciled)
        controller: Controller[str] = Controller(
            name="widgets", reconcile=reconciler.reconcile, workers=2
        )
        controller.watch(widgets)
        factory.start()
        async with controller:
            yield controller


# -- the demo --------------------------------------------------------------------------------


def widget(name: str, greeting: str, replicas: int = 1) -> KubeObject:
    return {
        "apiVersion": WIDGETS.api_version,
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"greeting": greeting, "replicas": replicas},
    }


class Converged:
    """Waits until a condition on the server holds, re-checking after every reconcile."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def reconciled(self, key: str) -> None:
        self._event.set()

    async def wait(self, check: Callable[[], Any], within: float) -> None:
        with anyio.fail_after(within):
            while True:
                self._event.clear()  # before checking, so a reconcile during the check counts
                if await check():
                    return
                await self._event.wait()


async def widget_state(server: FakeApiServer, name: str) -> KubeObject | None:
    found = server.objects.list(str(WIDGETS), field_selector=f"metadata.name={name}")
    return found[0] if found else None


async def demo(*, within: float = 20.0) -> list[str]:
    """Run the whole demo on a fresh fake API server; returns the summary lines."""
    lines: list[str] = []
    converged = Converged()
    async with FakeApiServer() as server:
        server.register_resource("example.com", "v1", "widgets", "Widget")
        async with (
            aioinformer.connect(server=server.url) as client,
            running_controller(client, on_reconciled=converged.reconciled),
        ):
            await client.create(WIDGETS, widget("hello", "hello, world", replicas=2))

            async def ready(generation: int) -> bool:
                found = await widget_state(server, "hello")
                status = (found or {}).get("status") or {}
                return bool(status.get("observedGeneration") == generation)

            await converged.wait(lambda: ready(1), within)
            hello = await client.get(WIDGETS, "hello")
            configmap = await client.get("configmaps", configmap_name("hello"))
            lines.append(f"finalizers: {hello['metadata']['finalizers']}")
            lines.append(f"configmap: {configmap['data']}")
            ready_condition = hello["status"]["conditions"][0]
            lines.append(f"status: {ready_condition['type']}={ready_condition['status']}")
            await client.patch(WIDGETS, "hello", {"spec": {"greeting": "hi"}})
            await converged.wait(lambda: ready(2), within)
            configmap = await client.get("configmaps", configmap_name("hello"))
            lines.append(
                f"after the edit: {configmap['data']['greeting']!r}, generation 2 observed"
            )
            await client.delete(WIDGETS, "hello")

            async def gone() -> bool:
                return await widget_state(server, "hello") is None

            await converged.wait(gone, within)
            # The garbage collector removes what the widget owned a moment after it went.
            await server.objects.wait_idle()
            left = [
                cm["metadata"]["name"]
                for cm in (await client.list("configmaps", namespace="default"))["items"]
            ]
            lines.append(f"after the delete: widget gone, configmaps {left}")
    lines.append("OK")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the demo and print its summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--verbose", action="store_true", help="log what the controller does")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    for line in asyncio.run(demo()):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
