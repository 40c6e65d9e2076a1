"""Issue 23: the fake holds what a fresh cluster holds (its "furniture").

Each test names the real component that creates or keeps the objects and where it lives in
kubernetes/kubernetes; the kubectl ones drive kubectl 1.32 against the standalone fake, the
others the in-process server over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from typing import Any

import aiohttp
import anyio
import pytest

from aioinformer import LeaderElector
from aioinformer.errors import ForbiddenError
from aioinformer.testing import FakeApiServer
from tests.support import kube_client

from .standalone import Kubectl

needs_kubectl = pytest.mark.skipif(
    shutil.which("kubectl") is None, reason="kubectl is not on PATH (these tests drive kubectl)"
)
SYSTEM = ["default", "kube-node-lease", "kube-public", "kube-system"]


def _names(objects: list[dict[str, Any]]) -> list[str]:
    return sorted(str(o["metadata"]["name"]) for o in objects)


@needs_kubectl
def test_kubectl_get_ns_lists_the_four_system_namespaces(kubectl: Kubectl) -> None:
    """``pkg/controlplane/controller/systemnamespaces/system_namespaces_controller.go``
    (``createNamespaceIfNeeded``) creates ``kube-system``, ``kube-public``,
    ``kube-node-lease`` and ``default`` with nothing but a name; the namespace strategy adds the
    ``kubernetes.io/metadata.name`` label, the ``kubernetes`` finalizer and ``Active``; the
    writer is ``kube-apiserver``."""
    printed = kubectl(
        "get", "ns", "--no-headers", "-o", "custom-columns=N:.metadata.name,S:.status.phase"
    )
    rows = dict(line.split() for line in printed.splitlines())
    assert {name: rows[name] for name in SYSTEM} == dict.fromkeys(SYSTEM, "Active")
    system = kubectl.raw("/api/v1/namespaces/kube-system")
    assert system["metadata"]["labels"] == {"kubernetes.io/metadata.name": "kube-system"}
    assert system["spec"] == {"finalizers": ["kubernetes"]}
    managers = {e["manager"] for e in system["metadata"]["managedFields"]}
    assert managers == {"kube-apiserver"}


@needs_kubectl
def test_kubectl_get_sa_default_in_every_namespace(kubectl: Kubectl) -> None:
    """kube-controller-manager's ``serviceaccount-controller``
    (``pkg/controller/serviceaccount/serviceaccounts_controller.go``, ``syncNamespace``) gives
    every active namespace a ``default`` ServiceAccount carrying nothing but its name (no token
    Secret since 1.24), and makes it again when it is deleted."""
    assert kubectl("get", "sa", "default", "-o", "name").strip() == "serviceaccount/default"
    kubectl("create", "namespace", "team-sa")
    account = kubectl.raw("/api/v1/namespaces/team-sa/serviceaccounts/default")
    assert set(account) == {"kind", "apiVersion", "metadata"}
    assert "secrets" not in account and "labels" not in account["metadata"]
    kubectl("-n", "team-sa", "delete", "sa", "default")
    again = kubectl.raw("/api/v1/namespaces/team-sa/serviceaccounts/default")
    assert again["metadata"]["uid"] != account["metadata"]["uid"]


async def test_kube_root_ca_crt_is_published_in_every_namespace_and_kept() -> None:
    """kube-controller-manager's ``root-ca-cert-publisher``
    (``pkg/controller/certificates/rootcacertpublisher/publisher.go``): ``kube-root-ca.crt``
    in every active namespace holds ``ca.crt`` (the cluster's CA, PEM) and the
    ``kubernetes.io/description`` annotation; a change to its data is put back, a deleted one
    is made again, and none is made in a namespace that is terminating."""
    server = FakeApiServer()
    server.objects.create("namespaces", {"metadata": {"name": "team"}})
    found = server.objects.get("configmaps", "kube-root-ca.crt", namespace="team")
    assert found["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")
    description = found["metadata"]["annotations"]["kubernetes.io/description"]
    assert description.startswith("Contains a CA bundle that can be used to verify")
    assert found["metadata"]["managedFields"][0]["manager"] == "kube-controller-manager"
    every = server.objects.list("configmaps", field_selector="metadata.name=kube-root-ca.crt")
    assert sorted(o["metadata"]["namespace"] for o in every) == sorted([*SYSTEM, "team"])
    server.objects.patch(
        "configmaps", "kube-root-ca.crt", {"data": {"ca.crt": "x"}}, namespace="team"
    )
    kept = server.objects.get("configmaps", "kube-root-ca.crt", namespace="team")
    assert kept["data"] == found["data"]
    server.objects.delete("configmaps", "kube-root-ca.crt", namespace="team")
    again = server.objects.get("configmaps", "kube-root-ca.crt", namespace="team")
    assert again["metadata"]["uid"] != found["metadata"]["uid"]


async def test_the_kubernetes_service_points_at_the_server_once_it_listens() -> None:
    """kube-apiserver's bootstrap controller
    (``pkg/controlplane/controller/kubernetesservice/controller.go``,
    ``CreateOrUpdateMasterServiceIfNeeded``, ``createPortAndServiceSpec``) and its endpoint
    reconciler (``pkg/controlplane/reconcilers``): ``default/kubernetes`` is a ClusterIP
    Service on the first address of the service range, port 443 ``https`` to the server's
    port, labelled ``component=apiserver, provider=kubernetes``, without a selector; the
    Endpoints (``endpointslice.kubernetes.io/skip-mirror``) and the EndpointSlice
    (``kubernetes.io/service-name``) name the server's address. A post-start hook: none before
    the server listens. Deleted, they come back."""
    server = FakeApiServer()
    assert server.objects.list("services") == []
    async with server:
        service = server.objects.get("services", "kubernetes")
        assert service["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
        spec = service["spec"]
        assert (spec["type"], spec["clusterIP"], spec["clusterIPs"]) == (
            "ClusterIP",
            "10.96.0.1",
            ["10.96.0.1"],
        )
        assert spec["ports"] == [
            {"name": "https", "protocol": "TCP", "port": 443, "targetPort": server.port}
        ]
        assert "selector" not in spec and spec["sessionAffinity"] == "None"
        endpoints = server.objects.get("endpoints", "kubernetes")
        assert endpoints["metadata"]["labels"] == {
            "endpointslice.kubernetes.io/skip-mirror": "true"
        }
        assert endpoints["subsets"] == [
            {
                "addresses": [{"ip": "127.0.0.1"}],
                "ports": [{"name": "https", "port": server.port, "protocol": "TCP"}],
            }
        ]
        endpoint_slice = server.objects.get("endpointslices", "kubernetes")
        assert endpoint_slice["addressType"] == "IPv4"
        assert endpoint_slice["endpoints"][0]["addresses"] == ["127.0.0.1"]
        assert endpoint_slice["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
        server.objects.delete("services", "kubernetes")
        assert server.objects.get("services", "kubernetes")["spec"]["clusterIP"] == "10.96.0.1"


def test_the_system_priority_classes_exist() -> None:
    """The post-start hook ``scheduling/bootstrap-system-priority-classes``
    (``pkg/registry/scheduling/rest/storage_scheduling.go``, ``AddSystemPriorityClasses``;
    values from ``pkg/apis/scheduling/helpers.go``): ``system-node-critical`` 2000001000 and
    ``system-cluster-critical`` 2000000000, ``PreemptLowerPriority``, not global defaults."""
    server = FakeApiServer()
    classes = {o["metadata"]["name"]: o for o in server.objects.list("priorityclasses")}
    assert {name: pc["value"] for name, pc in classes.items()} == {
        "system-cluster-critical": 2_000_000_000,
        "system-node-critical": 2_000_001_000,
    }
    node = classes["system-node-critical"]
    assert node["preemptionPolicy"] == "PreemptLowerPriority" and "globalDefault" not in node
    assert node["description"] == (
        "Used for system critical pods that must not be moved from their current node."
    )


def test_the_immortal_namespaces_may_not_be_deleted() -> None:
    """``NamespaceLifecycle`` admission
    (``plugin/pkg/admission/namespace/lifecycle/admission.go``, ``immortalNamespaces``):
    deleting ``default``, ``kube-system`` or ``kube-public`` is 403 ``this namespace may not be
    deleted``, a dry run too; ``kube-node-lease`` may go."""
    server = FakeApiServer()
    for name in ("default", "kube-system", "kube-public"):
        with pytest.raises(ForbiddenError) as refused:
            server.objects.delete("namespaces", name, dry_run=True)
        assert refused.value.message == (
            f'namespaces "{name}" is forbidden: this namespace may not be deleted'
        )
    server.objects.delete("namespaces", "kube-node-lease")


async def test_a_leader_election_lease_in_kube_system_works(fake_apiserver: FakeApiServer) -> None:
    """Controllers keep their leader-election Lease in ``kube-system`` (kube-scheduler and
    kube-controller-manager do, ``--leader-elect-resource-namespace``): the namespace exists,
    so the elector's create succeeds and it leads."""
    async with kube_client(fake_apiserver) as client:
        elector = LeaderElector(
            client=client,
            lease_name="my-operator",
            namespace="kube-system",
            identity="me",
            lease_duration=15,
            renew_deadline=10,
            retry_period=2,
        )
        async with elector:
            term = await asyncio.wait_for(elector.wait_leading(), 10)
            assert term is not None
            held = fake_apiserver.objects.get("leases", "my-operator", namespace="kube-system")
            assert held["spec"]["holderIdentity"] == "me"


async def test_without_system_objects_the_store_holds_the_namespaces_asked_for() -> None:
    """``system_objects=False`` (``--no-system-objects``): a bare store, for tests that count
    objects: only the ``namespaces`` asked for, no ServiceAccount or ConfigMap in a new
    namespace, no ``kubernetes`` Service, and ``default`` may be deleted."""
    server = FakeApiServer(system_objects=False, namespaces=("default", "team"))
    async with server:
        assert _names(server.objects.list("namespaces")) == ["default", "team"]
        server.objects.create("namespaces", {"metadata": {"name": "later"}})
        for resource in ("serviceaccounts", "configmaps", "services", "priorityclasses"):
            assert server.objects.list(resource) == [], resource
        server.objects.delete("namespaces", "default")


async def test_kubectl_sees_the_furniture_through_http(fake_apiserver: FakeApiServer) -> None:
    """The same objects over HTTP: ``GET /api/v1/namespaces/default/serviceaccounts/default``
    and ``kube-root-ca.crt`` answer 200 in a namespace created over HTTP."""
    async with aiohttp.ClientSession(base_url=fake_apiserver.url) as http:
        async with http.post("/api/v1/namespaces", json={"metadata": {"name": "http"}}) as made:
            assert made.status == 201
        for path in ("serviceaccounts/default", "configmaps/kube-root-ca.crt"):
            async with http.get(f"/api/v1/namespaces/http/{path}") as response:
                assert response.status == 200, path
                assert json.loads(await response.read())["metadata"]["namespace"] == "http"


# -- the operational endpoints -------------------------------------------------------------

LIVE_FIRST = [
    "[+]ping ok",
    "[+]log ok",
    "[+]etcd ok",
    "[+]poststarthook/start-apiserver-admission-initializer ok",
]


async def test_health_endpoints_list_their_checks(http: aiohttp.ClientSession) -> None:
    """``k8s.io/apiserver/pkg/server/healthz/healthz.go`` (``handleRootHealth``): ``ok`` alone
    (``text/plain; charset=utf-8``, ``X-Content-Type-Options: nosniff``), or with ``?verbose``
    each check as ``[+]<name> ok`` and ``<root> check passed``; ``/readyz`` adds
    ``etcd-readiness`` and ``informer-sync`` and ends with ``shutdown``; ``?exclude=`` marks a
    check ``excluded: ok`` and warns about names that match none; each check has its own path
    (``adaptCheckToHandler``)."""
    async with http.get("/livez") as response:
        assert (response.status, await response.text()) == (200, "ok")
        assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    async with http.get("/livez", params={"verbose": ""}) as response:
        lines = (await response.text()).splitlines()
    assert lines[:4] == LIVE_FIRST and lines[-1] == "livez check passed"
    assert (
        "[+]poststarthook/rbac/bootstrap-roles ok" in lines
        and "[+]autoregister-completion ok" in lines
    )
    async with http.get("/healthz?verbose") as response:
        healthz = (await response.text()).splitlines()
    assert healthz[:-1] == lines[:-1] and healthz[-1] == "healthz check passed"
    async with http.get("/readyz?verbose=true&exclude=etcd&exclude=nonsense") as response:
        ready = (await response.text()).splitlines()
    assert ready[:5] == [
        "[+]ping ok",
        "[+]log ok",
        "[+]etcd excluded: ok",
        "[+]etcd-readiness ok",
        "[+]informer-sync ok",
    ]
    assert ready[-3:] == [
        "[+]shutdown ok",
        'warn: some health checks cannot be excluded: no matches for "nonsense"',
        "readyz check passed",
    ]
    async with http.get(
        "/livez/poststarthook/scheduling/bootstrap-system-priority-classes"
    ) as response:
        assert (response.status, await response.text()) == (200, "ok")


async def test_a_failing_check_is_500_with_the_reason_withheld(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A failing check (``server.faults.fail_health_checks``): the root answers 500 through
    ``http.Error`` with every line, ``[-]<check> failed: reason withheld`` (the reason is only
    logged: the endpoint is public) and ``<root> check failed``; the check's own path says
    ``internal server error: <reason>``; ``/livez`` does not run ``shutdown``."""
    fake_apiserver.faults.fail_health_checks("shutdown", reason="shutting down")
    async with http.get("/readyz") as response:
        body = await response.text()
    assert response.status == 500
    assert body.endswith("[-]shutdown failed: reason withheld\nreadyz check failed\n")
    async with http.get("/readyz/shutdown") as response:
        assert (response.status, await response.text()) == (
            500,
            "internal server error: shutting down\n",
        )
    async with http.get("/livez") as response:
        assert response.status == 200
    fake_apiserver.faults.fail_health_checks()
    async with http.get("/readyz") as response:
        assert response.status == 200


def _series(name: str, **labels: str) -> str:
    """A series line's name and labels, sorted as promhttp writes them."""
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def _request(verb: str, scope: str, code: str = "", dry_run: str = "") -> dict[str, str]:
    labels = {"component": "apiserver", "dry_run": dry_run, "group": "",
              "resource": "configmaps", "scope": scope, "subresource": "", "verb": verb,
              "version": "v1"}  # fmt: skip
    return {**labels, "code": code} if code else labels


@pytest.mark.fake_apiserver(system_objects=False)  # counts the objects it stores
async def test_metrics_count_the_servers_own_traffic(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``/metrics`` in the Prometheus text format (``text/plain; version=0.0.4``) with the
    families of ``staging/src/k8s.io/apiserver/pkg/endpoints/metrics/metrics.go``:
    ``apiserver_request_total`` by verb (``CleanVerb``: LIST, POST, APPLY for a server-side
    apply, WATCH counted when it ends), scope (``CleanScope``), ``dry_run`` and code;
    ``apiserver_request_duration_seconds`` with the real buckets;
    ``apiserver_longrunning_requests`` while a watch is open; ``apiserver_resource_objects``
    per resource. HELP texts carry the stability level (component-base ``metrics/opts.go``)."""
    cms = "/api/v1/namespaces/default/configmaps"
    async with http.get(cms) as response:
        assert response.status == 200
    async with http.post(f"{cms}?dryRun=All", json={"metadata": {"name": "dry"}}) as response:
        assert response.status == 201
    apply = {"Content-Type": "application/apply-patch+yaml"}
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied}\n"
    async with http.patch(f"{cms}/applied?fieldManager=me", data=body, headers=apply) as response:
        assert response.status == 201
    async with (
        http.get("/api/v1/configmaps", params={"watch": "1"}),
        http.get("/metrics") as response,
    ):
        assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        during = (await response.text()).splitlines()
    running = {k: v for k, v in _request("WATCH", "cluster").items() if k != "dry_run"}
    assert f"{_series('apiserver_longrunning_requests', **running)} 1" in during
    with anyio.fail_after(10):
        await fake_apiserver.requests.wait_for_watches(0, exactly=True)
    async with http.get("/metrics") as response:
        text = await response.text()
    lines = text.splitlines()
    total = "apiserver_request_total"
    assert f"{_series(total, **_request('LIST', 'namespace', '200'))} 1" in lines
    assert f"{_series(total, **_request('POST', 'resource', '201', 'All'))} 1" in lines
    assert f"{_series(total, **_request('APPLY', 'resource', '201'))} 1" in lines
    assert f"{_series(total, **_request('WATCH', 'cluster', '200'))} 1" in lines
    assert 'apiserver_resource_objects{group="",resource="configmaps"} 1' in lines
    assert 'apiserver_resource_objects{group="",resource="namespaces"} 1' in lines
    assert (
        "# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for "
        "each verb, dry run value, group, version, resource, scope, component, and HTTP "
        "response code."
    ) in lines
    assert "# TYPE apiserver_request_duration_seconds histogram" in lines
    listed = _series("apiserver_request_duration_seconds_bucket", **_request("LIST", "namespace"))
    buckets = [
        line.split('le="')[1].split('"')[0] for line in lines if line.startswith(listed[:-1])
    ]
    assert buckets == ["0.005", "0.025", "0.05", "0.1", "0.2", "0.4", "0.6", "0.8", "1", "1.25",
                       "1.5", "2", "3", "4", "5", "6", "8", "10", "15", "20", "30", "45", "60",
                       "+Inf"]  # fmt: skip
    assert 'le="1e+06"' in text  # apiserver_response_sizes: 1000 · 10^k, as Go prints them


@needs_kubectl
def test_kubectl_get_raw_health_and_metrics(kubectl: Kubectl) -> None:
    """``kubectl get --raw '/readyz?verbose'`` and ``--raw /metrics`` answer as from a real
    server."""
    ready = kubectl("get", "--raw", "/readyz?verbose").splitlines()
    assert (
        ready[:3] == ["[+]ping ok", "[+]log ok", "[+]etcd ok"]
        and ready[-1] == "readyz check passed"
    )
    assert "# TYPE apiserver_request_total counter" in kubectl("get", "--raw", "/metrics")
