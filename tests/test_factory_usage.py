"""SharedInformerFactory's usage traps (issue 10): resource names, waiting before start."""

from __future__ import annotations

import asyncio
import logging

import pytest

from aioinformer._informer._factory import SharedInformerFactory
from aioinformer._listwatch import Resource, resolve_builtin_resource
from aioinformer.errors import LifecycleError
from aioinformer.testing import FakeApiServer

from .support import kube_client


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("pods", "v1/pods"),
        ("po", "v1/pods"),
        ("Pod", "v1/pods"),
        (" pod ", "v1/pods"),
        ("svc", "v1/services"),
        ("cm", "v1/configmaps"),
        ("ns", "v1/namespaces"),
        ("nodes", "v1/nodes"),
        ("deploy", "apps/v1/deployments"),
        ("deployments.apps", "apps/v1/deployments"),
        ("deployment.v1.apps", "apps/v1/deployments"),
        ("sts", "apps/v1/statefulsets"),
        ("cj", "batch/v1/cronjobs"),
        ("ing", "networking.k8s.io/v1/ingresses"),
        ("leases.coordination.k8s.io", "coordination.k8s.io/v1/leases"),
        ("crd", "apiextensions.k8s.io/v1/customresourcedefinitions"),
        ("v1/pods", "v1/pods"),
        ("example.com/v1/widgets", "example.com/v1/widgets"),
    ],
)
def test_kubectl_names_of_built_in_resources_resolve(name: str, expected: str) -> None:
    """Plural, singular, short name, kind, name.group and name.version.group, as kubectl
    accepts them (kubectl api-resources), for the built-in resources; group/version/plural
    for anything."""
    assert resolve_builtin_resource(name) == Resource.parse(expected)


def test_scope_comes_with_the_name() -> None:
    """A name resolves to a resource with its kind and scope."""
    nodes = resolve_builtin_resource("no")
    assert (nodes.kind, nodes.namespaced) == ("Node", False)
    assert resolve_builtin_resource("po").namespaced


def test_an_unknown_name_says_what_to_write() -> None:
    """A custom resource's bare plural cannot be resolved without the server: the message
    says to write group/version/plural."""
    with pytest.raises(ValueError, match=r"unknown resource 'widgets'.*'example.com/v1/widgets'"):
        resolve_builtin_resource("widgets")


async def test_for_resource_accepts_kubectl_names(fake_apiserver: FakeApiServer) -> None:
    """factory.for_resource("pods") is the same informer as "v1/pods"."""
    async with kube_client(fake_apiserver) as client:
        factory = SharedInformerFactory(client)
        pods = factory.for_resource("pods")
        assert factory.for_resource("v1/pods") is pods
        assert factory.for_resource("po") is pods
        assert list(factory.informers) == [Resource.parse("v1/pods")]
        with pytest.raises(ValueError, match="unknown resource"):
            factory.for_resource("gizmos")
        await factory.aclose()


async def test_waiting_for_sync_with_nothing_started_is_an_error(
    fake_apiserver: FakeApiServer,
) -> None:
    """wait_for_cache_sync() with no informer, before start(), or with an informer created
    after the factory started and not started, raises instead of reporting success for empty
    caches."""
    async with kube_client(fake_apiserver) as client, SharedInformerFactory(client) as factory:
        with pytest.raises(LifecycleError, match="has no informers"):
            await factory.wait_for_cache_sync()
        factory.for_resource("configmaps")
        with pytest.raises(LifecycleError, match=r"before start\(\)"):
            await factory.wait_for_cache_sync()
        factory.start()
        assert await asyncio.wait_for(factory.wait_for_cache_sync(), 10) == {
            Resource.parse("v1/configmaps"): True
        }
        factory.for_resource("secrets")
        with pytest.raises(
            LifecycleError,
            match=r"v1/secrets created after the factory started never started; call factory",
        ):
            await factory.wait_for_cache_sync()
        factory.start()
        assert all((await asyncio.wait_for(factory.wait_for_cache_sync(), 10)).values())


async def test_an_informer_never_started_is_reported_at_shutdown(
    fake_apiserver: FakeApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """An informer created after the factory started and never started is named in a
    warning."""
    async with kube_client(fake_apiserver) as client:
        with caplog.at_level(logging.WARNING, logger="aioinformer._informer._factory"):
            async with SharedInformerFactory(client) as factory:
                factory.for_resource("configmaps")
                factory.start()
                factory.for_resource("secrets")
    assert [r.getMessage() for r in caplog.records] == [
        "v1/secrets created after the factory started never started: call factory.start()"
        " after creating informers"
    ]
