"""SharedInformerFactory: one informer per resource, started and stopped together."""

from __future__ import annotations

import asyncio
import dataclasses

import anyio
import pytest

from aioinformer import State
from aioinformer._informer._factory import SharedInformerFactory
from aioinformer._listwatch import ListOptions, Resource
from aioinformer._objects import KubeObject
from aioinformer.errors import LifecycleError
from aioinformer.testing import FakeApiServer

from .support import FAST_WATCH, configmap, kube_client

CONFIGMAPS = Resource.parse("v1/configmaps")
SECRETS = Resource.parse("v1/secrets")
NAMESPACES = Resource.parse("v1/namespaces")


def lists_of(server: FakeApiServer, plural: str) -> list[str]:
    """Paths of the LIST requests for one resource."""
    return [r.path for r in server.requests.records if r.verb == "list" and r.resource == plural]


async def test_one_informer_per_resource(fake_apiserver: FakeApiServer) -> None:
    """for_resource returns the same informer for a resource however it is spelled."""
    async with kube_client(fake_apiserver) as api_client:
        factory = SharedInformerFactory(api_client)
        configmaps = factory.for_resource("v1/configmaps")
        assert factory.for_resource(CONFIGMAPS) is configmaps
        assert factory.for_resource(" v1/configmaps ") is configmaps
        secrets = factory.for_resource(SECRETS)
        assert secrets is not configmaps
        assert factory.informers == {CONFIGMAPS: configmaps, SECRETS: secrets}
        await factory.aclose()


async def test_cache_mode_defaults_and_per_resource(fake_apiserver: FakeApiServer) -> None:
    """Informers cache compactly by default; ``cache`` sets the factory's mode and
    ``custom_cache`` one resource's (however the resource is spelled)."""
    async with kube_client(fake_apiserver) as api_client:
        default = SharedInformerFactory(api_client)
        assert default.for_resource(CONFIGMAPS).cache_mode == "compact"
        factory = SharedInformerFactory(
            api_client, cache="dict", custom_cache={"v1/secrets": "compact"}
        )
        assert factory.for_resource("v1/configmaps").cache_mode == "dict"
        assert factory.for_resource(SECRETS).cache_mode == "compact"
        await default.aclose()
        await factory.aclose()


async def test_start_starts_only_new_informers(fake_apiserver: FakeApiServer) -> None:
    """start() starts what is not started yet; a second start() adds only later informers."""
    fake_apiserver.objects.create("configmaps", configmap("a"))
    async with kube_client(fake_apiserver) as api_client:
        async with SharedInformerFactory(api_client, watch=FAST_WATCH) as factory:
            configmaps = factory.for_resource(CONFIGMAPS)
            factory.start()
            assert await asyncio.wait_for(factory.wait_for_cache_sync(), 10) == {CONFIGMAPS: True}
            secrets = factory.for_resource(SECRETS)
            assert secrets.statistics().state is State.NEW  # (not narrowing .state for mypy)
            factory.start()
            factory.start()
            assert await asyncio.wait_for(factory.wait_for_cache_sync(), 10) == {
                CONFIGMAPS: True,
                SECRETS: True,
            }
            assert len(lists_of(fake_apiserver, "configmaps")) == 1
            assert len(lists_of(fake_apiserver, "secrets")) == 1
            assert configmaps.lister().get("a", "default") is not None
        assert configmaps.state is State.STOPPED and secrets.state is State.STOPPED
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for_watches(0, exactly=True)


async def test_start_needs_a_running_factory(fake_apiserver: FakeApiServer) -> None:
    """start() outside `async with factory:` raises; a factory runs once."""
    async with kube_client(fake_apiserver) as api_client:
        factory = SharedInformerFactory(api_client)
        factory.for_resource(CONFIGMAPS)
        with pytest.raises(LifecycleError):
            factory.start()
        async with factory:
            pass
        with pytest.raises(LifecycleError):
            async with factory:
                pass
        with pytest.raises(LifecycleError):
            factory.for_resource(SECRETS)


async def test_shutdown_right_after_start(fake_apiserver: FakeApiServer) -> None:
    """Leaving the block right after start() (no await between) shuts down cleanly."""
    async with kube_client(fake_apiserver) as api_client:
        async with SharedInformerFactory(api_client, watch=FAST_WATCH) as factory:
            informer = factory.for_resource(CONFIGMAPS)
            factory.start()
        assert informer.state is State.STOPPED
        await factory.aclose()  # idempotent
        assert await asyncio.wait_for(factory.wait_for_cache_sync(), 1) == {CONFIGMAPS: False}


async def test_wait_for_cache_sync_reports_each_resource(fake_apiserver: FakeApiServer) -> None:
    """An informer that stopped before it could list reports False; the others True."""
    fake_apiserver.faults.fail_next(10_000, 500, verb="list", resource="secrets")
    async with (
        kube_client(fake_apiserver) as api_client,
        SharedInformerFactory(api_client, watch=FAST_WATCH) as factory,
    ):
        configmaps = factory.for_resource(CONFIGMAPS)
        secrets = factory.for_resource(SECRETS)
        with pytest.raises(LifecycleError, match="before start"):
            await factory.wait_for_cache_sync()  # nothing started: nothing to wait for
        factory.start()
        assert await asyncio.wait_for(configmaps.wait_for_cache_sync(), 10)
        with anyio.fail_after(10):
            await fake_apiserver.requests.wait_for(
                lambda r: r.verb == "list" and r.resource == "secrets" and r.status == 500, start=0
            )
        await secrets.aclose()
        result = await asyncio.wait_for(factory.wait_for_cache_sync(), 10)
        assert result == {CONFIGMAPS: True, SECRETS: False}


