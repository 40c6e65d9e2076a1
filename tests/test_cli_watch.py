"""``aioinformer watch``, resource discovery and cluster configuration loading."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from aioinformer._cli._watch import _View
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._listwatch import ListOptions, Resource
from aioinformer._wire._discovery import resolve_resource
from aioinformer._wire._kubeconfig import connect
from aioinformer._wire._transport import KubeListerWatcher
from aioinformer.errors import ConfigurationError, NotFoundError
from aioinformer.testing import FakeApiServer

from ._kubeconfig import kubeconfig_for
from .support import FAST_WATCH, configmap, kube_client


def pod(name: str, namespace: str = "default") -> dict[str, object]:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running"},
    }


async def _read_until(stream: asyncio.StreamReader, needle: str, seen: list[str]) -> None:
    async with asyncio.timeout(20):
        while True:
            line = (await stream.readline()).decode()
            if not line:
                raise AssertionError(f"output ended before {needle!r}: {seen}")
            seen.append(line)
            if needle in line:
                return


@pytest.mark.slow
@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_watch_shows_objects_created_after_start(fake_apiserver: FakeApiServer) -> None:
    """`aioinformer watch pods -A --server URL` prints objects created after it started."""
    fake_apiserver.objects.create("pods", pod("before"))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "aioinformer", "watch", "pods", "-A",
        "--server", fake_apiserver.url, "--plain",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    seen: list[str] = []
    try:
        await _read_until(process.stdout, "# synced", seen)
        fake_apiserver.objects.create("namespaces", {"metadata": {"name": "kube-system"}})
        fake_apiserver.objects.create("pods", pod("after", "kube-system"), namespace="kube-system")
        await _read_until(process.stdout, "kube-system/after", seen)
    finally:
        process.send_signal(signal.SIGINT)
        async with asyncio.timeout(20):
            code = await process.wait()
    assert code == 0
    assert any("ADDED" in line and "default/before" in line for line in seen)
    assert any("ADDED" in line and "kube-system/after" in line for line in seen)


@pytest.mark.slow
async def test_watch_without_cluster_configuration_fails_clearly(tmp_path: Path) -> None:
    """No kubeconfig and no in-cluster account: a clear message and exit status 1."""
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    env["KUBECONFIG"] = str(tmp_path / "missing-config")
    env["HOME"] = str(tmp_path)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "aioinformer", "watch", "pods", "-A",
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    async with asyncio.timeout(20):
        _, err = await process.communicate()
    assert process.returncode == 1
    assert b"no cluster configuration found" in err
    assert b"Traceback" not in err


@pytest.mark.slow
async def test_watch_of_an_unknown_resource_fails_clearly(fake_apiserver: FakeApiServer) -> None:
    """A resource the server does not have is an error message, not a traceback."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "aioinformer", "watch", "gizmos", "--server", fake_apiserver.url,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    async with asyncio.timeout(20):
        _, err = await process.communicate()
    assert process.returncode == 1
    assert b'resource type "gizmos"' in err
    assert b"Traceback" not in err


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("pods", ("", "v1", "pods", True)),
        ("po", ("", "v1", "pods", True)),
        ("Pod", ("", "v1", "pods", True)),
        ("deploy", ("apps", "v1", "deployments", True)),
        ("deployments.apps", ("apps", "v1", "deployments", True)),
        ("nodes", ("", "v1", "nodes", False)),
        ("apps/v1/statefulsets", ("apps", "v1", "statefulsets", True)),
        ("widgets", ("example.com", "v1", "widgets", False)),
    ],
)
async def test_resolve_resource_like_kubectl(
    fake_apiserver: FakeApiServer, name: str, expected: tuple[str, str, str, bool]
) -> None:
    """Plurals, singulars, short names, kinds, name.group and group/version/plural all resolve."""
    fake_apiserver.register_resource(
        group="example.com", version="v1", plural="widgets", kind="Widget", namespaced=False
    )
    async with kube_client(fake_apiserver) as client:
        resource = await resolve_resource(client, name)
    assert (resource.group, resource.version, resource.plural, resource.namespaced) == expected


async def test_resolve_unknown_resource_is_not_found(fake_apiserver: FakeApiServer) -> None:
    """An unknown name raises NotFoundError with kubectl's wording."""
    async with kube_client(fake_apiserver) as client:
        with pytest.raises(NotFoundError, match="doesn't have a resource type"):
            await resolve_resource(client, "gizmos")


async def test_connect_with_a_kubeconfig(fake_apiserver: FakeApiServer, tmp_path: Path) -> None:
    """A kubeconfig's server, token and namespace are used; its credentials reload."""
    config = kubeconfig_for(fake_apiserver, tmp_path / "config", namespace="team-a")
    client = await connect(kubeconfig=str(config))
    try:
        assert client.source == "kubeconfig"
        assert client.namespace == "team-a"
        await client.refresh_credentials()
        lw = KubeListerWatcher(client, Resource.parse("v1/configmaps"))
        await lw.list(ListOptions())
    finally:
        await client.aclose()
    assert fake_apiserver.requests.records[-1].verb == "list"


async def test_connect_reports_a_broken_kubeconfig(tmp_path: Path) -> None:
    """A kubeconfig that does not load raises ConfigurationError naming the file."""
    config = tmp_path / "config"
    config.write_text("apiVersion: v1\nkind: Config\ncurrent-context: nope\n")
    with pytest.raises(ConfigurationError, match="no context named nope in"):
        await connect(kubeconfig=str(config))
    with pytest.raises(ConfigurationError, match="no such file"):
        await connect(kubeconfig=str(tmp_path / "absent"))


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_live_table_lists_objects_most_recent_first(fake_apiserver: FakeApiServer) -> None:
    """The live view renders a row per object, newest change first, and a summary title."""
    for name in ("a", "b", "c"):
        fake_apiserver.objects.create("configmaps", configmap(name))
    async with kube_client(fake_apiserver) as client:
        resource = Resource.parse("v1/configmaps")
        informer = SharedIndexInformer(KubeListerWatcher(client, resource), watch=FAST_WATCH)
        view = _View(informer, resource, all_namespaces=True)
        async with informer:
            stream = informer.events()
            await asyncio.wait_for(informer.wait_for_cache_sync(), 10)
            for _ in range(3):
                view.record(await anext(stream))
            await stream.aclose()
            console = Console(record=True, width=120)
            console.print(view.table(height=40))
    text = console.export_text()
    assert "objects=3" in text
    rows = [line.replace("│", " ").split() for line in text.splitlines() if " default " in line]
    assert [row[1] for row in rows] == ["c", "b", "a"]


@pytest.mark.slow
async def test_watch_stops_on_sigint_before_the_first_sync(fake_apiserver: FakeApiServer) -> None:
    """Ctrl-C works while every list fails (RBAC, say); the exit status says it never synced."""
    fake_apiserver.faults.fail_next(100_000, 403, verb="list")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "aioinformer", "watch", "pods", "-A",
        "--server", fake_apiserver.url, "--plain",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    with anyio.fail_after(10):
        await fake_apiserver.requests.wait_for(lambda r: r.verb == "list" and r.status == 403)
    process.send_signal(signal.SIGINT)
    async with asyncio.timeout(20):
        _, err = await process.communicate()
    assert process.returncode == 1
    assert b"never synced" in err
    assert b"Traceback" not in err
