"""Informer throughput against a baseline, in one run: initial sync and watch ingest.

A fake API server runs in a separate process (so its cost does not count against the client)
holding ``--objects`` realistic Pods (about 6.5 KB of JSON each) and a history of ``--events``
updates to them. Each client variant runs in a fresh interpreter and measures:

* **sync**: LIST of all Pods into a local cache keyed ``namespace/name``;
* **watch**: a WATCH replaying the ``--events`` updates (from history) into that cache.

Variants:

* ``baseline-models``: what Python users do today — kubernetes_asyncio's typed API
  (``CoreV1Api.list_pod_for_all_namespaces`` into ``V1Pod`` models) and its ``Watch``;
* ``aioinformer``: a ``SharedIndexInformer`` (HTTP → orjson → DeltaFIFO → Indexer → one
  ``events()`` consumer), CPython's default garbage collector settings;
* ``aioinformer+freeze``: the same with ``freeze_gc_after_sync=True`` (the cache is moved to
  the permanent GC generation once synced, DESIGN §3);
* ``aioinformer-nogc``: the same with the cyclic GC disabled — the ceiling.

Ratios are against ``baseline-models`` measured in the same run. Run:
``python benchmarks/informer_throughput.py [--objects N] [--events N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VARIANTS = ("baseline-models", "aioinformer", "aioinformer+freeze", "aioinformer-nogc")


# -- the server process -----------------------------------------------------------------------


async def serve(objects: int, events: int, churn: int) -> None:
    sys.path.insert(0, str(HERE))
    from podgen import make_pod

    from aioinformer.testing import FakeApiServer

    async with FakeApiServer(
        history_limit=events + objects + 10, namespaces=("bench",), bookmark_interval=3600
    ) as server:
        for i in range(objects):
            server.objects.create("pods", make_pod(i))
        synced_rv = server.objects.resource_version
        for n in range(events):
            i = (n * 7919) % churn
            server.objects.patch(
                "pods", f"web-{i:06d}", {"metadata": {"labels": {"rev": str(n)}}}, namespace="bench"
            )
        print(json.dumps({"url": server.url, "synced_rv": synced_rv}), flush=True)
        await asyncio.Event().wait()  # until killed


# -- client variants --------------------------------------------------------------------------


async def run_baseline(url: str, synced_rv: str, events: int) -> dict[str, float]:
    from kubernetes_asyncio import client, watch

    configuration = client.Configuration(host=url)
    async with client.ApiClient(configuration) as api_client:
        v1 = client.CoreV1Api(api_client)
        start = time.perf_counter()
        pods = await v1.list_pod_for_all_namespaces(
            resource_version=synced_rv, resource_version_match="Exact"
        )
        cache = {f"{p.metadata.namespace}/{p.metadata.name}": p for p in pods.items}
        sync = time.perf_counter() - start
        seen = 0
        start = time.perf_counter()
        w = watch.Watch()
        async with w.stream(
            v1.list_pod_for_all_namespaces, resource_version=synced_rv, timeout_seconds=3600
        ) as stream:
            async for event in stream:
                pod = event["object"]
                cache[f"{pod.metadata.namespace}/{pod.metadata.name}"] = pod
                seen += 1
                if seen >= events:
                    break
        watch_seconds = time.perf_counter() - start
        await w.close()
    return {"sync_s": sync, "watch_s": watch_seconds, "objects": len(cache)}


async def run_informer(url: str, synced_rv: str, events: int, gc_mode: str) -> dict[str, float]:
    import gc

    from kubernetes_asyncio import client

    from aioinformer import KubeListerWatcher, ListOptions, Resource, SharedIndexInformer
    from aioinformer.listwatch import ListResult

    if gc_mode == "off":
        gc.disable()

    class FromSyncedRV:
        """Lists at the RV before the updates, so the watch replays them from history."""

        def __init__(self, inner: KubeListerWatcher) -> None:
            self.inner = inner

        async def list(self, options: ListOptions) -> ListResult:
            return await self.inner.list(
                ListOptions(resource_version=synced_rv, resource_version_match="Exact")
            )

        async def watch(self, options: ListOptions, *, idle_timeout: float | None = None):  # type: ignore[no-untyped-def]
            return await self.inner.watch(options, idle_timeout=idle_timeout)

    configuration = client.Configuration(host=url)
    async with client.ApiClient(configuration) as api_client:
        lw = FromSyncedRV(KubeListerWatcher(api_client, Resource.parse("v1/pods")))
        informer = SharedIndexInformer(lw, name="bench", freeze_gc_after_sync=(gc_mode == "freeze"))
        stream = informer.events()
        async with informer:
            start = time.perf_counter()
            await informer.wait_for_cache_sync()
            sync = time.perf_counter() - start
            start = time.perf_counter()
            seen = 0
            async for event in stream:
                if not event.is_in_initial_list:
                    seen += 1
                    if seen >= events:
                        break
            watch_seconds = time.perf_counter() - start
            objects = len(informer.indexer)
    return {"sync_s": sync, "watch_s": watch_seconds, "objects": objects}


def client_main(variant: str, url: str, synced_rv: str, events: int) -> None:
    if variant == "baseline-models":
        result = asyncio.run(run_baseline(url, synced_rv, events))
    else:
        mode = {"aioinformer": "on", "aioinformer+freeze": "freeze", "aioinformer-nogc": "off"}
        result = asyncio.run(run_informer(url, synced_rv, events, mode[variant]))
    print(json.dumps(result), flush=True)


# -- orchestration ----------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument(
        "--churn", type=int, default=1_000, help="how many distinct Pods the updates touch"
    )
    parser.add_argument(
        "--role", choices=("orchestrate", "server", "client"), default="orchestrate"
    )
    parser.add_argument("--variant", choices=VARIANTS)
    parser.add_argument("--url")
    parser.add_argument("--synced-rv")
    args = parser.parse_args()
    if args.role == "server":
        asyncio.run(serve(args.objects, args.events, min(args.churn, args.objects)))
        return 0
    if args.role == "client":
        client_main(args.variant, args.url, args.synced_rv, args.events)
        return 0

    me = [
        sys.executable,
        __file__,
        "--objects",
        str(args.objects),
        "--events",
        str(args.events),
        "--churn",
        str(args.churn),
    ]
    print(
        f"informer throughput: {args.objects} pods, {args.events} watch events "
        "(server in its own process; each variant in a fresh interpreter)"
    )
    server = subprocess.Popen([*me, "--role", "server"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        info = json.loads(server.stdout.readline())
        results: dict[str, dict[str, float]] = {}
        for variant in VARIANTS:
            out = subprocess.run(
                [
                    *me,
                    "--role",
                    "client",
                    "--variant",
                    variant,
                    "--url",
                    info["url"],
                    "--synced-rv",
                    info["synced_rv"],
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            results[variant] = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        server.kill()
        server.wait()
    base = results["baseline-models"]
    print(
        f"{'variant':<22}{'sync s':>9}{'objects/s':>12}{'x base':>8}"
        f"{'watch s':>10}{'events/s':>11}{'x base':>8}"
    )
    for variant, r in results.items():
        sync_rate = args.objects / r["sync_s"]
        watch_rate = args.events / r["watch_s"]
        print(
            f"{variant:<22}{r['sync_s']:>9.2f}{sync_rate:>12,.0f}"
            f"{base['sync_s'] / r['sync_s']:>8.1f}{r['watch_s']:>10.2f}{watch_rate:>11,.0f}"
            f"{base['watch_s'] / r['watch_s']:>8.1f}"
        )
        if r["objects"] != args.objects:
            print(f"  !! {variant} cached {r['objects']} objects, expected {args.objects}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
