"""Server-side Table output: negotiation, options, the printers of the common kinds.

Each test names the real behaviour it checks: the printers of kubernetes/kubernetes
``pkg/printers/internalversion/printers.go``, the apiserver's ``handlers/response.go``
(``asTable``) and ``handlers/negotiation``, apimachinery's ``duration.HumanDuration``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._tables._crd import find
from aioinformer.testing._apiserver._tables._format import format_label_selector, human_duration
from aioinformer.testing._apiserver._tables._table import (
    Target,
    include_object,
    negotiate,
    to_partial,
    to_table,
)

NOW = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)
KUBECTL_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


def ago(**delta: float) -> str:
    """An RFC 3339 time ``delta`` before NOW."""
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": "default", "creationTimestamp": ago(minutes=20), **extra}


def table(obj: dict[str, Any], api_version: str, kind: str, **options: Any) -> dict[str, Any]:
    return to_table(obj, api_version=api_version, kind=kind, now=NOW, **options)


def cells(obj: dict[str, Any], api_version: str, kind: str) -> list[Any]:
    rows: list[dict[str, Any]] = table(obj, api_version, kind)["rows"]
    return list(rows[0]["cells"])


def names(obj: dict[str, Any], api_version: str, kind: str) -> list[tuple[str, int]]:
    columns = table(obj, api_version, kind)["columnDefinitions"]
    return [(c["name"], c["priority"]) for c in columns]


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(seconds=-1.5), "0s"),
        (timedelta(seconds=-3), "<invalid>"),
        (timedelta(seconds=70), "70s"),
        (timedelta(seconds=190), "3m10s"),
        (timedelta(minutes=5), "5m"),
        (timedelta(minutes=70), "70m"),
        (timedelta(hours=3, minutes=5), "3h5m"),
        (timedelta(hours=47), "47h"),
        (timedelta(hours=49), "2d1h"),
        (timedelta(days=8, hours=2), "8d"),
        (timedelta(days=367), "367d"),
        (timedelta(days=365 * 2 + 1, hours=1), "2y1d"),
        (timedelta(days=365 * 8 + 1), "8y"),
    ],
)
def test_human_duration(delta: timedelta, text: str) -> None:
    """apimachinery ``pkg/util/duration.HumanDuration``: the AGE cells of every printer."""
    assert human_duration(delta) == text


def test_label_selectors_print_as_real() -> None:
    """``metav1.FormatLabelSelector``: requirements sorted by key, set values sorted,
    ``<none>`` when the selector selects by nothing, ``<error>`` when invalid."""
    selector = {
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [
            {"key": "c", "operator": "In", "values": ["y", "x"]},
            {"key": "aa", "operator": "DoesNotExist"},
        ],
    }
    assert format_label_selector(selector) == "a=1,!aa,b=2,c in (x,y)"
    assert format_label_selector(None) == "<none>"
    assert format_label_selector({"matchExpressions": [{"key": "k", "operator": "In"}]}) == (
        "<error>"
    )


# --- negotiation and options


def test_negotiation_follows_the_accept_header() -> None:
    """``NegotiateMediaTypeOptions``: the first servable clause wins (ordered by q);
    ``as=Table`` needs ``g=meta.k8s.io`` and ``v1``/``v1beta1``; JSON answers are served to
    protobuf-first clients; nothing servable is 406 ``NotAcceptable``."""
    assert negotiate(KUBECTL_ACCEPT) == Target("Table", "v1")
    assert negotiate(None) is None and negotiate("*/*") is None
    assert negotiate("application/vnd.kubernetes.protobuf,application/json") is None
    beta = (
        "application/json;as=Table;v=v2;g=meta.k8s.io,"
        "application/json;as=Table;v=v1beta1;g=meta.k8s.io"
    )
    assert negotiate(beta) == Target("Table", "v1beta1")
    weighted = "application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io"
    assert negotiate(weighted) == Target("Table", "v1")
    metadata = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    assert negotiate(metadata) == Target("PartialObjectMetadataList", "v1")
    assert negotiate(KUBECTL_ACCEPT, tables=False) is None
    with pytest.raises(StatusFailure) as caught:
        negotiate("application/vnd.kubernetes.protobuf")
    assert caught.value.code == 406 and caught.value.reason == "NotAcceptable"
    assert caught.value.message.startswith("only the following media types are accepted: ")


def test_include_object_is_validated() -> None:
    """``ValidateTableOptions``: ``includeObject`` is Metadata, None or Object, else 400."""
    assert include_object({}) == ""
    assert include_object({"includeObject": "Object"}) == "Object"
    with pytest.raises(StatusFailure) as caught:
        include_object({"includeObject": "All"})
    assert caught.value.code == 400
    assert caught.value.message.startswith("Unable to convert to Table as requested: ")


# --- Table shape


def _pod(name: str, **status: Any) -> dict[str, Any]:
    return {
        "metadata": meta(name, resourceVersion="7", labels={"app": "web"}),
        "spec": {"containers": [{"name": "app", "image": "img"}], "nodeName": "node-1"},
        "status": {"phase": "Running", **status},
    }


def test_lists_single_objects_and_row_objects() -> None:
    """``asTable``: the Table carries the list's resourceVersion, continue and
    remainingItemCount (an object's resourceVersion); each row's object is a
    PartialObjectMetadata by default, the full object for ``includeObject=Object`` (with
    its kind), null for ``None``; server-side printing is always wide."""
    listed = {
        "kind": "PodList",
        "metadata": {"resourceVersion": "9", "continue": "c", "remainingItemCount": 3},
        "items": [_pod("a"), _pod("b")],
    }
    result = table(listed, "v1", "Pod")
    assert result["kind"] == "Table" and result["apiVersion"] == "meta.k8s.io/v1"
    assert result["metadata"] == {"resourceVersion": "9", "continue": "c", "remainingItemCount": 3}
    assert [r["cells"][0] for r in result["rows"]] == ["a", "b"]
    partial = result["rows"][0]["object"]
    assert partial == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": _pod("a")["metadata"],
    }
    full = table(_pod("a"), "v1", "Pod", include="Object", version="v1beta1")
    assert full["apiVersion"] == "meta.k8s.io/v1beta1"
    assert full["metadata"] == {"resourceVersion": "7"}
    assert full["rows"][0]["object"]["kind"] == "Pod"
    assert full["rows"][0]["object"]["spec"] == _pod("a")["spec"]
    assert table(_pod("a"), "v1", "Pod", include="None")["rows"][0]["object"] is None
    assert table(_pod("a"), "v1", "Pod", no_headers=True)["columnDefinitions"] is None
    assert table({"items": []}, "v1", "Pod")["rows"] == []


def test_default_columns_for_kinds_without_a_printer() -> None:
    """``registry/rest/table.go`` default convertor: ``Name`` and ``Created At`` (type
    ``date``) holding the RFC 3339 creation time, as for roles and limit ranges."""
    role = {"metadata": meta("reader")}
    columns = table(role, "rbac.authorization.k8s.io/v1", "Role")["columnDefinitions"]
    assert [(c["name"], c["type"], c["format"]) for c in columns] == [
        ("Name", "string", "name"),
        ("Created At", "date", ""),
    ]
    assert columns[0]["description"].startswith("Name must be unique within a namespace.")
    assert cells(role, "rbac.authorization.k8s.io/v1", "Role") == ["reader", ago(minutes=20)]


def test_partial_object_metadata() -> None:
    """``asPartialObjectMetadata(List)``: metadata only; a list asked as a single object
    (or the reverse) is 406."""
    listed = {"metadata": {"resourceVersion": "4"}, "items": [_pod("a")]}
    result = to_partial(listed, Target("PartialObjectMetadataList"))
    assert result["kind"] == "PartialObjectMetadataList" and result["metadata"] == {
        "resourceVersion": "4"
    }
    assert result["items"][0]["kind"] == "PartialObjectMetadata"
    assert to_partial(_pod("a"), Target("PartialObjectMetadata"))["metadata"]["name"] == "a"
    with pytest.raises(StatusFailure) as caught:
        to_partial(listed, Target("PartialObjectMetadata"))
    assert caught.value.code == 406


# --- the printers


def _state(**state: Any) -> dict[str, Any]:
    return {"name": "app", "ready": False, "restartCount": 0, "state": state}


def test_pod_columns_and_statuses() -> None:
    """``printPod``: READY/STATUS/RESTARTS/AGE and, wide, IP (``podIPs[0]`` or the v1
    ``podIP``), NODE, NOMINATED NODE, READINESS GATES; the status comes from the last
    container's waiting/terminated reason, init containers (``Init:x/y``), deletion."""
    assert names(_pod("p"), "v1", "Pod") == [
        ("Name", 0),
        ("Ready", 0),
        ("Status", 0),
        ("Restarts", 0),
        ("Age", 0),
        ("IP", 1),
        ("Node", 1),
        ("Nominated Node", 1),
        ("Readiness Gates", 1),
    ]
    running = _state(running={"startedAt": ago(minutes=5)})
    running.update(
        ready=True,
        restartCount=3,
        lastState={"terminated": {"exitCode": 1, "finishedAt": ago(minutes=30)}},
    )
    pod = _pod("p", containerStatuses=[running], podIP="10.0.0.5")
    assert cells(pod, "v1", "Pod") == [
        "p", "1/1", "Running", "3 (30m ago)", "20m", "10.0.0.5", "node-1", "<none>", "<none>",
    ]  # fmt: skip
    crash = _pod("p", containerStatuses=[_state(waiting={"reason": "CrashLoopBackOff"})])
    assert cells(crash, "v1", "Pod")[1:4] == ["0/1", "CrashLoopBackOff", "0"]
    killed = _pod("p", containerStatuses=[_state(terminated={"exitCode": 137, "signal": 9})])
    assert cells(killed, "v1", "Pod")[2] == "Signal:9"
    init = _pod("p", initContainerStatuses=[_state(waiting={"reason": "PodInitializing"})])
    init["spec"]["initContainers"] = [{"name": "app"}, {"name": "two"}]
    assert cells(init, "v1", "Pod")[2] == "Init:0/2"
    gone = _pod("p")
    gone["metadata"]["deletionTimestamp"] = ago(seconds=5)
    assert cells(gone, "v1", "Pod")[2] == "Terminating"
    gated = _pod("p", conditions=[{"type": "Ready", "status": "True"}], podIPs=[{"ip": "fd::1"}])
    gated["spec"]["readinessGates"] = [{"conditionType": "Ready"}, {"conditionType": "X"}]
    assert cells(gated, "v1", "Pod")[5:] == ["fd::1", "node-1", "<none>", "1/2"]
    done = table(_pod("p", phase="Succeeded", reason="Completed"), "v1", "Pod")["rows"][0]
    assert done["conditions"] == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]


