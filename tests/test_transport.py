"""Resource, ListOptions and the KubeListerWatcher over real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import anyio
import orjson
import pytest
from kubernetes_asyncio.client import ApiClient

from aioinformer import KubeClient
from aioinformer._listwatch import ListOptions, Resource, WatchEvent, WatchEventType
from aioinformer._wire._transport import BATCH_BYTES, KubeListerWatcher
from aioinformer.errors import (
    ConflictError,
    ConnectionRefused,
    ExpiredError,
    InternalServerError,
    MalformedWatchEventError,
    NotFoundError,
    TooLargeResourceVersionError,
    TooManyRequestsError,
    UnauthorizedError,
    WatchIdleTimeoutError,
)
from aioinformer.testing import FakeApiServer
from aioinformer.testing.pytest_plugin import _serving as serving

from .support import CONFIGMAPS, configmap, kube_client


@pytest.fixture
async def server() -> AsyncIterator[FakeApiServer]:
    async with serving(FakeApiServer(bookmark_interval=60)) as fake:
        yield fake


@pytest.fixture
async def client(server: FakeApiServer) -> AsyncIterator[KubeClient]:
    async with kube_client(server) as client:
        yield client


# -- Resource ---------------------------------------------------------------------------------


def test_parse_core_resource() -> None:
    """``v1/pods`` is the core group, with the known kind and namespaced."""
    pods = Resource.parse("v1/pods")
    assert (pods.group, pods.version, pods.plural, pods.kind, pods.namespaced) == (
        "",
        "v1",
        "pods",
        "Pod",
        True,
    )
    assert pods.api_version == "v1"
    assert str(pods) == "v1/pods"


def test_parse_grouped_and_custom_resources() -> None:
    """Group resources parse into group/version/plural; unknown ones default to namespaced."""
    deployments = Resource.parse("apps/v1/deployments")
    assert (deployments.group, deployments.api_version, deployments.kind) == (
        "apps",
        "apps/v1",
        "Deployment",
    )
    widgets = Resource.parse("example.com/v1alpha1/widgets", kind="Widget")
    assert (widgets.group, widgets.version, widgets.kind, widgets.namespaced) == (
        "example.com",
        "v1alpha1",
        "Widget",
        True,
    )


def test_parse_knows_cluster_scoped_builtins() -> None:
    """Nodes and namespaces are cluster-scoped without being told."""
    assert not Resource.parse("v1/nodes").namespaced
    assert not Resource.parse("v1/namespaces").namespaced
    assert not Resource.parse("example.com/v1/things", namespaced=False).namespaced


@pytest.mark.parametrize("spec", ["pods", "a/b/c/d", "v1/", "/pods", ""])
def test_parse_rejects_malformed_specs(spec: str) -> None:
    """Anything but version/plural or group/version/plural is a ValueError."""
    with pytest.raises(ValueError):
        Resource.parse(spec)


def test_paths_for_core_grouped_namespaced_and_cluster_scoped() -> None:
    """URL paths follow the API layout for every kind of resource."""
    pods = Resource.parse("v1/pods")
    assert pods.path() == "/api/v1/pods"
    assert pods.path(namespace="ns-1") == "/api/v1/namespaces/ns-1/pods"
    assert pods.path(namespace="ns-1", name="web") == "/api/v1/namespaces/ns-1/pods/web"
    deployments = Resource.parse("apps/v1/deployments")
    assert deployments.path(namespace="x") == "/apis/apps/v1/namespaces/x/deployments"
    widgets = Resource.parse("example.com/v1/widgets")
    assert widgets.path() == "/apis/example.com/v1/widgets"
    nodes = Resource.parse("v1/nodes")
    assert nodes.path(name="n1") == "/api/v1/nodes/n1"
    with pytest.raises(ValueError):
        nodes.path(namespace="ns")


def test_resource_equality_ignores_kind_and_scope() -> None:
    """One resource is (group, version, plural): kind and scope do not split it."""
    assert Resource("", "v1", "pods") == Resource.parse("v1/pods")
    assert hash(Resource("", "v1", "pods", kind="X")) == hash(Resource.parse("v1/pods"))


def test_list_options_to_query() -> None:
    """Options map to the API's query parameter names; unset ones are left out."""
    assert ListOptions().to_query() == {}
    assert ListOptions(resource_version="").to_query() == {}
    query = ListOptions(
        resource_version="5",
        resource_version_match="NotOlderThan",
        limit=10,
        continue_token="abc",
        label_selector="a=b",
        field_selector="metadata.name=x",
        timeout_seconds=30,
        allow_watch_bookmarks=True,
        send_initial_events=True,
    ).to_query()
    assert query == {
        "resourceVersion": "5",
        "resourceVersionMatch": "NotOlderThan",
        "limit": "10",
        "continue": "abc",
        "labelSelector": "a=b",
        "fieldSelector": "metadata.name=x",
        "timeoutSeconds": "30",
        "allowWatchBookmarks": "true",
        "sendInitialEvents": "true",
    }


