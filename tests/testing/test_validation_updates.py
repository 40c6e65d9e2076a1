"""Update validation: what an update of a built-in object may not change."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from aioinformer.testing._apiserver._registry._defaults import apply_defaults
from aioinformer.testing._apiserver._registry._strategy import prepare_create
from aioinformer.testing._apiserver._validation._immutable import POD_UPDATABLE, update_errors
from aioinformer.testing._apiserver._validation._kinds import (
    validate_status_update,
    validate_update,
)

Obj = dict[str, Any]


def stored(group: str, kind: str, obj: Obj) -> Obj:
    obj.setdefault("metadata", {}).update(
        name="web", namespace="default", uid="u-1", resourceVersion="7"
    )
    apply_defaults(group, "v1", kind, obj)
    prepare_create(group, kind, obj)
    return obj


def pod() -> Obj:
    spec = {"containers": [{"name": "app", "image": "nginx:1"}], "activeDeadlineSeconds": 60}
    return stored("", "Pod", {"spec": spec})


def texts(group: str, kind: str, new: Obj, old: Obj) -> list[str]:
    return [str(e) for e in update_errors(group, kind, new, old)]


def test_pods_change_only_images_deadlines_and_tolerations() -> None:
    """``ValidatePodUpdate`` (kubernetes ``pkg/apis/core/validation``): images, a lowered
    ``activeDeadlineSeconds`` and added tolerations are allowed; adding a container or
    changing anything else is Forbidden with the list of updatable fields."""
    old = pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:2"
    new["spec"]["activeDeadlineSeconds"] = 30
    new["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    assert texts("", "Pod", new, old) == []
    added = copy.deepcopy(old)
    added["spec"]["containers"].append({"name": "side", "image": "busybox"})
    assert texts("", "Pod", added, old) == [
        "spec.containers: Forbidden: pod updates may not add or remove containers"
    ]
    changed = copy.deepcopy(old)
    changed["spec"]["restartPolicy"] = "Never"
    assert texts("", "Pod", changed, old) == [
        f"spec: Forbidden: pod updates may not change fields other than {POD_UPDATABLE}"
    ]
    raised = copy.deepcopy(old)
    raised["spec"]["activeDeadlineSeconds"] = 90
    assert texts("", "Pod", raised, old) == [
        "spec.activeDeadlineSeconds: Invalid value: 90: must be less than or equal to previous "
        "value"
    ]


def test_pod_update_message_lists_the_updatable_fields() -> None:
    """The Forbidden message names the fields as ``updatablePodSpecFieldsNoResources``."""
    assert POD_UPDATABLE == (
        "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
        "`spec.tolerations` (only additions to existing tolerations),"
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
        "negative)"
    )


def workload(group: str, kind: str) -> Obj:
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "a", "image": "x"}]},
    }
    return stored(
        group, kind, {"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template}}
    )


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "DaemonSet"])
def test_selectors_are_immutable(kind: str) -> None:
    """apps/v1 selectors are immutable (``ValidateImmutableField``): ``spec.selector: Invalid
    value: <new selector>: field is immutable``."""
    old = workload("apps", kind)
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "api"}}
    assert texts("apps", kind, new, old) == [
        'spec.selector: Invalid value: {"matchLabels":{"app":"api"}}: field is immutable'
    ]


def test_stateful_set_spec_fields_other_than_the_mutable_ones_are_forbidden() -> None:
    """``ValidateStatefulSetUpdate``: only replicas, ordinals, template, updateStrategy,
    revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and minReadySeconds change."""
    old = workload("apps", "StatefulSet")
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 5
    assert texts("apps", "StatefulSet", new, old) == []
    new["spec"]["serviceName"] = "other"
    assert texts("apps", "StatefulSet", new, old) == [
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', "
        "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    ]


def test_job_selector_template_and_completions_are_immutable() -> None:
    """``ValidateJobSpecUpdate`` (kubernetes ``pkg/apis/batch/validation``): the template of
    a job that is not suspended-and-unstarted, its selector, completions (non-indexed) and
    completion mode are immutable; parallelism may change."""
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "a", "image": "x"}]}}
    old = stored("batch", "Job", {"spec": {"template": template}})
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 3
    assert texts("batch", "Job", new, old) == []
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "y"
    new["spec"]["completions"] = 4
    errors = texts("batch", "Job", new, old)
    assert errors[0] == "spec.completions: Invalid value: 4: field is immutable"
    assert errors[1].startswith("spec.template: Invalid value: {") and errors[1].endswith(
        ": field is immutable"
    )


def test_service_cluster_ip_may_not_change() -> None:
    """``validateUpgradeDowngradeClusterIPs``: ``spec.clusterIPs[0]: Invalid value: [...]:
    may not change once set`` (ExternalName transitions aside)."""
    old = stored(
        "",
        "Service",
        {
            "spec": {
                "ports": [{"port": 80}],
                "clusterIP": "10.96.0.10",
                "clusterIPs": ["10.96.0.10"],
            }
        },
    )
    new = copy.deepcopy(old)
    new["spec"]["clusterIPs"] = ["10.96.0.11"]
    assert texts("", "Service", new, old) == [
        'spec.clusterIPs[0]: Invalid value: ["10.96.0.11"]: may not change once set'
    ]


@pytest.mark.parametrize(("kind", "key"), [("ConfigMap", "data"), ("Secret", "data")])
def test_immutable_config_maps_and_secrets(kind: str, key: str) -> None:
    """``ValidateConfigMapUpdate``/``ValidateSecretUpdate``: once ``immutable: true``, data
    and the flag itself are Forbidden to change (``field is immutable when `immutable` is
    set``); a Secret's type never changes."""
    old: Obj = {"metadata": {"name": "c"}, "immutable": True, key: {"a": "YQ=="}, "type": "Opaque"}
    new = copy.deepcopy(old)
    new[key] = {"a": "Yg=="}
    new["immutable"] = False
    expected = [
        "immutable: Forbidden: field is immutable when `immutable` is set",
        f"{key}: Forbidden: field is immutable when `immutable` is set",
    ]
    if kind == "Secret":
        new["type"] = "kubernetes.io/tls"
        expected.insert(0, 'type: Invalid value: "kubernetes.io/tls": field is immutable')
    assert texts("", kind, new, old) == expected


