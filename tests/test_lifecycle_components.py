"""Every long-running component has the one lifecycle of ``aioinformer._lifecycle``:
``tg.start(x.run)`` readiness, an idempotent bounded ``aclose()``, its own failure out of
``async with`` unwrapped, and ``statistics()`` snapshots."""

from __future__ import annotations

import dataclasses
import gc

import anyio
import pytest

from aioinformer import State
from aioinformer._control._controller import Controller
from aioinformer._election._elector import ElectorStatistics, LeaderElector
from aioinformer._informer._event_stream import (
    ListenerStatistics,
    ResourceEventHandlerFuncs,
)
from aioinformer._informer._factory import SharedInformerFactory
from aioinformer._informer._informer import InformerStatistics, SharedIndexInformer
from aioinformer._listwatch import ListResult, Resource
from aioinformer._objects import KubeObject
from aioinformer.testing import FakeClock, MemorySource, ScriptedListerWatcher

from .support import FAST_WATCH, MemoryLease, configmap, obj

GUARD = 10.0  # fail-safe only: nothing below waits for time to pass on the wall clock
CONFIGMAPS = Resource.parse("v1/configmaps")
SECRETS = Resource.parse("v1/secrets")


@pytest.fixture
def source() -> MemorySource:
    """Objects for the factories under test (no HTTP: these tests are about the lifecycle)."""
    return MemorySource()


def memory_informer(clock: FakeClock, *objects: KubeObject) -> SharedIndexInformer:
    """An informer on an in-memory lister-watcher whose list returns ``objects``."""
    lw = ScriptedListerWatcher(clock=clock, default_list=ListResult(list(objects), "10"))
    return SharedIndexInformer(lw, name="mem", clock=clock)


def elector(api: MemoryLease, identity: str = "a", **options: object) -> LeaderElector:
    """An elector on an in-memory lease, on the lease's virtual clock."""
    return LeaderElector(
        lease_client=api,
        lease_name="lock",
        namespace="ns",
        identity=identity,
        lease_duration=15.0,
        renew_deadline=10.0,
        retry_period=2.0,
        clock=api.clock,
        **options,  # type: ignore[arg-type]
    )


# -- readiness: await tg.start(x.run) --------------------------------------------------------


async def test_informer_start_returns_once_the_cache_is_synced() -> None:
    """``await tg.start(informer.run)`` returns with the initial list in the cache."""
    informer = memory_informer(FakeClock(), obj("a", "1"), obj("b", "2"))
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            await tg.start(informer.run)
            assert informer.state is State.RUNNING
            assert informer.has_synced() and len(informer.indexer) == 2
            await informer.aclose()
    assert informer.state is State.STOPPED


async def test_factory_start_returns_once_its_informers_synced(
    source: MemorySource,
) -> None:
    """``await tg.start(factory.run)`` starts the informers the factory has and returns once
    every one of them synced."""
    source.create(CONFIGMAPS, configmap("a"))
    factory = SharedInformerFactory(lister_watcher=source.lister_watcher, watch=FAST_WATCH)
    configmaps = factory.for_resource(CONFIGMAPS)
    secrets = factory.for_resource(SECRETS)
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            await tg.start(factory.run)
            assert factory.state is State.RUNNING
            assert configmaps.has_synced() and secrets.has_synced()
            assert configmaps.indexer.list_keys() == ["default/a"]
            await factory.aclose()
    assert configmaps.state is State.STOPPED and secrets.state is State.STOPPED


async def test_controller_start_returns_once_caches_synced_and_workers_run() -> None:
    """``await tg.start(controller.run)`` returns once its watches processed their initial
    list and its workers run: a key enqueued then is reconciled."""
    clock = FakeClock()
    informer = memory_informer(clock, obj("a", "1"))
    reconciled: list[str] = []
    done = anyio.Event()

    async def reconcile(key: str) -> None:
        reconciled.append(key)
        done.set()

    controller: Controller[str] = Controller(name="ready", reconcile=reconcile, clock=clock)
    registration = controller.watch(informer)
    with anyio.fail_after(GUARD):
        async with informer, anyio.create_task_group() as tg:
            await tg.start(controller.run)
            assert registration.has_synced()
            assert controller.state is State.RUNNING
            await done.wait()
            await controller.aclose()
    assert reconciled == ["default/a"]
    assert controller.state is State.STOPPED