# -- list -------------------------------------------------------------------------------------


async def test_list_decodes_dicts_and_fills_kind(server: FakeApiServer, client: KubeClient) -> None:
    """A list returns plain dicts carrying kind/apiVersion, plus the list's resource version."""
    server.objects.create("configmaps", configmap("a", x="1"))
    lw = KubeListerWatcher(client, CONFIGMAPS)
    result = await lw.list(ListOptions())
    assert [o["metadata"]["name"] for o in result.items] == ["a"]
    assert isinstance(result.items[0], dict)
    assert result.items[0]["kind"] == "ConfigMap"
    assert result.items[0]["apiVersion"] == "v1"
    assert result.resource_version == server.objects.resource_version
    assert result.continue_token is None


async def test_list_pages_with_limit_and_continue(
    server: FakeApiServer, client: KubeClient
) -> None:
    """limit/continue page through the collection and the token comes back."""
    for i in range(5):
        server.objects.create("configmaps", configmap(f"cm-{i}"))
    lw = KubeListerWatcher(client, CONFIGMAPS)
    first = await lw.list(ListOptions(resource_version="", limit=2))
    assert len(first.items) == 2
    assert first.continue_token
    assert first.remaining_item_count == 3
    second = await lw.list(ListOptions(limit=10, continue_token=first.continue_token))
    assert [o["metadata"]["name"] for o in second.items] == ["cm-2", "cm-3", "cm-4"]
    assert second.continue_token is None


async def test_namespace_and_selectors_reach_the_server(
    server: FakeApiServer, client: KubeClient
) -> None:
    """The lister-watcher's namespace, selectors (ANDed with the options') and tweak are sent."""
    lw = KubeListerWatcher(
        client,
        CONFIGMAPS,
        namespace="default",
        label_selector="app=web",
        tweak_list_options=lambda o: ListOptions(
            resource_version=o.resource_version, field_selector="metadata.name=a"
        ),
    )
    await lw.list(ListOptions(label_selector="tier=front"))
    record = server.requests.records[-1]
    assert record.path == "/api/v1/namespaces/default/configmaps"
    assert record.query["labelSelector"] == "app=web"
    assert record.query["fieldSelector"] == "metadata.name=a"
    lw2 = KubeListerWatcher(client, CONFIGMAPS, label_selector="app=web")
    await lw2.list(ListOptions(label_selector="tier=front"))
    assert server.requests.records[-1].query["labelSelector"] == "app=web,tier=front"


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, UnauthorizedError),
        (404, NotFoundError),
        (409, ConflictError),
        (410, ExpiredError),
        (500, InternalServerError),
    ],
)
async def test_http_errors_become_typed_exceptions(
    server: FakeApiServer, client: KubeClient, status: int, error: type[Exception]
) -> None:
    """An error Status maps to its exception class, with code and reason."""
    server.faults.fail_next(1, status, verb="list")
    lw = KubeListerWatcher(client, CONFIGMAPS)
    with pytest.raises(error) as caught:
        await lw.list(ListOptions())
    assert caught.value.code == status  # type: ignore[attr-defined]
    assert caught.value.status["kind"] == "Status"  # type: ignore[attr-defined]


async def test_429_carries_retry_after(server: FakeApiServer, client: KubeClient) -> None:
    """A 429 answer exposes the server's Retry-After."""
    server.faults.fail_next(1, 429, retry_after=3, verb="list")
    lw = KubeListerWatcher(client, CONFIGMAPS)
    with pytest.raises(TooManyRequestsError) as caught:
        await lw.list(ListOptions())
    assert caught.value.retry_after == 3


async def test_future_resource_version_is_too_large(
    server: FakeApiServer, client: KubeClient
) -> None:
    """Listing at a resource version the server has not reached is TooLargeResourceVersion."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    with pytest.raises(TooLargeResourceVersionError):
        await lw.list(ListOptions(resource_version="999999"))


async def test_refused_connection_is_connection_refused(server: FakeApiServer) -> None:
    """Nobody listening on the port is a ConnectionRefused transport error."""
    async with kube_client(server) as client:
        await server.faults.stop_listening()
        lw = KubeListerWatcher(client, CONFIGMAPS)
        with pytest.raises(ConnectionRefused):
            await lw.list(ListOptions())
        with pytest.raises(ConnectionRefused):
            await lw.watch(ListOptions())


# -- watch ------------------------------------------------------------------------------------


async def test_watch_yields_typed_events(server: FakeApiServer, client: KubeClient) -> None:
    """ADDED/MODIFIED/DELETED events arrive in order as dicts, from the given RV."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(ListOptions(resource_version=server.objects.resource_version))
    try:
        server.objects.create("configmaps", configmap("a"))
        server.objects.patch("configmaps", "a", {"data": {"k": "v"}}, namespace="default")
        server.objects.delete("configmaps", "a", namespace="default")
        events = [await anext(stream) for _ in range(3)]
    finally:
        await stream.aclose()
    assert [e.type for e in events] == [
        WatchEventType.ADDED,
        WatchEventType.MODIFIED,
        WatchEventType.DELETED,
    ]
    assert all(e.object["metadata"]["name"] == "a" for e in events)
    assert server.requests.records[-1].query["watch"] in ("1", "true")