def test_pvc_spec_is_immutable_except_requests_of_bound_claims() -> None:
    """``ValidatePersistentVolumeClaimUpdate``: the spec is immutable after creation except
    ``resources.requests`` (bound claims) and ``volumeAttributesClassName``."""
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    old = stored("", "PersistentVolumeClaim", {"spec": spec})
    old["status"] = {"phase": "Bound"}
    grown = copy.deepcopy(old)
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert texts("", "PersistentVolumeClaim", grown, old) == []
    grown["spec"]["accessModes"] = ["ReadWriteMany"]
    assert texts("", "PersistentVolumeClaim", grown, old) == [
        "spec: Forbidden: spec is immutable after creation except resources.requests and "
        "volumeAttributesClassName for bound claims"
    ]


def test_update_validation_repeats_metadata_causes_as_real() -> None:
    """On update apiserver runs ``validateCommonFields`` and the kind's ``ValidateUpdate``:
    a bad label is a cause of each pass that checks labels (the message shows it once);
    renaming is ``field is immutable`` (``rest.BeforeUpdate``, ``ValidateObjectMetaUpdate``)."""
    old = workload("apps", "Deployment")
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"a": "b c"}
    errors = validate_update("apps", "Deployment", new, old, namespaced=True)
    assert [e.field for e in errors] == ["metadata.labels"] * 3
    renamed = copy.deepcopy(old)
    renamed["metadata"]["name"] = "api"
    assert [
        str(e) for e in validate_update("apps", "Deployment", renamed, old, namespaced=True)
    ] == ['metadata.name: Invalid value: "api": field is immutable'] * 2


def test_status_updates_check_metadata_and_counters() -> None:
    """``ValidateDeploymentStatusUpdate`` and friends: metadata rules, counters ≥ 0, and
    no counter above ``status.replicas`` (``ValidateDeploymentStatus``: 0 > -1)."""
    old = workload("apps", "Deployment")
    new = copy.deepcopy(old)
    new["status"] = {"replicas": -1}
    errors = validate_status_update("apps", "Deployment", new, old, namespaced=True)
    above = "Invalid value: 0: cannot be greater than status.replicas"
    assert [str(e) for e in errors] == [
        "status.replicas: Invalid value: -1: must be greater than or equal to 0",
        f"status.updatedReplicas: {above}",
        f"status.readyReplicas: {above}",
        f"status.availableReplicas: {above}",
    ]
