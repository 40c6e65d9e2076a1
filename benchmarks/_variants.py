"""What one benchmark process measures: each function is one variant of one figure.

The orchestrator (``bench.py``) runs each variant in a fresh interpreter
(``python benchmarks/_worker.py '<spec json>'``) so that memory and garbage-collector state
never carry over from one measurement to the next. A variant gets its spec (server URL,
scenario, sizes, options) and returns a JSON-able dict of raw figures; the orchestrator turns
them into rates and ratios.

Timers start before the first request of a variant (the informers' LIST, the baselines'
first GET) and stop when the consumer holds the last object, so every variant pays for one
request round trip; the server sits in another process and serves pre-encoded bytes.
"""

from __future__ import annotations

import gc
import os
import random
import statistics
import threading
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

import _aio
import aiohttp
import anyio
import anyio.lowlevel
import orjson

Spec = dict[str, Any]
Result = dict[str, Any]

#: Seconds a variant may take before it is considered hung.
DEADLINE = 600.0


def _pods_url(spec: Spec) -> str:
    return f"{spec['url']}/api/v1/namespaces/{spec['scenario']}/pods"


def _key(obj: dict[str, Any]) -> str:
    metadata = obj["metadata"]
    return f"{metadata['namespace']}/{metadata['name']}"


def _rss() -> int:
    """Resident set size of this process, in bytes (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _Stopwatch:
    __slots__ = ("start",)

    def __init__(self) -> None:
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start


async def _go(spec: Spec) -> None:
    """Tell the server to start a scenario's gated watch stream."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{spec['url']}/bench/go/{spec['scenario']}") as response,
    ):
        response.raise_for_status()


class _Ticker:
    """Measures the event loop's longest stall: a task that wants to wake every millisecond."""

    INTERVAL = 0.001

    def __init__(self) -> None:
        self.max_stall = 0.0
        self.running = True

    async def run(self) -> None:
        last = time.monotonic()
        while self.running:
            await anyio.sleep(self.INTERVAL)
            now = time.monotonic()
            self.max_stall = max(self.max_stall, now - last - self.INTERVAL)
            last = now


# -- baselines: read the stream ourselves ------------------------------------------------------


async def _read_watch(
    spec: Spec, on_object: Callable[[dict[str, Any]], None], count: int, *, gate: bool = False
) -> None:
    """GET the scenario's watch, frame lines from whole chunks, decode each, hand it on."""
    params = {"watch": "1", "resourceVersion": str(spec.get("list_rv", 1))}
    async with (
        aiohttp.ClientSession() as session,
        session.get(_pods_url(spec), params=params) as response,
    ):
        response.raise_for_status()
        if gate:
            await _go(spec)
        loads = orjson.loads
        partial = b""
        seen = 0
        while seen < count:
            chunk = await response.content.readany()
            if not chunk:
                raise RuntimeError(f"watch ended after {seen} of {count} events")
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()
            for line in lines:
                on_object(loads(line)["object"])
            seen += len(lines)


async def parse_discard(spec: Spec) -> Result:
    """B1 limit: read the watch stream and ``orjson.loads`` every line, keeping nothing."""
    watch = _Stopwatch()
    await _read_watch(spec, lambda obj: None, spec["n"])
    return {"seconds": watch.elapsed(), "items": spec["n"]}


async def parse_keep(spec: Spec) -> Result:
    """B1 reference: the same, keeping each object in a dict by ``namespace/name``."""
    if not spec.get("gc", True):
        gc.disable()
    cache: dict[str, Any] = {}

    def keep(obj: dict[str, Any]) -> None:
        cache[_key(obj)] = obj

    watch = _Stopwatch()
    await _read_watch(spec, keep, spec["n"])
    seconds = watch.elapsed()
    assert len(cache) == spec["n"], len(cache)
    return {"seconds": seconds, "items": len(cache)}


async def _fetch_pages(spec: Spec, page: Callable[[bytes], str | None]) -> None:
    """LIST the scenario page by page (500 per page, like the informer's first list)."""
    async with aiohttp.ClientSession() as session:
        params = {"limit": "500", "resourceVersion": "0"}
        while True:
            async with session.get(_pods_url(spec), params=params) as response:
                response.raise_for_status()
                body = await response.read()
            token = page(body)
            if not token:
                return
            params = {"limit": "500", "continue": token}