async def test_watch_error_event_raises_and_ends(server: FakeApiServer, client: KubeClient) -> None:
    """An ERROR event raises its Status as an exception; the stream is then over."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(ListOptions(resource_version=server.objects.resource_version))
    try:
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(1)
        server.faults.inject_watch_error(410, "Expired", "too old resource version")
        with pytest.raises(ExpiredError):
            await anext(stream)
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
    finally:
        await stream.aclose()


async def test_malformed_line_raises_but_stream_continues(
    server: FakeApiServer, client: KubeClient
) -> None:
    """A garbage line raises MalformedWatchEventError; the next event still arrives."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(ListOptions(resource_version=server.objects.resource_version))
    try:
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(1)
        server.faults.inject_malformed_line()
        server.faults.inject_raw_line(b'{"type": "ADDED"}')
        server.faults.inject_raw_line(b"[1, 2]")
        server.objects.create("configmaps", configmap("after"))
        for _ in range(3):
            with pytest.raises(MalformedWatchEventError):
                await anext(stream)
        event = await anext(stream)
    finally:
        await stream.aclose()
    assert event.object["metadata"]["name"] == "after"


async def test_unknown_event_types_pass_through(server: FakeApiServer, client: KubeClient) -> None:
    """An event type the protocol does not define is handed on as a plain string."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(ListOptions(resource_version=server.objects.resource_version))
    try:
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(1)
        server.faults.inject_raw_line(b'{"type": "SURPRISE", "object": {"metadata": {}}}')
        event = await anext(stream)
    finally:
        await stream.aclose()
    assert event.type == "SURPRISE"
    assert not isinstance(event.type, WatchEventType)


async def test_idle_watch_times_out(server: FakeApiServer, client: KubeClient) -> None:
    """A watch that delivers no bytes for idle_timeout raises WatchIdleTimeoutError."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(
        ListOptions(resource_version=server.objects.resource_version), idle_timeout=0.3
    )
    try:
        with pytest.raises(WatchIdleTimeoutError):
            async with asyncio.timeout(5):
                await anext(stream)
    finally:
        await stream.aclose()


async def test_clean_server_timeout_ends_iteration(
    server: FakeApiServer, client: KubeClient
) -> None:
    """timeoutSeconds makes the server end the watch; iteration stops cleanly."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(
        ListOptions(resource_version=server.objects.resource_version, timeout_seconds=1)
    )
    try:
        async with asyncio.timeout(5):
            events = [event async for event in stream]
    finally:
        await stream.aclose()
    assert events == []


async def test_one_mebibyte_objects_pass_list_and_watch(
    server: FakeApiServer, client: KubeClient
) -> None:
    """A 1 MiB object (the largest ConfigMap a real server stores: ``ValidateConfigMap``
    refuses more; this test once used 5 MB) is framed from many chunks on a watch and
    decoded from a list."""
    big = "x" * (1024 * 1024)
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(ListOptions(resource_version=server.objects.resource_version))
    try:
        server.objects.create("configmaps", configmap("big", blob=big))
        server.objects.create("configmaps", configmap("small"))
        first = await anext(stream)
        second = await anext(stream)
    finally:
        await stream.aclose()
    assert first.object["data"]["blob"] == big
    assert second.object["metadata"]["name"] == "small"
    listed = await lw.list(ListOptions())
    assert {o["metadata"]["name"] for o in listed.items} == {"big", "small"}


async def test_oversized_event_is_skipped_not_fatal(
    server: FakeApiServer, client: KubeClient
) -> None:
    """An event over max_event_size is skipped with MalformedWatchEventError; the next arrives."""
    lw = KubeListerWatcher(client, CONFIGMAPS, max_event_size=64 * 1024)
    stream = await lw.watch(ListOptions(resource_version=server.objects.resource_version))
    try:
        server.objects.create("configmaps", configmap("big", blob="y" * 200_000))
        server.objects.create("configmaps", configmap("next"))
        with pytest.raises(MalformedWatchEventError, match="larger than max_event_size"):
            await anext(stream)
        event = await anext(stream)
    finally:
        await stream.aclose()
    assert event.object["metadata"]["name"] == "next"


async def test_events_split_across_chunks_are_reassembled(
    server: FakeApiServer, client: KubeClient
) -> None:
    """Many events sent in one burst come out whole and in order."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(ListOptions(resource_version=server.objects.resource_version))
    names = [f"cm-{i:04d}" for i in range(300)]
    try:
        for name in names:
            server.objects.create("configmaps", configmap(name, payload="z" * 3000))
        received = [(await anext(stream)).object["metadata"]["name"] for _ in names]
    finally:
        await stream.aclose()
    assert received == names
    assert stream.bytes_received > 300 * 3000