async def test_elector_start_returns_once_it_campaigns() -> None:
    """``await tg.start(elector.run)`` returns at once: campaigning is its readiness (leading
    is waited for with wait_leading())."""
    api = MemoryLease(FakeClock())
    candidate = elector(api)
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            await tg.start(candidate.run)
            assert candidate.state is State.RUNNING
            term = await candidate.wait_leading()
            assert term is not None and term.number == 1
            await candidate.aclose()
    assert candidate.state is State.STOPPED
    assert api.holder() == ""  # released on the way out


# -- aclose(): idempotent and bounded ----------------------------------------------------------


async def test_informer_aclose_is_idempotent_and_releases_consumers() -> None:
    """aclose() twice (and once more after) is fine; consumers' loops end; no time passes."""
    clock = FakeClock()
    informer = memory_informer(clock, obj("a", "1"))
    seen: list[str] = []
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            await tg.start(informer.run)

            async def consume() -> None:
                async for event in informer.events():
                    seen.append(event.object["metadata"]["name"])

            tg.start_soon(consume)
            await anyio.wait_all_tasks_blocked()
            await informer.aclose()
            await informer.aclose()
        await informer.aclose()
    assert seen == ["a"]
    assert clock.now() == 0.0


async def test_factory_aclose_is_idempotent_and_closes_unstarted_informers(
    source: MemorySource,
) -> None:
    """Closing a factory closes every informer it made, started or not, once."""
    factory = SharedInformerFactory(lister_watcher=source.lister_watcher, watch=FAST_WATCH)
    started = factory.for_resource(CONFIGMAPS)
    with anyio.fail_after(GUARD):
        async with factory:
            late = factory.for_resource(SECRETS)  # never started
            stream = late.events()
            await factory.aclose()
            await factory.aclose()
    assert started.state is State.STOPPED and late.state is State.STOPPED
    assert stream.closed


async def test_controller_aclose_is_idempotent_and_bounded_by_stop_timeout() -> None:
    """Concurrent and repeated aclose() calls all return once the graceful stop ended: after
    stop_timeout on the controller's clock for a reconcile that never returns."""
    clock = FakeClock()
    started = anyio.Event()

    async def reconcile(key: str) -> None:
        started.set()
        await anyio.sleep_forever()

    controller: Controller[str] = Controller(
        name="bounded", reconcile=reconcile, stop_timeout=5.0, clock=clock
    )
    closed: list[float] = []

    async def close() -> None:
        await controller.aclose()
        closed.append(clock.now())

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            await tg.start(controller.run)
            controller.enqueue("k")
            await started.wait()
            tg.start_soon(close)
            tg.start_soon(close)
            await clock.advance(4.0)
            assert closed == []
            await clock.advance(1.0)
    await controller.aclose()
    assert closed == [5.0, 5.0]
    assert controller.statistics().in_flight == 0


async def test_elector_aclose_releases_within_the_renew_deadline() -> None:
    """A leader whose release request hangs gives up after renew_deadline (on its clock),
    calls on_stopped_leading and stops; aclose() again returns at once."""
    api = MemoryLease(FakeClock())
    stopped_leading: list[float] = []
    candidate = elector(api, on_stopped_leading=lambda: stopped_leading.append(api.clock.now()))
    hang = anyio.Event()
    replace = api.replace

    async def hanging_replace(body: KubeObject) -> KubeObject:
        if body["spec"]["holderIdentity"] == "":  # the release
            await hang.wait()
        return await replace(body)

    api.replace = hanging_replace  # type: ignore[method-assign]
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            await tg.start(candidate.run)
            await candidate.wait_leading()
            tg.start_soon(candidate.aclose)
            await api.clock.advance(9.9)
            assert candidate.state is State.STOPPING
            await api.clock.advance(0.1)
            await candidate.wait_stopped()
    await candidate.aclose()
    assert stopped_leading == [10.0]
    assert api.holder() == "a"  # not released: the request never came back


