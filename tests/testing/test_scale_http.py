"""The ``/scale`` subresource of the built-in workloads, over HTTP.

Specified by ``pkg/registry/apps/{deployment,replicaset,statefulset}/storage/storage.go`` and
``pkg/registry/core/replicationcontroller/storage/storage.go`` (``ScaleREST``: the Scale read
from the object, an update written to ``spec.replicas`` with the Scale's
``resourceVersion`` as precondition), ``pkg/apis/autoscaling/validation``
(``ValidateScale``) and the API reference (``autoscaling/v1`` ``Scale``: ``spec.replicas``
omitted when 0, ``status.selector`` the label selector in string form).
"""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest

from aioinformer.testing import FakeApiServer
from aioinformer.testing._apiserver._registry._scale import label_selector_text

from .valid import deployment

APPS = "/apis/apps/v1/namespaces/default"
MERGE = {"Content-Type": "application/merge-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}


async def _json(response: aiohttp.ClientResponse) -> Any:
    return orjson.loads(await response.read())


def _workload(kind: str, name: str) -> dict[str, Any]:
    obj = deployment(name)
    obj["kind"] = kind
    if kind == "StatefulSet":
        obj["spec"]["serviceName"] = name
    return obj


@pytest.mark.parametrize(
    ("plural", "kind"),
    [("deployments", "Deployment"), ("replicasets", "ReplicaSet"), ("statefulsets", "StatefulSet")],
)
async def test_get_put_and_patch_the_scale_of_an_apps_workload(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession, plural: str, kind: str
) -> None:
    """GET answers an ``autoscaling/v1`` ``Scale`` (``spec.replicas``, ``status.replicas``,
    ``status.selector``); a merge, strategic or JSON patch applies to that Scale and a PUT
    replaces it; the workload's ``spec.replicas`` changes, its ``generation`` is bumped by its
    own update rules and ``managedFields`` record the writer with ``subresource: scale``."""
    fake_apiserver.objects.create(f"{plural}.apps", _workload(kind, "web"))
    base = f"{APPS}/{plural}/web/scale"
    async with http.get(base) as resp:
        scale = await _json(resp)
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 1}
    assert scale["status"] == {"replicas": 0, "selector": "app=web"}
    assert scale["metadata"]["name"] == "web"
    async with http.patch(base, json={"spec": {"replicas": 3}}, headers=MERGE) as resp:
        assert (await _json(resp))["spec"] == {"replicas": 3}
    async with http.patch(base, json={"spec": {"replicas": 4}}, headers=STRATEGIC) as resp:
        assert (await _json(resp))["spec"] == {"replicas": 4}
    replace = [{"op": "replace", "path": "/spec/replicas", "value": 5}]
    async with http.patch(base, json=replace, headers=JSON_PATCH) as resp:
        assert (await _json(resp))["spec"] == {"replicas": 5}
    async with http.put(base, json={**scale, "spec": {"replicas": 0}}) as resp:
        assert resp.status == 409  # stale resourceVersion in the Scale
    put = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}}
    async with http.put(base, json={**put, "spec": {"replicas": 0}}) as resp:
        assert resp.status == 200
        assert (await _json(resp))["spec"] == {}  # replicas 0 is omitted
    stored = fake_apiserver.objects.get(f"{plural}.apps", "web")
    assert (stored["spec"]["replicas"], stored["metadata"]["generation"]) == (0, 5)
    scaled = [e for e in stored["metadata"]["managedFields"] if e.get("subresource") == "scale"]
    assert scaled and scaled[0]["operation"] == "Update"


async def test_negative_replicas_are_invalid(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``ValidateScale``: 422 ``Scale.autoscaling "web" is invalid: spec.replicas: Invalid
    value: -1: must be greater than or equal to 0``; nothing is written."""
    fake_apiserver.objects.create("deployments.apps", deployment("web", replicas=2))
    body = {"spec": {"replicas": -1}}
    async with http.patch(f"{APPS}/deployments/web/scale", json=body, headers=MERGE) as resp:
        assert resp.status == 422
        failure = await _json(resp)
    assert failure["message"] == (
        'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be '
        "greater than or equal to 0"
    )
    assert fake_apiserver.objects.get("deployments.apps", "web")["spec"]["replicas"] == 2


async def test_the_scale_of_a_replication_controller(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A ReplicationController's Scale selector is its selector map in string form
    (``labels.SelectorFromSet``); dry runs answer and store nothing."""
    rc = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "old"},
        "spec": {
            "selector": {"tier": "web", "app": "old"},
            "template": {
                "metadata": {"labels": {"tier": "web", "app": "old"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }
    fake_apiserver.objects.create("replicationcontrollers", rc)
    base = "/api/v1/namespaces/default/replicationcontrollers/old/scale"
    async with http.get(base) as resp:
        assert (await _json(resp))["status"] == {"replicas": 0, "selector": "app=old,tier=web"}
    patch = {"spec": {"replicas": 2}}
    async with http.patch(f"{base}?dryRun=All", json=patch, headers=MERGE) as resp:
        assert (await _json(resp))["spec"] == {"replicas": 2}
    assert fake_apiserver.objects.get("replicationcontrollers", "old")["spec"]["replicas"] == 1


async def test_kinds_without_scale_have_no_scale_path(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """Only the workloads serve ``/scale`` (a ConfigMap's is 404) and discovery lists
    ``deployments/scale`` as ``autoscaling/v1`` ``Scale``."""
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "c"}})
    async with http.get("/api/v1/namespaces/default/configmaps/c/scale") as resp:
        assert resp.status == 404
    async with http.get("/apis/apps/v1") as resp:
        listed = {r["name"]: r for r in (await _json(resp))["resources"]}
    scale = listed["deployments/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        ({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2"),
        (
            {
                "matchLabels": {"app": "x"},
                "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["web", "api"]},
                    {"key": "env", "operator": "NotIn", "values": ["dev"]},
                    {"key": "canary", "operator": "DoesNotExist"},
                    {"key": "zone", "operator": "Exists"},
                ],
            },
            "app=x,!canary,env notin (dev),tier in (api,web),zone",
        ),
        ({}, ""),
        (None, ""),
    ],
)
def test_label_selector_in_string_form(selector: Any, text: str) -> None:
    """``metav1.LabelSelectorAsSelector(s).String()``: requirements sorted by key, values
    sorted, ``!key`` for DoesNotExist; an empty selector is ``""``."""
    assert label_selector_text(selector) == text
