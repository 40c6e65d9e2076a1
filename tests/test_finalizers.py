"""Finalizers (issue 22) against the fake API server over HTTP: the state machine of
:meth:`Finalizer.reconcile` (kube-rs ``runtime/src/finalizer.rs``, ``finalizer()``), writes
guarded by ``metadata.resourceVersion`` (the apiserver's optimistic concurrency: a merge patch
carrying a stale resourceVersion is a 409, ``staging/src/k8s.io/apiserver/pkg/registry/
generic/registry/store.go``, ``Update``), two writers racing, and a controller retrying a
failing cleanup with its rate limiter on virtual time."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

import aioinformer
from aioinformer import (
    Controller,
    EventType,
    Finalizer,
    KubeClient,
    KubeObject,
    Resource,
    Result,
    SharedInformerFactory,
    split_meta_namespace_key,
)
from aioinformer.errors import ConflictError
from aioinformer.testing import FakeApiServer, FakeClock

from .support import FAST_WATCH, wait_until

WIDGETS = Resource("example.com", "v1", "widgets", kind="Widget")
OURS = "example.com/cleanup"
THEIRS = "other.example.com/keep"


@pytest.fixture
async def client(fake_apiserver: FakeApiServer) -> AsyncIterator[KubeClient]:
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
    async with aioinformer.connect(server=fake_apiserver.url) as client:
        yield client


async def make_widget(client: KubeClient, *finalizers: str, name: str = "w") -> KubeObject:
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if finalizers:
        metadata["finalizers"] = list(finalizers)
    return await client.create(WIDGETS, {"metadata": metadata, "spec": {"size": 1}})


class Calls:
    """apply and cleanup handlers that record what they saw."""

    def __init__(self, cleanup_result: Result | None = None) -> None:
        self.log: list[tuple[str, list[str]]] = []
        self.cleanup_result = cleanup_result

    async def apply(self, obj: KubeObject) -> Result:
        self.log.append(("apply", obj["metadata"].get("finalizers", [])))
        return Result(requeue_after=60)

    async def cleanup(self, obj: KubeObject) -> Result | None:
        self.log.append(("cleanup", obj["metadata"].get("finalizers", [])))
        return self.cleanup_result


async def test_a_live_object_gets_the_finalizer_then_apply(client: KubeClient) -> None:
    """absent + live: added (kept after the others), then apply sees the written object."""
    widget = await make_widget(client, THEIRS)
    calls = Calls()
    finalizer = Finalizer(client, WIDGETS, OURS)
    result = await finalizer.reconcile(widget, apply=calls.apply, cleanup=calls.cleanup)
    assert result == Result(requeue_after=60)
    assert calls.log == [("apply", [THEIRS, OURS])]
    stored = await client.get(WIDGETS, "w")
    assert stored["metadata"]["finalizers"] == [THEIRS, OURS]
    assert widget["metadata"]["finalizers"] == [THEIRS]  # the object given is not changed


async def test_a_live_object_with_the_finalizer_is_only_applied(
    client: KubeClient, fake_apiserver: FakeApiServer
) -> None:
    widget = await make_widget(client, OURS)
    calls = Calls()
    before = len(fake_apiserver.requests.records)
    await Finalizer(client, WIDGETS, OURS).reconcile(
        widget, apply=calls.apply, cleanup=calls.cleanup
    )
    assert calls.log == [("apply", [OURS])]
    assert fake_apiserver.requests.records[before:] == []  # no request


async def test_a_deleted_object_is_cleaned_up_then_released(client: KubeClient) -> None:
    """present + deleting: cleanup, then the finalizer goes and the object with it."""
    await make_widget(client, OURS)
    await client.delete(WIDGETS, "w")
    deleting = await client.get(WIDGETS, "w")
    calls = Calls()
    assert (
        await Finalizer(client, WIDGETS, OURS).reconcile(
            deleting, apply=calls.apply, cleanup=calls.cleanup
        )
        is None
    )
    assert calls.log == [("cleanup", [OURS])]
    assert (await client.list(WIDGETS, namespace="default"))["items"] == []


async def test_releasing_keeps_the_other_finalizers(client: KubeClient) -> None:
    await make_widget(client, OURS, THEIRS)
    await client.delete(WIDGETS, "w")
    deleting = await client.get(WIDGETS, "w")
    calls = Calls()
    await Finalizer(client, WIDGETS, OURS).reconcile(deleting, cleanup=calls.cleanup)
    assert (await client.get(WIDGETS, "w"))["metadata"]["finalizers"] == [THEIRS]


async def test_a_deleted_object_without_the_finalizer_is_left_alone(client: KubeClient) -> None:
    """absent + deleting: not ours (and no new finalizer may be added to it)."""
    await make_widget(client, THEIRS)
    await client.delete(WIDGETS, "w")
    deleting = await client.get(WIDGETS, "w")
    calls = Calls()
    assert (
        await Finalizer(client, WIDGETS, OURS).reconcile(
            deleting, apply=calls.apply, cleanup=calls.cleanup
        )
        is None
    )
    assert calls.log == []
    assert (await client.get(WIDGETS, "w"))["metadata"]["finalizers"] == [THEIRS]


async def test_an_unfinished_cleanup_keeps_the_finalizer(client: KubeClient) -> None:
    """A cleanup asking to be called again has not finished: the finalizer stays, and its
    Result goes back to the controller."""
    await make_widget(client, OURS)
    await client.delete(WIDGETS, "w")
    deleting = await client.get(WIDGETS, "w")
    calls = Calls(cleanup_result=Result(requeue_after=5))
    finalizer = Finalizer(client, WIDGETS, OURS)
    assert await finalizer.reconcile(deleting, cleanup=calls.cleanup) == Result(requeue_after=5)
    assert (await client.get(WIDGETS, "w"))["metadata"]["finalizers"] == [OURS]


async def test_a_failing_cleanup_keeps_the_finalizer(client: KubeClient) -> None:
    await make_widget(client, OURS)
    await client.delete(WIDGETS, "w")
    deleting = await client.get(WIDGETS, "w")

    async def cleanup(obj: KubeObject) -> None:
        raise RuntimeError("the bucket is still there")

    with pytest.raises(RuntimeError, match="bucket"):
        await Finalizer(client, WIDGETS, OURS).reconcile(deleting, cleanup=cleanup)
    assert (await client.get(WIDGETS, "w"))["metadata"]["finalizers"] == [OURS]


async def test_a_stale_object_is_re_read_and_nothing_is_lost(client: KubeClient) -> None:
    """Someone added a finalizer since our copy was read: the write meets a 409, re-reads, and
    keeps theirs."""
    stale = await make_widget(client)
    await client.patch(WIDGETS, "w", {"metadata": {"finalizers": [THEIRS]}})
    written = await Finalizer(client, WIDGETS, OURS).add(stale)
    assert written is not None
    assert written["metadata"]["finalizers"] == [THEIRS, OURS]


async def test_conflicts_beyond_the_retries_raise(client: KubeClient) -> None:
    stale = await make_widget(client)
    await client.patch(WIDGETS, "w", {"metadata": {"finalizers": [THEIRS]}})
    with pytest.raises(ConflictError):
        await Finalizer(client, WIDGETS, OURS, conflict_retries=0).add(stale)


async def test_an_object_gone_or_recreated_meanwhile_is_not_written(client: KubeClient) -> None:
    stale = await make_widget(client)
    await client.delete(WIDGETS, "w")
    finalizer = Finalizer(client, WIDGETS, OURS)
    assert await finalizer.add(stale) is None  # 404
    await make_widget(client)  # the same name, another uid
    assert await finalizer.add(stale) is None  # 409, re-read: another object
    assert "finalizers" not in (await client.get(WIDGETS, "w"))["metadata"]


@pytest.mark.parametrize(
    "name", ["cleanup", "example.com/", "Example.com/x", "/x", "a.com/" + "x" * 64]
)
def test_finalizer_names_must_be_domain_qualified(name: str) -> None:
    with pytest.raises(ValueError, match="domain-qualified"):
        Finalizer(None, WIDGETS, name)  # type: ignore[arg-type]


# -- two writers ---------------------------------------------------------------------------------


async def test_two_writers_never_drop_each_others_finalizers(
    client: KubeClient, fake_apiserver: FakeApiServer
) -> None:
    """Two finalizers toggled concurrently on one object by two writers, each working from its
    own stale copy (so they conflict): in the object's whole history — every version is a
    write of one of them — no write of one ever changed the other's finalizer, and a third
    party's finalizer is never lost."""
    created = await make_widget(client, THEIRS)
    rounds = 12
    history: list[tuple[int, str, KubeObject]] = [
        (int(created["metadata"]["resourceVersion"]), "create", created)
    ]

    async def writer(who: str, name: str) -> None:
        finalizer = Finalizer(client, WIDGETS, name, conflict_retries=1)
        known = created  # stale from the start: the other writer moves the object on
        for i in range(rounds):
            adding = i % 2 == 0
            while True:
                try:
                    written = await (finalizer.add(known) if adding else finalizer.remove(known))
                    break
                except ConflictError:  # out of retries: as a controller would, read again
                    known = await client.get(WIDGETS, "w")
            assert written is not None
            if written is not known:
                history.append((int(written["metadata"]["resourceVersion"]), who, written))
            known = written
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(writer, "one", "one.example.com/f")
        tg.start_soon(writer, "two", "two.example.com/f")

    history.sort(key=lambda entry: entry[0])
    owners = {"one": "one.example.com/f", "two": "two.example.com/f"}
    for (_, _, before), (_, who, after) in itertools.pairwise(history):
        for other, name in owners.items():
            if other != who:
                assert (name in before["metadata"].get("finalizers", [])) == (
                    name in after["metadata"].get("finalizers", [])
                ), f"a write of {who} changed {name}"
        assert THEIRS in after["metadata"]["finalizers"]
    writes = [who for _, who, _ in history[1:]]
    assert writes.count("one") == writes.count("two") == rounds
    final = await client.get(WIDGETS, "w")
    assert final["metadata"]["finalizers"] == [THEIRS]  # both removed theirs last
    refused = [r for r in fake_apiserver.requests.records if r.verb == "patch" and r.status == 409]
    assert refused  # the race was run: stale writes met conflicts and were re-read


