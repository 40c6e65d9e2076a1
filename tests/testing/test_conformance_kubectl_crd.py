"""Issue 12's CRD and ``/scale`` acceptance lines, driven by kubectl against the standalone
fake server (``aioinformer fake-apiserver``).

Each test states the real kube-apiserver's behaviour it checks and where that behaviour is
specified (apiextensions-apiserver sources, the API documentation "Extend the Kubernetes API
with CustomResourceDefinitions", kubectl's documented commands). Skipped without kubectl.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from .crd_fixtures import crontab, crontab_crd
from .standalone import Kubectl, Standalone

# kubectl against the standalone server (whole programs): left out of make test-lowest.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("kubectl") is None, reason="kubectl is not on PATH (these tests drive kubectl)"
    ),
]


def _crd(group: str) -> dict[str, Any]:
    """The CronTab CRD in its own group (each test of the module's shared server has one)."""
    crd = crontab_crd()
    crd["metadata"]["name"] = f"crontabs.{group}"
    crd["spec"]["group"] = group
    return crd


def _crontab(group: str, name: str = "nightly", **spec: Any) -> dict[str, Any]:
    return {**crontab(name, **spec), "apiVersion": f"{group}/v1"}


def _install(kubectl: Kubectl, group: str) -> None:
    kubectl("apply", "-f", "-", stdin=json.dumps(_crd(group)))
    kubectl("wait", "--for=condition=Established", "--timeout=20s", f"crd/crontabs.{group}")


def test_the_standalone_server_serves_a_crd_applied_with_kubectl(kubectl: Kubectl) -> None:
    """Issue 12 acceptance: a CRD applied with ``kubectl apply`` becomes ``Established``
    (``kubectl wait``) and its resource is served at once (``customresource_handler.go``);
    objects are validated against the version's schema (422 with the causes,
    ``registry/customresource/validator.go``), defaulted; ``/status`` and ``/scale`` are
    served because the CRD asks for them (``kubectl patch --subresource=status``,
    ``kubectl scale``: ``registry/customresource/etcd.go``), and ``/scale`` is not where the
    version does not ask for it (v1beta1); ``kubectl get`` prints the
    version's ``additionalPrinterColumns`` (``tableconvertor``)."""
    group = "accept.example.com"
    _install(kubectl, group)
    kubectl("apply", "-f", "-", stdin=json.dumps(_crontab(group)))
    refused = kubectl.fails(
        "apply", "-f", "-", stdin=json.dumps(_crontab(group, "bad", cronSpec="x", replicas=50))
    )
    assert 'The CronTab "bad" is invalid' in refused
    assert "spec.replicas in body should be less than or equal to 10" in refused
    path = f"/apis/{group}/v1/namespaces/default/crontabs/nightly"
    stored = kubectl.raw(path)
    assert stored["spec"]["image"] == "my-awesome-cron-image" and stored["spec"]["replicas"] == 1
    status = '{"status": {"replicas": 1, "labelSelector": "app=cron"}}'
    kubectl("patch", f"crontabs.{group}", "nightly", "--subresource=status", "--type=merge",
            "-p", status)  # fmt: skip
    assert kubectl.raw(f"{path}/status")["status"] == {"replicas": 1, "labelSelector": "app=cron"}
    out = kubectl("scale", f"crontabs.{group}", "nightly", "--replicas=4")
    assert out.strip() == f"crontab.{group}/nightly scaled"
    scale = kubectl.raw(f"{path}/scale")
    assert scale["spec"] == {"replicas": 4}
    assert scale["status"] == {"replicas": 1, "selector": "app=cron"}
    v1beta1 = f"/apis/{group}/v1beta1/namespaces/default/crontabs/nightly"
    assert "NotFound" in kubectl.fails("get", "--raw", f"{v1beta1}/scale")  # not asked for
    header = kubectl("get", f"crontabs.{group}").splitlines()[0].split()
    assert header == ["NAME", "SPEC", "REPLICAS", "AGE"]


def test_kubectl_scale_deploy_web(kubectl: Kubectl) -> None:
    """Issue 12 acceptance: ``kubectl scale deploy web --replicas=3`` works: kubectl PATCHes
    ``deployments/web/scale`` (an ``autoscaling/v1`` ``Scale``), the Deployment's
    ``spec.replicas`` becomes 3 and its ``generation`` is bumped
    (``pkg/registry/apps/deployment/storage/storage.go``, ``ScaleREST``)."""
    kubectl("create", "deployment", "web", "--image=nginx")
    assert kubectl("scale", "deploy", "web", "--replicas=3").strip() == "deployment.apps/web scaled"
    stored = kubectl.deployment("web")
    assert (stored["spec"]["replicas"], stored["metadata"]["generation"]) == (3, 2)
    scale = kubectl.raw("/apis/apps/v1/namespaces/default/deployments/web/scale")
    assert scale["status"]["selector"] == "app=web"
    out = kubectl("scale", "deploy", "web", "--current-replicas=3", "--replicas=1")
    assert out.strip() == "deployment.apps/web scaled"
    refused = kubectl.fails("scale", "deploy", "web", "--current-replicas=3", "--replicas=2")
    assert "Expected replicas to be 3, was 1" in refused


def test_reapplying_a_custom_resource_merges_and_removes_dropped_fields(kubectl: Kubectl) -> None:
    """Client-side ``kubectl apply`` of a custom resource sends a JSON merge patch (the
    published schema lists no strategic merge patch for it: ``customresource_handler.go``
    serves none), so a field dropped from the manifest is removed and kubectl warns about
    nothing; ``kubectl apply --server-side`` works as well; ``kubectl patch
    --type=strategic`` is refused with 415."""
    group = "reapply.example.com"
    _install(kubectl, group)
    kubectl("apply", "-f", "-", stdin=json.dumps(_crontab(group, tags=["a"], suspend=True)))
    done = kubectl.result("apply", "-f", "-", stdin=json.dumps(_crontab(group, tags=["b"])))
    assert done.returncode == 0 and done.stderr == ""
    path = f"/apis/{group}/v1/namespaces/default/crontabs/nightly"
    spec = kubectl.raw(path)["spec"]
    assert spec["tags"] == ["b"] and "suspend" not in spec
    server_side = _crontab(group, "ssa", concurrencyPolicy="Forbid")
    kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(server_side))
    applied = kubectl.raw(f"/apis/{group}/v1/namespaces/default/crontabs/ssa")
    assert applied["spec"]["concurrencyPolicy"] == "Forbid"
    assert applied["metadata"]["managedFields"][0]["operation"] == "Apply"
    refused = kubectl.fails(
        "patch", f"crontabs.{group}", "nightly", "--type=strategic", "-p", '{"spec": {}}'
    )
    assert "application/strategic-merge-patch+json is not supported" in refused