async def fetch_parse(spec: Spec) -> Result:
    """B2 baseline: fetch the LIST pages and decode them, keeping the items."""
    if not spec.get("gc", True):
        gc.disable()
    items: list[Any] = []

    def page(body: bytes) -> str | None:
        decoded = orjson.loads(body)
        items.extend(decoded["items"])
        token: str | None = decoded["metadata"].get("continue")
        return token

    watch = _Stopwatch()
    await _fetch_pages(spec, page)
    seconds = watch.elapsed()
    assert len(items) == spec["n"], len(items)
    return {"seconds": seconds, "items": len(items)}


# -- aioinformer -----------------------------------------------------------------------------


def _transform(spec: Spec) -> Callable[[Any], Any] | None:
    return _aio.drop_managed_fields if spec.get("transform") else None


async def aio_watch(spec: Spec) -> Result:
    """B1 subject: an informer ingesting a watch into a growing cache, one ``events()`` consumer
    receiving every event."""
    if not spec.get("gc", True):
        gc.disable()
    n = spec["n"]
    async with _aio.lister_watcher(spec["url"], spec["scenario"]) as lw:
        informer = _aio.informer(lw, cache_mode=spec["mode"])
        stream = informer.events()
        watch = _Stopwatch()
        async with informer:
            seen = 0
            async for _event in stream:
                seen += 1
                if seen >= n:
                    break
            seconds = watch.elapsed()
            cached = informer.statistics().objects
    assert cached == n, cached
    return {"seconds": seconds, "items": n}


