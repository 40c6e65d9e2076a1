"""A tiny, scriptable API server of the tests' own for the hostile-input catalogue, and an
informer harness around it.

:class:`HostileApi` serves ``/api/v1/namespaces/default/configmaps`` (LIST and WATCH) on
127.0.0.1 from a dict of objects, like an API server — until a test scripts it to answer
something else: a responder queued with :meth:`HostileApi.on_list` / :meth:`HostileApi.on_watch`
answers the next such request, and lines pushed with :meth:`HostileApi.send` go to the open
watches verbatim. It shares no code with the client.

:class:`Harness` runs an informer against it (through the public API: ``KubeClient``,
``KubeListerWatcher``, ``SharedIndexInformer``) with a watch-error handler that records every
error, and an ``events()`` subscriber whose view the tests compare with the server's objects.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import orjson
from aiohttp import web
from kubernetes_asyncio.client import ApiClient, Configuration

from aioinformer import (
    BackoffPolicy,
    Clock,
    DeletedFinalStateUnknown,
    EventType,
    KubeClient,
    KubeObject,
    Resource,
    SharedIndexInformer,
    WatchConfig,
    meta_namespace_key,
)
from aioinformer.lowlevel import KubeListerWatcher, Reflector

from ._web import serve_aiohttp

__all__ = ["SECRET", "Harness", "HostileApi", "Responder", "cm", "harness", "line"]

CONFIGMAPS = Resource.parse("v1/configmaps")
PATH = "/api/v1/namespaces/default/configmaps"
#: In every object's data: it must never appear in a log record.
SECRET = "s3cr3t-payload"
#: Watch configuration of the harness: a short, jitter-free backoff.
FAST = WatchConfig(
    backoff=BackoffPolicy(initial=0.01, cap=0.05, jitter=0.0), min_watch_timeout=60.0
)

#: Answers one request (the test's script).
Responder = Callable[[web.Request], Awaitable[web.StreamResponse]]


def cm(name: str, rv: int | str, **data: str) -> KubeObject:
    """A ConfigMap in ``default`` at ``rv``, its data carrying :data:`SECRET`."""
    return {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv)},
        "data": {"secret": SECRET, **data},
    }


def line(event_type: str, obj: Any) -> bytes:
    """One watch line."""
    return orjson.dumps({"type": event_type, "object": obj}) + b"\n"


@dataclass
class Seen:
    """A request the server received."""

    verb: str
    query: dict[str, str]
    headers: dict[str, str]


class HostileApi:
    """See the module documentation. ``objects`` maps keys to what LIST answers, at ``rv``."""

    def __init__(self) -> None:
        self.objects: dict[str, KubeObject] = {}
        self.rv = 10
        self.requests: list[Seen] = []
        self.url = ""
        self._lists: deque[Responder] = deque()
        self._watches: deque[Responder] = deque()
        self._feeds: list[asyncio.Queue[bytes | None]] = []
        self._arrived = anyio.Event()

    # -- the state ---------------------------------------------------------------------------

    def put(self, name: str, **data: str) -> KubeObject:
        """Create or change a ConfigMap at the next RV (no event: :meth:`send` one)."""
        self.rv += 1
        obj = cm(name, self.rv, **data)
        self.objects[f"default/{name}"] = obj
        return obj

    def remove(self, name: str) -> KubeObject:
        """Delete a ConfigMap (no event); returns its final state at the next RV."""
        self.rv += 1
        obj = self.objects.pop(f"default/{name}")
        return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.rv)}}

    def list_body(self, items: list[Any] | None = None, rv: Any = None, **meta: Any) -> bytes:
        body = {
            "kind": "ConfigMapList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": str(self.rv) if rv is None else rv, **meta},
            "items": list(self.objects.values()) if items is None else items,
        }
        return orjson.dumps(body)

    def rvs(self) -> dict[str, str]:
        return {key: obj["metadata"]["resourceVersion"] for key, obj in self.objects.items()}

    # -- scripting ---------------------------------------------------------------------------

    def on_list(self, *responders: Responder) -> None:
        """Answer the next LIST requests with these, in order."""
        self._lists.extend(responders)

    def on_watch(self, *responders: Responder) -> None:
        """Answer the next WATCH requests with these, in order."""
        self._watches.extend(responders)

    def send(self, *lines: bytes) -> None:
        """Write lines (bytes as given) to every open default watch."""
        for feed in self._feeds:
            for data in lines:
                feed.put_nowait(data)

    def end_watches(self) -> None:
        """End every open default watch cleanly."""
        for feed in self._feeds:
            feed.put_nowait(None)

    async def wait_request(self, verb: str, *, start: int = 0) -> Seen:
        """The first ``verb`` request from index ``start`` of :attr:`requests`, waiting."""
        while True:
            for seen in self.requests[start:]:
                if seen.verb == verb:
                    return seen
            self._arrived = anyio.Event()
            await self._arrived.wait()

    async def wait_watching(self, count: int = 1) -> None:
        """Wait until ``count`` default watches are open."""
        while len(self._feeds) < count:
            self._arrived = anyio.Event()
            await self._arrived.wait()

    # -- serving -----------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        verb = "watch" if request.query.get("watch") in ("1", "true") else "list"
        self.requests.append(Seen(verb, dict(request.query), dict(request.headers)))
        self._arrived.set()
        script = self._watches if verb == "watch" else self._lists
        if script:
            return await script.popleft()(request)
        if verb == "list":
            return web.Response(body=self.list_body(), content_type="application/json")
        return await self._stream(request)

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        feed: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._feeds.append(feed)
        self._arrived.set()
        try:
            while (data := await feed.get()) is not None:
                await response.write(data)
        finally:
            self._feeds.remove(feed)
        return response

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[HostileApi]:
        app = web.Application()
        app.router.add_get(PATH, self._handle)
        async with serve_aiohttp(app) as url:
            self.url = url
            try:
                yield self
            finally:
                self.end_watches()


def client_of(url: str, **options: Any) -> KubeClient:
    """A client of ``url`` (no credentials)."""
    return KubeClient(ApiClient(Configuration(host=url)), **options)


@dataclass
class Harness:
    """A running informer, what its watch-error handler heard, and a subscriber's view."""

    api: HostileApi
    informer: SharedIndexInformer
    errors: list[BaseException] = field(default_factory=list)
    view: dict[str, str] = field(default_factory=dict)
    _changed: anyio.Event = field(default_factory=anyio.Event)

    def hook(self, _reflector: Reflector, error: BaseException) -> None:
        self.errors.append(error)
        self._changed.set()

    def apply(self, event_type: EventType, obj: Any) -> None:
        key = obj.key if isinstance(obj, DeletedFinalStateUnknown) else meta_namespace_key(obj)
        if event_type is EventType.DELETED:
            self.view.pop(key, None)
        else:
            self.view[key] = obj["metadata"]["resourceVersion"]
        self._changed.set()

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds, re-checking at each error or notification."""
        with anyio.fail_after(10):  # a fail-safe, not a timing
            while not predicate():
                self._changed = anyio.Event()
                await self._changed.wait()

    async def until_error(self, kind: type[BaseException], count: int = 1) -> list[BaseException]:
        """Wait until the handler heard ``count`` errors of ``kind``; returns them."""
        await self.until(lambda: len(self.of(kind)) >= count)
        return self.of(kind)

    def of(self, kind: type[BaseException]) -> list[BaseException]:
        return [e for e in self.errors if isinstance(e, kind)]

    def cache(self) -> dict[str, str]:
        return {meta_namespace_key(o): o["metadata"]["resourceVersion"] for o in self.lister()}

    def lister(self) -> list[KubeObject]:
        return self.informer.lister().list()

    async def converged(self) -> None:
        """Wait until the cache and the subscriber's view equal the server's objects."""
        await self.until(lambda: self.cache() == self.api.rvs() == self.view)


@asynccontextmanager
async def harness(
    api: HostileApi,
    *,
    client: KubeClient | None = None,
    watch: WatchConfig = FAST,
    clock: Clock | None = None,
    transform: Callable[[Any], Any] | None = None,
    max_event_size: int | None = None,
    setup: Callable[[SharedIndexInformer], None] | None = None,
) -> AsyncIterator[Harness]:
    """Run an informer on ``api`` until the block ends (the cache need not sync)."""
    async with client or client_of(api.url) as kube:
        options: dict[str, Any] = {"namespace": "default"}
        if max_event_size is not None:
            options["max_event_size"] = max_event_size
        extra: dict[str, Any] = {} if clock is None else {"clock": clock}
        informer = SharedIndexInformer(
            KubeListerWatcher(kube, CONFIGMAPS, **options), watch=watch, name="hostile", **extra
        )
        it = Harness(api, informer)
        informer.set_watch_error_handler(it.hook)
        if transform is not None:
            informer.set_transform(transform)
        if setup is not None:
            setup(informer)
        stream = informer.events()

        async def subscribe() -> None:
            async for event in stream:
                it.apply(event.type, event.object)

        try:
            async with anyio.create_task_group() as tg, informer:
                tg.start_soon(subscribe)
                yield it
                tg.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # the test's own failure, unwrapped
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise


def records_of(caplog_records: list[logging.LogRecord]) -> list[str]:
    """Every message, formatted."""
    return [record.getMessage() for record in caplog_records]
