"""The write path: decode, create, update and status update, as a real server runs them."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._registry._rest_types import dry_run
from aioinformer.testing._apiserver._registry._strategy_service import ServiceAllocator
from aioinformer.testing._apiserver._registry._writerules import (
    Kind,
    before_create,
    before_status_update,
    before_update,
    decode,
)

DEPLOYMENT = Kind("apps", "v1", "Deployment", True)
NOW = "2026-11-23T12:00:00Z"
Obj = dict[str, Any]


def manifest(**spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
            **spec,
        },
    }


def created(body: Obj) -> Obj:
    obj, _ = decode(DEPLOYMENT, copy.deepcopy(body))
    before_create(DEPLOYMENT, obj, uid="u-1", now=NOW)
    obj["metadata"]["resourceVersion"] = "10"
    return obj


def test_unknown_and_duplicate_fields_under_each_directive() -> None:
    """``fieldValidation``: Warn (the default) answers with a warning per field, Strict with
    400 naming every field, Ignore silently; the fields are dropped either way (apiserver
    ``handlers/create.go``)."""
    body = manifest(replica=3)
    raw = json.dumps(body).replace(
        '"kind": "Deployment"', '"kind": "Deployment", "kind": "Deployment"'
    )
    obj, warnings = decode(DEPLOYMENT, copy.deepcopy(body), raw=raw)
    assert warnings == ['unknown field "spec.replica"', 'duplicate field "kind"']
    assert "replica" not in obj["spec"] and obj["spec"]["replicas"] == 1
    assert decode(DEPLOYMENT, copy.deepcopy(body), raw=raw, directive="Ignore")[1] == []
    with pytest.raises(StatusFailure) as caught:
        decode(DEPLOYMENT, copy.deepcopy(body), raw=raw, directive="Strict")
    assert (caught.value.code, caught.value.message) == (
        400,
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.replica", duplicate field "kind"',
    )


def test_wrong_types_are_a_400_whatever_the_directive() -> None:
    """A body Go cannot decode: 400 ``<Kind> in version "<v>" cannot be handled as a <Kind>:
    json: cannot unmarshal …`` (``transformDecodeError``)."""
    with pytest.raises(StatusFailure) as caught:
        decode(DEPLOYMENT, manifest(replicas="3"), directive="Ignore")
    assert caught.value.code == 400
    assert caught.value.message == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
        "string into Go struct field DeploymentSpec.spec.replicas of type int32"
    )


def test_a_patched_object_go_cannot_decode_is_a_422_on_the_patch() -> None:
    """``jsonPatcher.applyPatchToCurrentObject``: decoding the patched object fails with 422
    ``"" is invalid: patch: Invalid value: "<patched JSON>": <decode error>``."""
    with pytest.raises(StatusFailure) as caught:
        decode(DEPLOYMENT, manifest(replicas="3"), operation="merge")
    assert caught.value.code == 422
    assert caught.value.message.startswith(' "" is invalid: patch: Invalid value: "{')
    assert caught.value.message.endswith(
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of "
        "type int32"
    )


def test_an_invalid_create_is_a_422_naming_the_kind() -> None:
    """``rest.BeforeCreate``: ``errors.NewInvalid`` with ``details.kind`` the Kind and every
    cause; nothing about the object is kept."""
    body = manifest()
    del body["spec"]["selector"]
    obj, _ = decode(DEPLOYMENT, body)
    with pytest.raises(StatusFailure) as caught:
        before_create(DEPLOYMENT, obj, uid="u-1", now=NOW)
    assert caught.value.code == 422
    assert (caught.value.details or {})["kind"] == "Deployment"
    assert caught.value.message == (
        'Deployment.apps "web" is invalid: [spec.selector: Required value, '
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match '
        "template `labels`]"
    )


def test_a_put_carrying_status_keeps_the_stored_status() -> None:
    """Issue 12 acceptance: a Deployment PUT with ``status`` keeps the stored status; the
    generation follows the spec (``deploymentStrategy.PrepareForUpdate``)."""
    old = created(manifest())
    old["status"] = {"replicas": 1, "observedGeneration": 1}
    put, _ = decode(DEPLOYMENT, manifest(replicas=5), operation="update")
    put["metadata"]["resourceVersion"] = "10"
    put["status"] = {"replicas": 99}
    before_update(DEPLOYMENT, put, old)
    assert put["status"] == {"replicas": 1, "observedGeneration": 1}
    assert put["metadata"]["generation"] == 2
    assert put["metadata"]["uid"] == "u-1" and put["metadata"]["creationTimestamp"] == NOW


def test_an_update_may_not_change_the_selector() -> None:
    """apps/v1 selectors are immutable: 422 ``spec.selector: Invalid value: …: field is
    immutable``."""
    old = created(manifest())
    changed = manifest(selector={"matchLabels": {"app": "web", "tier": "x"}})
    changed["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    new, _ = decode(DEPLOYMENT, changed, operation="update")
    new["metadata"]["resourceVersion"] = "10"
    with pytest.raises(StatusFailure) as caught:
        before_update(DEPLOYMENT, new, old)
    assert caught.value.message == (
        'Deployment.apps "web" is invalid: spec.selector: Invalid value: '
        '{"matchLabels":{"app":"web","tier":"x"}}: field is immutable'
    )


def test_a_status_update_ignores_the_spec() -> None:
    """``deploymentStatusStrategy.PrepareForUpdate``: the spec comes from the stored object,
    the generation does not move."""
    old = created(manifest())
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 9
    new["status"] = {"replicas": 1, "readyReplicas": 1}
    before_status_update(DEPLOYMENT, new, old)
    assert new["spec"]["replicas"] == 1 and new["metadata"]["generation"] == 1
    assert new["status"] == {"replicas": 1, "readyReplicas": 1}


def test_services_keep_their_allocations_when_an_update_leaves_them_out() -> None:
    """``patchAllocatedValues``: a Service update without ``clusterIP`` or node ports (as
    ``kubectl apply`` of the original manifest sends it) keeps the allocated ones."""
    kind = Kind("", "v1", "Service", True)
    services = ServiceAllocator(rng=random.Random(3))
    body: Obj = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"type": "NodePort", "ports": [{"port": 80}]},
    }
    old, _ = decode(kind, copy.deepcopy(body))
    before_create(kind, old, uid="u", now=NOW, services=services)
    old["metadata"]["resourceVersion"] = "3"
    new, _ = decode(kind, copy.deepcopy(body), operation="update")
    new["metadata"]["resourceVersion"] = "3"
    before_update(kind, new, old, services=services)
    assert new["spec"]["clusterIP"] == old["spec"]["clusterIP"]
    assert new["spec"]["ports"] == old["spec"]["ports"]
    taken: Obj = copy.deepcopy(body)
    taken["metadata"]["name"] = "other"
    taken["spec"]["ports"][0]["nodePort"] = old["spec"]["ports"][0]["nodePort"]
    other, _ = decode(kind, taken)
    with pytest.raises(StatusFailure, match="provided port is already allocated"):
        before_create(kind, other, uid="v", now=NOW, services=services)


def test_custom_resources_pass_through() -> None:
    """Kinds without a built-in schema are neither decoded nor defaulted (their CRD's
    structural schema is another step); generation and status follow the CRD strategy."""
    kind = Kind("example.com", "v1", "Widget", True, status_subresource=True)
    body: Obj = {
        "metadata": {"name": "w", "namespace": "d"},
        "spec": {"anything": 1},
        "status": {"x": 1},
    }
    obj, warnings = decode(kind, copy.deepcopy(body), raw=json.dumps(body))
    assert warnings == [] and obj["spec"] == {"anything": 1}
    before_create(kind, obj, uid="u", now=NOW)
    assert "status" not in obj and obj["metadata"]["generation"] == 1


def test_dry_run_runs_everything_but_the_store() -> None:
    """``dryRun=All`` (apiserver ``DryRunnableStorage``): every step above runs, only the
    write is skipped — the caller asks :func:`dry_run`."""
    assert dry_run(["All"]) and not dry_run([])
