"""Controller.watch / enqueue_keys: informer notifications become keys on the work queue."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from aioinformer._cache._compact import CacheMode
from aioinformer._control._controller import Controller
from aioinformer._control._enqueue import EnqueueHandler, enqueue_keys
from aioinformer._informer._factory import SharedInformerFactory
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._objects import DeletedFinalStateUnknown, KubeObject
from aioinformer.errors import LifecycleError
from aioinformer.testing import FakeApiServer
from aioinformer.workqueue import WorkQueue
from tests.testing.valid import pod

from .support import FAST_WATCH, configmap, kube_client, wait_until

GUARD = 10.0


def obj(name: str, namespace: str = "ns", rv: str = "1", **labels: str) -> KubeObject:
    """A minimal object."""
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "resourceVersion": rv,
            "labels": labels,
        }
    }


async def drain(queue: WorkQueue[str]) -> list[str]:
    """Take every queued key, in order."""
    keys = []
    while len(queue):
        key = await queue.get()
        queue.done(key)
        keys.append(key)
    return keys


class Recorder:
    """A reconcile function that records keys and what the cache held at that moment."""

    def __init__(self, informer: SharedIndexInformer | None = None) -> None:
        self.informer = informer
        self.keys: list[str] = []
        self.seen: dict[str, KubeObject | None] = {}
        self.changed = asyncio.Event()

    async def __call__(self, key: str) -> None:
        self.keys.append(key)
        if self.informer is not None:
            self.seen[key] = self.informer.indexer.get_by_key(key)
        self.changed.set()


# -- the handler on its own --------------------------------------------------------------------


async def test_object_keys_for_add_update_delete_and_tombstones() -> None:
    """By default the object's own key is queued; a tombstone gives its key."""
    queue: WorkQueue[str] = WorkQueue()
    handler: EnqueueHandler[str] = EnqueueHandler(queue)
    handler.on_add(obj("a"), False)
    handler.on_update(obj("b"), obj("b", rv="2"))
    handler.on_delete(obj("c"))
    handler.on_delete(DeletedFinalStateUnknown("ns/d", None))
    assert await drain(queue) == ["ns/a", "ns/b", "ns/c", "ns/d"]


async def test_filter_applies_to_either_state_and_never_drops_stateless_tombstones() -> None:
    """An update passes if the old or the new state matches; a tombstone is filtered on its
    last state, and one without a state is queued anyway."""
    queue: WorkQueue[str] = WorkQueue()
    handler: EnqueueHandler[str] = EnqueueHandler(
        queue, filter=lambda o: o["metadata"]["labels"].get("app") == "web"
    )
    handler.on_add(obj("other"), False)
    handler.on_add(obj("web", app="web"), False)
    handler.on_update(obj("was-web", app="web"), obj("was-web", rv="2"))
    handler.on_update(obj("never", rv="1"), obj("never", rv="2"))
    handler.on_delete(DeletedFinalStateUnknown("ns/gone-other", obj("gone-other")))
    handler.on_delete(DeletedFinalStateUnknown("ns/gone-web", obj("gone-web", app="web")))
    handler.on_delete(DeletedFinalStateUnknown("ns/unknown", None))
    assert await drain(queue) == ["ns/web", "ns/was-web", "ns/gone-web", "ns/unknown"]


async def test_map_func_queues_keys_of_old_and_new_states() -> None:
    """map_func replaces the key: an update queues the mapped keys of both states."""
    queue: WorkQueue[str] = WorkQueue()
    handler: EnqueueHandler[str] = EnqueueHandler(
        queue, map_func=lambda o: [f"owner/{o['metadata']['labels']['owner']}"]
    )
    handler.on_add(obj("p", owner="x"), False)
    await drain(queue)
    handler.on_update(obj("p", owner="x"), obj("p", rv="2", owner="y"))
    assert sorted(await drain(queue)) == ["owner/x", "owner/y"]
    handler.on_delete(DeletedFinalStateUnknown("ns/p", obj("p", owner="z")))
    handler.on_delete(DeletedFinalStateUnknown("ns/q", None))  # nothing to map: skipped
    assert await drain(queue) == ["owner/z"]


