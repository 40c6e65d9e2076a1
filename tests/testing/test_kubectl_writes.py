"""kubectl's writes against the standalone fake: apply (client- and server-side), patch, edit.

kubectl computes strategic merge patches itself (client-side apply and edit send a
three-way patch with ``$setElementOrder`` and ``$patch: delete``) and sends server-side
apply as ``application/apply-patch+yaml``; the fake must apply them as a real API server
does. Each test states the behaviour it checks and where it is specified.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .standalone import Kubectl

# kubectl against the standalone server (whole programs): left out of make test-lowest.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH"),
]

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
{containers}
"""


def _container(name: str, image: str, *env: str) -> str:
    text = f"      - name: {name}\n        image: {image}\n"
    if env:
        text += "        env:\n" + "".join(f"        - {{name: {e}, value: v{e}}}\n" for e in env)
    return text


def _manifest(name: str, *containers: str, replicas: int | None = None) -> str:
    wanted = f"replicas: {replicas}" if replicas is not None else ""
    return MANIFEST.format(name=name, replicas=wanted, containers="".join(containers))


def _summary(deployment: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return [(c["name"], c["image"], [e["name"] for e in c.get("env", [])]) for c in containers]


def _managers(deployment: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in deployment["metadata"]["managedFields"]}


def test_reapplying_a_changed_manifest_keeps_and_drops_what_it_says(kubectl: Kubectl) -> None:
    """``kubectl apply`` of a changed manifest sends a three-way strategic merge patch; the
    stored object keeps every container and env entry the manifest keeps, drops the ones it
    drops, and holds no ``$`` directive (issue 12's acceptance; apimachinery
    ``strategicpatch``). The writes are recorded for ``kubectl-client-side-apply``."""
    first = _manifest(
        "shop",
        _container("app", "shop:1", "A", "B"),
        _container("proxy", "envoy:1"),
        _container("sidecar", "log:1", "X"),
    )
    assert "created" in kubectl("apply", "-f", "-", stdin=first)
    second = _manifest(
        "shop", _container("app", "shop:2", "B", "C"), _container("proxy", "envoy:1")
    )
    assert "configured" in kubectl("apply", "-f", "-", stdin=second)
    stored = kubectl.deployment("shop")
    assert _summary(stored) == [("app", "shop:2", ["B", "C"]), ("proxy", "envoy:1", [])]
    assert _managers(stored)["kubectl-client-side-apply"]["operation"] == "Update"
    third = _manifest("shop", _container("proxy", "envoy:2"), _container("app", "shop:2", "C"))
    kubectl("apply", "-f", "-", stdin=third)
    assert _summary(kubectl.deployment("shop")) == [
        ("proxy", "envoy:2", []),
        ("app", "shop:2", ["C"]),
    ]


def test_server_side_apply_conflicts_between_managers_and_force(kubectl: Kubectl) -> None:
    """``kubectl apply --server-side`` applies as manager ``kubectl``; a second manager
    applying an owned field with another value gets 409 Conflict naming the field and the
    manager, and succeeds with ``--force-conflicts`` (issue 12's acceptance; apimachinery
    ``internal/conflict.go``, structured-merge-diff ``merge/update.go``)."""
    manifest = _manifest("api", _container("app", "api:1"), replicas=2)
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", stdin=manifest)
    stored = kubectl.deployment("api")
    assert _managers(stored)["kubectl"]["operation"] == "Apply"

    scale = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec: {replicas: 5}\n"
    other = ["apply", "--server-side", "--field-manager=autoscaler", "-f", "-"]
    error = kubectl.fails(*other, stdin=scale)
    assert 'conflict with "kubectl"' in error and ".spec.replicas" in error
    kubectl(*other, "--force-conflicts", stdin=scale)
    stored = kubectl.deployment("api")
    assert stored["spec"]["replicas"] == 5
    assert _managers(stored)["autoscaler"]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}

    smaller = _manifest("api", _container("app", "api:2"))
    kubectl("apply", "--server-side", "-f", "-", stdin=smaller)
    stored = kubectl.deployment("api")
    assert stored["spec"]["replicas"] == 5, "the autoscaler still owns replicas"
    assert _summary(stored) == [("app", "api:2", [])]


def test_kubectl_patch_of_every_type(kubectl: Kubectl) -> None:
    """``kubectl patch`` sends a strategic merge patch by default (containers merge by
    name), or a merge or JSON patch with ``--type``; each write is recorded for
    ``kubectl-patch``."""
    kubectl(
        "apply", "-f", "-", stdin=_manifest("p", _container("app", "a:1"), _container("b", "b:1"))
    )
    image = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "a:2"}]}}}}
    kubectl("patch", "deployment", "p", "-p", json.dumps(image))
    kubectl(
        "patch", "deployment", "p", "--type", "merge", "-p", '{"metadata":{"labels":{"x":"y"}}}'
    )
    replicas = [{"op": "add", "path": "/spec/replicas", "value": 4}]
    kubectl("patch", "deployment", "p", "--type", "json", "-p", json.dumps(replicas))
    stored = kubectl.deployment("p")
    assert _summary(stored) == [("app", "a:2", []), ("b", "b:1", [])]
    assert stored["metadata"]["labels"] == {"x": "y"} and stored["spec"]["replicas"] == 4
    assert "kubectl-patch" in _managers(stored)


def test_kubectl_edit_changes_one_field_and_keeps_the_rest(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    """``kubectl edit`` sends the difference as a strategic merge patch with
    ``$setElementOrder``: the edited image changes, the other container stays, no directive
    is stored, and the write is recorded for ``kubectl-edit``."""
    kubectl(
        "apply",
        "-f",
        "-",
        stdin=_manifest("e", _container("app", "e:1", "A"), _container("b", "b:1")),
    )
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nsed -i "s/image: e:1/image: e:2/" "$1"\n')
    editor.chmod(0o755)
    kubectl("edit", "deployment", "e", env={"KUBE_EDITOR": str(editor)})
    stored = kubectl.deployment("e")
    assert _summary(stored) == [("app", "e:2", ["A"]), ("b", "b:1", [])]
    assert "kubectl-edit" in _managers(stored)