async def test_tweak_list_options_reach_every_request(fake_apiserver: FakeApiServer) -> None:
    """tweak_list_options' label selector is sent on lists and watches and filters the cache."""
    web = configmap("web")
    web["metadata"]["labels"] = {"app": "web"}
    fake_apiserver.objects.create("configmaps", web)
    fake_apiserver.objects.create("configmaps", configmap("other"))

    def only_web(options: ListOptions) -> ListOptions:
        return dataclasses.replace(options, label_selector="app=web")

    async with kube_client(fake_apiserver) as api_client:
        factory = SharedInformerFactory(api_client, tweak_list_options=only_web, watch=FAST_WATCH)
        async with factory:
            informer = factory.for_resource(CONFIGMAPS)
            factory.start()
            assert await asyncio.wait_for(factory.wait_for_cache_sync(), 10) == {CONFIGMAPS: True}
            with anyio.fail_after(10):
                watch = await fake_apiserver.requests.wait_for(
                    lambda r: r.verb == "watch" and r.resource == "configmaps", start=0
                )
            assert watch.query.get("labelSelector") == "app=web"
            lists = [r for r in fake_apiserver.requests.records if r.verb == "list"]
            assert [r.query.get("labelSelector") for r in lists] == ["app=web"]
            assert informer.indexer.list_keys() == ["default/web"]


async def test_namespace_scopes_namespaced_resources(fake_apiserver: FakeApiServer) -> None:
    """With a namespace, namespaced informers list one namespace; cluster-scoped ones all."""
    fake_apiserver.objects.create("namespaces", {"metadata": {"name": "team"}})
    fake_apiserver.objects.create("configmaps", configmap("mine", namespace="team"))
    fake_apiserver.objects.create("configmaps", configmap("theirs", namespace="default"))
    async with (
        kube_client(fake_apiserver) as api_client,
        SharedInformerFactory(api_client, namespace="team", watch=FAST_WATCH) as factory,
    ):
        configmaps = factory.for_resource(CONFIGMAPS)
        namespaces = factory.for_resource(NAMESPACES)
        factory.start()
        assert all((await asyncio.wait_for(factory.wait_for_cache_sync(), 10)).values())
        assert lists_of(fake_apiserver, "configmaps") == ["/api/v1/namespaces/team/configmaps"]
        assert lists_of(fake_apiserver, "namespaces") == ["/api/v1/namespaces"]
        assert configmaps.indexer.list_keys() == ["team/mine"]
        assert sorted(namespaces.indexer.list_keys()) == ["default", "team"]


async def test_default_and_custom_resync(fake_apiserver: FakeApiServer) -> None:
    """default_resync applies to every informer unless custom_resync names its resource."""
    async with kube_client(fake_apiserver) as api_client:
        factory = SharedInformerFactory(
            api_client, default_resync=30.0, custom_resync={"v1/secrets": 5.0}
        )
        assert factory.for_resource(CONFIGMAPS).resync_check_period == 30.0
        assert factory.for_resource(SECRETS).resync_check_period == 5.0
        await factory.aclose()


async def test_for_resource_adds_missing_indexers(fake_apiserver: FakeApiServer) -> None:
    """A later for_resource with new index functions adds them to the shared informer."""

    def by_app(obj: KubeObject) -> list[str]:
        return [obj["metadata"].get("labels", {}).get("app", "")]

    async with kube_client(fake_apiserver) as api_client:
        factory = SharedInformerFactory(api_client)
        informer = factory.for_resource(CONFIGMAPS)
        assert factory.for_resource(CONFIGMAPS, indexers={"app": by_app}) is informer
        assert "app" in informer.indexer.get_indexers()
        factory.for_resource(CONFIGMAPS, indexers={"app": by_app})  # already there: no error
        await factory.aclose()


async def test_factory_consumers_end_with_shutdown(fake_apiserver: FakeApiServer) -> None:
    """Streams over a factory's informers end when the factory shuts down."""
    fake_apiserver.objects.create("configmaps", configmap("a"))
    seen: list[str] = []
    async with kube_client(fake_apiserver) as api_client, anyio.create_task_group() as tg:
        async with SharedInformerFactory(api_client, watch=FAST_WATCH) as factory:
            informer = factory.for_resource(CONFIGMAPS)
            stream = informer.events()
            first = anyio.Event()

            async def consume() -> None:
                async for event in stream:
                    seen.append(event.object["metadata"]["name"])
                    first.set()

            tg.start_soon(consume)
            factory.start()
            await first.wait()
        assert informer.statistics().listeners == ()
    assert seen == ["a"]


def test_watch_configs_apply_per_resource_and_informers_get_the_clock() -> None:
    """The factory-wide watch config applies unless a resource has its own; every informer
    gets the factory's clock, and its own backoff sequence (the policy is shared, the state
    is not)."""
    from aioinformer import WatchConfig
    from aioinformer._informer._factory import SharedInformerFactory
    from aioinformer.testing import FakeClock

    clock = FakeClock()
    slow = WatchConfig(page_size=50, min_watch_timeout=600)
    factory = SharedInformerFactory(
        object(),  # type: ignore[arg-type]
        watch=FAST_WATCH,
        custom_watch={"v1/configmaps": slow},
        clock=clock,
    )
    pods = factory.for_resource("v1/pods")
    configmaps = factory.for_resource("v1/configmaps")
    assert pods._watch_config is FAST_WATCH
    assert configmaps._watch_config is slow
    assert pods._clock is clock and configmaps._clock is clock
