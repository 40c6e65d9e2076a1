"""Issue 23's pod lifecycle acceptance lines: kubectl 1.32 against the standalone fake
server, which runs a kubelet for every node by default.

The kubelet's status manager (``pkg/kubelet/status/status_manager.go``) writes ``Running``
once a bound pod's containers started, and ends a graceful deletion with ``DELETE``
(``gracePeriodSeconds: 0``, uid precondition) once they stopped; ``kubectl delete`` waits
for the object to be gone (``pkg/cmd/delete/delete.go``, ``--wait`` default true);
``kubectl get pods`` prints the phase in STATUS (``printPod`` in
``pkg/printers/internalversion/printers.go``). Skipped without kubectl.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .standalone import Kubectl, Standalone

pytestmark = pytest.mark.skipif(
    shutil.which("kubectl") is None, reason="kubectl is not on PATH (these tests drive kubectl)"
)

_ON_NODE = json.dumps({"spec": {"nodeName": "node-1"}})


def test_a_scheduled_pod_runs_and_kubectl_delete_returns_once_it_stopped(
    kubectl: Kubectl,
) -> None:
    """Issue 23 acceptance: ``kubectl get pod`` shows ``Running`` (READY 1/1) for a pod
    bound to a node; ``kubectl delete pod web-1`` (grace period 30 s) returns once the
    kubelet stopped the containers and removed the pod, within the grace period plus a
    second (kubectl's own ``--timeout`` says so: it fails when the object outlives it)."""
    kubectl("create", "namespace", "kubelet")
    kubectl("run", "web-1", "--image=nginx:1.25", "-n", "kubelet", f"--overrides={_ON_NODE}")
    kubectl(
        "wait", "--for=jsonpath={.status.phase}=Running", "--timeout=20s",
        "pod/web-1", "-n", "kubelet",
    )  # fmt: skip
    row = kubectl("get", "pod", "web-1", "-n", "kubelet").splitlines()[1].split()
    assert row[:3] == ["web-1", "1/1", "Running"]
    out = kubectl("delete", "pod", "web-1", "-n", "kubelet", "--timeout=31s")
    assert out.strip() == 'pod "web-1" deleted'
    assert "NotFound" in kubectl.fails("get", "pod", "web-1", "-n", "kubelet")


def test_kubectl_logs_of_a_pod_waiting_for_its_containers(tmp_path: Path) -> None:
    """``kubectl logs`` of a bound pod whose containers have not started answers the
    kubelet's 400 (``validateContainerLogStatus``: ``container "app" in pod "slow" is
    waiting to start: ContainerCreating``); of an unbound pod nothing, exit status 0 (204).
    (A server whose kubelet takes an hour to start containers: ``--pod-start-delay``.)"""
    server = Standalone("--pod-start-delay", "3600")
    try:
        kubectl = Kubectl(server, tmp_path)
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "slow"},
            "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "nginx"}]},
        }
        kubectl("create", "-f", "-", stdin=json.dumps(pod))
        kubectl(
            "wait", "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}"
            "=ContainerCreating", "--timeout=20s", "pod/slow",
        )  # fmt: skip
        refused = kubectl.fails("logs", "slow")
        assert (
            'Error from server (BadRequest): container "app" in pod "slow" is waiting to start:'
            " ContainerCreating"
        ) in refused
        kubectl("run", "unbound", "--image=nginx")
        assert kubectl("logs", "unbound") == ""
    finally:
        assert server.stop() == 0