def _workload(**spec: Any) -> dict[str, Any]:
    template = {
        "spec": {"containers": [{"name": "a", "image": "i:1"}, {"name": "b", "image": "j"}]}
    }
    return {"metadata": meta("w"), "spec": {"template": template, **spec}}


def test_workload_printers() -> None:
    """``printDeployment``/``printReplicaSet``/``printStatefulSet``/``printDaemonSet``:
    the counts, then (wide) containers, images and the selector."""
    selector = {"matchLabels": {"app": "w"}}
    deployment = _workload(replicas=3, selector=selector)
    deployment["status"] = {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}
    assert names(deployment, "apps/v1", "Deployment")[:5] == [
        ("Name", 0), ("Ready", 0), ("Up-to-date", 0), ("Available", 0), ("Age", 0),
    ]  # fmt: skip
    assert cells(deployment, "apps/v1", "Deployment") == [
        "w", "2/3", 3, 2, "20m", "a,b", "i:1,j", "app=w",
    ]  # fmt: skip
    replica_set = _workload(replicas=2, selector=selector)
    assert cells(replica_set, "apps/v1", "ReplicaSet") == [
        "w", 2, 0, 0, "20m", "a,b", "i:1,j", "app=w",
    ]  # fmt: skip
    assert cells(_workload(), "apps/v1", "StatefulSet") == ["w", "0/1", "20m", "a,b", "i:1,j"]
    daemon = _workload(selector=selector)
    daemon["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    assert cells(daemon, "apps/v1", "DaemonSet") == [
        "w", 0, 0, 0, 0, 0, "disk=ssd", "20m", "a,b", "i:1,j", "app=w",
    ]  # fmt: skip


