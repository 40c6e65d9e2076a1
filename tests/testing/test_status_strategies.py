"""Issue 23: the built-in kinds' status strategies (``/status`` writes) and the reset fields
a create's ``managedFields`` leave out.

Each test names the real rule: ``pkg/registry/<group>/<kind>/strategy.go`` (the status
strategy's ``ValidateUpdate``, ``GetResetFields``), the validation functions of
``pkg/apis/batch/validation/validation.go``, ``pkg/apis/apps/validation/validation.go`` and
``pkg/apis/core/validation/validation.go``, and the field manager's place in the create
handler (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go``).
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from aioinformer.errors import UnprocessableEntityError
from aioinformer.testing import FakeApiServer

from .standalone import Kubectl
from .valid import deployment, pod

Obj = dict[str, Any]
T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"


def _job() -> Obj:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "a", "image": "x"}]}}
    return {"metadata": {"name": "once"}, "spec": {"template": template}}


def _refusal(server: FakeApiServer, resource: str, name: str, status: Obj) -> Obj:
    with pytest.raises(UnprocessableEntityError) as caught:
        server.objects.patch(resource, name, {"status": status}, subresource="status")
    failure: Obj = caught.value.status
    return failure


def test_a_bare_complete_condition_on_a_job_is_refused() -> None:
    """``ValidateJobUpdateStatus`` with ``getStatusValidationOptions`` (``JobManagedBy``
    GA): ``Complete=True`` without ``completionTime`` and ``startTime`` is 422, the
    completionTime error first (``validateJobStatus`` order); the message names
    ``Job.batch``."""
    server = FakeApiServer()
    server.objects.create("jobs.batch", _job())
    complete = {"type": "Complete", "status": "True"}
    failure = _refusal(server, "jobs.batch", "once", {"conditions": [complete]})
    assert failure["message"] == (
        'Job.batch "once" is invalid: [status.completionTime: Required value: completionTime '
        "is required for Complete jobs, status.startTime: Required value: startTime is "
        "required for finished job]"
    )
    assert [c["reason"] for c in failure["details"]["causes"]] == ["FieldValueRequired"] * 2
    finished = {"startTime": T0, "completionTime": T1, "succeeded": 1, "conditions": [complete]}
    done = server.objects.patch("jobs.batch", "once", {"status": finished}, subresource="status")
    assert done["status"]["completionTime"] == T1


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (
            {"startTime": T1, "completionTime": T0, "conditions": [{"type": "Complete"}]},
            'status.completionTime: Invalid value: "2026-01-01T00:00:00Z": completionTime '
            "cannot be set before startTime",
        ),
        (
            {"startTime": T0, "completionTime": T1},
            'status.completionTime: Invalid value: "2026-01-01T00:01:00Z": cannot set '
            "completionTime when there is no Complete=True condition",
        ),
        (
            {"startTime": T0, "active": 1, "conditions": [{"type": "Failed"}]},
            "status.active: Invalid value: 1: active>0 is invalid for finished job",
        ),
        (
            {"failed": -1},
            "[status.failed: Invalid value: -1: must be greater than or equal to 0, "
            "status.failed: Invalid value: -1: cannot decrease the failed counter]",
        ),
        (
            {
                "startTime": T0,
                "completionTime": T1,
                "conditions": [{"type": "Complete"}, {"type": "Failed"}],
            },
            "status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions",
        ),
        (
            {"completedIndexes": "0"},
            'status.completedIndexes: Invalid value: "0": cannot set non-empty '
            "completedIndexes when non-indexed completion mode",
        ),
    ],
)
def test_job_status_rules(status: Obj, message: str) -> None:
    """More of ``validateJobStatus``: the order of start and completion, completionTime
    only with ``Complete=True``, no active pods once finished, non-negative counters,
    ``Complete`` with ``Failed``, indexes only for ``Indexed`` Jobs. Conditions here are
    ``status: "True"``."""
    for condition in status.get("conditions", ()):
        condition["status"] = "True"
    server = FakeApiServer()
    server.objects.create("jobs.batch", _job())
    failure = _refusal(server, "jobs.batch", "once", status)
    assert failure["message"] == f'Job.batch "once" is invalid: {message}'


def test_a_finished_job_stays_finished() -> None:
    """``ValidateJobStatusUpdate``: a terminal condition cannot be switched off
    (``cannot disable the terminal Complete=True condition``; the ``completionTime`` left
    behind is refused too, as ``Complete`` changed), the succeeded counter cannot decrease,
    and ``completionTime cannot be mutated``; an unrelated change passes."""
    server = FakeApiServer()
    server.objects.create("jobs.batch", _job())
    complete = {"type": "Complete", "status": "True"}
    finished = {"startTime": T0, "completionTime": T1, "succeeded": 2, "conditions": [complete]}
    server.objects.patch("jobs.batch", "once", {"status": finished}, subresource="status")
    undone = {"conditions": [{**complete, "status": "False"}], "succeeded": 1}
    failure = _refusal(server, "jobs.batch", "once", undone)
    assert failure["message"] == (
        'Job.batch "once" is invalid: [status.completionTime: Invalid value: '
        '"2026-01-01T00:01:00Z": cannot set completionTime when there is no Complete=True '
        "condition, status.conditions: Invalid value: cannot disable the terminal "
        "Complete=True condition, status.succeeded: Invalid value: 1: cannot decrease the "
        "succeeded counter]"
    )
    failure = _refusal(server, "jobs.batch", "once", {"completionTime": "2026-01-01T00:02:00Z"})
    assert failure["message"].endswith("completionTime cannot be mutated")
    server.objects.patch("jobs.batch", "once", {"status": {"ready": 0}}, subresource="status")


@pytest.mark.parametrize(
    ("resource", "status", "message"),
    [
        (
            "deployments.apps",
            {"replicas": 3, "readyReplicas": 2, "availableReplicas": 3},
            'Deployment.apps "d" is invalid: status.availableReplicas: Invalid value: 3: '
            "cannot be greater than readyReplicas",
        ),
        (
            "replicasets.apps",
            {"replicas": 1, "fullyLabeledReplicas": 2},
            'ReplicaSet.apps "d" is invalid: status.fullyLabeledReplicas: Invalid value: 2: '
            "cannot be greater than status.replicas",
        ),
        (
            "statefulsets.apps",
            {"replicas": 3, "readyReplicas": 1, "availableReplicas": 2},
            'StatefulSet.apps "d" is invalid: status.availableReplicas: Invalid value: 2: '
            "cannot be greater than status.readyReplicas",
        ),
        (
            "daemonsets.apps",
            {"numberReady": -2},
            'DaemonSet.apps "d" is invalid: status.numberReady: Invalid value: -2: must be '
            "greater than or equal to 0",
        ),
    ],
)
def test_apps_status_rules(resource: str, status: Obj, message: str) -> None:
    """``ValidateDeploymentStatus``, ``ValidateReplicaSetStatus``,
    ``ValidateStatefulSetStatus`` (its ``status.readyReplicas`` spelling) and
    ``validateDaemonSetStatus``: counters are non-negative and none passes the one it
    counts within."""
    server = FakeApiServer()
    template = {
        "metadata": {"labels": {"app": "d"}},
        "spec": deployment("d")["spec"]["template"]["spec"],
    }
    spec = {"selector": {"matchLabels": {"app": "d"}}, "template": template}
    server.objects.create(resource, {"metadata": {"name": "d"}, "spec": spec})
    assert _refusal(server, resource, "d", status)["message"] == message


def test_collision_count_cannot_be_decremented() -> None:
    """``ValidateDeploymentStatusUpdate``: ``IsDecremented(collisionCount)`` →
    ``status.collisionCount: Invalid value: 1: cannot be decremented``."""
    server = FakeApiServer()
    server.objects.create("deployments.apps", deployment("d"))
    server.objects.patch(
        "deployments.apps", "d", {"status": {"collisionCount": 2}}, subresource="status"
    )
    failure = _refusal(server, "deployments.apps", "d", {"collisionCount": 1})
    assert failure["message"] == (
        'Deployment.apps "d" is invalid: status.collisionCount: Invalid value: 1: cannot be '
        "decremented"
    )


def test_pod_status_rules() -> None:
    """``ValidatePodStatusUpdate``: a custom condition type must be a qualified name (the
    path spells ``Type``), a terminated container of a ``restartPolicy: Never`` pod may not
    run again, pod IPs must be valid and at most one per family; spec changes sent to
    ``/status`` are dropped, not refused (``podStatusStrategy.PrepareForUpdate``)."""
    server = FakeApiServer()
    obj = pod("p", node="node-1")
    obj["spec"]["restartPolicy"] = "Never"
    server.objects.create("pods", obj)
    failure = _refusal(server, "pods", "p", {"conditions": [{"type": "not ok", "status": "True"}]})
    assert failure["message"].startswith(
        'Pod "p" is invalid: status.conditions[0].Type: Invalid value: "not ok": name part '
        "must consist of alphanumeric characters"
    )
    done = {"name": "app", "image": "x", "imageID": "", "ready": False, "restartCount": 0}
    terminated = {**done, "state": {"terminated": {"exitCode": 0}}}
    server.objects.patch(
        "pods", "p", {"status": {"containerStatuses": [terminated]}}, subresource="status"
    )
    running = {**done, "state": {"running": {}}}
    failure = _refusal(server, "pods", "p", {"containerStatuses": [running]})
    assert failure["message"] == (
        'Pod "p" is invalid: status.containerStatuses[0].state: Forbidden: may not be '
        "transitioned to non-terminated state"
    )
    failure = _refusal(server, "pods", "p", {"podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]})
    assert failure["message"].endswith("may specify no more than one IP for each IP family")
    failure = _refusal(server, "pods", "p", {"podIPs": [{"ip": "ten"}]})
    assert failure["message"] == (
        'Pod "p" is invalid: status.podIPs[0]: Invalid value: "ten": must be a valid IP '
        "address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
    )
    patch = {"spec": {"nodeName": "elsewhere"}, "status": {"message": "hi"}}
    kept = server.objects.patch("pods", "p", patch, subresource="status")
    assert kept["spec"]["nodeName"] == "node-1" and kept["status"]["message"] == "hi"


def test_a_namespace_phase_follows_its_deletion() -> None:
    """``ValidateNamespaceStatusUpdate``: ``status.Phase`` may only be ``Active`` without a
    ``deletionTimestamp``."""
    server = FakeApiServer()
    server.objects.create("namespaces", {"metadata": {"name": "n"}})
    failure = _refusal(server, "namespaces", "n", {"phase": "Terminating"})
    assert failure["message"] == (
        'Namespace "n" is invalid: status.Phase: Invalid value: "Terminating": may only be '
        "'Active' if `deletionTimestamp` is empty"
    )


def test_a_created_namespace_owns_only_its_name_label() -> None:
    """Issue 23 problem 9: the field manager runs on the decoded, defaulted Namespace before
    ``PrepareForCreate`` adds the ``kubernetes`` finalizer, and ``status`` is a reset field
    of ``namespaceStrategy`` (``GetResetFields``), so the creator owns only the
    ``kubernetes.io/metadata.name`` label — the exact entry of ``kubectl create ns``. The
    same holds for a Pod: the status the strategy sets and the fields admission adds
    (``priority``, ``tolerations``, ``serviceAccountName``) are owned by no one."""
    server = FakeApiServer()
    created = server.objects.create(
        "namespaces", {"metadata": {"name": "n"}}, field_manager="kubectl-create"
    )
    [entry] = created["metadata"]["managedFields"]
    assert {k: v for k, v in entry.items() if k != "time"} == {
        "manager": "kubectl-create",
        "operation": "Update",
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}},
    }
    assert created["spec"] == {"finalizers": ["kubernetes"]}
    assert created["status"] == {"phase": "Active"}
    made = server.objects.create("pods", pod("p"))
    owned = made["metadata"]["managedFields"][0]["fieldsV1"]
    assert "f:status" not in owned
    assert not {"f:priority", "f:tolerations", "f:serviceAccountName"} & set(owned["f:spec"])


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_patch_of_a_job_to_complete_is_refused(kubectl: Kubectl) -> None:
    """The fidelity report's row 15, through kubectl: ``kubectl patch job once
    --subresource=status --type=merge -p '{"status":{"conditions":[{"type":"Complete",
    "status":"True"}]}}'`` prints the real refusal (kubectl lists several causes one per
    line)."""
    kubectl("create", "namespace", "jobstatus")
    kubectl("create", "job", "once", "--image=busybox", "-n", "jobstatus")
    patch = json.dumps({"status": {"conditions": [{"type": "Complete", "status": "True"}]}})
    refused = kubectl.fails(
        "patch", "job", "once", "-n", "jobstatus", "--subresource=status", "--type=merge",
        "-p", patch,
    )  # fmt: skip
    assert (
        'The Job "once" is invalid: \n* status.completionTime: Required value: completionTime '
        "is required for Complete jobs\n* status.startTime: Required value: startTime is "
        "required for finished job\n"
    ) in refused