async def test_skip_resync_ignores_unchanged_resource_versions() -> None:
    """With skip_resync an update with the same resource version queues nothing."""
    queue: WorkQueue[str] = WorkQueue()
    handler: EnqueueHandler[str] = EnqueueHandler(queue, skip_resync=True)
    handler.on_update(obj("same", rv="5"), obj("same", rv="5"))
    handler.on_update(obj("moved", rv="5"), obj("moved", rv="6"))
    assert await drain(queue) == ["ns/moved"]
    plain: WorkQueue[str] = WorkQueue()
    EnqueueHandler(plain).on_update(obj("same", rv="5"), obj("same", rv="5"))
    assert await drain(plain) == ["ns/same"]


def test_key_func_and_map_func_are_exclusive() -> None:
    """Passing both key_func and map_func is a ValueError."""
    with pytest.raises(ValueError):
        EnqueueHandler(WorkQueue(), key_func=str, map_func=lambda o: [])


# -- against the fake API server ---------------------------------------------------------------


async def test_watch_reconciles_adds_updates_and_deletes(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """Every add, update and delete of a watched resource leads to a reconcile of its key."""
    fake_apiserver.objects.create("configmaps", configmap("one", v="1"))
    async with (
        kube_client(fake_apiserver) as client,
        SharedInformerFactory(client, cache=cache_mode) as factory,
    ):
        informer = factory.for_resource("v1/configmaps")
        record = Recorder(informer)
        controller: Controller[str] = Controller(name="wiring", reconcile=record)
        controller.watch(informer)
        factory.start()
        async with controller:
            await wait_until(record.changed, lambda: "default/one" in record.keys)
            fake_apiserver.objects.create("configmaps", configmap("two"))
            await wait_until(record.changed, lambda: "default/two" in record.keys)
            count = record.keys.count("default/one")
            fake_apiserver.objects.update("configmaps", configmap("one", v="2"))
            await wait_until(record.changed, lambda: record.keys.count("default/one") > count)
            assert record.seen["default/one"]["data"] == {"v": "2"}  # type: ignore[index]
            fake_apiserver.objects.delete("configmaps", "two", namespace="default")
            await wait_until(record.changed, lambda: record.keys.count("default/two") == 2)
            assert record.seen["default/two"] is None  # the reconcile sees it gone


async def test_workers_wait_until_watches_have_synced(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """A key queued before start is not reconciled until the watched informer's initial list
    (delayed here by a failing LIST) has been processed by the watch."""
    for i in range(20):
        fake_apiserver.objects.create("configmaps", configmap(f"cm{i}"))
    fake_apiserver.faults.fail_next(2, 500, verb="list", resource="configmaps")
    async with (
        kube_client(fake_apiserver) as client,
        SharedInformerFactory(client, watch=FAST_WATCH, cache=cache_mode) as factory,
    ):
        informer = factory.for_resource("v1/configmaps")
        synced_at_first_call: list[bool] = []
        done = asyncio.Event()

        async def reconcile(key: str) -> None:
            if not synced_at_first_call:
                synced_at_first_call.append(registration.has_synced())
            done.set()

        controller: Controller[str] = Controller(name="sync", reconcile=reconcile)
        registration = controller.watch(informer)
        controller.enqueue("early")
        factory.start()
        async with controller:
            await asyncio.wait_for(done.wait(), GUARD)
        assert synced_at_first_call == [True]
        assert len(informer.indexer) == 20


async def test_stop_while_waiting_for_sync_returns_without_reconciling(
    fake_apiserver: FakeApiServer,
    cache_mode: CacheMode,
) -> None:
    """A controller whose informer never starts can still be stopped; nothing is reconciled."""
    calls: list[str] = []

    async def reconcile(key: str) -> None:
        calls.append(key)

    async with (
        kube_client(fake_apiserver) as client,
        SharedInformerFactory(client, cache=cache_mode) as factory,
    ):
        controller: Controller[str] = Controller(name="unsynced", reconcile=reconcile)
        controller.watch(factory.for_resource("v1/configmaps"))  # never started
        controller.enqueue("k")
        async with asyncio.timeout(GUARD), controller:
            await anyio.wait_all_tasks_blocked()  # the workers wait for the caches to sync
    assert calls == []


async def test_handlers_are_removed_when_the_controller_stops(
    fake_apiserver: FakeApiServer,
    cache_mode: CacheMode,
) -> None:
    """After the controller stops, its handlers are gone from the informer; watch() raises."""
    async with (
        kube_client(fake_apiserver) as client,
        SharedInformerFactory(client, cache=cache_mode) as factory,
    ):
        informer = factory.for_resource("v1/configmaps")
        record = Recorder()
        controller: Controller[str] = Controller(name="cleanup", reconcile=record)
        registration = controller.watch(informer)
        factory.start()
        async with controller:
            await asyncio.wait_for(registration.wait_for_cache_sync(), GUARD)
            assert registration.listener in informer._listeners
        assert registration.listener not in informer._listeners
        with pytest.raises(LifecycleError):
            controller.watch(informer)


async def test_map_func_maps_pods_to_their_namespace(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """Owner-style mapping: pod events enqueue their namespace; deleting the last pod of a
    namespace still enqueues it."""
    fake_apiserver.objects.create("namespaces", {"metadata": {"name": "team"}})
    fake_apiserver.objects.create("pods", pod("p", "team"))  # with a container: ValidatePodSpec
    async with (
        kube_client(fake_apiserver) as client,
        SharedInformerFactory(client, cache=cache_mode) as factory,
    ):
        record = Recorder()
        controller: Controller[str] = Controller(name="map", reconcile=record)
        controller.watch(
            factory.for_resource("v1/pods"),
            map_func=lambda o: [o["metadata"]["namespace"]],
        )
        factory.start()
        async with controller:
            await wait_until(record.changed, lambda: record.keys == ["team"])
            fake_apiserver.objects.delete("pods", "p", namespace="team")
            await wait_until(record.changed, lambda: record.keys == ["team", "team"])


async def test_enqueue_keys_feeds_any_work_queue(
    fake_apiserver: FakeApiServer, cache_mode: CacheMode
) -> None:
    """enqueue_keys wires an informer to a plain WorkQueue without a controller."""
    fake_apiserver.objects.create("configmaps", configmap("a"))
    queue: WorkQueue[str] = WorkQueue()
    async with (
        kube_client(fake_apiserver) as client,
        SharedInformerFactory(client, cache=cache_mode) as factory,
    ):
        informer = factory.for_resource("v1/configmaps")
        registration = enqueue_keys(informer, queue, filter=lambda o: o["metadata"]["name"] != "b")
        factory.start()
        await asyncio.wait_for(registration.wait_for_cache_sync(), GUARD)
        fake_apiserver.objects.create("configmaps", configmap("b"))
        fake_apiserver.objects.create("configmaps", configmap("c"))
        keys = [await asyncio.wait_for(queue.get(), GUARD) for _ in range(2)]
        assert keys == ["default/a", "default/c"]


async def test_workers_never_start_when_an_informer_stops_unsynced(
    fake_apiserver: FakeApiServer,
    cache_mode: CacheMode,
) -> None:
    """If a watched informer stops before it synced, the controller stops without reconciling."""
    fake_apiserver.faults.fail_next(1000, 500, verb="list")
    reconciled: list[str] = []

    async def reconcile(key: str) -> None:
        reconciled.append(key)

    async with kube_client(fake_apiserver) as client:
        factory = SharedInformerFactory(client, watch=FAST_WATCH, cache=cache_mode)
        informer = factory.for_resource("v1/configmaps")
        controller: Controller[str] = Controller(name="c", reconcile=reconcile)
        controller.watch(informer)
        async with controller:
            async with factory:
                factory.start()
                with anyio.fail_after(10):
                    await fake_apiserver.requests.wait_for(lambda r: r.verb == "list")
                controller.enqueue("default/x")
            async with asyncio.timeout(10):
                await controller.wait_stopped()
    assert reconciled == []
