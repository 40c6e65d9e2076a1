"""CustomResourceDefinitions served by the fake: created in process and over HTTP, their
resources served at once, with the real server's answers.

Raw HTTP (aiohttp) so codes, ``Status`` bodies and ``Warning`` headers are visible. Each test
names the real behaviour and where it is specified: apiextensions-apiserver sources
(``pkg/apiserver/customresource_handler.go``, ``pkg/registry/customresource``,
``pkg/controller/{status,establish,finalizer}``, ``customresource_discovery_controller.go``)
and the API documentation ("Extend the Kubernetes API with CustomResourceDefinitions",
"Versions in CustomResourceDefinitions").
"""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest

from aioinformer.errors import NotFoundError
from aioinformer.testing import FakeApiServer
from aioinformer.testing._apiserver._manifests import create_manifest_objects

from .crd_fixtures import crontab, crontab_crd
from .watching import decode, raw_lines

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
V1 = "/apis/stable.example.com/v1/namespaces/default/crontabs"
V1BETA1 = "/apis/stable.example.com/v1beta1/namespaces/default/crontabs"
RESOURCE = "crontabs.stable.example.com"
MERGE = {"Content-Type": "application/merge-patch+json"}
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


async def _json(response: aiohttp.ClientResponse) -> Any:
    return orjson.loads(await response.read())


@pytest.fixture
def served(fake_apiserver: FakeApiServer) -> FakeApiServer:
    """The server with the CronTab CRD created in process."""
    fake_apiserver.objects.create("customresourcedefinitions", crontab_crd())
    return fake_apiserver


def _conditions(crd: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in crd["status"]["conditions"]}


