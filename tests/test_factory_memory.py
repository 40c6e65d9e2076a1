"""A whole factory on an in-memory source: the ``lister_watcher=`` seam (httpx's
``transport=``), and :class:`aioinformer.testing.MemorySource` itself."""

from __future__ import annotations

import anyio
import pytest

from aioinformer import ListOptions, SharedInformerFactory
from aioinformer._informer._event_stream import EventType
from aioinformer.errors import BadRequestError
from aioinformer.lowlevel import WatchEventType
from aioinformer.testing import MemorySource

from .support import Recorder, configmap

GUARD = 10.0


def labelled(name: str, namespace: str = "default", **labels: str) -> dict[str, object]:
    body = configmap(name, namespace)
    body["metadata"]["labels"] = labels
    return body


async def test_a_factory_runs_on_a_memory_source() -> None:
    """Informers of two resources list, watch and deliver changes from memory: no server, no
    HTTP; the source sees each informer's namespace and list options."""
    source = MemorySource()
    source.create("configmaps", labelled("a", app="web"))
    source.create("configmaps", labelled("b", app="db"))
    source.create("configmaps", labelled("c", "other", app="web"))
    source.create("namespaces", {"metadata": {"name": "default", "labels": {"app": "web"}}})

    def only_web(options: ListOptions) -> ListOptions:
        return ListOptions(
            resource_version=options.resource_version,
            label_selector="app=web",
            timeout_seconds=options.timeout_seconds,
        )

    factory = SharedInformerFactory(
        lister_watcher=source.lister_watcher, namespace="default", tweak_list_options=only_web
    )
    with anyio.fail_after(GUARD):
        async with factory:
            configmaps = factory.for_resource("configmaps")
            namespaces = factory.for_resource("v1/namespaces")
            recorder = Recorder()
            configmaps.add_event_handler(recorder)
            factory.start()
            assert all((await factory.wait_for_cache_sync()).values())
            assert configmaps.indexer.list_keys() == ["default/a"]
            assert namespaces.indexer.list_keys() == ["default"]  # cluster-scoped
            source.update("configmaps", {**labelled("a", app="web"), "data": {"v": "2"}})
            source.create("configmaps", labelled("d", app="web"))
            source.create("configmaps", labelled("e", app="db"))  # not selected
            source.delete("configmaps", "a", namespace="default")
            await recorder.wait_for(lambda events: len(events) == 4)
    summary = recorder.summary()  # in order per object (not across objects)
    assert [t for t, key in summary if key == "default/a"] == ["ADDED", "UPDATED", "DELETED"]
    assert [t for t, key in summary if key != "default/a"] == ["ADDED"]
    assert ("ADDED", "default/d") in summary
    updated = [e for e in recorder.events if e.type is EventType.UPDATED]
    assert updated[0].object["data"] == {"v": "2"}


def test_a_factory_takes_a_client_or_a_lister_watcher() -> None:
    """Exactly one of the two: without either there is nothing to list, with both one would
    be ignored."""
    source = MemorySource()
    with pytest.raises(ValueError, match="give a client"):
        SharedInformerFactory()
    with pytest.raises(ValueError, match="not both"):
        SharedInformerFactory(
            object(),  # type: ignore[arg-type]
            lister_watcher=source.lister_watcher,
        )


async def test_a_memory_watch_replays_what_came_after_its_version() -> None:
    """Like an API server's watch cache: a watch from version v first delivers the changes
    after v (so nothing between a list and its watch is lost), from "" or "0" the current
    objects as ADDED; then it follows new writes until closed."""
    source = MemorySource()
    lw = source.lister_watcher("configmaps")
    source.create("configmaps", configmap("a"))
    listed = await lw.list(ListOptions())
    assert [o["metadata"]["name"] for o in listed.items] == ["a"]
    assert listed.resource_version == source.resource_version == "1"
    source.create("configmaps", configmap("b"))
    with anyio.fail_after(GUARD):
        stream = await lw.watch(ListOptions(resource_version=listed.resource_version))
        replayed = await anext(stream)
        assert (replayed.type, replayed.object["metadata"]["name"]) == (WatchEventType.ADDED, "b")
        source.delete("configmaps", "b", namespace="default")
        deleted = await anext(stream)
        assert deleted.type is WatchEventType.DELETED
        assert deleted.object["metadata"]["resourceVersion"] == "3"
        await stream.aclose()
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
        fresh = await lw.watch(ListOptions(resource_version="0"))
        assert [(await anext(fresh)).object["metadata"]["name"]] == ["a"]
        await fresh.aclose()
    with pytest.raises(ValueError, match="exists"):
        source.create("configmaps", configmap("a"))
    with pytest.raises(KeyError):
        source.update("configmaps", configmap("zz"))
    assert source.objects("v1/configmaps")[0]["kind"] == "ConfigMap"


async def test_memory_selectors_filter_and_refuse_like_a_server() -> None:
    """Label and field selectors filter lists as an API server's do, and a field the resource
    cannot select on is refused with the server's 400 (``BadRequestError``)."""
    source = MemorySource()
    source.create("configmaps", labelled("a", app="web"))
    source.create("configmaps", labelled("b", app="db"))
    lw = source.lister_watcher("configmaps")
    picked = await lw.list(
        ListOptions(label_selector="app in (web)", field_selector="metadata.name=a")
    )
    assert [o["metadata"]["name"] for o in picked.items] == ["a"]
    with pytest.raises(BadRequestError, match=r"spec\.nodeName"):
        await lw.list(ListOptions(field_selector="spec.nodeName=n1"))
