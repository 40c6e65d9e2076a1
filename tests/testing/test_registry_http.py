"""The registry's rules on every HTTP write path: status, generation, validation, dry run.

Raw HTTP (aiohttp), so the exact answers are visible: codes, ``Status`` bodies, ``Warning``
headers. Each test states the real server's behaviour and where it is specified.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest

from aioinformer.testing import FakeApiServer

from .valid import deployment, pod
from .watching import decode, raw_lines

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
SERVICES = "/api/v1/namespaces/default/services"
APPLY = {"Content-Type": "application/apply-patch+yaml"}
MERGE = {"Content-Type": "application/merge-patch+json"}


async def _json(response: aiohttp.ClientResponse) -> Any:
    return orjson.loads(await response.read())


async def test_a_deployment_put_carrying_status_keeps_the_stored_status(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """Issue 12 acceptance: a main-resource PUT carrying ``status`` keeps the stored status
    (``deploymentStrategy.PrepareForUpdate``: ``newDeployment.Status = oldDeployment.Status``);
    a create resets it (``PrepareForCreate``); only ``/status`` writes it, and a status write
    keeps the spec and the generation (``deploymentStatusStrategy.PrepareForUpdate``)."""
    sent = {**deployment("web"), "status": {"replicas": 7}}
    async with http.post(DEPLOYMENTS, json=sent) as resp:
        assert resp.status == 201
        assert (await _json(resp))["status"] == {}
    async with http.put(f"{DEPLOYMENTS}/web/status", json={**sent, "status": {"replicas": 1}}):
        pass
    put = {**deployment("web", replicas=3), "status": {"replicas": 99}}
    async with http.put(f"{DEPLOYMENTS}/web", json=put) as resp:
        answered = await _json(resp)
    assert answered["status"] == {"replicas": 1}
    assert answered["spec"]["replicas"] == 3 and answered["metadata"]["generation"] == 2
    status_write = {**deployment("web", replicas=9), "status": {"replicas": 3}}
    async with http.put(f"{DEPLOYMENTS}/web/status", json=status_write) as resp:
        answered = await _json(resp)
    assert answered["spec"]["replicas"] == 3 and answered["status"] == {"replicas": 3}
    assert answered["metadata"]["generation"] == 2
    assert fake_apiserver.objects.get("deployments.apps", "web") == answered


async def test_status_is_served_and_advertised_only_where_the_kind_has_it(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """Issue 12 acceptance: ``GET configmaps/x/status`` is 404 — ConfigMaps have no status
    subresource (``pkg/registry/core/configmap/storage`` has no StatusREST) — and discovery
    lists ``deployments/status`` and ``pods/status`` but no ``configmaps/status``."""
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "x"}})
    async with http.get(f"{CONFIGMAPS}/x/status") as resp:
        assert resp.status == 404
    async with http.patch(f"{CONFIGMAPS}/x/status", json={"status": {}}, headers=MERGE) as resp:
        assert resp.status == 404
    async with http.get("/api/v1") as resp:
        core = {r["name"] for r in (await _json(resp))["resources"]}
    async with http.get("/apis/apps/v1") as resp:
        apps = {r["name"] for r in (await _json(resp))["resources"]}
    assert "pods/status" in core and "configmaps/status" not in core
    assert "deployments/status" in apps


async def test_generation_exists_where_real_keeps_one_and_moves_when_real_bumps_it(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``metadata.generation``: none on ConfigMaps, Secrets and Namespaces (their strategies
    never set it); 1 on a Deployment's create, bumped by spec changes and by annotation
    changes (``deploymentStrategy.PrepareForUpdate``: annotations are copied to ReplicaSets),
    not by label changes."""
    async with http.post(CONFIGMAPS, json={"metadata": {"name": "c"}, "data": {"a": "1"}}):
        pass
    async with http.patch(f"{CONFIGMAPS}/c", json={"data": {"a": "2"}}, headers=MERGE) as resp:
        assert "generation" not in (await _json(resp))["metadata"]
    namespace = fake_apiserver.objects.get("namespaces", "default")
    assert "generation" not in namespace["metadata"]
    fake_apiserver.objects.create("deployments.apps", deployment("web"))
    generations = []
    for patch in (
        {"metadata": {"labels": {"x": "y"}}},
        {"metadata": {"annotations": {"note": "1"}}},
        {"spec": {"replicas": 2}},
    ):
        async with http.patch(f"{DEPLOYMENTS}/web", json=patch, headers=MERGE) as resp:
            generations.append((await _json(resp))["metadata"]["generation"])
    assert generations == [1, 2, 3]