def test_kubectl_delete_crd_removes_its_objects_and_stops_serving(kubectl: Kubectl) -> None:
    """``kubectl delete crd`` waits until the CRD is gone: the finalizer controller deletes
    every object first (``controller/finalizer``), then the resource is no longer served
    and kubectl no longer knows the kind."""
    group = "gone.example.com"
    _install(kubectl, group)
    kubectl("apply", "-f", "-", stdin=json.dumps(_crontab(group)))
    kubectl("delete", "crd", f"crontabs.{group}")
    assert "NotFound" in kubectl.fails("get", "crd", f"crontabs.{group}")
    assert "NotFound" in kubectl.fails(
        "get", "--raw", f"/apis/{group}/v1/namespaces/default/crontabs"
    )
    groups = {g["name"] for g in kubectl.raw("/apis")["groups"]}
    assert group not in groups


def test_kubectl_explain_reads_the_crd_schema(kubectl: Kubectl) -> None:
    """The CRD version's schema is published in the OpenAPI documents
    (``controller/openapi``), so ``kubectl explain`` shows its fields."""
    group = "explain.example.com"
    _install(kubectl, group)
    out = kubectl("explain", "crontabs.spec", f"--api-version={group}/v1")
    assert "cronSpec" in out and "concurrencyPolicy" in out


def test_the_standalone_server_loads_a_crd_and_its_objects_from_a_manifest(
    tmp_path: Path,
) -> None:
    """``aioinformer fake-apiserver -f`` with a CRD followed by objects of its kind serves
    both from the start."""
    manifest = tmp_path / "crontabs.yaml"
    manifest.write_text(yaml.safe_dump_all([crontab_crd(), crontab()]))
    server = Standalone("-f", str(manifest))
    try:
        kubectl = Kubectl(server, tmp_path)
        names = kubectl("get", "crontabs", "-o", "name").split()
        assert names == ["crontab.stable.example.com/nightly"]
    finally:
        assert server.stop() == 0


def test_kubectl_get_all_lists_built_in_and_custom_kinds_of_the_category(kubectl: Kubectl) -> None:
    """``kubectl get all`` expands the ``all`` category from aggregated discovery: the
    built-in workloads (their registries' ``Categories()``: pods, services, deployments, ...)
    and every CRD whose ``names.categories`` holds ``all``
    (``customresource_discovery_controller.go``)."""
    group = "all.example.com"
    _install(kubectl, group)
    kubectl("apply", "-f", "-", stdin=json.dumps(_crontab(group, "listed")))
    kubectl("create", "deployment", "everything", "--image=nginx")
    names = kubectl("get", "all", "-o", "name").split()
    assert "deployment.apps/everything" in names
    assert f"crontab.{group}/listed" in names
