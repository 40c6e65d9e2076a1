"""A CustomResourceDefinition's defaults, strategy, status, deletion and discovery.

Specified by apiextensions-apiserver ``pkg/apis/apiextensions/v1/defaults.go``,
``pkg/registry/customresourcedefinition/strategy.go`` and ``etcd.go``, the controllers of
``pkg/controller/status`` (naming), ``establish``, ``apiapproval`` and ``finalizer``, and
``pkg/apiserver/customresource_discovery_controller.go``.
"""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._crd._lifecycle import (
    CLEANUP_FINALIZER,
    accepted_status,
    begin_crd_deletion,
    crd_warnings,
    default_crd,
    discovery_resources,
    finish_crd_deletion,
    group_versions,
    is_established,
    prepare_crd_create,
    prepare_crd_status_update,
    prepare_crd_update,
    storage_version,
)

from .crd_fixtures import crontab_crd

NOW = "2026-11-30T10:00:00Z"
LATER = "2026-11-30T11:00:00Z"


def established(crd: dict[str, Any] | None = None) -> dict[str, Any]:
    crd = crontab_crd() if crd is None else crd
    default_crd(crd)
    prepare_crd_create(crd)
    accepted_status(crd, [], now=NOW)
    return crd


def test_defaults() -> None:
    """``SetDefaults_CustomResourceDefinition``: singular from the kind, list kind, conversion
    ``None``, a webhook service's port 443, stored versions from the storage version."""
    crd = crontab_crd()
    crd["status"] = {}
    default_crd(crd)
    assert crd["spec"]["names"]["singular"] == "crontab"
    assert crd["spec"]["names"]["listKind"] == "CronTabList"
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["status"]["storedVersions"] == ["v1"]
    webhook = crontab_crd()
    webhook["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {"clientConfig": {"service": {"name": "conv", "namespace": "x"}}},
    }
    default_crd(webhook)
    assert webhook["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443


def test_create_resets_status_and_sets_generation() -> None:
    """``PrepareForCreate``: the status a client sends is dropped; the storage version is
    recorded; ``generation`` is 1."""
    crd = crontab_crd()
    crd["status"] = {"acceptedNames": {"kind": "Other", "plural": "others"}}
    crd["metadata"]["generation"] = 9
    prepare_crd_create(crd)
    assert crd["status"] == {"acceptedNames": {"kind": "", "plural": ""}, "storedVersions": ["v1"]}
    assert crd["metadata"]["generation"] == 1


def test_update_keeps_status_bumps_generation_and_records_storage_versions() -> None:
    """``PrepareForUpdate``: status from storage; ``generation`` +1 only when the spec
    changes; a new storage version is appended to ``storedVersions``."""
    old = established()
    new = crontab_crd()
    new["status"] = {}
    default_crd(new)
    prepare_crd_update(new, old)
    assert new["status"] == old["status"]
    assert new["metadata"]["generation"] == 1
    new["metadata"]["labels"] = {"a": "b"}
    prepare_crd_update(new, old)
    assert new["metadata"]["generation"] == 1
    changed = crontab_crd()
    default_crd(changed)
    changed["spec"]["versions"][0]["storage"] = True
    changed["spec"]["versions"][1]["storage"] = False
    prepare_crd_update(changed, old)
    assert changed["metadata"]["generation"] == 2
    assert changed["status"]["storedVersions"] == ["v1", "v1beta1"]


def test_status_update_keeps_spec() -> None:
    """The status strategy's ``PrepareForUpdate``: the spec comes from storage."""
    old = established()
    new = established()
    new["spec"]["scope"] = "Cluster"
    prepare_crd_status_update(new, old)
    assert new["spec"]["scope"] == "Namespaced"


def test_accepted_status() -> None:
    """The naming controller (``NamesAccepted``/``NoConflicts``, accepted names) and the
    establishing controller (``Established``/``InitialNamesAccepted``)."""
    crd = established()
    status = crd["status"]
    assert status["acceptedNames"] == {
        "kind": "CronTab",
        "plural": "crontabs",
        "singular": "crontab",
        "shortNames": ["ct"],
        "listKind": "CronTabList",
        "categories": ["all"],
    }
    assert status["conditions"] == [
        {
            "type": "NamesAccepted",
            "status": "True",
            "lastTransitionTime": NOW,
            "reason": "NoConflicts",
            "message": "no conflicts found",
        },
        {
            "type": "Established",
            "status": "True",
            "lastTransitionTime": NOW,
            "reason": "InitialNamesAccepted",
            "message": "the initial names have been accepted",
        },
    ]
    assert is_established(crd)
    accepted_status(crd, [crd], now=LATER)
    assert [c["lastTransitionTime"] for c in crd["status"]["conditions"]] == [NOW, NOW]


@pytest.mark.parametrize(
    ("names", "reason", "message"),
    [
        (
            {"plural": "crontabs", "singular": "crontab2", "kind": "Cron2"},
            "PluralConflict",
            '"crontabs" is already in use',
        ),
        (
            {"plural": "crons", "singular": "ct", "kind": "Cron2"},
            "SingularConflict",
            '"ct" is already in use',
        ),
        (
            {"plural": "crons", "singular": "cron", "kind": "CronTab", "listKind": "Crons"},
            "KindConflict",
            '"CronTab" is already in use',
        ),
        (
            {"plural": "crons", "singular": "cron", "kind": "Cron2", "shortNames": ["ct"]},
            "ShortNamesConflict",
            '"ct" is already in use',
        ),
    ],
)
def test_name_conflicts(names: dict[str, Any], reason: str, message: str) -> None:
    """``calculateNamesAndConditions``: a name another CRD of the group has accepted is not
    accepted; ``NamesAccepted`` is False with the conflict, ``Established`` False
    ``NotAccepted``."""
    first = established()
    second = crontab_crd()
    second["metadata"]["name"] = f"{names['plural']}.stable.example.com"
    second["spec"]["names"] = dict(names)
    default_crd(second)
    prepare_crd_create(second)
    accepted_status(second, [first], now=NOW)
    conditions = {c["type"]: c for c in second["status"]["conditions"]}
    assert (conditions["NamesAccepted"]["reason"], conditions["NamesAccepted"]["message"]) == (
        reason,
        message,
    )
    assert conditions["Established"]["reason"] == "NotAccepted"
    assert not is_established(second)
    assert discovery_resources(second, "v1") == []


def test_api_approval_condition() -> None:
    """The API-approval controller: ``KubernetesAPIApprovalPolicyConformant`` for protected
    groups."""
    crd = crontab_crd()
    crd["spec"]["group"] = "stable.k8s.io"
    crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": "unapproved, testing only"}
    established(crd)
    condition = crd["status"]["conditions"][-1]
    assert condition == {
        "type": "KubernetesAPIApprovalPolicyConformant",
        "status": "False",
        "lastTransitionTime": NOW,
        "reason": "UnapprovedAnnotation",
        "message": 'not approved: "unapproved, testing only"',
    }


def test_deletion() -> None:
    """The CRD registry's first DELETE (``deletionTimestamp``, the cleanup finalizer,
    ``Terminating`` ``InstanceDeletionPending``) and the finalizer controller once the objects
    are gone (``InstanceDeletionCompleted``, finalizer removed); a terminating CRD's resource
    offers only reading and deleting verbs."""
    crd = established()
    begin_crd_deletion(crd, now=LATER)
    assert crd["metadata"]["deletionTimestamp"] == LATER
    assert crd["metadata"]["finalizers"] == [CLEANUP_FINALIZER]
    terminating = crd["status"]["conditions"][-1]
    assert (terminating["type"], terminating["status"], terminating["reason"]) == (
        "Terminating",
        "True",
        "InstanceDeletionPending",
    )
    assert discovery_resources(crd, "v1")[0]["verbs"] == [
        "delete",
        "deletecollection",
        "get",
        "list",
        "watch",
    ]
    finish_crd_deletion(crd, now=LATER)
    assert "finalizers" not in crd["metadata"]
    assert crd["status"]["conditions"][-1]["reason"] == "InstanceDeletionCompleted"


def test_discovery() -> None:
    """``DiscoveryController.sync``: the resource with its short names and categories and a
    ``storageVersionHash`` (sha256 of ``group/version/kind``, 8 bytes, base64), then
    ``/status`` and ``/scale`` (``autoscaling/v1`` ``Scale``) when the version has them."""
    crd = established()
    assert discovery_resources(crd, "v1") == [
        {
            "name": "crontabs",
            "singularName": "crontab",
            "namespaced": True,
            "kind": "CronTab",
            "verbs": [
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "create",
                "update",
                "watch",
            ],
            "shortNames": ["ct"],
            "categories": ["all"],
            "storageVersionHash": "EdX2FP+L0js=",
        },
        {
            "name": "crontabs/status",
            "singularName": "",
            "namespaced": True,
            "kind": "CronTab",
            "verbs": ["get", "patch", "update"],
        },
        {
            "name": "crontabs/scale",
            "singularName": "",
            "namespaced": True,
            "group": "autoscaling",
            "version": "v1",
            "kind": "Scale",
            "verbs": ["get", "patch", "update"],
        },
    ]
    assert [r["name"] for r in discovery_resources(crd, "v1beta1")] == [
        "crontabs",
        "crontabs/status",
    ]
    assert discovery_resources(crd, "v2") == []
    assert storage_version(crd) == "v1"


def test_group_versions_order() -> None:
    """``sortGroupDiscoveryByKubeAwareVersion``: GA before beta before alpha, newer first,
    other names last (alphabetically); only served versions."""
    crd = crontab_crd()
    crd["spec"]["versions"] = [
        {"name": n, "served": n != "v3", "storage": n == "v1"}
        for n in ("v1alpha1", "foo", "v1beta2", "v2", "v1", "v2beta1", "v1beta1", "bar", "v3")
    ]
    assert group_versions(crd) == [
        "v2",
        "v1",
        "v2beta1",
        "v1beta2",
        "v1beta1",
        "v1alpha1",
        "bar",
        "foo",
    ]


def test_warnings() -> None:
    """``WarningsOnCreate``/``WarningsOnUpdate``: formats the server does not know, sets of
    objects; an update warns only about new ones."""
    crd = crontab_crd()
    spec = crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["when"] = {"type": "string", "format": "cron"}
    spec["properties"]["pairs"] = {
        "type": "array",
        "x-kubernetes-list-type": "set",
        "items": {"type": "object", "x-kubernetes-map-type": "atomic"},
    }
    expected = [
        'unrecognized format "cron"',
        'x-kubernetes-list-type: set for items of type "object" is not supported by server-side '
        "apply or CEL validation rules",
    ]
    assert crd_warnings(crd) == expected
    assert crd_warnings(crd, crd) == []
