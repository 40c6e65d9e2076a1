"""Big objects and big lists: 1 MiB objects over HTTP, 10,000 objects in one page."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import orjson
import pytest
from kubernetes_asyncio.client import ApiClient, ApiException, CoreV1Api

from aioinformer.testing import FakeApiServer

#: The most a ConfigMap may hold (``ValidateConfigMap``: ``MaxSecretSize``, 1 MiB of data).
LIMIT = 1024 * 1024


async def _read_line(response: aiohttp.ClientResponse) -> bytes:
    """One watch line of any size, framed from raw chunks."""
    buffer = bytearray()
    async with asyncio.timeout(10):
        async for chunk in response.content.iter_any():
            buffer += chunk
            if b"\n" in chunk:
                break
    return bytes(buffer)


# kubernetes_asyncio posts the body as raw bytes, which aiohttp (the client) warns about.
@pytest.mark.filterwarnings("ignore:Sending a large body directly:ResourceWarning")
async def test_a_1_mib_object_can_be_created_read_and_watched(
    fake_apiserver: FakeApiServer, api: ApiClient, http: aiohttp.ClientSession
) -> None:
    """A ConfigMap of the largest size a real server stores (1 MiB of values, the limit of
    ``ValidateConfigMap``; one byte more is 422) is accepted over HTTP, read back intact,
    and streamed as one event. (The test used 5 MB, which a real server refuses.)"""
    core: Any = CoreV1Api(api)  # dict bodies: the generated signatures want models
    with pytest.raises(ApiException) as too_big:
        await core.create_namespaced_config_map(
            "default", {"metadata": {"name": "big"}, "data": {"blob": "x" * (LIMIT + 1)}}
        )
    assert too_big.value.status == 422
    payload = "x" * LIMIT
    params = {"watch": "1", "resourceVersion": fake_apiserver.objects.resource_version}
    async with http.get("/api/v1/namespaces/default/configmaps", params=params) as watch:
        await core.create_namespaced_config_map(
            "default", {"metadata": {"name": "big"}, "data": {"blob": payload}}
        )
        event = orjson.loads(await _read_line(watch))
    assert event["type"] == "ADDED" and len(event["object"]["data"]["blob"]) == LIMIT
    read = await core.read_namespaced_config_map("big", "default")
    assert read.data["blob"] == payload


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_ten_thousand_objects_list_in_one_page(
    fake_apiserver: FakeApiServer, api: ApiClient
) -> None:
    """A LIST of 10,000 objects answers them all in one page (and pages them with a limit)."""
    for i in range(10_000):
        fake_apiserver.objects.create(
            "configmaps", {"metadata": {"name": f"cm-{i:05d}"}, "data": {"i": str(i)}}
        )
    core: Any = CoreV1Api(api)  # raw responses (_preload_content=False)
    response = await core.list_namespaced_config_map("default", _preload_content=False)
    document = orjson.loads(await response.read())
    assert len(document["items"]) == 10_000
    assert document["items"][-1]["metadata"]["name"] == "cm-09999"
    response = await core.list_namespaced_config_map(
        "default", limit=10_000, _preload_content=False
    )
    assert len(orjson.loads(await response.read())["items"]) == 10_000