def test_job_and_cronjob_printers() -> None:
    """``printJob``: STATUS from the conditions, COMPLETIONS ``succeeded/completions``,
    DURATION from start to completion; ``printCronJob``: schedule, time zone, suspend as
    True/False/<unset>, active count, last schedule."""
    job = _workload(completions=3)
    job["status"] = {
        "succeeded": 3,
        "startTime": ago(minutes=10),
        "completionTime": ago(minutes=7),
        "conditions": [{"type": "Complete", "status": "True"}],
    }
    assert cells(job, "batch/v1", "Job")[:5] == ["w", "Complete", "3/3", "3m", "20m"]
    running = _workload(parallelism=2)
    running["status"] = {"startTime": ago(seconds=30)}
    assert cells(running, "batch/v1", "Job")[1:4] == ["Running", "0/1 of 2", "30s"]
    cron = {
        "metadata": meta("c"),
        "spec": {"schedule": "*/5 * * * *", "suspend": False, "jobTemplate": {"spec": {}}},
        "status": {"active": [{"name": "c-1"}], "lastScheduleTime": ago(minutes=3)},
    }
    assert cells(cron, "batch/v1", "CronJob") == [
        "c", "*/5 * * * *", "<none>", "False", 1, "3m", "20m", "", "", "<none>",
    ]  # fmt: skip


