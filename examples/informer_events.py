"""Watch ConfigMaps with a SharedIndexInformer and print every event with ``async for``.

Runs on its own against the built-in fake API server (no cluster needed)::

    python examples/informer_events.py

Against a real cluster, take the client of ``async with aioinformer.connect() as client:``
(kubeconfig or in-cluster) instead, and drop the fake server.
"""

from __future__ import annotations

import anyio

import aioinformer
from aioinformer import (
    DeletedFinalStateUnknown,
    Event,
    Resource,
    SharedIndexInformer,
    meta_namespace_key,
)
from aioinformer.lowlevel import KubeListerWatcher
from aioinformer.testing import FakeApiServer

CONFIGMAPS = Resource.parse("v1/configmaps")


def configmap(name: str, **data: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "default"}, "data": data}


async def make_changes(server: FakeApiServer) -> None:
    """What a cluster's users would do: create, update and delete a few ConfigMaps."""
    server.objects.create("configmaps", configmap("feature-flags", beta="off"))
    server.objects.patch("configmaps", "app-settings", {"data": {"replicas": "3"}})
    server.objects.patch("configmaps", "feature-flags", {"data": {"beta": "on"}})
    server.objects.delete("configmaps", "app-settings")


def describe(event: Event) -> str:
    """One line per event: type, key, data, and whether it belongs to the initial list."""
    obj = event.object
    if isinstance(obj, DeletedFinalStateUnknown):  # a delete the informer did not witness
        key, obj = obj.key, obj.obj or {}
    else:
        key = meta_namespace_key(obj)
    note = " (initial list)" if event.is_in_initial_list else ""
    return f"{event.type.value:<8} {key} {obj.get('data')}{note}"


async def main() -> None:
    # A bare server (no kube-root-ca.crt ConfigMaps of its own): the informer sees ours only.
    async with FakeApiServer(bookmark_interval=1.0, system_objects=False) as server:
        server.objects.create("configmaps", configmap("app-settings", replicas="2"))
        server.objects.create("configmaps", configmap("logging", level="info"))

        async with (
            aioinformer.connect(server=server.url) as client,
            anyio.create_task_group() as tg,
        ):
            informer = SharedIndexInformer(KubeListerWatcher(client, CONFIGMAPS))
            # Subscribed before the first list: the initial objects arrive as ADDED events.
            # Events of one object arrive in order; those of different objects may not.
            events = informer.events()
            await tg.start(informer.run)  # returns once the cache holds the initial list
            tg.start_soon(make_changes, server)
            async with events:  # leaving the block unsubscribes
                seen = 0
                async for event in events:
                    print(describe(event), flush=True)
                    seen += 1
                    if seen == 2 + 4:  # two initial objects, four changes
                        break
            print(f"cache at exit: {sorted(informer.cache.list_keys())}")
            await informer.aclose()  # the task group then ends with the informer


if __name__ == "__main__":
    anyio.run(main)