# -- in a controller ----------------------------------------------------------------------------


async def test_a_controller_retries_a_failing_cleanup_with_its_backoff(
    fake_apiserver: FakeApiServer,
) -> None:
    """The finalizer holds the object while cleanup fails; the controller retries the key on
    its rate limiter (virtual time) until cleanup succeeds and the object goes."""
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
    clock = FakeClock()
    attempts: list[str] = []
    applied = asyncio.Event()
    changed = asyncio.Event()

    async with aioinformer.connect(server=fake_apiserver.url) as client:
        factory = SharedInformerFactory(client, watch=FAST_WATCH)
        widgets = factory.for_resource(WIDGETS)
        finalizer = Finalizer(client, WIDGETS, OURS)

        async def apply(obj: KubeObject) -> None:
            applied.set()

        async def cleanup(obj: KubeObject) -> None:
            attempts.append(obj["metadata"]["name"])
            changed.set()
            if len(attempts) < 3:
                raise RuntimeError("not yet")

        async def reconcile(key: str) -> Result | None:
            namespace, name = split_meta_namespace_key(key)
            widget = widgets.lister().get(name, namespace)
            if widget is None:
                return None
            return await finalizer.reconcile(widget, apply=apply, cleanup=cleanup)

        controller: Controller[str] = Controller(name="widgets", reconcile=reconcile, clock=clock)
        controller.watch(widgets)
        async with factory, controller:
            await client.create(WIDGETS, {"metadata": {"name": "w", "namespace": "default"}})
            with anyio.fail_after(10):
                await applied.wait()
            assert (await client.get(WIDGETS, "w"))["metadata"]["finalizers"] == [OURS]
            stream = widgets.events()
            await client.delete(WIDGETS, "w")
            await wait_until(changed, lambda: len(attempts) == 1)
            assert (await client.get(WIDGETS, "w"))["metadata"]["finalizers"] == [OURS]
            await clock.advance(0.005)  # the first retry: 5 ms
            await wait_until(changed, lambda: len(attempts) == 2)
            assert (await client.get(WIDGETS, "w"))["metadata"]["finalizers"] == [OURS]
            assert controller.queue.num_requeues("default/w") == 2
            await clock.advance(0.010)  # the second: 10 ms; then cleanup succeeds
            await wait_until(changed, lambda: len(attempts) == 3)
            with anyio.fail_after(10):
                async for event in stream:
                    if event.type is EventType.DELETED:
                        break
            assert (await client.list(WIDGETS, namespace="default"))["items"] == []
        stats = controller.statistics()
    assert stats.errors == 2
