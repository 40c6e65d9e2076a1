"""Issue 12's deletion rows driven by kubectl 1.32 against the standalone fake server.

Each test states the real kube-apiserver's (and controllers') behaviour it checks and where
it is specified. The server runs no kubelet here (the kubelet's part is
``test_conformance_kubectl_kubelet.py``'s). Skipped without kubectl.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import pytest

from .standalone import Kubectl, Standalone

# kubectl against the standalone server (whole programs): left out of make test-lowest.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("kubectl") is None, reason="kubectl is not on PATH (these tests drive kubectl)"
    ),
]


@pytest.fixture(scope="module")
def standalone_server() -> Iterator[Standalone]:
    """The module's standalone fake, without its kubelet (``--no-kubelet``): graceful pod
    deletion waits, as on a control plane without nodes (envtest)."""
    standalone = Standalone("--no-kubelet")
    yield standalone
    assert standalone.stop() == 0


_HOLD = '{"metadata": {"finalizers": ["example.com/hold"]}}'
_RELEASE = '{"metadata": {"finalizers": null}}'


def _wait(kubectl: Kubectl, *args: str) -> None:
    """``kubectl wait`` (20 s at most): what a test of a cluster does for the controllers."""
    kubectl("wait", "--timeout=20s", *args)


def test_delete_cascade_foreground_removes_the_replicasets_before_the_deployment(
    kubectl: Kubectl,
) -> None:
    """``kubectl delete --cascade=foreground`` sends ``propagationPolicy: Foreground``: the
    Deployment is marked (``deletionTimestamp``, ``foregroundDeletion`` finalizer) and stays
    while its ReplicaSet (``blockOwnerDeletion``) exists; the garbage collector deletes the
    ReplicaSet and only then lets the Deployment go ("Garbage Collection" concept page,
    ``Store.Delete``)."""
    kubectl("create", "namespace", "fg")
    kubectl("create", "deployment", "web", "--image=nginx", "-n", "fg")
    owner = json.loads(kubectl("get", "deployment", "web", "-n", "fg", "-o", "json"))
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web-1",
            "namespace": "fg",
            "finalizers": ["example.com/hold"],
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "web",
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": owner["spec"] | {"replicas": 1},
    }
    rs["spec"] = {k: rs["spec"][k] for k in ("replicas", "selector", "template")}
    kubectl("create", "-f", "-", stdin=json.dumps(rs))
    kubectl("delete", "deployment", "web", "-n", "fg", "--cascade=foreground", "--wait=false")
    marked = json.loads(kubectl("get", "deployment", "web", "-n", "fg", "-o", "json"))
    assert marked["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert marked["metadata"]["deletionTimestamp"]
    # The collector works after the DELETE answered: wait for it as on a cluster.
    _wait(kubectl, "--for=jsonpath={.metadata.deletionTimestamp}", "replicaset/web-1", "-n", "fg")
    kubectl("patch", "replicaset", "web-1", "-n", "fg", "--type=merge", "-p", _RELEASE)
    _wait(kubectl, "--for=delete", "replicaset/web-1", "deployment/web", "-n", "fg")


def test_deleting_a_namespace_passes_through_terminating(kubectl: Kubectl) -> None:
    """``kubectl delete namespace`` marks the namespace ``Terminating`` (the namespace
    registry's ``Delete``); the namespace controller deletes its content; while content
    stays (a finalizer) ``kubectl get`` shows ``Terminating`` and creating in it is refused
    by ``NamespaceLifecycle`` admission (403, "unable to create new content in namespace …
    because it is being terminated"); once empty the namespace is gone."""
    kubectl("create", "namespace", "term")
    kubectl("create", "configmap", "held", "--from-literal=a=b", "-n", "term")
    kubectl("create", "configmap", "plain", "-n", "term")
    kubectl("patch", "configmap", "held", "-n", "term", "--type=merge", "-p", _HOLD)
    kubectl("delete", "namespace", "term", "--wait=false")
    assert kubectl("get", "namespace", "term").splitlines()[1].split()[:2] == [
        "term",
        "Terminating",
    ]
    # The namespace controller empties it after the DELETE answered.
    _wait(kubectl, "--for=delete", "configmap/plain", "-n", "term")
    failed = kubectl.fails("create", "configmap", "new", "-n", "term")
    assert (
        'configmaps "new" is forbidden: unable to create new content in namespace term '
        "because it is being terminated"
    ) in failed
    kubectl("patch", "configmap", "held", "-n", "term", "--type=merge", "-p", _RELEASE)
    _wait(kubectl, "--for=delete", "namespace/term")


def test_a_scheduled_pod_is_terminating_until_a_forced_delete(kubectl: Kubectl) -> None:
    """A scheduled pod's deletion is graceful (``podStrategy.CheckGracefulDelete``: 30 s
    from ``terminationGracePeriodSeconds``): ``kubectl get`` shows ``Terminating``; ``kubectl
    delete --force --grace-period=0`` (``gracePeriodSeconds=0``) removes it at once."""
    kubectl("create", "namespace", "grace")
    kubectl(
        "run", "p", "--image=nginx", "-n", "grace",
        '--overrides={"spec": {"nodeName": "node-1"}}',
    )  # fmt: skip
    kubectl("delete", "pod", "p", "-n", "grace", "--wait=false")
    pod = json.loads(kubectl("get", "pod", "p", "-n", "grace", "-o", "json"))
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 30
    assert "Terminating" in kubectl("get", "pod", "p", "-n", "grace")
    kubectl("delete", "pod", "p", "-n", "grace", "--force", "--grace-period=0")
    assert "NotFound" in kubectl.fails("get", "pod", "p", "-n", "grace")
