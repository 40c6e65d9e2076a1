"""LIST over HTTP: selectors, resource-version semantics and limit/continue pagination."""

# kubernetes_asyncio's generated API annotates bodies with its model classes and raw bodies
# as optional; these tests deliberately send plain dicts (which it accepts) and read bodies.
# mypy: disable-error-code="arg-type, index"
from __future__ import annotations

import json
from typing import Any, cast

import aiohttp
import pytest
from kubernetes_asyncio.client import ApiClient, ApiException, CoreV1Api

from aioinformer.errors import ExpiredError, TooLargeResourceVersionError, api_error_from_status
from aioinformer.testing import FakeApiServer

from .valid import create_with_status, pod


def _pod(
    server: FakeApiServer,
    name: str,
    namespace: str = "default",
    *,
    node: str,
    phase: str,
    **labels: str,
) -> None:
    """A Pod with a container (real validation requires one), whose phase its kubelet
    writes through ``pods/status`` (a real create resets ``status`` to ``Pending``)."""
    created = pod(name, namespace, node=node, labels=labels)
    create_with_status(server, "pods", created, {"phase": phase})


def _names(pod_list: Any) -> list[str]:
    return [p.metadata.name for p in pod_list.items]


async def _seed(server: FakeApiServer) -> None:
    server.objects.create("namespaces", {"metadata": {"name": "other"}})
    _pod(server, "a", node="n1", phase="Running", app="web", tier="fe")
    _pod(server, "b", node="n2", phase="Pending", app="web", tier="be")
    _pod(server, "c", node="n1", phase="Running", app="db")
    _pod(server, "d", "other", node="n2", phase="Running", app="web", env="prod")


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", ["b", "a", "d"]),
        ("app!=web", ["c"]),
        ("app in (db,cache)", ["c"]),
        ("app notin (db)", ["b", "a", "d"]),
        ("env", ["d"]),
        ("!tier", ["c", "d"]),
        ("app=web,tier in (fe,be)", ["b", "a"]),
    ],
)
async def test_label_selectors_filter_lists(
    fake_apiserver: FakeApiServer, api: ApiClient, selector: str, expected: list[str]
) -> None:
    """The full label selector syntax filters a cluster-wide list."""
    await _seed(fake_apiserver)
    pods = await CoreV1Api(api).list_pod_for_all_namespaces(label_selector=selector)
    assert sorted(_names(pods)) == sorted(expected)


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("metadata.name=b", ["b"]),
        ("metadata.namespace=other", ["d"]),
        ("metadata.namespace!=other,spec.nodeName=n1", ["a", "c"]),
        ("spec.nodeName=n2", ["b", "d"]),
        ("status.phase=Running", ["a", "c", "d"]),
        ("status.phase!=Running", ["b"]),
    ],
)
async def test_field_selectors_filter_lists(
    fake_apiserver: FakeApiServer, api: ApiClient, selector: str, expected: list[str]
) -> None:
    """metadata.name, metadata.namespace, spec.nodeName and status.phase select pods."""
    await _seed(fake_apiserver)
    pods = await CoreV1Api(api).list_pod_for_all_namespaces(field_selector=selector)
    assert sorted(_names(pods)) == expected


@pytest.mark.parametrize(
    ("param", "value"), [("field_selector", "spec.bogus=x"), ("label_selector", "a in (")]
)
async def test_invalid_selectors_are_400_bad_request(
    api: ApiClient, param: str, value: str
) -> None:
    """A selector that does not parse or names an unsupported field answers 400."""
    with pytest.raises(ApiException) as caught:
        await CoreV1Api(api).list_namespaced_pod("default", **{param: value})
    assert caught.value.status == 400
    assert json.loads(caught.value.body)["reason"] == "BadRequest"