async def test_a_crd_created_over_http_is_established_and_served_at_once(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A CRD create answers the object as stored (``strategy.PrepareForCreate``: a reset
    status holding the storage version, ``generation: 1``); the naming and establishing
    controllers then write ``acceptedNames`` and ``NamesAccepted``/``Established``
    (``controller/status/naming_controller.go``, ``controller/establish``), and the resource
    is served in every served version: legacy discovery lists it with ``/status`` and, where
    the version asks, ``/scale`` as an ``autoscaling/v1`` ``Scale``
    (``customresource_discovery_controller.go``); ``/apis`` prefers the GA version."""
    async with http.post(CRDS, json=crontab_crd()) as resp:
        assert resp.status == 201
        created = await _json(resp)
    assert created["status"]["storedVersions"] == ["v1"]
    assert created["metadata"]["generation"] == 1
    stored = fake_apiserver.objects.get("customresourcedefinitions", RESOURCE)
    assert _conditions(stored) == {
        "NamesAccepted": ("True", "NoConflicts"),
        "Established": ("True", "InitialNamesAccepted"),
    }
    accepted = stored["status"]["acceptedNames"]
    assert (accepted["kind"], accepted["plural"], accepted["listKind"]) == (
        "CronTab",
        "crontabs",
        "CronTabList",
    )
    async with http.get("/apis/stable.example.com/v1") as resp:
        v1 = {r["name"]: r for r in (await _json(resp))["resources"]}
    assert set(v1) == {"crontabs", "crontabs/status", "crontabs/scale"}
    assert (v1["crontabs/scale"]["group"], v1["crontabs/scale"]["kind"]) == ("autoscaling", "Scale")
    assert v1["crontabs"]["shortNames"] == ["ct"]
    async with http.get("/apis/stable.example.com/v1beta1") as resp:
        v1beta1 = {r["name"] for r in (await _json(resp))["resources"]}
    assert v1beta1 == {"crontabs", "crontabs/status"}
    async with http.get("/apis") as resp:
        groups = {g["name"]: g for g in (await _json(resp))["groups"]}
    assert groups["stable.example.com"]["preferredVersion"]["version"] == "v1"
    async with http.post(V1, json=crontab()) as resp:
        assert resp.status == 201


async def test_objects_are_validated_by_the_structural_schema(
    served: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A custom resource is validated by its version's schema only
    (``registry/customresource/validator.go`` with kube-openapi's validators): 422
    ``Invalid`` naming the kind and group, one cause per failed rule with the field path
    (``spec.replicas in body should be less than or equal to 10``)."""
    bad = crontab("bad", cronSpec="never", replicas=50)
    async with http.post(V1, json=bad) as resp:
        assert resp.status == 422
        failure = await _json(resp)
    assert failure["reason"] == "Invalid"
    assert (failure["details"]["kind"], failure["details"]["group"]) == (
        "CronTab",
        "stable.example.com",
    )
    causes = {c["field"]: c for c in failure["details"]["causes"]}
    assert set(causes) == {"spec.cronSpec", "spec.replicas"}
    assert "should be less than or equal to 10" in causes["spec.replicas"]["message"]
    with pytest.raises(NotFoundError):
        served.objects.get(RESOURCE, "bad")


async def test_unknown_fields_are_pruned_and_defaults_applied(
    served: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """Unknown fields are pruned (``pkg/apiserver/schema/pruning``) and reported per
    ``fieldValidation``: ``Warn`` (the default) as ``Warning`` headers, ``Strict`` as 400
    ``strict decoding error: unknown field "spec.foo"``; defaults of the schema are applied
    (``pkg/apiserver/schema/defaulting``). Fields under
    ``x-kubernetes-preserve-unknown-fields`` are kept as sent."""
    sent = crontab(foo=1, config={"anything": {"goes": [1, 2]}})
    async with http.post(V1, json=sent) as resp:
        assert resp.status == 201
        warnings = resp.headers.getall("Warning")
        created = await _json(resp)
    assert warnings == ['299 - "unknown field \\"spec.foo\\""']
    assert created["spec"] == {
        "cronSpec": "*/5 * * * *",
        "image": "my-awesome-cron-image",
        "replicas": 1,
        "config": {"anything": {"goes": [1, 2]}},
    }
    strict = crontab("strict", foo=1)
    async with http.post(f"{V1}?fieldValidation=Strict", json=strict) as resp:
        assert resp.status == 400
        assert 'strict decoding error: unknown field "spec.foo"' in (await _json(resp))["message"]


async def test_status_subresource_semantics(
    served: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """With ``subresources.status`` a create drops ``status``, main-resource writes keep the
    stored one and bump ``generation`` only for changes outside ``metadata``/``status``; a
    ``/status`` write keeps everything else (``registry/customresource/strategy.go``,
    ``status_strategy.go``)."""
    async with http.post(V1, json={**crontab(), "status": {"replicas": 9}}) as resp:
        assert "status" not in await _json(resp)
    status = {**crontab(), "status": {"replicas": 2}, "spec": {"cronSpec": "1 * * * *"}}
    status["metadata"] = served.objects.get(RESOURCE, "nightly")["metadata"]
    async with http.put(f"{V1}/nightly/status", json=status) as resp:
        answered = await _json(resp)
    assert answered["status"] == {"replicas": 2}
    assert answered["spec"]["cronSpec"] == "*/5 * * * *"
    assert answered["metadata"]["generation"] == 1
    patch = {"spec": {"replicas": 3}, "status": {"replicas": 7}}
    async with http.patch(f"{V1}/nightly", json=patch, headers=MERGE) as resp:
        answered = await _json(resp)
    assert answered["status"] == {"replicas": 2}
    assert (answered["spec"]["replicas"], answered["metadata"]["generation"]) == (3, 2)


async def test_scale_subresource_of_a_custom_resource(
    served: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``/scale`` reads ``specReplicasPath``, ``statusReplicasPath`` and
    ``labelSelectorPath`` into an ``autoscaling/v1`` ``Scale``; a PUT or PATCH of the Scale
    writes ``specReplicasPath`` and the object goes through its update rules
    (``registry/customresource/etcd.go``, ``ScaleREST``); a version without ``scale`` has no
    such path (404)."""
    served.objects.create(RESOURCE, crontab())
    served.objects.patch(
        RESOURCE, "nightly", {"status": {"replicas": 1, "labelSelector": "app=cron"}},
        subresource="status",
    )  # fmt: skip
    async with http.get(f"{V1}/nightly/scale") as resp:
        scale = await _json(resp)
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 1}
    assert scale["status"] == {"replicas": 1, "selector": "app=cron"}
    async with http.patch(
        f"{V1}/nightly/scale", json={"spec": {"replicas": 4}}, headers=MERGE
    ) as resp:
        assert resp.status == 200
        assert (await _json(resp))["spec"] == {"replicas": 4}
    scale = {**scale, "spec": {"replicas": 5}}
    async with http.put(f"{V1}/nightly/scale", json=scale) as resp:
        assert resp.status == 409  # the Scale's resourceVersion is a precondition
    del scale["metadata"]["resourceVersion"]
    async with http.put(f"{V1}/nightly/scale", json=scale) as resp:
        assert resp.status == 200
    stored = served.objects.get(RESOURCE, "nightly")
    assert (stored["spec"]["replicas"], stored["metadata"]["generation"]) == (5, 3)
    async with http.put(f"{V1}/nightly/scale", json={**scale, "spec": {"replicas": 50}}) as resp:
        assert resp.status == 422  # the schema's maximum, checked on the CronTab
    async with http.get(f"{V1BETA1}/nightly/scale") as resp:
        assert resp.status == 404


async def test_printer_columns_in_server_side_tables(
    served: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``kubectl get`` shows a CRD version's ``additionalPrinterColumns``: a ``Name`` column,
    then one per printer column, cells from their JSONPath
    (``registry/customresource/tableconvertor``); a version without printer columns shows
    ``Age`` (``customresource_handler.go``)."""
    served.objects.create(RESOURCE, crontab())
    async with http.get(V1, headers=TABLE) as resp:
        table = await _json(resp)
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == ["Name", "Spec", "Replicas", "Age"]
    assert table["rows"][0]["cells"][:3] == ["nightly", "*/5 * * * *", 1]
    async with http.get(V1BETA1, headers=TABLE) as resp:
        names = [c["name"] for c in (await _json(resp))["columnDefinitions"]]
    assert names == ["Name", "Age"]


async def test_lists_carry_the_crds_list_kind(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A list of custom resources is of the CRD's ``names.listKind``
    (``customresource_handler.go``: the ``ListKind`` of the accepted names)."""
    crd = crontab_crd()
    crd["spec"]["names"]["listKind"] = "CronTabCollection"
    fake_apiserver.objects.create("customresourcedefinitions", crd)
    async with http.get(V1) as resp:
        listed = await _json(resp)
    assert (listed["kind"], listed["apiVersion"]) == ("CronTabCollection", "stable.example.com/v1")


async def test_versions_share_one_storage_version(
    served: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """Objects are kept in the storage version whatever version wrote them; conversion
    ``strategy: None`` rewrites only ``apiVersion``, and each version prunes by its own
    schema (``pkg/apiserver/conversion/nop_converter.go``, the storage codec of
    ``customresource_handler.go``). A watch in one version sees writes made in another,
    converted; a deprecated version answers with a ``Warning``."""
    async with http.get(f"{V1BETA1}?watch=1&resourceVersion=0") as watch:
        sent = {**crontab(), "apiVersion": "stable.example.com/v1beta1"}
        async with http.post(V1BETA1, json=sent) as resp:
            assert resp.status == 201
        served.objects.patch(RESOURCE, "nightly", {"spec": {"concurrencyPolicy": "Forbid"}})
        events = decode(await raw_lines(watch, 2))
    objects = [e["object"] for e in events]
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED"]
    assert {o["apiVersion"] for o in objects} == {"stable.example.com/v1beta1"}
    assert "concurrencyPolicy" not in objects[1]["spec"]  # v1beta1 has no such field
    table = served._storage.objects(served.resource(RESOURCE))
    assert table["default/nightly"]["apiVersion"] == "stable.example.com/v1"
    assert served.objects.get(RESOURCE, "nightly")["spec"]["concurrencyPolicy"] == "Forbid"


async def test_strategic_merge_patch_on_a_custom_resource_is_415(
    served: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """Custom resources have no Go struct, so no patch strategies: a strategic merge patch is
    415 naming the accepted types (``customresource_handler.go``: ``supportedTypes``)."""
    served.objects.create(RESOURCE, crontab())
    strategic = {"Content-Type": "application/strategic-merge-patch+json"}
    async with http.patch(f"{V1}/nightly", json={"spec": {}}, headers=strategic) as resp:
        assert resp.status == 415
        message = (await _json(resp))["message"]
    assert "application/merge-patch+json" in message and "strategic" not in message


async def test_deleting_a_crd_deletes_its_objects_and_stops_serving(
    served: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A CRD DELETE answers the CRD marked (``deletionTimestamp``, the
    ``customresourcecleanup.apiextensions.k8s.io`` finalizer, ``Terminating``); the
    finalizer controller deletes every object (watchers see ``DELETED``), removes the
    finalizer and the CRD is gone; the resource is no longer served and its watches end, as
    its storage is destroyed (``registry/customresourcedefinition/etcd.go``,
    ``controller/finalizer``, ``customresource_handler.go``: ``removeStorage``)."""
    served.objects.create(RESOURCE, crontab())
    async with http.get(f"{V1}?watch=1&resourceVersion=0") as watch:
        async with http.delete(f"{CRDS}/{RESOURCE}") as resp:
            marked = await _json(resp)
        events = decode(await raw_lines(watch))  # every line until the watch ends
    assert marked["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert marked["metadata"]["deletionTimestamp"]
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]
    with pytest.raises(NotFoundError):
        served.objects.get("customresourcedefinitions", RESOURCE)
    async with http.get(V1) as resp:
        assert resp.status == 404
    async with http.get("/apis/stable.example.com/v1") as resp:
        assert resp.status == 404


async def test_field_selectors_use_the_crd_schema_not_go_zero_values(
    fake_apiserver: FakeApiServer,
) -> None:
    """A custom resource's field set holds its ``selectableFields`` as found, ``""`` when
    missing (``registry/customresource/strategy.go``, ``GetAttrs``): no built-in Go zero
    value (``status.replicas=0`` selects only objects that have it)."""
    crd = crontab_crd()
    crd["spec"]["versions"][1]["selectableFields"] = [{"jsonPath": ".status.replicas"}]
    fake_apiserver.objects.create("customresourcedefinitions", crd)
    fake_apiserver.objects.create(RESOURCE, crontab("fresh"))
    fake_apiserver.objects.create(RESOURCE, crontab("scaled"))
    fake_apiserver.objects.patch(
        RESOURCE, "scaled", {"status": {"replicas": 0}}, subresource="status"
    )

    def names(selector: str) -> list[str]:
        found = fake_apiserver.objects.list(RESOURCE, field_selector=selector)
        return [o["metadata"]["name"] for o in found]

    assert names("status.replicas=0") == ["scaled"]
    assert names("status.replicas=") == ["fresh"]


async def test_a_manifest_with_a_crd_and_its_objects_loads(fake_apiserver: FakeApiServer) -> None:
    """A manifest may hold a CRD followed by objects of its kind (as ``kubectl apply -f``
    of such a file works once the CRD is established)."""
    created = await create_manifest_objects(fake_apiserver, [crontab_crd(), crontab()])
    assert [o["kind"] for o in created] == ["CustomResourceDefinition", "CronTab"]
    assert fake_apiserver.objects.get(RESOURCE, "nightly")["spec"]["replicas"] == 1


async def test_an_invalid_crd_is_422_with_the_causes(http: aiohttp.ClientSession) -> None:
    """A CRD whose schema is not structural is refused: 422 ``CustomResourceDefinition.
    apiextensions.k8s.io "…" is invalid`` with a cause per problem
    (``pkg/apis/apiextensions/validation/validation.go``, ``pkg/apiserver/schema``:
    ``ValidateStructural``); nothing is served."""
    crd = crontab_crd()
    del crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"]
    async with http.post(CRDS, json=crd) as resp:
        assert resp.status == 422
        failure = await _json(resp)
    assert failure["details"]["kind"] == "CustomResourceDefinition"
    fields = [c["field"] for c in failure["details"]["causes"]]
    assert "spec.versions[1].schema.openAPIV3Schema.properties[spec].type" in fields
    async with http.get("/apis/stable.example.com/v1") as resp:
        assert resp.status == 404


def test_names_another_crd_holds_are_not_accepted(fake_apiserver: FakeApiServer) -> None:
    """A CRD whose kind (and so list kind) another CRD of the group has accepted gets
    ``NamesAccepted`` ``False`` with the last conflict found (names are checked plural,
    singular, short names, kind, list kind: ``ListKindConflict``) and is not
    ``Established``, so nothing new is served (``controller/status/naming_controller.go``,
    ``calculateNamesAndConditions``; ``controller/establish``)."""
    fake_apiserver.objects.create("customresourcedefinitions", crontab_crd())
    other = crontab_crd()
    other["metadata"]["name"] = "othertabs.stable.example.com"
    other["spec"]["names"] = {"plural": "othertabs", "kind": "CronTab"}
    fake_apiserver.objects.create("customresourcedefinitions", other)
    stored = fake_apiserver.objects.get("customresourcedefinitions", "othertabs.stable.example.com")
    assert _conditions(stored) == {
        "NamesAccepted": ("False", "ListKindConflict"),
        "Established": ("False", "NotAccepted"),
    }
    with pytest.raises(NotFoundError):
        fake_apiserver.resource("othertabs.stable.example.com")


def test_a_new_storage_version_is_added_to_stored_versions(served: FakeApiServer) -> None:
    """Changing the storage version appends it to ``status.storedVersions``
    (``registry/customresourcedefinition/strategy.go``) and bumps ``generation``; objects
    written later are kept in the new storage version, older ones stay as stored and are
    read in every version."""
    served.objects.create(RESOURCE, crontab("old"))
    crd = served.objects.get("customresourcedefinitions", RESOURCE)
    versions = crd["spec"]["versions"]
    versions[0]["storage"], versions[1]["storage"] = True, False
    updated = served.objects.update("customresourcedefinitions", crd)
    assert updated["status"]["storedVersions"] == ["v1", "v1beta1"]
    assert updated["metadata"]["generation"] == 2
    served.objects.create(RESOURCE, crontab("new"))
    table = served._storage.objects(served.resource(RESOURCE))
    assert table["default/old"]["apiVersion"] == "stable.example.com/v1"
    assert table["default/new"]["apiVersion"] == "stable.example.com/v1beta1"
    read = [o["apiVersion"] for o in served.objects.list("stable.example.com/v1/crontabs")]
    assert read == ["stable.example.com/v1", "stable.example.com/v1"]


async def test_aggregated_discovery_lists_the_custom_resource(
    served: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A client asking for aggregated discovery (kubectl's ``Accept``) gets ``/apis`` as an
    ``apidiscovery.k8s.io/v2`` ``APIGroupDiscoveryList`` with that ``Content-Type``
    (``endpoints/discovery/aggregated/handler.go``); an established CRD's group is there with
    its versions (preferred first), scope, short names, categories and subresources
    (``customresource_discovery_controller.go``). A plain ``application/json`` client gets
    the legacy ``APIGroupList``."""
    accept = (
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
        "application/json"
    )
    async with http.get("/apis", headers={"Accept": accept}) as resp:
        assert resp.headers["Content-Type"] == (
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        )
        document = await _json(resp)
    assert document["kind"] == "APIGroupDiscoveryList"
    group = next(g for g in document["items"] if g["metadata"]["name"] == "stable.example.com")
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    crontabs = group["versions"][0]["resources"][0]
    assert crontabs["responseKind"] == {
        "group": "stable.example.com",
        "version": "v1",
        "kind": "CronTab",
    }
    assert (crontabs["scope"], crontabs["shortNames"], crontabs["categories"]) == (
        "Namespaced",
        ["ct"],
        ["all"],
    )
    subresources = {s["subresource"]: s["responseKind"]["kind"] for s in crontabs["subresources"]}
    assert subresources == {"status": "CronTab", "scale": "Scale"}
    async with http.get("/apis", headers={"Accept": "application/json"}) as resp:
        assert (await _json(resp))["kind"] == "APIGroupList"


async def test_objects_with_finalizers_keep_a_deleted_crd_terminating(
    served: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """While an object's own finalizer holds it, the deleted CRD stays ``Terminating``
    (``controller/finalizer``: it waits for every object to go): discovery lists only
    delete, deletecollection, get, list and watch, a create is 405 ``create not allowed
    while custom resource definition is terminating`` (``customresource_handler.go``,
    ``serveResource``), updates still work; once the object goes, so does the CRD."""
    held = crontab("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    served.objects.create(RESOURCE, held)
    served.objects.delete("customresourcedefinitions", RESOURCE)
    crd = served.objects.get("customresourcedefinitions", RESOURCE)
    assert _conditions(crd)["Terminating"] == ("True", "InstanceDeletionPending")
    async with http.get("/apis/stable.example.com/v1") as resp:
        verbs = (await _json(resp))["resources"][0]["verbs"]
    assert verbs == ["delete", "deletecollection", "get", "list", "watch"]
    async with http.post(V1, json=crontab("late")) as resp:
        assert resp.status == 405
        assert (await _json(resp))["message"] == (
            "create not allowed while custom resource definition is terminating"
        )
    release = {"metadata": {"finalizers": None}}
    async with http.patch(f"{V1}/held", json=release, headers=MERGE) as resp:
        assert resp.status == 200
    with pytest.raises(NotFoundError):
        served.objects.get("customresourcedefinitions", RESOURCE)