# -- a component's own failure comes out of async with unwrapped ----------------------------


class Frozen(Exception):
    """What the patched gc.freeze raises."""


def freeze_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def freeze() -> None:
        raise Frozen("gc.freeze failed")

    monkeypatch.setattr(gc, "freeze", freeze)


async def test_an_informer_failure_comes_out_of_async_with_unwrapped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A failure in one of the informer's tasks (here its gc.freeze after sync) ends the
    block with that exception itself, not an ExceptionGroup."""
    freeze_fails(monkeypatch)
    lw = ScriptedListerWatcher(clock=FakeClock())
    informer = SharedIndexInformer(lw, clock=lw.clock, freeze_gc_after_sync=True)
    with anyio.fail_after(GUARD), pytest.raises(Frozen, match=r"gc\.freeze failed"):
        async with informer:
            await anyio.sleep_forever()
    assert informer.state is State.STOPPED


async def test_a_factory_informer_failure_comes_out_unwrapped(
    source: MemorySource, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing informer fails its factory: ``async with factory`` raises the informer's
    exception itself."""
    freeze_fails(monkeypatch)
    factory = SharedInformerFactory(lister_watcher=source.lister_watcher, watch=FAST_WATCH)
    factory.for_resource(CONFIGMAPS)._freeze_gc = True
    with anyio.fail_after(GUARD), pytest.raises(Frozen):
        async with factory:
            await anyio.sleep_forever()
    assert factory.state is State.STOPPED


class BrokenLease(MemoryLease):
    """A lease client with a bug: it raises something that is not an API error."""

    async def get(self) -> KubeObject:
        raise ZeroDivisionError("bug in the lease client")


async def test_an_elector_failure_comes_out_of_run_and_async_with_unwrapped() -> None:
    """A lease client bug ends the elector with that exception, from run() and from
    ``async with``; a controller running the elector fails with it too."""
    with anyio.fail_after(GUARD):
        with pytest.raises(ZeroDivisionError):
            await elector(BrokenLease(FakeClock())).run()
        with pytest.raises(ZeroDivisionError):
            async with elector(BrokenLease(FakeClock())):
                await anyio.sleep_forever()

        async def reconcile(key: str) -> None:
            return None

        controller: Controller[str] = Controller(
            name="elected",
            reconcile=reconcile,
            leader_elector=elector(BrokenLease(FakeClock())),
        )
        with pytest.raises(ZeroDivisionError):
            async with controller:
                await anyio.sleep_forever()
    assert controller.state is State.STOPPED


# -- the factory starts the informers it has; start() the later ones ---------------------------


async def test_entering_a_factory_starts_its_informers_and_start_the_later_ones(
    source: MemorySource,
) -> None:
    """Informers created before entering start with the factory; one created inside the block
    waits for start()."""
    source.create(CONFIGMAPS, configmap("a"))
    factory = SharedInformerFactory(lister_watcher=source.lister_watcher, watch=FAST_WATCH)
    early = factory.for_resource(CONFIGMAPS)
    with anyio.fail_after(GUARD):
        async with factory:
            assert await factory.wait_for_cache_sync() == {CONFIGMAPS: True}
            late = factory.for_resource(SECRETS)
            assert late.state is State.NEW
            factory.start()
            assert await factory.wait_for_cache_sync() == {CONFIGMAPS: True, SECRETS: True}
            assert early.indexer.list_keys() == ["default/a"]


# -- statistics() ----------------------------------------------------------------------------


