"""Issue 12's acceptance lines, driven by kubectl 1.32 against the standalone fake server.

Each test states the real kube-apiserver's behaviour it checks and where that behaviour is
specified; kubectl is the client a user would run against a cluster. Skipped without kubectl.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from .standalone import Kubectl

# kubectl against the standalone server (whole programs): left out of make test-lowest.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("kubectl") is None, reason="kubectl is not on PATH (these tests drive kubectl)"
    ),
]

FIXTURES = Path(__file__).parent / "defaults_fixtures"
CM = "/api/v1/namespaces/default/configmaps"


def test_a_deployment_put_carrying_status_keeps_the_stored_status(kubectl: Kubectl) -> None:
    """A Deployment PUT (``kubectl replace``) carrying ``status`` keeps the stored status
    (``deploymentStrategy.PrepareForUpdate``; only ``deployments/status`` writes it, and
    that write keeps the spec); ``GET configmaps/x/status`` is 404 and discovery lists no
    ``configmaps/status`` (the ConfigMap registry has no status storage)."""
    kubectl("create", "deployment", "keep", "--image=nginx")
    kubectl(
        "patch", "deployment", "keep", "--subresource=status", "--type=merge",
        "-p", '{"status": {"replicas": 1}, "spec": {"replicas": 5}}',
    )  # fmt: skip
    sent = json.loads(kubectl("get", "deployment", "keep", "-o", "json"))
    sent["status"] = {"replicas": 99, "readyReplicas": 99}
    sent["spec"]["replicas"] = 2
    kubectl("replace", "-f", "-", stdin=json.dumps(sent))
    stored = kubectl.deployment("keep")
    assert stored["status"] == {"replicas": 1}
    assert (stored["spec"]["replicas"], stored["metadata"]["generation"]) == (2, 2)
    kubectl("create", "configmap", "nostatus", "--from-literal=a=b")
    failed = kubectl.fails("get", "--raw", f"{CM}/nostatus/status")
    assert "NotFound" in failed
    core = {r["name"] for r in kubectl.raw("/api/v1")["resources"]}
    assert "pods/status" in core and "configmaps/status" not in core


def test_diff_dry_run_server_and_dry_run_delete_leave_storage_and_watchers_untouched(
    kubectl: Kubectl,
) -> None:
    """``kubectl diff``, ``--dry-run=server`` (apply, server-side apply, label, delete) and
    ``DELETE ?dryRun=All`` are dry runs (apiserver ``DryRunnableStorage``: everything but
    the write): answered, never stored, no resource version taken, no watch event. A
    ``kubectl get -w`` sees none of them: it prints the listed objects once, then only the
    real write that follows (its watch starts at the list's resource version, so it would
    replay anything stored after the list, whenever its request arrives)."""
    kubectl("create", "configmap", "dry", "--from-literal=a=b")
    watcher, lines = kubectl.watch("get", "configmaps", "-w", "-o", "name")
    try:
        lines.wait_for(r"^configmap/dry$")
        before = kubectl.raw(CM)
        changed = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry}\ndata: {a: changed}\n"
        diff = kubectl.result("diff", "-f", "-", stdin=changed)
        assert diff.returncode == 1 and "+  a: changed" in diff.stdout, diff.stderr
        assert "(server dry run)" in kubectl("apply", "--dry-run=server", "-f", "-", stdin=changed)
        kubectl(
            "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-",
            stdin=changed,
        )  # fmt: skip
        kubectl("label", "configmap", "dry", "x=y", "--dry-run=server")
        assert "(server dry run)" in kubectl("delete", "configmap", "dry", "--dry-run=server")
        kubectl("delete", "--raw", f"{CM}/dry?dryRun=All")
        after = kubectl.raw(CM)
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        assert after["items"] == before["items"]
        kubectl("create", "configmap", "after-dry-runs")
        lines.wait_for(r"after-dry-runs")
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)
        if watcher.stdout is not None:
            watcher.stdout.close()
    printed = [line.strip() for line in lines.lines]
    assert printed[-1] == "configmap/after-dry-runs"
    assert len(set(printed)) == len(printed), printed  # nothing printed twice


def _without_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {
        k: v
        for k, v in obj["metadata"].items()
        if k not in ("uid", "creationTimestamp", "resourceVersion", "managedFields")
    }
    return {**obj, "metadata": meta}


def test_a_pod_with_a_name_and_one_container_comes_back_defaulted(kubectl: Kubectl) -> None:
    """A Pod created with only a name and one container comes back as a real server returns
    it (the fixture ``defaults_fixtures/pod.yaml``: ``SetDefaults_PodSpec``,
    ``SetDefaults_Container``, the ServiceAccount, Priority and DefaultTolerationSeconds
    admission plugins, ``podStrategy.PrepareForCreate``); an unknown field under
    ``fieldValidation=Strict`` (kubectl's default) is a 400 naming the field
    (``handlers/create.go``)."""
    fixture = yaml.safe_load((FIXTURES / "pod.yaml").read_text())
    kubectl("create", "-f", "-", stdin=json.dumps(fixture["sent"]))
    stored = kubectl.raw("/api/v1/namespaces/default/pods/web")
    assert _without_server_fields(stored) == _without_server_fields(fixture["returned"])
    bad = {**fixture["sent"], "metadata": {"name": "bad"}}
    bad["spec"] = {**bad["spec"], "restartPolicyy": "Never"}
    failed = kubectl.fails("create", "-f", "-", stdin=json.dumps(bad))
    assert "Error from server (BadRequest)" in failed
    assert 'strict decoding error: unknown field "spec.restartPolicyy"' in failed


def test_imperative_creates_send_protobuf_and_work(kubectl: Kubectl) -> None:
    """``kubectl create namespace|configmap|secret|deployment`` use the typed client, which
    sends ``application/vnd.kubernetes.protobuf`` bodies; the server decodes them
    (``runtime/serializer/protobuf``) and stores the objects with their defaults."""
    kubectl("create", "namespace", "demo")
    kubectl("create", "configmap", "c", "--from-literal=a=b", "-n", "demo")
    kubectl("create", "secret", "generic", "s", "--from-literal=k=v", "-n", "demo")
    kubectl("create", "deployment", "web", "--image=nginx", "-n", "demo")
    namespace = kubectl.raw("/api/v1/namespaces/demo")
    assert namespace["status"] == {"phase": "Active"}
    assert namespace["spec"] == {"finalizers": ["kubernetes"]}
    assert kubectl.raw("/api/v1/namespaces/demo/configmaps/c")["data"] == {"a": "b"}
    secret = kubectl.raw("/api/v1/namespaces/demo/secrets/s")
    assert (secret["type"], secret["data"]) == ("Opaque", {"k": "dg=="})
    web = kubectl.raw("/apis/apps/v1/namespaces/demo/deployments/web")
    assert web["spec"]["strategy"]["type"] == "RollingUpdate"


def _header(output: str) -> list[str]:
    return re.split(r"\s{2,}", output.splitlines()[0].strip())


def test_kubectl_get_prints_the_servers_columns(kubectl: Kubectl) -> None:
    """``kubectl get`` prints the columns of the server's Table (``pkg/printers/
    internalversion/printers.go``); ``-o wide`` adds the priority-1 ones."""
    kubectl("create", "namespace", "cols")
    kubectl("create", "deployment", "web", "--image=nginx", "-n", "cols")
    kubectl("run", "web", "--image=nginx", "-n", "cols")
    deployments = kubectl("get", "deployments", "-n", "cols")
    assert _header(deployments) == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert deployments.splitlines()[1].split()[:4] == ["web", "0/1", "0", "0"]
    pods = kubectl("get", "pods", "-o", "wide", "-n", "cols")
    assert _header(pods) == [
        "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE",
        "READINESS GATES",
    ]  # fmt: skip
    assert pods.splitlines()[1].split()[:3] == ["web", "0/1", "Pending"]
    assert _header(kubectl("get", "namespaces")) == ["NAME", "STATUS", "AGE"]


def test_kubectl_explain_reads_the_openapi_documents(kubectl: Kubectl) -> None:
    """``kubectl explain deployment.spec.replicas`` walks the served OpenAPI v3 document of
    apps/v1 (the published schema, its description included)."""
    explained = kubectl("explain", "deployment.spec.replicas")
    assert "KIND:       Deployment" in explained
    assert "FIELD: replicas <integer>" in explained
    assert "Number of desired pods." in explained