async def test_field_validation_warns_refuses_or_ignores_unknown_fields(
    http: aiohttp.ClientSession,
) -> None:
    """``fieldValidation`` (apiserver ``handlers/create.go``, KEP-2885): ``Warn`` (the
    default) answers one ``Warning: 299 - "unknown field \\"…\\""`` header per field,
    ``Strict`` a 400 naming every field, ``Ignore`` nothing; the fields are pruned. Fields
    come in the order of the document (``sigs.k8s.io/json`` strict decoding)."""
    body = deployment("web")
    body["spec"]["replica"] = 3
    body["spec"]["template"]["spec"]["containers"][0]["imag"] = "x"
    async with http.post(f"{DEPLOYMENTS}?fieldValidation=Strict", json=body) as resp:
        assert resp.status == 400
        assert (await _json(resp))["message"] == (
            'Deployment in version "v1" cannot be handled as a Deployment: strict decoding '
            'error: unknown field "spec.template.spec.containers[0].imag", unknown field '
            '"spec.replica"'
        )
    async with http.post(DEPLOYMENTS, json=body) as resp:
        assert resp.status == 201
        assert resp.headers.getall("Warning") == [
            '299 - "unknown field \\"spec.template.spec.containers[0].imag\\""',
            '299 - "unknown field \\"spec.replica\\""',
        ]
        stored = await _json(resp)
    assert "replica" not in stored["spec"] and stored["spec"]["replicas"] == 1
    body["metadata"]["name"] = "other"
    async with http.post(f"{DEPLOYMENTS}?fieldValidation=Ignore", json=body) as resp:
        assert resp.status == 201 and "Warning" not in resp.headers


