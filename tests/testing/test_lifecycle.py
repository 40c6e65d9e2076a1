"""Starting, stopping and shutting down with open watches: bounded, clean, no leftovers."""

from __future__ import annotations

import asyncio
import dataclasses

import aiohttp
import anyio
import pytest
from kubernetes_asyncio.client import CoreV1Api

from aioinformer import State
from aioinformer.errors import LifecycleError
from aioinformer.testing import FakeApiServer

from .valid import pod
from .watching import raw_lines


async def test_close_ends_open_watches_promptly_and_leaves_no_tasks() -> None:
    """Exiting the server closes normal and stalled watches cleanly within the bound."""
    tasks_before = asyncio.all_tasks()
    async with aiohttp.ClientSession() as http, anyio.create_task_group() as tg:
        server = FakeApiServer()
        await tg.start(server.run)
        url = f"{server.url}/api/v1/pods"
        normal = await http.get(url, params={"watch": "1"})
        stalled = await http.get(url, params={"watch": "1", "resourceVersion": "0"})
        with anyio.fail_after(5):
            await server.requests.wait_for_watches(2)
        server.faults.stall_watches()
        reading = asyncio.create_task(raw_lines(normal))
        with anyio.fail_after(2.5):  # aclose's own bound, with room: stalled watches end too
            await server.aclose()
        assert server.state is State.STOPPED  # aclose returns once run returned
        assert await reading == []
        assert await raw_lines(stalled) == []
        normal.release()
        stalled.release()
    assert asyncio.all_tasks() == tasks_before


async def test_url_configuration_and_api_client_point_at_the_server() -> None:
    """``url``, ``configuration()`` and ``api_client()`` reach the server on 127.0.0.1."""
    async with FakeApiServer() as server:
        assert server.url == f"http://127.0.0.1:{server.port}" and server.port > 0
        assert server.configuration().host == server.url
        async with server.api_client() as api:
            assert (await CoreV1Api(api).read_namespace("default")).metadata.name == "default"


async def test_a_server_runs_once_and_close_is_idempotent() -> None:
    """Running twice or after close raises LifecycleError; closing twice is harmless."""
    server = FakeApiServer()
    async with server:
        with pytest.raises(LifecycleError):
            await server.run()
    await server.aclose()
    with pytest.raises(LifecycleError):
        await server.run()
    with pytest.raises(LifecycleError):
        async with server:
            pass


async def test_a_server_closed_before_it_ran_never_listens() -> None:
    """Closing a server that never ran makes ``run`` return at once (as every component's);
    ``tg.start(server.run)`` and ``async with`` refuse it."""
    server = FakeApiServer()
    await server.aclose()
    assert server.state is State.STOPPED
    await server.run()
    with pytest.RaisesGroup(LifecycleError):
        async with anyio.create_task_group() as tg:
            await tg.start(server.run)
    with pytest.raises(LifecycleError):
        async with server:
            pass
    assert server.port == 0


async def test_a_taken_port_fails_the_start_with_oserror() -> None:
    """When the port is taken, ``async with`` raises the listener's OSError unwrapped (and
    ``tg.start(server.run)`` raises it into the caller's task group); the server ends
    stopped."""
    async with FakeApiServer() as first:
        second = FakeApiServer(port=first.port)
        with pytest.raises(OSError):
            async with second:
                pass
        assert second.state is State.STOPPED
        third = FakeApiServer(port=first.port)
        with pytest.RaisesGroup(OSError):
            async with anyio.create_task_group() as tg:
                await tg.start(third.run)
        assert third.state is State.STOPPED


async def test_in_process_api_works_before_start() -> None:
    """Objects can be seeded before the server starts; they are served once it does."""
    server = FakeApiServer(namespaces=("default", "kube-system"))
    server.objects.create("pods", pod("early", "kube-system"))  # ValidatePodSpec: a container
    async with server, server.api_client() as api:
        pods = await CoreV1Api(api).list_namespaced_pod("kube-system")
    assert [p.metadata.name for p in pods.items] == ["early"]


async def test_task_group_start_returns_a_listening_server_and_aclose_ends_run() -> None:
    """``await tg.start(server.run)`` returns once the server listens; ``aclose()`` makes
    ``run`` return (the project's one lifecycle: ready through task_status, bounded close)."""
    server = FakeApiServer()
    assert server.statistics().state is State.NEW
    async with anyio.create_task_group() as tg:
        await tg.start(server.run)
        assert server.statistics().state is State.RUNNING
        async with server.api_client() as api:
            assert (await CoreV1Api(api).read_namespace("default")).metadata.name == "default"
        await server.aclose()
        await server.aclose()  # idempotent
    assert server.state is State.STOPPED
    with pytest.raises(LifecycleError):
        await server.run()


async def test_cancelling_run_closes_the_server() -> None:
    """Cancelling the task that runs ``run`` is the hard stop: the server closes."""
    server = FakeApiServer()
    async with anyio.create_task_group() as tg:
        await tg.start(server.run)
        tg.cancel_scope.cancel()
    assert server.state is State.STOPPED
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.ClientConnectionError):
            await http.get(f"{server.url}/api/v1/namespaces")


async def test_an_exception_of_the_block_comes_out_unwrapped() -> None:
    """The written exception policy: the block's own exception leaves ``async with`` as
    itself, not inside an ExceptionGroup."""
    server = FakeApiServer()
    with pytest.raises(KeyError):
        async with server:
            raise KeyError("x")
    assert server.state is State.STOPPED


async def test_statistics_is_a_frozen_snapshot() -> None:
    """``statistics()`` reports state, URL, objects, open watches, requests and the RV."""
    server = FakeApiServer()
    before = server.statistics()
    assert before.state is State.NEW and before.objects == 1  # the default namespace
    async with server, aiohttp.ClientSession() as http:
        server.objects.create("pods", pod("p"))
        watch = await http.get(f"{server.url}/api/v1/pods", params={"watch": "1"})
        with anyio.fail_after(5):
            await server.requests.wait_for_watches(1)
        stats = server.statistics()
        assert stats.state is State.RUNNING and stats.url == server.url
        assert stats.objects == 2 and stats.open_watches == 1
        assert str(stats.resource_version) == server.objects.resource_version
        watch.release()
    after = server.statistics()
    assert after.state is State.STOPPED and after.open_watches == 0
    assert after.requests_served >= 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        after.objects = 0  # type: ignore[misc]
