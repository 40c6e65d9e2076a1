"""The former names of renamed API (issue 19, item 5): each still works for one release and
warns with a :class:`DeprecationWarning` that names its replacement and points at the caller.

``wait_synced()`` (registrations, event streams, the DeltaFIFO) and ``wait_ready()`` (the
integrations' runtime) became ``wait_for_cache_sync()``; ``shutdown_timeout`` (controllers,
the aiohttp integration) became ``stop_timeout``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import anyio
import pytest
from aiohttp import web

import aioinformer
from aioinformer import (
    Controller,
    EventStream,
    ResourceEventHandlerFuncs,
    ShardedController,
    SharedIndexInformer,
    SharedInformerFactory,
)
from aioinformer.integrations import InformerRuntime
from aioinformer.integrations.aiohttp import informer_cleanup_ctx
from aioinformer.lowlevel import DeltaFIFO
from aioinformer.testing import MemorySource

GUARD = 10.0  # a fail-safe, never reached when the test passes

POD = {"metadata": {"name": "a", "namespace": "default", "resourceVersion": "1"}}


@contextmanager
def deprecated(old: str, new: str) -> Iterator[None]:
    """Exactly one DeprecationWarning naming ``old`` and ``new``, reported at this file."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    found = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(found) == 1, [str(w.message) for w in caught]
    message = str(found[0].message)
    assert old in message
    assert f"use {new}" in message
    assert found[0].filename == __file__  # the caller's line, not the library's


async def _reconcile(key: str) -> None:
    pass


def _informer() -> tuple[MemorySource, SharedIndexInformer]:
    source = MemorySource()
    source.create("v1/pods", POD)
    return source, SharedIndexInformer(source.lister_watcher("v1/pods"))


async def test_registration_wait_synced_warns_and_waits() -> None:
    _, informer = _informer()
    registration = informer.add_event_handler(ResourceEventHandlerFuncs(on_add=lambda obj: None))
    with anyio.fail_after(GUARD):
        async with informer:
            with deprecated("Registration.wait_synced()", "wait_for_cache_sync()"):
                assert await registration.wait_synced() is True
            assert registration.has_synced()


async def test_event_stream_wait_synced_warns_and_waits() -> None:
    _, informer = _informer()
    with anyio.fail_after(GUARD):
        async with informer, informer.events() as events, anyio.create_task_group() as tg:
            tg.start_soon(_read_all, events)  # reading past the initial list syncs the stream
            with deprecated("EventStream.wait_synced()", "wait_for_cache_sync()"):
                assert await events.wait_synced() is True
            tg.cancel_scope.cancel()


async def _read_all(events: EventStream) -> None:
    async for _ in events:
        pass


async def test_delta_fifo_wait_synced_warns_and_waits() -> None:
    fifo = DeltaFIFO()
    await fifo.replace([POD], "1")
    await fifo.pop_batch(lambda batch, initial: None)
    with anyio.fail_after(GUARD):
        with deprecated("DeltaFIFO.wait_synced()", "wait_for_cache_sync()"):
            await fifo.wait_synced()
    assert fifo.has_synced()


async def test_runtime_wait_ready_warns_and_waits() -> None:
    source = MemorySource()
    source.create("v1/pods", POD)
    factory = SharedInformerFactory(lister_watcher=source.lister_watcher)
    factory.for_resource("v1/pods")
    with anyio.fail_after(GUARD):
        async with factory:
            runtime = InformerRuntime(factory)
            with deprecated("InformerRuntime.wait_ready()", "wait_for_cache_sync()"):
                assert await runtime.wait_ready() is True


def test_controller_shutdown_timeout_argument_and_attribute() -> None:
    with deprecated("Controller(shutdown_timeout=...)", "stop_timeout="):
        controller: Controller[str] = Controller(
            name="c", reconcile=_reconcile, shutdown_timeout=7.0
        )
    assert controller.stop_timeout == 7.0
    assert controller._stop_timeout == 7.0 + 1.0  # the graceful part plus the margin
    with deprecated("Controller.shutdown_timeout", "stop_timeout"):
        assert controller.shutdown_timeout == 7.0


async def test_sharded_controller_shutdown_timeout_argument() -> None:
    async with aioinformer.connect(server="http://127.0.0.1:9") as client:  # never contacted
        timing = aioinformer.ShardTiming()
        with deprecated("ShardedController(shutdown_timeout=...)", "stop_timeout="):
            controller = ShardedController(
                name="s",
                reconcile=_reconcile,
                client=client,
                resource="v1/configmaps",
                group="g",
                identity="me",
                shutdown_timeout=7.0,
            )
        leave = timing.lease_duration + timing.renew_deadline
        assert controller._stop_timeout == 7.0 + leave + 1.0


def test_informer_cleanup_ctx_shutdown_timeout_argument() -> None:
    factory = SharedInformerFactory(lister_watcher=MemorySource().lister_watcher)
    with deprecated("informer_cleanup_ctx(shutdown_timeout=...)", "stop_timeout="):
        ctx = informer_cleanup_ctx(factory, shutdown_timeout=0.5)
    web.Application().cleanup_ctx.append(ctx)


@pytest.mark.parametrize(
    "build",
    [
        lambda: Controller(name="c", reconcile=_reconcile, stop_timeout=1, shutdown_timeout=2),
        lambda: informer_cleanup_ctx(
            SharedInformerFactory(lister_watcher=MemorySource().lister_watcher),
            stop_timeout=1,
            shutdown_timeout=2,
        ),
    ],
    ids=["Controller", "informer_cleanup_ctx"],
)
def test_the_old_and_new_names_together_are_refused(build: Callable[[], object]) -> None:
    with pytest.raises(TypeError, match="give stop_timeout= only"):
        build()
