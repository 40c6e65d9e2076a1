"""Status subresources, generations and what each write keeps, per kind (registry strategies)."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from aioinformer.testing._apiserver._registry._strategy import (
    begin_create,
    begin_update,
    generate_name,
    is_dry_run,
    prepare_create,
    prepare_status_update,
    prepare_update,
    rules,
)

Obj = dict[str, Any]


@pytest.mark.parametrize(
    ("group", "kind", "status", "generation"),
    [
        ("", "Pod", True, True),
        ("apps", "Deployment", True, True),
        ("apps", "ReplicaSet", True, True),
        ("apps", "StatefulSet", True, True),
        ("apps", "DaemonSet", True, True),
        ("batch", "Job", True, True),
        ("batch", "CronJob", True, True),
        ("", "Service", True, False),
        ("", "Namespace", True, False),
        ("", "Node", True, False),
        ("", "PersistentVolumeClaim", True, False),
        ("", "PersistentVolume", True, False),
        ("autoscaling", "HorizontalPodAutoscaler", True, False),
        ("", "ConfigMap", False, False),
        ("", "Secret", False, False),
        ("", "ServiceAccount", False, False),
        ("", "Event", False, False),
        ("coordination.k8s.io", "Lease", False, False),
    ],
)
def test_status_subresources_and_generations(
    group: str, kind: str, status: bool, generation: bool
) -> None:
    """The registry (kubernetes ``pkg/registry/*/*/storage``) gives ``/status`` to workloads,
    Pods, Services, Namespaces, Nodes, volumes and HPAs, not to ConfigMaps, Secrets,
    ServiceAccounts, Events or Leases; ``PrepareForCreate`` sets ``generation: 1`` only for
    the kinds that track it (Pods since 1.33: ``pkg/registry/core/pod/strategy.go``)."""
    found = rules(group, kind)
    assert (found.status, found.generation) == (status, generation)
    obj: Obj = {"metadata": {"name": "x"}, "spec": {}, "status": {"x": 1}}
    prepare_create(group, kind, obj)
    assert ("generation" in obj["metadata"]) is generation


def deployment() -> Obj:
    obj: Obj = {
        "metadata": {"name": "web", "generation": 4, "labels": {"a": "1"}, "annotations": {}},
        "spec": {"replicas": 1},
        "status": {"replicas": 1, "observedGeneration": 4},
    }
    return obj


def test_main_writes_keep_status_and_bump_the_generation_on_spec_changes() -> None:
    """``PrepareForUpdate`` (kubernetes ``pkg/registry/apps/deployment/strategy.go``): the
    stored status is kept; a spec change bumps the generation, and for Deployments an
    annotation change too; a label change does not."""
    old = deployment()
    new = copy.deepcopy(old)
    new["status"] = {"replicas": 99}
    new["metadata"]["labels"] = {"a": "2"}
    prepare_update("apps", "Deployment", new, old)
    assert new["status"] == old["status"] and new["metadata"]["generation"] == 4
    new["metadata"]["annotations"] = {"kubernetes.io/change-cause": "x"}
    prepare_update("apps", "Deployment", new, old)
    assert new["metadata"]["generation"] == 5
    replica_set = copy.deepcopy(old)
    replica_set["metadata"]["annotations"] = {"x": "y"}
    prepare_update("apps", "ReplicaSet", replica_set, old)
    assert replica_set["metadata"]["generation"] == 4
    replica_set["spec"]["replicas"] = 2
    prepare_update("apps", "ReplicaSet", replica_set, old)
    assert replica_set["metadata"]["generation"] == 5


def test_pods_bump_their_generation_on_spec_changes() -> None:
    """``updatePodGeneration``: any spec change of a Pod bumps ``metadata.generation``."""
    old: Obj = {"metadata": {"generation": 1}, "spec": {"containers": [{"image": "a"}]}}
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "b"
    prepare_update("", "Pod", new, old)
    assert new["metadata"]["generation"] == 2


def test_status_writes_keep_everything_but_status() -> None:
    """Status strategies copy the spec back from the stored object; Deployments also keep
    their labels, Pods their owner references and QoS class
    (``deploymentStatusStrategy``, ``podStatusStrategy.PrepareForUpdate``)."""
    old = deployment()
    new = copy.deepcopy(old)
    new["spec"] = {"replicas": 7}
    new["status"] = {"replicas": 3}
    new["metadata"]["labels"] = {"a": "2"}
    new["metadata"]["annotations"] = {"b": "1"}
    prepare_status_update("apps", "Deployment", new, old)
    assert new["spec"] == {"replicas": 1} and new["status"] == {"replicas": 3}
    assert new["metadata"]["labels"] == {"a": "1"} and new["metadata"]["annotations"] == {"b": "1"}
    pod_old: Obj = {
        "metadata": {"ownerReferences": [{"uid": "1"}]},
        "spec": {"nodeName": "n"},
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    }
    pod_new: Obj = {"metadata": {}, "spec": {}, "status": {"phase": "Running"}}
    prepare_status_update("", "Pod", pod_new, pod_old)
    assert pod_new["metadata"]["ownerReferences"] == [{"uid": "1"}]
    assert pod_new["spec"] == {"nodeName": "n"}
    assert pod_new["status"] == {"phase": "Running", "qosClass": "BestEffort"}


def test_custom_resources() -> None:
    """``customResourceStrategy`` (apiextensions-apiserver ``pkg/registry/customresource``):
    generation 1 on create and bumped by any change outside metadata (and status when the
    status subresource is on); with ``/status``, main writes keep the status and status
    writes keep everything else, metadata included (but managedFields)."""
    old: Obj = {
        "metadata": {"generation": 1, "labels": {"a": "1"}},
        "spec": {"x": 1},
        "status": {"s": 1},
    }
    new = copy.deepcopy(old)
    new["status"] = {"s": 2}
    prepare_update("example.com", "Widget", new, old, builtin=False, status=True)
    assert new["status"] == {"s": 1} and new["metadata"]["generation"] == 1
    new["status"] = {"s": 2}
    prepare_update("example.com", "Widget", new, old, builtin=False, status=False)
    assert new["metadata"]["generation"] == 2
    status_write = copy.deepcopy(old)
    status_write["metadata"]["labels"] = {"a": "2"}
    status_write["metadata"]["managedFields"] = [{"manager": "m"}]
    status_write["status"] = {"s": 3}
    prepare_status_update("example.com", "Widget", status_write, old, builtin=False)
    assert status_write["metadata"]["labels"] == {"a": "1"}
    assert status_write["metadata"]["managedFields"] == [{"manager": "m"}]
    created: Obj = {"metadata": {}, "status": {"s": 1}}
    prepare_create("example.com", "Widget", created, builtin=False, status=True)
    assert created == {"metadata": {"generation": 1}}


def test_namespaces_keep_their_finalizers_and_daemon_sets_count_templates() -> None:
    """Namespace updates keep ``spec.finalizers`` and status (``namespaceStrategy``); a
    DaemonSet template change bumps the template generation its apps/v1 annotation carries
    (``daemonSetStrategy.PrepareForUpdate``)."""
    old_ns: Obj = {
        "metadata": {},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
    new_ns: Obj = {"metadata": {}, "spec": {}, "status": {"phase": "Terminating"}}
    prepare_update("", "Namespace", new_ns, old_ns)
    assert new_ns["spec"] == {"finalizers": ["kubernetes"]} and new_ns["status"] == {
        "phase": "Active"
    }
    key = "deprecated.daemonset.template.generation"
    old_ds: Obj = {
        "metadata": {"generation": 1, "annotations": {key: "1"}},
        "spec": {"template": {"a": 1}},
    }
    new_ds = copy.deepcopy(old_ds)
    new_ds["spec"]["template"] = {"a": 2}
    prepare_update("apps", "DaemonSet", new_ds, old_ds)
    assert new_ds["metadata"]["annotations"][key] == "2" and new_ds["metadata"]["generation"] == 2


def test_system_metadata_on_create_and_update() -> None:
    """``WipeObjectMetaSystemFields``/``FillObjectMetaSystemFields`` and name generation on
    create; ``rest.BeforeUpdate``: generation, creation and deletion times come from the
    stored object, an empty uid takes the stored one."""
    obj: Obj = {"metadata": {"generateName": "web-", "uid": "mine", "deletionTimestamp": "t"}}
    begin_create(obj, uid="u1", now="2026-01-01T00:00:00Z", name=lambda base: base + "abcde")
    assert obj["metadata"] == {
        "generateName": "web-",
        "uid": "u1",
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "name": "web-abcde",
    }
    old: Obj = {"metadata": {"uid": "u1", "generation": 3, "creationTimestamp": "c"}}
    new: Obj = {"metadata": {"generation": 9, "creationTimestamp": "x"}}
    begin_update(new, old)
    assert new["metadata"] == {"generation": 3, "creationTimestamp": "c", "uid": "u1"}


def test_generated_names_and_dry_run() -> None:
    """``SimpleNameGenerator``: the prefix cut to 58 characters plus 5 of
    ``bcdfghjklmnpqrstvwxz2456789``; ``dryRun`` stores nothing only with ``All``."""
    name = generate_name("x" * 70, random.Random(1))
    assert len(name) == 63 and name.startswith("x" * 58)
    assert set(name[58:]) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert is_dry_run(["All"]) and not is_dry_run([])