async def test_informer_statistics_is_a_frozen_snapshot() -> None:
    """statistics(): state, sync, cache size, store errors, the reflector's counters and one
    frozen entry per consumer; zeros before the start."""
    clock = FakeClock()

    def by_owner(o: KubeObject) -> list[str]:
        if o["metadata"]["name"] == "bad":
            raise ValueError("no owner")
        return []

    lw = ScriptedListerWatcher(
        clock=clock, default_list=ListResult([obj("a", "1"), obj("bad", "2")], "9")
    )
    informer = SharedIndexInformer(lw, name="mem", clock=clock, indexers={"owner": by_owner})
    before = informer.statistics()
    assert before.state is State.NEW and not before.synced
    assert before.reflector.lists == 0 and before.listeners == ()
    registration = informer.add_event_handler(ResourceEventHandlerFuncs(on_add=lambda o: None))
    stream = informer.events()
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            await tg.start(informer.run)
            await registration.wait_for_cache_sync()
            stats = informer.statistics()
            await informer.aclose()
    assert stats == InformerStatistics(
        name="mem",
        state=State.RUNNING,
        synced=True,
        objects=1,
        store_errors=1,
        reflector=stats.reflector,
        listeners=(
            ListenerStatistics(
                name="mem/handler-1", backlog=0, peak_backlog=1, handler_errors=0, synced=True
            ),
            ListenerStatistics(
                name="mem/events-2", backlog=1, peak_backlog=1, handler_errors=0, synced=False
            ),
        ),
    )
    assert stats.reflector.lists == 1 and stats.reflector.items_listed == 2
    assert informer.statistics().state is State.STOPPED
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.objects = 2  # type: ignore[misc]
    stream.close()


async def test_factory_statistics_has_each_informer_by_resource(
    source: MemorySource,
) -> None:
    """statistics(): the factory's state and a read-only mapping of informer statistics."""
    factory = SharedInformerFactory(lister_watcher=source.lister_watcher, watch=FAST_WATCH)
    factory.for_resource(CONFIGMAPS)
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            await tg.start(factory.run)
            stats = factory.statistics()
            await factory.aclose()
    assert stats.state is State.RUNNING
    assert list(stats.informers) == [CONFIGMAPS]
    assert (
        stats.informers[CONFIGMAPS].synced and stats.informers[CONFIGMAPS].name == "v1/configmaps"
    )
    with pytest.raises(TypeError):
        stats.informers[SECRETS] = stats.informers[CONFIGMAPS]  # type: ignore[index]


async def test_elector_statistics_tell_who_leads_and_when_it_renewed() -> None:
    """statistics(): leader, whether this candidate leads, the term and the last renewal."""
    api = MemoryLease(FakeClock())
    candidate = elector(api)
    assert candidate.statistics() == ElectorStatistics(
        state=State.NEW,
        identity="a",
        leader=None,
        leading=False,
        term=None,
        terms=0,
        last_renewal=None,
        lease_transitions=0,
    )
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            await tg.start(candidate.run)
            await candidate.wait_leading()
            await api.clock.advance(4.0)  # renewals at 2 and 4
            leading = candidate.statistics()
            await candidate.aclose()
    assert leading == ElectorStatistics(
        state=State.RUNNING,
        identity="a",
        leader="a",
        leading=True,
        term=1,
        terms=1,
        last_renewal=4.0,
        lease_transitions=0,
    )
    after = candidate.statistics()
    assert (after.state, after.leading, after.term, after.leader) == (
        State.STOPPED,
        False,
        None,
        None,
    )


def test_every_component_reports_its_state_in_its_repr() -> None:
    """The state enum's value shows in each component's repr."""
    clock = FakeClock()
    informer = SharedIndexInformer(ScriptedListerWatcher(clock=clock), name="mem", clock=clock)
    factory = SharedInformerFactory(object(), clock=clock)  # type: ignore[arg-type]

    async def reconcile(key: str) -> None:
        return None

    controller: Controller[str] = Controller(name="c", reconcile=reconcile)
    candidate = elector(MemoryLease(clock))
    for component in (informer, factory, controller, candidate):
        assert "[new" in repr(component), repr(component)