async def test_namespaced_list_sees_only_its_namespace(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """A namespaced list returns its namespace's objects, in name order."""
    await _seed(fake_apiserver)
    pods = await CoreV1Api(api).list_namespaced_pod("default")
    assert _names(pods) == ["a", "b", "c"]
    assert pods.metadata.resource_version == fake_apiserver.objects.resource_version


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_limit_and_continue_page_a_pinned_snapshot(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """Pages follow continue tokens; later pages show the state at the first page's RV."""
    core = CoreV1Api(api)
    for i in range(7):
        fake_apiserver.objects.create("configmaps", {"metadata": {"name": f"cm-{i}"}})
    first = await core.list_namespaced_config_map("default", limit=3)
    assert _names(first) == ["cm-0", "cm-1", "cm-2"]
    assert first.metadata.remaining_item_count == 4 and first.metadata._continue
    fake_apiserver.objects.delete("configmaps", "cm-4")
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "cm-9"}})
    second = await core.list_namespaced_config_map(
        "default", limit=3, _continue=first.metadata._continue
    )
    assert _names(second) == ["cm-3", "cm-4", "cm-5"]
    assert second.metadata.resource_version == first.metadata.resource_version
    assert second.metadata.remaining_item_count == 1
    third = await core.list_namespaced_config_map(
        "default", limit=3, _continue=second.metadata._continue
    )
    assert _names(third) == ["cm-6"]
    # The model annotates both as always present; absent, they are None.
    assert cast(object, third.metadata._continue) is None
    assert cast(object, third.metadata.remaining_item_count) is None


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_resource_version_zero_ignores_limit(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """RV "0" answers the whole current state in one page, as the watch cache does."""
    for i in range(5):
        fake_apiserver.objects.create("configmaps", {"metadata": {"name": f"cm-{i}"}})
    page = await CoreV1Api(api).list_namespaced_config_map("default", limit=2, resource_version="0")
    assert len(page.items) == 5 and page.metadata._continue is None


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_not_older_than_returns_the_current_state(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """RV N with NotOlderThan (or no match) lists the current state at the current RV."""
    created = fake_apiserver.objects.create("configmaps", {"metadata": {"name": "old"}})
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "new"}})
    rv = created["metadata"]["resourceVersion"]
    for match in (None, "NotOlderThan"):
        page = await CoreV1Api(api).list_namespaced_config_map(
            "default", resource_version=rv, resource_version_match=match
        )
        assert _names(page) == ["new", "old"]
        assert page.metadata.resource_version == fake_apiserver.objects.resource_version


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_exact_lists_rebuild_the_state_at_that_rv(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """Exact N shows objects as they were at N: later creates absent, later deletes present."""
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "kept"}, "data": {"v": "1"}})
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "gone"}})
    rv = fake_apiserver.objects.resource_version
    fake_apiserver.objects.patch("configmaps", "kept", {"data": {"v": "2"}})
    fake_apiserver.objects.delete("configmaps", "gone")
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "later"}})
    page = await CoreV1Api(api).list_namespaced_config_map(
        "default", resource_version=rv, resource_version_match="Exact"
    )
    assert _names(page) == ["gone", "kept"]
    assert page.items[1].data == {"v": "1"}
    assert page.metadata.resource_version == rv


async def test_exact_list_older_than_history_is_410_expired(api: ApiClient) -> None:
    """An Exact list below the history window answers 410 Expired."""
    async with FakeApiServer(history_limit=2) as server, server.api_client() as client:
        old = server.objects.resource_version
        for i in range(6):
            server.objects.create("configmaps", {"metadata": {"name": f"cm-{i}"}})
        with pytest.raises(ApiException) as caught:
            await CoreV1Api(client).list_namespaced_config_map(
                "default", resource_version=old, resource_version_match="Exact"
            )
    assert caught.value.status == 410
    assert isinstance(api_error_from_status(json.loads(caught.value.body)), ExpiredError)


async def test_future_resource_version_is_504_too_large(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """An RV beyond the server's answers 504 Timeout with cause ResourceVersionTooLarge."""
    future = str(int(fake_apiserver.objects.resource_version) + 10)
    with pytest.raises(ApiException) as caught:
        await CoreV1Api(api).list_namespaced_pod("default", resource_version=future)
    assert caught.value.status == 504
    status = json.loads(caught.value.body)
    assert status["reason"] == "Timeout"
    assert status["message"].startswith("Too large resource version")
    assert status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    assert isinstance(api_error_from_status(status), TooLargeResourceVersionError)


async def test_expired_continue_token_is_410(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A continue token whose RV was compacted away answers 410 Expired."""
    for i in range(3):
        fake_apiserver.objects.create("configmaps", {"metadata": {"name": f"cm-{i}"}})
    async with http.get("/api/v1/namespaces/default/configmaps", params={"limit": "1"}) as resp:
        token = (await resp.json())["metadata"]["continue"]
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "cm-x"}})
    fake_apiserver.faults.compact()
    async with http.get(
        "/api/v1/namespaces/default/configmaps", params={"limit": "1", "continue": token}
    ) as resp:
        assert resp.status == 410
        status = await resp.json()
    assert status["reason"] == "Expired"
    assert status["message"].startswith("The provided continue parameter is too old")


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"continue": "abc", "resourceVersion": "5"}, 400),
        ({"continue": "!!notatoken"}, 400),
        ({"resourceVersionMatch": "Exact"}, 422),
        ({"resourceVersionMatch": "Exact", "resourceVersion": "0"}, 422),
        ({"resourceVersionMatch": "Sometimes", "resourceVersion": "1"}, 422),
        ({"resourceVersion": "abc"}, 400),
        ({"limit": "many"}, 400),
    ],
)
async def test_inconsistent_list_options_are_refused(
    http: aiohttp.ClientSession, params: dict[str, str], code: int
) -> None:
    """Option combinations the real server refuses answer 400 or 422 with a Status."""
    async with http.get("/api/v1/namespaces/default/pods", params=params) as resp:
        assert resp.status == code
        assert (await resp.json())["kind"] == "Status"