async def test_bearer_token_and_refresher(server: FakeApiServer) -> None:
    """The configuration's bearer token is sent, and refresh_credentials awaits the client's
    refresher; a 401 on a list is not retried by the lister-watcher (the reflector decides)."""
    configuration = server.configuration()
    configuration.api_key["BearerToken"] = "Bearer s3cr3t"
    calls: list[str] = []

    async def refresher() -> None:
        calls.append("refresh")

    async with KubeClient(ApiClient(configuration), credential_refresher=refresher) as client:
        lw = KubeListerWatcher(client, CONFIGMAPS)
        await lw.list(ListOptions())
        server.faults.fail_next(1, 401, verb="list")
        with pytest.raises(UnauthorizedError):
            await lw.list(ListOptions())
        assert calls == []
        await lw.refresh_credentials()
    assert calls == ["refresh"]
    assert "s3cr3t" not in repr(lw) + repr(client)


async def test_next_batch_hands_out_events_in_order_then_the_error(
    server: FakeApiServer, client: KubeClient
) -> None:
    """next_batch() returns what each read completed: events in order, a malformed line as its
    error in place; an ERROR event ends the stream after the events before it (the watch
    protocol: an ERROR Status is the stream's last event, apimachinery's watch.Error)."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(ListOptions(resource_version=server.objects.resource_version))
    names = [f"cm-{i:03d}" for i in range(50)]
    received: list[WatchEvent | MalformedWatchEventError] = []
    try:
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(1)
        for name in names[:25]:
            server.objects.create("configmaps", configmap(name))
        server.faults.inject_malformed_line()
        for name in names[25:]:
            server.objects.create("configmaps", configmap(name))
        server.faults.inject_watch_error(410, "Expired", "too old resource version")
        with pytest.raises(ExpiredError):
            while True:
                batch = await stream.next_batch()
                assert batch, "an empty batch only at the end"
                received.extend(batch)
        assert await stream.next_batch() == []
    finally:
        await stream.aclose()
    events = [item for item in received if isinstance(item, WatchEvent)]
    assert [e.object["metadata"]["name"] for e in events] == names
    assert [type(item).__name__ for item in received].index("MalformedWatchEventError") == 25
    for event in events:
        assert event.raw is not None and orjson.loads(event.raw) == event.object


async def test_next_batch_and_anext_share_the_stream(
    server: FakeApiServer, client: KubeClient
) -> None:
    """Reading with __anext__ and then next_batch delivers every event exactly once."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(ListOptions(resource_version=server.objects.resource_version))
    names = [f"cm-{i:03d}" for i in range(20)]
    try:
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(1)
        for name in names:
            server.objects.create("configmaps", configmap(name))
        seen = [(await anext(stream)).object["metadata"]["name"]]
        while len(seen) < len(names):
            for item in await stream.next_batch():
                assert isinstance(item, WatchEvent)
                seen.append(item.object["metadata"]["name"])
    finally:
        await stream.aclose()
    assert seen == names


async def test_next_batch_decodes_a_bounded_slice_of_what_arrived(
    server: FakeApiServer, client: KubeClient
) -> None:
    """However much one read brought, a batch holds about BATCH_BYTES of events (at least
    one): the rest waits as undecoded lines until the next call."""
    lw = KubeListerWatcher(client, CONFIGMAPS)
    stream = await lw.watch(ListOptions(resource_version=server.objects.resource_version))
    names = [f"cm-{i:03d}" for i in range(100)]
    sizes: list[int] = []
    seen: list[str] = []
    try:
        with anyio.fail_after(10):
            await server.requests.wait_for_watches(1)
        for name in names:
            server.objects.create("configmaps", configmap(name, payload="z" * 3000))
        while len(seen) < len(names):
            batch = await stream.next_batch()
            events = [item for item in batch if isinstance(item, WatchEvent)]
            seen += [event.object["metadata"]["name"] for event in events]
            sizes.append(sum(len(event.raw or b"") for event in events))
    finally:
        await stream.aclose()
    assert seen == names
    assert max(sizes) < BATCH_BYTES + 4000