async def test_an_invalid_object_is_a_422_naming_its_kind(http: aiohttp.ClientSession) -> None:
    """``errors.NewInvalid``: 422 ``Invalid``, ``details.kind`` the Kind (not the plural),
    ``details.group``, one cause per field error with its reason and path
    (``ValidateDeployment``, ``ValidatePodSpec``)."""
    body = deployment("web")
    body["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    body["metadata"]["labels"] = {"bad key!": "x"}
    async with http.post(DEPLOYMENTS, json=body) as resp:
        assert resp.status == 422
        status = await _json(resp)
    assert status["reason"] == "Invalid"
    assert (status["details"]["kind"], status["details"]["group"]) == ("Deployment", "apps")
    fields = [(c["reason"], c["field"]) for c in status["details"]["causes"]]
    assert ("FieldValueRequired", "spec.template.spec.containers[0].image") in fields
    assert ("FieldValueInvalid", "metadata.labels") in fields
    assert status["message"].startswith('Deployment.apps "web" is invalid: [')


async def test_an_update_may_not_change_an_immutable_field(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """apps/v1 selectors are immutable (``ValidateDeploymentUpdate``): 422 ``field is
    immutable``, and the stored object is unchanged."""
    before = fake_apiserver.objects.create("deployments.apps", deployment("web"))
    patch = {"spec": {"selector": {"matchLabels": {"app": "other"}}}}
    async with http.patch(f"{DEPLOYMENTS}/web", json=patch, headers=MERGE) as resp:
        assert resp.status == 422
        assert "field is immutable" in (await _json(resp))["message"]
    assert fake_apiserver.objects.get("deployments.apps", "web") == before


async def test_a_pod_comes_back_defaulted_with_its_status_reset(
    http: aiohttp.ClientSession,
) -> None:
    """A Pod sent with a name and one container comes back defaulted
    (``SetDefaults_PodSpec``, ``SetDefaults_Container``, the ServiceAccount and
    DefaultTolerationSeconds admission plugins) and ``Pending`` whatever status it was sent
    with (``podStrategy.PrepareForCreate``)."""
    body = {**pod("web"), "status": {"phase": "Running"}}
    async with http.post("/api/v1/namespaces/default/pods", json=body) as resp:
        created = await _json(resp)
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    spec = created["spec"]
    assert (spec["restartPolicy"], spec["dnsPolicy"], spec["serviceAccountName"]) == (
        "Always",
        "ClusterFirst",
        "default",
    )
    assert spec["containers"][0]["imagePullPolicy"] == "Always"


async def test_services_get_a_cluster_ip_that_a_delete_releases(
    http: aiohttp.ClientSession,
) -> None:
    """The Service REST storage allocates a cluster IP from the service CIDR (and node ports
    for ``NodePort``); a taken IP is a 422; a delete frees it."""
    body = {"metadata": {"name": "a"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}}
    async with http.post(SERVICES, json=body) as resp:
        spec = (await _json(resp))["spec"]
    assert spec["clusterIP"].startswith("10.") and spec["clusterIPs"] == [spec["clusterIP"]]
    assert 30000 <= spec["ports"][0]["nodePort"] <= 32767
    taken = {"metadata": {"name": "b"}, "spec": {"clusterIP": spec["clusterIP"]}}
    taken["spec"]["ports"] = [{"port": 80}]
    async with http.post(SERVICES, json=taken) as resp:
        assert resp.status == 422
        assert "provided IP is already allocated" in (await _json(resp))["message"]
    async with http.delete(f"{SERVICES}/a"):
        pass
    async with http.post(SERVICES, json=taken) as resp:
        assert resp.status == 201


@pytest.mark.fake_apiserver(system_objects=False)  # counts its own objects only
async def test_dry_run_answers_every_write_and_stores_nothing(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``dryRun=All`` on create, update, patch, apply, delete and deletecollection
    (apiserver ``DryRunnableStorage``): validated and defaulted, answered as if stored, but
    no resource version is taken, storage is unchanged and a watch hears nothing."""
    fake_apiserver.objects.create("configmaps", {"metadata": {"name": "kept"}, "data": {"a": "1"}})
    before = fake_apiserver.objects.list("configmaps")
    rv = fake_apiserver.objects.resource_version
    params = {"watch": "1", "resourceVersion": rv}
    async with http.get(CONFIGMAPS, params=params) as watch:
        dry = "?dryRun=All"
        async with http.post(CONFIGMAPS + dry, json={"metadata": {"name": "new"}}) as resp:
            assert resp.status == 201
            assert (await _json(resp))["metadata"]["uid"]
        put = {"metadata": {"name": "kept"}, "data": {"a": "2"}}
        async with http.put(f"{CONFIGMAPS}/kept{dry}", json=put) as resp:
            assert (await _json(resp))["data"] == {"a": "2"}
        patch = {"data": {"a": "3"}}
        async with http.patch(f"{CONFIGMAPS}/kept{dry}", json=patch, headers=MERGE) as resp:
            assert (await _json(resp))["data"] == {"a": "3"}
        config = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\ndata: {a: '4'}\n"
        url = f"{CONFIGMAPS}/kept{dry}&fieldManager=me&force=true"
        async with http.patch(url, data=config, headers=APPLY) as resp:
            assert (await _json(resp))["data"] == {"a": "4"}
        async with http.delete(f"{CONFIGMAPS}/kept{dry}") as resp:
            assert (await _json(resp))["status"] == "Success"
        async with http.delete(CONFIGMAPS, json={"dryRun": ["All"]}) as resp:
            assert [o["metadata"]["name"] for o in (await _json(resp))["items"]] == ["kept"]
        async with http.post(CONFIGMAPS + dry, json={"metadata": {"name": "Bad_Name"}}) as resp:
            assert resp.status == 422
        async with http.post(f"{CONFIGMAPS}?dryRun=Some", json={"metadata": {"name": "x"}}) as r:
            assert r.status == 422
        assert fake_apiserver.objects.resource_version == rv
        assert fake_apiserver.objects.list("configmaps") == before
        fake_apiserver.objects.create("configmaps", {"metadata": {"name": "real"}})
        (event,) = decode(await raw_lines(watch, 1))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "real")


async def test_finalizers_cannot_be_added_to_a_terminating_object(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``ValidateObjectMetaUpdate``: no new finalizers once ``deletionTimestamp`` is set
    (422); the generation of a kind that has one is bumped when deletion starts
    (``rest.BeforeDelete``)."""
    body = {**deployment("web"), "metadata": {"name": "web", "finalizers": ["a.io/x"]}}
    fake_apiserver.objects.create("deployments.apps", body)
    async with http.delete(f"{DEPLOYMENTS}/web") as resp:
        marked = await _json(resp)
    assert marked["metadata"]["deletionTimestamp"] and marked["metadata"]["generation"] == 2
    patch = {"metadata": {"finalizers": ["a.io/x", "b.io/y"]}}
    async with http.patch(f"{DEPLOYMENTS}/web", json=patch, headers=MERGE) as resp:
        assert resp.status == 422
        assert "no new finalizers can be added" in (await _json(resp))["message"]
