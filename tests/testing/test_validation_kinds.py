"""Per-kind validation of defaulted objects, with the real field paths and messages.

Each case builds a valid defaulted object, breaks one thing and checks the errors
``validate_create`` reports, as the kind's ``Validate`` function in kubernetes
``pkg/apis/*/validation`` does.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from aioinformer.testing._apiserver._registry._defaults import apply_defaults
from aioinformer.testing._apiserver._validation._kinds import validate_create, warnings_on_create

Obj = dict[str, Any]


def pod() -> Obj:
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    }
    apply_defaults("", "v1", "Pod", obj)
    return obj


def deployment() -> Obj:
    obj: Obj = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }
    apply_defaults("apps", "v1", "Deployment", obj)
    return obj


def errors_of(group: str, kind: str, obj: Obj, *, namespaced: bool = True) -> list[str]:
    return [str(e) for e in validate_create(group, kind, obj, namespaced=namespaced)]


def change(obj: Obj, path: str, value: Any) -> Obj:
    """A copy with ``value`` at the dotted ``path`` (``[i]`` steps into lists; None deletes)."""
    result = copy.deepcopy(obj)
    node: Any = result
    steps = path.replace("[", ".[").split(".")
    for step in steps[:-1]:
        node = node[int(step[1:-1])] if step.startswith("[") else node.setdefault(step, {})
    last = steps[-1]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return result


POD_CASES: list[tuple[str, Callable[[Obj], Obj], list[str]]] = [
    ("valid", lambda p: p, []),
    (
        "no containers",
        lambda p: change(p, "spec.containers", []),
        ["spec.containers: Required value"],
    ),
    (
        "container without name or image",
        lambda p: change(
            p,
            "spec.containers",
            [{"imagePullPolicy": "Always", "terminationMessagePolicy": "File"}],
        ),
        ["spec.containers[0].name: Required value", "spec.containers[0].image: Required value"],
    ),
    (
        "duplicate container names",
        lambda p: change(p, "spec.containers", p["spec"]["containers"] * 2),
        ['spec.containers[1].name: Duplicate value: "app"'],
    ),
    (
        "init container named like a container",
        lambda p: change(p, "spec.initContainers", p["spec"]["containers"]),
        ['spec.initContainers[0].name: Duplicate value: "app"'],
    ),
    (
        "bad restart policy",
        lambda p: change(p, "spec.restartPolicy", "Sometimes"),
        [
            'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
            '"OnFailure", "Never"'
        ],
    ),
    (
        "bad port",
        lambda p: change(
            p, "spec.containers[0].ports", [{"containerPort": 70000, "protocol": "TCP"}]
        ),
        [
            "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 "
            "and 65535, inclusive"
        ],
    ),
    (
        "bad protocol",
        lambda p: change(
            p, "spec.containers[0].ports", [{"containerPort": 80, "protocol": "HTTP"}]
        ),
        [
            'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: '
            '"SCTP", "TCP", "UDP"'
        ],
    ),
    (
        "mount of an unknown volume",
        lambda p: change(
            p, "spec.containers[0].volumeMounts", [{"name": "data", "mountPath": "/d"}]
        ),
        ['spec.containers[0].volumeMounts[0].name: Not found: "data"'],
    ),
    (
        "volume without a type",
        lambda p: change(p, "spec.volumes", [{"name": "data"}]),
        ["spec.volumes[0]: Required value: must specify a volume type"],
    ),
    (
        "requests above limits",
        lambda p: change(
            p, "spec.containers[0].resources", {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}
        ),
        [
            'spec.containers[0].resources.requests[cpu]: Invalid value: "2": must be less than or '
            "equal to cpu limit of 1"
        ],
    ),
    (
        "env without a name",
        lambda p: change(p, "spec.containers[0].env", [{"value": "x"}]),
        [
            "spec.containers[0].env[0].name: Required value",
            'spec.containers[0].env[0].name: Invalid value: "": environment variable name must be '
            "non-empty",
        ],
    ),
    (
        "image with surrounding space",
        lambda p: change(p, "spec.containers[0].image", " nginx"),
        [
            'spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing '
            "whitespace"
        ],
    ),
    (
        "toleration with seconds but not NoExecute",
        lambda p: change(
            p,
            "spec.tolerations",
            [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}],
        ),
        [
            'spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be '
            "'NoExecute' when `tolerationSeconds` is set"
        ],
    ),
]


@pytest.mark.parametrize(("case", "edit", "expected"), POD_CASES, ids=[c[0] for c in POD_CASES])
def test_pod_validation(case: str, edit: Callable[[Obj], Obj], expected: list[str]) -> None:
    """``ValidatePodCreate``/``ValidatePodSpec`` (kubernetes ``pkg/apis/core/validation``):
    containers required and uniquely named across init and regular containers, an image,
    port numbers and protocols, known volumes, requests within limits, env names, restart
    policy, tolerations."""
    assert errors_of("", "Pod", edit(pod())) == expected


DEPLOYMENT_CASES: list[tuple[str, Callable[[Obj], Obj], list[str]]] = [
    ("valid", lambda d: d, []),
    (
        "no selector",
        lambda d: change(d, "spec.selector", None),
        [
            "spec.selector: Required value",
            'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not '
            "match template `labels`",
        ],
    ),
    (
        "selector not matching",
        lambda d: change(d, "spec.selector", {"matchLabels": {"app": "api"}}),
        [
            'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not '
            "match template `labels`"
        ],
    ),
    (
        "empty selector",
        lambda d: change(d, "spec.selector", {}),
        ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"],
    ),
    (
        "negative replicas",
        lambda d: change(d, "spec.replicas", -1),
        ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "template restart policy",
        lambda d: change(d, "spec.template.spec.restartPolicy", "Never"),
        [
            'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
            '"Always"'
        ],
    ),
    (
        "bad template label",
        lambda d: change(d, "spec.template.metadata.labels", {"app": "web", "x": "a b"}),
        [
            'spec.template.labels: Invalid value: "a b": a valid label must be an empty string or '
            "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
            "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ],
    ),
    (
        "zero surge and unavailable",
        lambda d: change(d, "spec.strategy.rollingUpdate", {"maxSurge": 0, "maxUnavailable": "0%"}),
        [
            'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when '
            "`maxSurge` is 0"
        ],
    ),
    (
        "bad percent",
        lambda d: change(d, "spec.strategy.rollingUpdate.maxSurge", "lots"),
        [
            'spec.strategy.rollingUpdate.maxSurge: Invalid value: "lots": a valid percent string '
            "must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used "
            "for validation is '[0-9]+%')"
        ],
    ),
    (
        "recreate with rolling parameters",
        lambda d: change(d, "spec.strategy.type", "Recreate"),
        [
            "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is "
            "'Recreate'"
        ],
    ),
    (
        "progress deadline not above minReadySeconds",
        lambda d: change(d, "spec.minReadySeconds", 600),
        ["spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"],
    ),
]


@pytest.mark.parametrize(
    ("case", "edit", "expected"), DEPLOYMENT_CASES, ids=[c[0] for c in DEPLOYMENT_CASES]
)
def test_deployment_validation(case: str, edit: Callable[[Obj], Obj], expected: list[str]) -> None:
    """``ValidateDeployment``/``ValidateDeploymentSpec`` (kubernetes
    ``pkg/apis/apps/validation``): a non-empty selector that matches the template labels
    (errors at ``spec.template.metadata.labels``; template label syntax at
    ``spec.template.labels``), ``restartPolicy: Always``, replicas ≥ 0, the rolling-update
    parameters, the progress deadline."""
    assert errors_of("apps", "Deployment", edit(deployment())) == expected


def workload(kind: str) -> Obj:
    obj = deployment()
    obj["spec"] = {k: v for k, v in obj["spec"].items() if k in ("selector", "template")}
    apply_defaults("apps", "v1", kind, obj)
    return obj


def test_replica_sets_stateful_sets_and_daemon_sets() -> None:
    """``ValidateReplicaSetSpec`` (its empty-selector message says "deployment"),
    ``ValidateStatefulSetSpec`` (DNS-label names; "statefulset"), ``ValidateDaemonSetSpec``
    (a missing selector only fails the template match; "daemonset")."""
    assert errors_of("apps", "ReplicaSet", workload("ReplicaSet")) == []
    assert errors_of("apps", "ReplicaSet", change(workload("ReplicaSet"), "spec.selector", {})) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment"
    ]
    sts = workload("StatefulSet")
    assert errors_of("apps", "StatefulSet", sts) == []
    assert errors_of("apps", "StatefulSet", change(sts, "metadata.name", "web.v1"))[0] == (
        'metadata.name: Invalid value: "web.v1": must not contain dots'
    )
    assert errors_of("apps", "StatefulSet", change(sts, "spec.podManagementPolicy", "Fast")) == [
        "spec.podManagementPolicy: Invalid value: \"Fast\": must be 'OrderedReady' or 'Parallel'"
    ]
    ds = workload("DaemonSet")
    assert errors_of("apps", "DaemonSet", ds) == []
    assert errors_of("apps", "DaemonSet", change(ds, "spec.selector", None)) == [
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match '
        "template `labels`"
    ]
    assert errors_of(
        "apps",
        "DaemonSet",
        change(ds, "spec.updateStrategy.rollingUpdate", {"maxSurge": 1, "maxUnavailable": 1}),
    ) == [
        "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when "
        "maxUnavailable is non-zero"
    ]


def test_name_warnings_on_create() -> None:
    """``WarningsOnCreate`` of Pods and pod-owning controllers: a name that is not a DNS
    label works but is warned about (kubernetes ``pkg/registry/core/pod/strategy.go``,
    ``pkg/registry/apps/deployment/strategy.go``)."""
    assert warnings_on_create("", "Pod", change(pod(), "metadata.name", "web.v1")) == [
        "metadata.name: this is used in the Pod's hostname, which can result in surprising "
        "behavior; a DNS label is recommended: [must not contain dots]"
    ]
    assert warnings_on_create("apps", "Deployment", deployment()) == []
    assert warnings_on_create("", "ConfigMap", {"metadata": {"name": "a.b"}}) == []
