"""Issue 22's acceptance, run for real: ``aioinformer fake-apiserver``, kubectl, and
``python -m examples.operator`` as separate processes, as a user would run them.

kubectl applies the CRD and a Widget, deletes the Widget's ConfigMap, changes
``spec.message`` and deletes the Widget; each outcome is awaited with ``kubectl wait`` (a
watch) or, for Events, a bounded loop of ``kubectl get``. The server's request log
(``/_fake/requests``) shows the operator's metadata-only ConfigMap informer asking for
``as=PartialObjectMetadataList``. Skipped without kubectl.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._examples import EXAMPLES, ROOT
from .testing.standalone import LineReader, Standalone

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH"),
]

WIDGET = """\
apiVersion: example.com/v1
kind: Widget
metadata: {name: hello, namespace: default}
spec: {message: "hello, world"}
"""
#: How long kubectl waits for one outcome (the operator reacts within a second or two).
WAIT = "30s"


class Cluster:
    """kubectl and the operator, both pointed at the standalone fake by one kubeconfig."""

    def __init__(self, server: Standalone, home: Path) -> None:
        self.server = server
        kubeconfig = home / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\n"
            f'clusters: [{{name: fake, cluster: {{server: "{server.url}"}}}}]\n'
            "users: [{name: me, user: {}}]\n"
            "contexts: [{name: fake, context: {cluster: fake, user: me, namespace: default}}]\n"
            "current-context: fake\n"
        )
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        self.cache = str(home / "kubectl-cache")

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["kubectl", "--cache-dir", self.cache, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=90,
            check=False,
        )
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.kubectl(*args, "-o", "json"))

    def event(self, reason: str, *, within: float = 30.0) -> dict[str, Any]:
        """The events.k8s.io/v1 Event of this reason about the Widget ``hello``: a bounded
        loop of ``kubectl get`` (Events have generated names, so there is nothing to
        ``kubectl wait`` for)."""
        deadline = time.monotonic() + within
        while True:
            for event in self.json("get", "events.events.k8s.io")["items"]:
                if event["reason"] == reason and event["regarding"]["name"] == "hello":
                    return dict(event)
            assert time.monotonic() < deadline, f"no {reason} Event within {within} s"
            time.sleep(0.2)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    server = Standalone()
    try:
        yield Cluster(server, tmp_path)
    finally:
        assert server.stop() == 0


def _start_operator(cluster: Cluster) -> tuple[subprocess.Popen[str], LineReader]:
    process = subprocess.Popen(
        [sys.executable, "-m", "examples.operator"],
        cwd=ROOT,
        env=cluster.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    return process, LineReader(process.stderr)


def test_the_operator_against_the_standalone_fake_and_kubectl(cluster: Cluster) -> None:
    """Within seconds of ``kubectl apply`` of a Widget: the finalizer, ``Ready=True`` at the
    Widget's generation, the owned ConfigMap with the message, and a ``Reconciled`` Event in
    ``kubectl get events.events.k8s.io``; a deleted ConfigMap comes back; a new
    ``spec.message`` reaches the ConfigMap; deleting the Widget leaves a ``Cleanup`` Event
    and the Widget is gone; SIGINT stops the operator cleanly."""
    kubectl = cluster.kubectl
    kubectl("apply", "-f", str(EXAMPLES / "operator" / "crd.yaml"))
    kubectl("wait", "--for=condition=Established", "crd/widgets.example.com", f"--timeout={WAIT}")
    operator, log = _start_operator(cluster)
    try:
        log.wait_for(r"became leader of lease default/widget-operator", timeout=30)
        kubectl("apply", "-f", "-", stdin=WIDGET)
        ready = "jsonpath={.status.conditions[?(@.type=='Ready')].status}=True"
        kubectl("wait", f"--for={ready}", "widget/hello", f"--timeout={WAIT}")
        widget = cluster.json("get", "widget", "hello")
        assert widget["metadata"]["finalizers"] == ["example.com/cleanup"]
        [condition] = widget["status"]["conditions"]
        assert (condition["reason"], condition["observedGeneration"]) == (
            "Reconciled",
            widget["metadata"]["generation"],
        )
        kubectl("wait", "--for=create", "configmap/hello-widget", f"--timeout={WAIT}")
        configmap = cluster.json("get", "configmap", "hello-widget")
        assert configmap["data"] == {"message": "hello, world"}
        [owner] = configmap["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("Widget", "hello", True)
        reconciled = cluster.event("Reconciled")
        assert reconciled["type"] == "Normal"
        table = kubectl("get", "events.events.k8s.io")
        assert "Reconciled" in table and "widget/hello" in table, table

        kubectl("delete", "configmap", "hello-widget")
        kubectl("wait", "--for=create", "configmap/hello-widget", f"--timeout={WAIT}")
        again = cluster.json("get", "configmap", "hello-widget")
        assert again["metadata"]["uid"] != configmap["metadata"]["uid"]
        assert again["data"] == {"message": "hello, world"}

        kubectl("patch", "widget", "hello", "--type=merge", "-p", '{"spec":{"message":"bye"}}')
        changed = "jsonpath={.data.message}=bye"
        kubectl("wait", f"--for={changed}", "configmap/hello-widget", f"--timeout={WAIT}")
        observed = "jsonpath={.status.conditions[?(@.type=='Ready')].observedGeneration}=2"
        kubectl("wait", f"--for={observed}", "widget/hello", f"--timeout={WAIT}")

        kubectl("delete", "widget", "hello", f"--timeout={WAIT}")  # waits until it is gone
        assert cluster.event("Cleanup")["type"] == "Normal"
        assert "NotFound" in subprocess.run(
            ["kubectl", "--cache-dir", cluster.cache, "get", "widget", "hello"],
            capture_output=True, text=True, env=cluster.env, timeout=60, check=False,
        ).stderr  # fmt: skip
    finally:
        if operator.poll() is None:
            operator.send_signal(signal.SIGINT)
        status = operator.wait(timeout=30)
        log.join()
        assert operator.stderr is not None
        operator.stderr.close()
    assert status == 0, "".join(log.lines)
    assert any("released lease default/widget-operator" in line for line in log.lines)
    requests = json.loads(kubectl("get", "--raw", "/_fake/requests"))
    configmap_lists = [r for r in requests if r["resource"] == "configmaps" and r["verb"] == "list"]
    assert any("as=PartialObjectMetadataList" in r["accept"] for r in configmap_lists)