def _service(kind: str, **spec: Any) -> dict[str, Any]:
    ports = [{"port": 80, "protocol": "TCP", "nodePort": 30080}, {"port": 53, "protocol": "UDP"}]
    return {
        "metadata": meta("s"),
        "spec": {"type": kind, "clusterIPs": ["10.96.0.9"], "ports": ports, **spec},
    }


def test_service_printer() -> None:
    """``printService``: TYPE, CLUSTER-IP, EXTERNAL-IP per type (``<pending>`` for a load
    balancer without ingress), PORT(S) ``port[:nodePort]/protocol``, wide SELECTOR."""
    assert cells(_service("NodePort", selector={"app": "x"}), "v1", "Service") == [
        "s", "NodePort", "10.96.0.9", "<none>", "80:30080/TCP,53/UDP", "20m", "app=x",
    ]  # fmt: skip
    assert cells(_service("LoadBalancer"), "v1", "Service")[3] == "<pending>"
    balanced = _service("LoadBalancer", externalIPs=["1.2.3.4"])
    balanced["status"] = {"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}}
    assert cells(balanced, "v1", "Service")[3] == "lb.example,1.2.3.4"
    external = _service("ExternalName", externalName="db.example", clusterIPs=[], ports=[])
    assert cells(external, "v1", "Service")[2:5] == ["<none>", "db.example", "<none>"]


def test_simple_printers() -> None:
    """``printConfigMap`` (DATA counts data and binaryData), ``printSecret`` (TYPE, DATA),
    ``printNamespace`` (STATUS), ``printServiceAccount`` (SECRETS)."""
    configmap = {"metadata": meta("c"), "data": {"a": "1"}, "binaryData": {"b": "AA=="}}
    assert cells(configmap, "v1", "ConfigMap") == ["c", 2, "20m"]
    secret = {"metadata": meta("s"), "type": "kubernetes.io/tls", "data": {"a": "", "b": ""}}
    assert names(secret, "v1", "Secret") == [("Name", 0), ("Type", 0), ("Data", 0), ("Age", 0)]
    assert cells(secret, "v1", "Secret") == ["s", "kubernetes.io/tls", 2, "20m"]
    namespace = {"metadata": meta("n"), "status": {"phase": "Terminating"}}
    assert cells(namespace, "v1", "Namespace") == ["n", "Terminating", "20m"]
    account = {"metadata": meta("a"), "secrets": [{"name": "t"}]}
    assert cells(account, "v1", "ServiceAccount") == ["a", 1, "20m"]


def test_node_and_event_printers() -> None:
    """``printNode``: STATUS from the Ready condition plus SchedulingDisabled, ROLES from
    ``node-role.kubernetes.io/*`` labels; ``printEvent``: LAST SEEN, TYPE, REASON, OBJECT
    ``kind/name``, and (wide) SUBOBJECT, SOURCE, MESSAGE, FIRST SEEN, COUNT, NAME."""
    node = {
        "metadata": meta("n1", labels={"node-role.kubernetes.io/control-plane": ""}),
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "nodeInfo": {"kubeletVersion": "v1.37.0", "osImage": "Linux"},
            "addresses": [{"type": "InternalIP", "address": "192.168.0.2"}],
        },
    }
    assert cells(node, "v1", "Node") == [
        "n1", "Ready,SchedulingDisabled", "control-plane", "20m", "v1.37.0",
        "192.168.0.2", "<none>", "Linux", "<unknown>", "<unknown>",
    ]  # fmt: skip
    event = {
        "metadata": meta("web.1"),
        "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{app}"},
        "reason": "Pulled",
        "message": " pulled ",
        "type": "Normal",
        "source": {"component": "kubelet", "host": "n1"},
        "firstTimestamp": ago(minutes=12),
        "lastTimestamp": ago(minutes=11),
        "count": 2,
    }
    assert names(event, "v1", "Event")[:4] == [
        ("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0),
    ]  # fmt: skip
    assert cells(event, "v1", "Event") == [
        "11m", "Normal", "Pulled", "pod/web", "spec.containers{app}", "kubelet, n1",
        "pulled", "12m", 2, "web.1",
    ]  # fmt: skip


def test_custom_resource_columns() -> None:
    """apiextensions ``tableconvertor``: NAME plus the CRD's printer columns (JSONPath,
    ``string`` printed as jsonpath prints, ``date`` as an age, a missing value null); a CRD
    without columns shows AGE."""
    widget = {
        "metadata": meta("w1"),
        "spec": {"size": 3, "tags": ["a"]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    columns = [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
        {"name": "Tags", "type": "string", "jsonPath": ".spec.tags"},
        {
            "name": "Ready",
            "type": "string",
            "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
        },
        {"name": "Missing", "type": "string", "jsonPath": ".spec.nothing"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]
    result = table(widget, "example.com/v1", "Widget", printer_columns=columns)
    assert [c["name"] for c in result["columnDefinitions"]] == [
        "Name", "Size", "Tags", "Ready", "Missing", "Age",
    ]  # fmt: skip
    assert result["rows"][0]["cells"] == ["w1", 3, '["a"]', "True", None, "20m"]
    default = table(widget, "example.com/v1", "Widget", printer_columns=[])
    assert [c["name"] for c in default["columnDefinitions"]] == ["Name", "Age"]
    assert default["rows"][0]["cells"] == ["w1", "20m"]
    assert find({"a": {"b.c": [1, 2]}}, r".a.b\.c[-1]") == [2]
    assert find({"a": [{"n": 1}, {"n": 2}]}, ".a[*].n") == [1, 2]