def _peak_rss() -> int:
    """The largest resident set size this process has had, in bytes (Linux: KiB units)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def aio_sync(spec: Spec) -> Result:
    """B2 subject: an informer's initial sync (LIST pages into the cache), no consumer; with
    the RSS the sync added at its peak (``ru_maxrss``: this process is fresh) and after it
    (after a collection), per object."""
    async with _aio.lister_watcher(spec["url"], spec["scenario"]) as lw:
        informer = _aio.informer(lw, cache_mode=spec["mode"])
        gc.collect()
        before = _rss()
        watch = _Stopwatch()
        async with informer:
            await informer.wait_for_cache_sync()
            seconds = watch.elapsed()
            peak = _peak_rss()
            gc.collect()
            after = _rss()
            cached = informer.statistics().objects
    assert cached == spec["n"], cached
    return {
        "seconds": seconds,
        "items": cached,
        "rss_peak": (peak - before) / cached,
        "rss_after": (after - before) / cached,
    }


async def aio_memory(spec: Spec) -> Result:
    """B3 subject: bytes per cached object after a sync (RSS or tracemalloc delta)."""
    traced = spec["method"] == "tracemalloc"
    async with _aio.lister_watcher(spec["url"], spec["scenario"]) as lw:
        informer = _aio.informer(lw, cache_mode=spec["mode"], transform=_transform(spec))
        gc.collect()
        if traced:
            tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0] if traced else _rss()
        async with informer:
            await informer.wait_for_cache_sync()
            gc.collect()
            after = tracemalloc.get_traced_memory()[0] if traced else _rss()
            cached = informer.statistics().objects
    assert cached == spec["n"], cached
    return {"bytes": (after - before) / cached, "items": cached}


async def plain_memory(spec: Spec) -> Result:
    """B3 reference: the same objects kept in a plain dict, as dicts or as their JSON bytes."""
    traced = spec["method"] == "tracemalloc"
    as_bytes = spec["keep"] == "bytes"
    transform = _transform(spec)
    cache: dict[str, Any] = {}

    def page(body: bytes) -> str | None:
        decoded = orjson.loads(body)
        for item in decoded["items"]:
            if transform is not None:
                item = transform(item)
            # orjson.dumps returns bytes inside a larger buffer (8 KB for a 2.5 KB Pod with
            # orjson 3.13); a copy holds exactly the object's bytes, as a wire slice would.
            cache[_key(item)] = bytes(memoryview(orjson.dumps(item))) if as_bytes else item
        token: str | None = decoded["metadata"].get("continue")
        return token

    gc.collect()
    if traced:
        tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0] if traced else _rss()
    await _fetch_pages(spec, page)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0] if traced else _rss()
    assert len(cache) == spec["n"], len(cache)
    return {"bytes": (after - before) / len(cache), "items": len(cache)}


async def aio_latency(spec: Spec) -> Result:
    """B5 subject: sync a large cache, then receive a steady stream; per-event receive times."""
    first, m = spec["first_rv"], spec["events"]
    received = [0.0] * m
    ticker = _Ticker()
    async with _aio.lister_watcher(spec["url"], spec["scenario"]) as lw:
        informer = _aio.informer(lw, cache_mode=spec["mode"])
        stream = informer.events()
        async with informer, anyio.create_task_group() as tg:
            initial = 0
            seen = 0
            async for event in stream:
                if event.is_in_initial_list:
                    initial += 1
                    if initial == spec["n"]:
                        await _go(spec)
                        tg.start_soon(ticker.run)
                    continue
                received[int(event.object["metadata"]["resourceVersion"]) - first] = (
                    time.monotonic()
                )
                seen += 1
                if seen >= m:
                    break
            ticker.running = False
    return {"received": received, "max_stall": ticker.max_stall}


async def floor_latency(spec: Spec) -> Result:
    """B5 floor: the same steady stream read and decoded by hand, no cache."""
    first, m = spec["first_rv"], spec["events"]
    received = [0.0] * m
    ticker = _Ticker()

    def note(obj: dict[str, Any]) -> None:
        received[int(obj["metadata"]["resourceVersion"]) - first] = time.monotonic()

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker.run)
        await _read_watch({**spec, "list_rv": spec["first_rv"] - 1}, note, m, gate=True)
        ticker.running = False
    return {"received": received, "max_stall": ticker.max_stall}


async def aio_fanout(spec: Spec) -> Result:
    """B6: one informer, ``consumers`` ``events()`` subscribers (plus one that never reads when
    ``stalled``); events/s until every active consumer received every event."""
    n, m, consumers = spec["n"], spec["events"], spec["consumers"]
    drained = 0
    all_drained = anyio.Event()
    finished = 0
    all_finished = anyio.Event()

    async def consume(stream: Any) -> None:
        nonlocal drained, finished
        initial = 0
        seen = 0
        async for event in stream:
            if event.is_in_initial_list:
                initial += 1
                if initial == n:
                    drained += 1
                    if drained == consumers:
                        all_drained.set()
                continue
            seen += 1
            if seen >= m:
                break
        finished += 1
        if finished == consumers:
            all_finished.set()

    async with _aio.lister_watcher(spec["url"], spec["scenario"]) as lw:
        informer = _aio.informer(lw, cache_mode=spec["mode"])
        streams = [informer.events() for _ in range(consumers)]
        stalled = informer.events() if spec.get("stalled") else None
        async with informer, anyio.create_task_group() as tg:
            for stream in streams:
                tg.start_soon(consume, stream)
            await all_drained.wait()
            watch = _Stopwatch()
            await _go(spec)
            await all_finished.wait()
            seconds = watch.elapsed()
        del stalled
    return {"seconds": seconds, "items": m}


def _tenth(name: str) -> list[str]:
    """Ten index values, 1/10 of the Pods each (the last digit of the name's index)."""
    return [name[-1]]


async def aio_reads(spec: Spec) -> Result:
    """Reads over a synced cache of ``n`` Pods: ``lister().get``, ``lister().list()`` and a
    listing of a tenth of the cache through an index (the namespace listing's path:
    ``by_index``), each against the decode floor of the same bytes (``orjson.loads`` in a
    loop, the collector off), measured alternately in rounds within this process. With
    ``read_cache``: ``get`` of 500 hot keys against a dict lookup."""
    gets, lists = spec["gets"], spec["lists"]
    hot = spec.get("read_cache", 0)
    async with _aio.lister_watcher(spec["url"], spec["scenario"]) as lw:
        informer = _aio.informer(lw, cache_mode=spec["mode"], read_cache=hot)
        informer.add_indexers({"tenth": _aio.index_on("metadata.name", values=_tenth)})
        async with informer:
            await informer.wait_for_cache_sync()
            lister, cache = informer.lister(), informer.cache
            keys = cache.list_keys()
            datas = {key: cache.get_raw_by_key(key) for key in keys}
            plain = {key: orjson.loads(data) for key, data in datas.items()}
            tenth = cache.index_keys("tenth", "7")
            tenth_datas = [datas[key] for key in tenth]
            all_datas = list(datas.values())
            rng = random.Random(7)
            chosen = rng.choices(keys, k=gets) if not hot else rng.choices(keys[:500], k=gets)
            names = [tuple(reversed(key.split("/", 1))) for key in chosen]
            times: dict[str, list[float]] = {
                name: []
                for name in (
                    "get",
                    "list",
                    "tenth",
                    "get_floor",
                    "list_floor",
                    "tenth_floor",
                    "get_dict",
                )
            }
            clock = time.perf_counter_ns
            loads = orjson.loads

            def floor(run: Callable[[], object]) -> float:
                gc.disable()
                try:
                    start = clock()
                    run()
                    return (clock() - start) / 1e9
                finally:
                    gc.enable()

            if hot:
                for name, namespace in names:  # warm: the hot keys decoded once
                    lister.get(name, namespace)
            for _ in range(3):
                for (name, namespace), key in zip(names, chosen, strict=True):
                    start = clock()
                    lister.get(name, namespace)
                    times["get"].append((clock() - start) / 1e9)
                    data = datas[key]
                    gc.disable()
                    start = clock()
                    loads(data)
                    times["get_floor"].append((clock() - start) / 1e9)
                    gc.enable()
                    start = clock()
                    plain.get(f"{namespace}/{name}")  # the key built, as the lister builds it
                    times["get_dict"].append((clock() - start) / 1e9)
                for _ in range(lists):
                    start = clock()
                    listed = lister.list()
                    times["list"].append((clock() - start) / 1e9)
                    del listed
                    times["list_floor"].append(floor(lambda: [loads(d) for d in all_datas]))
                    start = clock()
                    part = cache.by_index("tenth", "7")
                    times["tenth"].append((clock() - start) / 1e9)
                    assert len(part) == len(tenth)
                    del part
                    times["tenth_floor"].append(floor(lambda: [loads(d) for d in tenth_datas]))
                await anyio.lowlevel.checkpoint()

    def p50(values: list[float]) -> float:
        return statistics.median(values)

    return {name: p50(values) for name, values in times.items()}


# -- the work queue --------------------------------------------------------------------------


async def _produce(spec: Spec, add: Callable[[int], object]) -> None:
    """Add ``spec["adds"]`` items, 25% duplicates (every 4th repeats its predecessor), letting
    the workers run every 64 adds."""
    unique = spec.get("unique", False)
    for i in range(spec["adds"]):
        add(i if unique or i % 4 != 3 else i - 1)
        if i % 64 == 0:
            await anyio.lowlevel.checkpoint()


async def asyncio_queue(spec: Spec) -> Result:
    """B4 baseline: ``asyncio.Queue`` with the same workers; every add is processed."""
    import asyncio

    queue: asyncio.Queue[int] = asyncio.Queue()
    processed = 0

    async def worker() -> None:
        nonlocal processed
        while True:
            await queue.get()
            processed += 1
            queue.task_done()

    watch = _Stopwatch()
    async with anyio.create_task_group() as tg:
        for _ in range(spec["workers"]):
            tg.start_soon(worker)
        await _produce(spec, queue.put_nowait)
        await queue.join()
        seconds = watch.elapsed()
        tg.cancel_scope.cancel()
    return {"seconds": seconds, "items": processed}


async def work_queue(spec: Spec) -> Result:
    """B4 subject: aioinformer's ``WorkQueue`` (deduplicating); counts processed items."""
    from aioinformer.errors import QueueShutDown

    queue = _aio.work_queue()
    processed = 0

    async def worker() -> None:
        nonlocal processed
        while True:
            try:
                item = await queue.get()
            except QueueShutDown:
                return
            processed += 1
            queue.done(item)

    watch = _Stopwatch()
    async with anyio.create_task_group() as tg:
        for _ in range(spec["workers"]):
            tg.start_soon(worker)
        await _produce(spec, queue.add)
        await queue.shutdown_with_drain()
        seconds = watch.elapsed()
    return {"seconds": seconds, "items": processed}


# -- other Python clients ----------------------------------------------------------------------


async def k8s_asyncio_watch(spec: Spec) -> Result:
    """B1 reference: kubernetes_asyncio's LIST then ``Watch``, objects kept in a dict.

    ``models``: the typed API (``V1Pod`` objects, what its ``Watch`` builds for
    ``list_namespaced_pod``). ``raw``: the same calls through a function without a
    ``:rtype:`` docstring, for which ``Watch`` skips the models and yields decoded dicts.
    """
    from kubernetes_asyncio import client, watch

    n = spec["n"]
    cache: dict[str, Any] = {}
    configuration = client.Configuration(host=spec["url"])
    async with client.ApiClient(configuration) as api_client:
        v1 = client.CoreV1Api(api_client)
        models = spec["models"]

        async def list_raw(**kwargs: Any) -> Any:
            return await v1.list_namespaced_pod(**kwargs)

        func: Callable[..., Awaitable[Any]] = v1.list_namespaced_pod if models else list_raw
        watch_timer = _Stopwatch()
        listed = await v1.list_namespaced_pod(spec["scenario"])
        resource_version = listed.metadata.resource_version
        seen = 0
        stream = watch.Watch()
        async with stream.stream(
            func, namespace=spec["scenario"], resource_version=resource_version
        ) as events:
            async for event in events:
                obj = event["object"]
                if models:
                    cache[f"{obj.metadata.namespace}/{obj.metadata.name}"] = obj
                else:
                    cache[_key(obj)] = obj
                seen += 1
                if seen >= n:
                    break
        seconds = watch_timer.elapsed()
    assert len(cache) == n, len(cache)
    return {"seconds": seconds, "items": n}


def k8s_official_informer(spec: Spec) -> Result:
    """B1 reference: the official client's ``kubernetes.informer.SharedInformer`` (a thread,
    models), counting ADDED notifications."""
    from kubernetes import client
    from kubernetes.informer import ADDED, SharedInformer

    n = spec["n"]
    configuration = client.Configuration()
    configuration.host = spec["url"]
    v1 = client.CoreV1Api(client.ApiClient(configuration))
    done = threading.Event()
    seen = 0

    def on_add(obj: Any) -> None:
        nonlocal seen
        seen += 1
        if seen >= n:
            done.set()

    informer = SharedInformer(v1.list_namespaced_pod, namespace=spec["scenario"])  # type: ignore[no-untyped-call]
    informer.add_event_handler(ADDED, on_add)  # type: ignore[no-untyped-call]
    watch = _Stopwatch()
    informer.start()  # type: ignore[no-untyped-call]
    if not done.wait(DEADLINE):
        raise RuntimeError(f"official informer saw {seen} of {n} objects")
    seconds = watch.elapsed()
    # Its watch thread (a daemon) blocks in a read on the silent stream; stop() would join it
    # forever, so the worker exits without stopping it.
    return {"seconds": seconds, "items": len(informer.cache.list())}


VARIANTS: dict[str, Callable[[Spec], Any]] = {
    "parse_discard": parse_discard,
    "parse_keep": parse_keep,
    "fetch_parse": fetch_parse,
    "aio_watch": aio_watch,
    "aio_sync": aio_sync,
    "aio_memory": aio_memory,
    "plain_memory": plain_memory,
    "aio_latency": aio_latency,
    "floor_latency": floor_latency,
    "aio_fanout": aio_fanout,
    "aio_reads": aio_reads,
    "asyncio_queue": asyncio_queue,
    "work_queue": work_queue,
    "k8s_asyncio_watch": k8s_asyncio_watch,
    "k8s_official_informer": k8s_official_informer,
}
