"""Shutdown hygiene under load (issue 15): stopping a factory and a controller while a list is
in flight, a handler is mid-event and reconciles run finishes within the bound, and leaves
nothing behind (the suite-wide guard in ``conftest.py`` fails the test on a pending task, an
open session or descriptor, or an asyncio error report such as "Task was destroyed but it is
pending")."""

from __future__ import annotations

import time

import anyio
import pytest

import aioinformer
from aioinformer import (
    Controller,
    KubeObject,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    SharedInformerFactory,
    State,
)
from aioinformer.testing import FakeApiServer, FakeClock, MemorySource

#: The controller's stop timeout under test.
BOUND = 5.0


def test_every_stop_bound_defaults_to_30_seconds() -> None:
    """One name, one documented default: ``stop_timeout=30`` on the informer, the factory
    and the controllers (the lifecycle's bound is the graceful part plus what follows it)."""
    source = MemorySource()
    factory = SharedInformerFactory(lister_watcher=source.lister_watcher)
    assert factory._stop_timeout == 30.0
    assert factory.for_resource("v1/pods")._stop_timeout == 30.0  # passed to its informers
    assert SharedIndexInformer(source.lister_watcher("v1/pods"))._stop_timeout == 30.0
    controller: Controller[str] = Controller(name="c", reconcile=_reconcile)
    assert controller.stop_timeout == 30.0
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="stop_timeout"):
            SharedInformerFactory(lister_watcher=source.lister_watcher, stop_timeout=bad)
        with pytest.raises(ValueError, match="stop_timeout"):
            Controller(name="c", reconcile=_reconcile, stop_timeout=bad)
    assert SharedInformerFactory(lister_watcher=source.lister_watcher, stop_timeout=0)


async def _reconcile(key: str) -> None:
    pass


async def test_stopping_under_load_stays_within_the_bound(
    fake_apiserver: FakeApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Busy informers (one synced with a handler stuck mid-event, one whose LIST is in
    flight) and four reconciles that never return: stopping the factory and the controller
    together ends when the bound passes on the injected clock, not a virtual second later
    (the informers at once; the controller when its shutdown timeout cancels the
    reconciles); every task, connection and session is gone (the suite's guard). The wall
    time it took is printed (not asserted: the machine's load is not under test)."""
    server, clock = fake_apiserver, FakeClock()
    for number in range(200):
        server.objects.create(
            "configmaps", {"metadata": {"name": f"cm-{number}", "namespace": "default"}}
        )
    stuck = anyio.Event()  # never set
    handler_entered, reconciling = anyio.Event(), [0]
    all_reconciling = anyio.Event()

    async def on_update(old: KubeObject, new: KubeObject) -> None:
        handler_entered.set()
        await stuck.wait()

    async def reconcile(key: str) -> None:
        reconciling[0] += 1
        if reconciling[0] == 4:
            all_reconciling.set()
        await stuck.wait()

    async with aioinformer.connect(server=server.url) as client:
        factory = SharedInformerFactory(client, namespace="default", clock=clock)
        configmaps = factory.for_resource("v1/configmaps")
        configmaps.add_event_handler(ResourceEventHandlerFuncs(on_update=on_update))
        controller: Controller[str] = Controller(
            name="busy", reconcile=reconcile, workers=4, stop_timeout=BOUND, clock=clock
        )
        controller.watch(configmaps)
        async with factory, anyio.create_task_group() as tg:
            await tg.start(controller.run)
            with anyio.fail_after(30):  # fail-safes, not timings
                await configmaps.wait_for_cache_sync()
                await all_reconciling.wait()
                server.objects.patch(
                    "configmaps", "cm-1", {"data": {"v": "1"}}, namespace="default"
                )
                await handler_entered.wait()
            server.faults.set_latency(3600.0)  # the next LIST is not answered in this test
            pods = factory.for_resource("v1/pods")
            factory.start()
            await clock.advance(0)  # every task runs until it blocks: the LIST is in flight
            assert not pods.has_synced()

            stopped = anyio.Event()
            started, wall = clock.now(), time.perf_counter()

            async def stop() -> None:
                async with anyio.create_task_group() as closing:
                    closing.start_soon(factory.aclose)
                    closing.start_soon(controller.aclose)
                stopped.set()

            tg.start_soon(stop)
            await clock.advance(BOUND - 1.0)
            # The informers stopped at once (the LIST and the handler cancelled); the
            # controller still waits for its reconciles, as its shutdown timeout allows.
            assert factory.state is State.STOPPED
            assert not stopped.is_set()
            await clock.advance(1.0)
            with anyio.fail_after(30):  # a fail-safe: the stop needs no more virtual time
                await stopped.wait()
            took = time.perf_counter() - wall
            assert clock.now() - started == BOUND
            server.faults.set_latency(0.0)
    with capsys.disabled():
        print(f"\nstop under load: {took * 1000:.0f} ms of wall time (bound {BOUND:g} s virtual)")
    assert reconciling[0] == 4
