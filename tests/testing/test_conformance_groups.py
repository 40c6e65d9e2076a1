"""Issue 23: the API groups a cluster serves besides the workloads, with their real discovery,
rules and answers: authorization.k8s.io and authentication.k8s.io (``kubectl auth``), policy
(PodDisruptionBudgets and eviction), autoscaling/v2, scheduling.k8s.io, storage.k8s.io,
admissionregistration.k8s.io, and the core LimitRanges and ResourceQuotas.

Each test names the real rule and where it lives in kubernetes/kubernetes.
"""

from __future__ import annotations

import base64
import json
import shutil
from typing import Any

import aiohttp
import pytest

from aioinformer.errors import UnprocessableEntityError
from aioinformer.testing import FakeApiServer
from aioinformer.testing._apiserver._http._discovery import storage_version_hash

from .standalone import Kubectl
from .valid import deployment, pod

needs_kubectl = pytest.mark.skipif(
    shutil.which("kubectl") is None, reason="kubectl is not on PATH (these tests drive kubectl)"
)
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
STD = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


async def _json(response: aiohttp.ClientResponse) -> Any:
    return json.loads(await response.read())


# -- discovery -----------------------------------------------------------------------------


async def test_legacy_discovery_lists_the_new_groups_as_a_real_server(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``APIInstaller`` (``pkg/endpoints/installer.go``): each group version lists its
    resources sorted by path, with verbs, short names, categories and the
    ``storageVersionHash`` of ``pkg/endpoints/discovery/storageversionhash.go`` (the first 8
    bytes of SHA-256 of group/version/kind, base64); the reviews are ``create`` only and have
    no hash. Values as in kubernetes' ``api/discovery/*.json``."""
    async with http.get("/apis/policy/v1") as response:
        resources = (await _json(response))["resources"]
    assert resources == [
        {
            "name": "poddisruptionbudgets",
            "singularName": "poddisruptionbudget",
            "namespaced": True,
            "kind": "PodDisruptionBudget",
            "verbs": STD,
            "shortNames": ["pdb"],
            "storageVersionHash": "EVWiDmWqyJw=",
        },
        {
            "name": "poddisruptionbudgets/status",
            "singularName": "",
            "namespaced": True,
            "kind": "PodDisruptionBudget",
            "verbs": ["get", "patch", "update"],
        },
    ]
    async with http.get("/apis/authorization.k8s.io/v1") as response:
        reviews = (await _json(response))["resources"]
    assert [(r["name"], r["namespaced"], r["verbs"]) for r in reviews] == [
        ("localsubjectaccessreviews", True, ["create"]),
        ("selfsubjectaccessreviews", False, ["create"]),
        ("selfsubjectrulesreviews", False, ["create"]),
        ("subjectaccessreviews", False, ["create"]),
    ]
    assert all("storageVersionHash" not in r for r in reviews)
    expected = {
        ("autoscaling", "v2", "horizontalpodautoscalers"): ("qwQve8ut294=", ["hpa"], ["all"]),
        ("scheduling.k8s.io", "v1", "priorityclasses"): ("1QwjyaZjj3Y=", ["pc"], None),
        ("storage.k8s.io", "v1", "storageclasses"): ("K+m6uJwbjGY=", ["sc"], None),
        ("storage.k8s.io", "v1", "csinodes"): ("Pe62DkZtjuo=", None, None),
        ("storage.k8s.io", "v1", "volumeattachments"): ("tJx/ezt6UDU=", None, None),
        ("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"): (
            "Sqi0GUgDaX0=",
            None,
            ["api-extensions"],
        ),
        ("", "v1", "limitranges"): ("EBKMFVe6cwo=", ["limits"], None),
        ("", "v1", "resourcequotas"): ("8uhSgffRX6w=", ["quota"], None),
    }
    for (group, version, plural), (hashed, short, categories) in expected.items():
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        async with http.get(path) as response:
            found = {r["name"]: r for r in (await _json(response))["resources"]}
        entry = found[plural]
        assert entry["storageVersionHash"] == hashed, plural
        assert entry.get("shortNames") == short and entry.get("categories") == categories
    assert storage_version_hash("", "v1", "Event") == "r2yiGXH7wu8="


async def test_aggregated_discovery_lists_the_new_groups_in_the_real_order(
    http: aiohttp.ClientSession,
) -> None:
    """Aggregated discovery (``apidiscovery.k8s.io/v2``, ``api/discovery/aggregated_v2.json``):
    groups in the order of their APIService priorities (``pkg/controlplane/apiserver/
    aggregator.go``), a review as ``scope: Cluster`` with ``verbs: ["create"]``, a status
    subresource under its resource, HPAs in category ``all``."""
    async with http.get("/apis", headers={"Accept": AGGREGATED}) as response:
        items = (await _json(response))["items"]
    order = [g["metadata"]["name"] for g in items]
    assert order[:6] == [
        "apps",
        "events.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
    ]
    assert order.index("policy") < order.index("storage.k8s.io") < order.index("scheduling.k8s.io")
    groups = {g["metadata"]["name"]: g["versions"][0]["resources"] for g in items}
    ssar = next(r for r in groups["authorization.k8s.io"] if r["resource"] == SSAR.rsplit("/")[-1])
    assert ssar == {
        "resource": "selfsubjectaccessreviews",
        "responseKind": {
            "group": "authorization.k8s.io",
            "version": "v1",
            "kind": "SelfSubjectAccessReview",
        },
        "scope": "Cluster",
        "singularResource": "selfsubjectaccessreview",
        "verbs": ["create"],
    }
    hpa = groups["autoscaling"][0]
    assert hpa["categories"] == ["all"] and hpa["subresources"][0]["subresource"] == "status"


@needs_kubectl
def test_kubectl_api_resources_and_get_all_see_the_new_groups(kubectl: Kubectl) -> None:
    """kubectl reads aggregated discovery: ``api-resources`` lists the new groups' resources
    with their short names; ``get all`` includes HPAs (category ``all``)."""
    listed = kubectl("api-resources", "--no-headers")
    for row in ("poddisruptionbudgets", "horizontalpodautoscalers", "priorityclasses",
                "storageclasses", "validatingadmissionpolicies", "selfsubjectaccessreviews",
                "selfsubjectreviews", "limitranges", "resourcequotas", "csidrivers"):  # fmt: skip
        assert row in listed, row
    kubectl("create", "deployment", "scaled", "--image=nginx")
    kubectl("autoscale", "deployment", "scaled", "--max=5", "--cpu-percent=70")
    assert "horizontalpodautoscaler.autoscaling/scaled" in kubectl("get", "all", "-o", "name")


# -- authorization.k8s.io and authentication.k8s.io ----------------------------------------


@needs_kubectl
def test_kubectl_auth_can_i_whoami_and_list(kubectl: Kubectl) -> None:
    """``kubectl auth can-i`` POSTs a SelfSubjectAccessReview
    (``pkg/registry/authorization/selfsubjectaccessreview/rest.go``) and prints ``yes``; ``auth
    can-i --list`` a SelfSubjectRulesReview (``…/selfsubjectrulesreview/rest.go``: everything,
    as for cluster-admin); ``auth whoami`` a SelfSubjectReview
    (``pkg/registry/authentication/selfsubjectreview/rest.go``): the request's user. Without
    credentials the fake's user is ``kubernetes-admin`` in ``system:masters``."""
    assert kubectl("auth", "can-i", "create", "pods").strip() == "yes"
    assert (
        kubectl("auth", "can-i", "delete", "deployments.apps", "-n", "kube-system").strip() == "yes"
    )
    rules = kubectl("auth", "can-i", "--list").splitlines()
    assert rules[1].split() == ["*.*", "[]", "[]", "[*]"]
    whoami = kubectl("auth", "whoami").splitlines()
    assert whoami[1].split() == ["Username", "kubernetes-admin"]
    assert whoami[2].split() == ["Groups", "[system:masters", "system:authenticated]"]


async def test_users_from_tokens_service_account_tokens_and_impersonation(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A bearer token registered with ``server.auth.add_user`` is that user (as a static token
    file's ``TokenAuthenticator``; every authenticated user is in ``system:authenticated``); a
    token from ``serviceaccounts/<name>/token`` (``kubectl create token``) is the service
    account's (``pkg/serviceaccount/claims.go``: ``system:serviceaccount:<ns>:<name>``, groups
    ``system:serviceaccounts`` and ``system:serviceaccounts:<ns>``, its uid);
    ``Impersonate-User``/``-Group`` headers switch user
    (``pkg/endpoints/filters/impersonation.go``). kubectl sends none of these over plain HTTP
    (client-go reads the user's credentials only for a TLS transport): see the TLS tests."""
    whoami = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
    fake_apiserver.auth.add_user("alice", token="alice-token", groups=["dev"])
    async with http.post(
        whoami, json={}, headers={"Authorization": "Bearer alice-token"}
    ) as response:
        assert (await _json(response))["status"]["userInfo"] == {
            "username": "alice",
            "groups": ["dev", "system:authenticated"],
        }
    token_url = "/api/v1/namespaces/default/serviceaccounts/default/token"
    async with http.post(token_url, json={"spec": {}}) as response:
        token = (await _json(response))["status"]["token"]
    async with http.post(whoami, json={}, headers={"Authorization": f"Bearer {token}"}) as response:
        robot = (await _json(response))["status"]["userInfo"]
    account = fake_apiserver.objects.get("serviceaccounts", "default")
    assert robot["username"] == "system:serviceaccount:default:default"
    assert robot["uid"] == account["metadata"]["uid"]
    assert robot["groups"] == [
        "system:serviceaccounts",
        "system:serviceaccounts:default",
        "system:authenticated",
    ]
    headers = {"Impersonate-User": "bob", "Impersonate-Group": "ops"}
    async with http.post(whoami, json={}, headers=headers) as response:
        assert (await _json(response))["status"]["userInfo"] == {
            "username": "bob",
            "groups": ["ops", "system:authenticated"],
        }
    fake_apiserver.auth.deny(verb="impersonate", resource="users", name="root")
    async with http.get("/api/v1/namespaces", headers={"Impersonate-User": "root"}) as response:
        assert response.status == 403
        assert (await _json(response))["message"] == (
            'users "root" is forbidden: User "kubernetes-admin" cannot impersonate resource '
            '"users" in API group "" at the cluster scope'
        )


async def test_a_deny_rule_refuses_the_request_and_reviews_say_no(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """The authorization filter (``pkg/endpoints/filters/authorization.go``) answers a refused
    request 403 with ``responsewriters.Forbidden``'s message (``User "…" cannot <verb> resource
    "<resource>" in API group "<group>" in the namespace "<ns>"``, ``errors.NewForbidden``'s
    ``<resource> is forbidden: …``); a SelfSubjectAccessReview of the same request says
    ``allowed: false`` (``denied`` left out: RBAC has no opinion), others stay allowed."""
    rule = fake_apiserver.auth.deny(verb="create", resource="deployments.apps", namespace="prod")
    attributes = {"verb": "create", "group": "apps", "resource": "deployments", "namespace": "prod"}
    review = {"spec": {"resourceAttributes": attributes}}
    async with http.post(SSAR, json=review) as response:
        assert response.status == 201
        assert (await _json(response))["status"] == {"allowed": False}
    fake_apiserver.objects.create("namespaces", {"metadata": {"name": "prod"}})
    url = "/apis/apps/v1/namespaces/prod/deployments"
    async with http.post(url, json=deployment("web", "prod")) as response:
        assert response.status == 403
        assert await _json(response) == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'deployments.apps is forbidden: User "kubernetes-admin" cannot create '
            'resource "deployments" in API group "apps" in the namespace "prod"',
            "reason": "Forbidden",
            "details": {"group": "apps", "kind": "deployments"},
            "code": 403,
        }
    async with http.get(url) as response:
        assert response.status == 200  # only create is refused
    fake_apiserver.auth.remove(rule)
    async with http.post(url, json=deployment("web", "prod")) as response:
        assert response.status == 201
    assert fake_apiserver.requests.records[-1].user == "kubernetes-admin"


async def test_deny_rules_by_user_and_path(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A rule for one user leaves the others alone; a non-resource URL is refused as
    ``forbidden: User "…" cannot get path "/metrics"`` (``forbiddenMessage`` for a
    non-resource request, ``NewForbidden`` with no resource); a rules review of a user with a
    rule is ``incomplete``."""
    fake_apiserver.auth.add_user("eve", token="eve-token")
    fake_apiserver.auth.deny(path="/version", user="eve", reason="no peeking")
    eve = {"Authorization": "Bearer eve-token"}
    async with http.get("/version", headers=eve) as response:
        assert response.status == 403
        assert (await _json(response))["message"] == (
            'forbidden: User "eve" cannot get path "/version": no peeking'
        )
    async with http.get("/version") as response:
        assert response.status == 200
    rules = {"spec": {"namespace": "default"}}
    path = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
    async with http.post(path, json=rules, headers=eve) as response:
        answer = (await _json(response))["status"]
    assert answer["incomplete"] is True and answer["resourceRules"][0]["verbs"] == ["*"]
    async with http.post(path, json={"spec": {}}) as response:
        assert response.status == 400
        assert (await _json(response))["message"] == "no namespace on request"


async def test_review_validation_answers_as_the_real_server(http: aiohttp.ClientSession) -> None:
    """``pkg/apis/authorization/validation/validation.go``: exactly one of resource and
    non-resource attributes (422, ``SelfSubjectAccessReview.authorization.k8s.io "" is
    invalid``), metadata empty, a SubjectAccessReview needs a user or groups, a local review's
    ``spec.resourceAttributes.namespace`` must be its namespace; a TokenReview needs a token
    (400, ``pkg/registry/authentication/tokenreview/storage.go``)."""
    async with http.post(SSAR, json={"spec": {}}) as response:
        body = await _json(response)
    assert response.status == 422
    assert body["message"] == (
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
        'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes '
        "must be specified"
    )
    async with http.post(
        SSAR,
        json={
            "metadata": {"name": "x"},
            "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}},
        },
    ) as response:
        assert response.status == 422
        assert (await _json(response))["details"]["causes"][0]["field"] == "metadata"
    sar = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
    spec = {"resourceAttributes": {"verb": "get", "resource": "pods"}}
    async with http.post(sar, json={"spec": spec}) as response:
        assert (await _json(response))["details"]["causes"][0]["field"] == "spec.user"
    async with http.post(sar, json={"spec": {**spec, "user": "alice"}}) as response:
        assert (await _json(response))["status"] == {"allowed": True}
    local = "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews"
    other = {
        "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "x"},
        "user": "a",
    }
    async with http.post(local, json={"spec": other}) as response:
        causes = (await _json(response))["details"]["causes"]
        assert [c["field"] for c in causes] == ["spec.resourceAttributes.namespace"]
    tokens = "/apis/authentication.k8s.io/v1/tokenreviews"
    async with http.post(tokens, json={"spec": {}}) as response:
        assert response.status == 400
        assert (await _json(response))[
            "message"
        ] == "token is required for TokenReview in authentication"
    async with http.post(tokens, json={"spec": {"token": "unknown"}}) as response:
        assert (await _json(response))["status"] == {"user": {}}
    async with http.get(SSAR) as response:
        assert response.status == 405  # a review is create only


async def test_a_token_review_authenticates_the_tokens_the_server_knows(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``TokenReview`` (``pkg/registry/authentication/tokenreview/storage.go``):
    ``authenticated`` with the user and the audiences for a token the server issued
    (``serviceaccounts/<name>/token``) or knows; the spec is echoed."""
    token_url = "/api/v1/namespaces/default/serviceaccounts/default/token"
    async with http.post(token_url, json={"spec": {}}) as response:
        token = (await _json(response))["status"]["token"]
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["sub"] == "system:serviceaccount:default:default"
    review = {"spec": {"token": token}}
    async with http.post("/apis/authentication.k8s.io/v1/tokenreviews", json=review) as response:
        answer = await _json(response)
    assert response.status == 201 and answer["spec"]["token"] == token
    assert answer["status"]["authenticated"] is True
    assert answer["status"]["user"]["username"] == "system:serviceaccount:default:default"
    assert answer["status"]["audiences"] == ["https://kubernetes.default.svc.cluster.local"]


# -- policy/v1 -------------------------------------------------------------------------------


def _ready_pod(server: FakeApiServer, name: str, **labels: str) -> None:
    made = pod(name, node="n1")
    made["metadata"]["labels"] = labels or {"app": "web"}
    created = server.objects.create("pods", made)
    created["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
    }
    server.objects.update("pods", created, subresource="status")


def _evict(name: str) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}


async def test_eviction_under_a_budget_answers_429(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``pkg/registry/core/pod/storage/eviction.go`` (``checkAndDecrement``): a budget that
    allows one disruption lets one eviction through (201 ``Success``, the pod gets the
    ``DisruptionTarget`` condition and is deleted gracefully, the budget records it in
    ``disruptedPods``); the next is 429 ``TooManyRequests`` with the ``DisruptionBudget``
    cause, as a real server sends it. The budget's status is the disruption controller's
    (``pkg/controller/disruption/disruption.go``)."""
    for i in range(3):
        _ready_pod(fake_apiserver, f"web-{i}")
    fake_apiserver.objects.create(
        "poddisruptionbudgets",
        {
            "metadata": {"name": "web-pdb"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    status = fake_apiserver.objects.get("poddisruptionbudgets", "web-pdb")["status"]
    assert {
        k: status[k]
        for k in (
            "currentHealthy",
            "desiredHealthy",
            "expectedPods",
            "disruptionsAllowed",
            "observedGeneration",
        )
    } == {
        "currentHealthy": 3,
        "desiredHealthy": 2,
        "expectedPods": 3,
        "disruptionsAllowed": 1,
        "observedGeneration": 1,
    }
    assert status["conditions"][0]["reason"] == "SufficientPods"
    base = "/api/v1/namespaces/default/pods"
    async with http.post(f"{base}/web-0/eviction", json=_evict("web-0")) as response:
        assert response.status == 201
        assert await _json(response) == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }
    evicted = fake_apiserver.objects.get("pods", "web-0")
    assert evicted["metadata"]["deletionTimestamp"]
    target = [c for c in evicted["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert target[0]["reason"] == "EvictionByEvictionAPI"
    async with http.post(f"{base}/web-1/eviction", json=_evict("web-1")) as response:
        assert response.status == 429
        assert await _json(response) == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Cannot evict pod as it would violate the pod's disruption budget.",
            "reason": "TooManyRequests",
            "details": {
                "causes": [
                    {
                        "reason": "DisruptionBudget",
                        "message": "The disruption budget web-pdb needs 2 healthy pods and "
                        "has 2 currently",
                    }
                ]
            },
            "code": 429,
        }
    assert "deletionTimestamp" not in fake_apiserver.objects.get("pods", "web-1")["metadata"]


@needs_kubectl
def test_kubectl_drain_style_eviction_is_refused_by_the_budget(kubectl: Kubectl) -> None:
    """kubectl's eviction (``kubectl drain`` uses the same API) reports the 429: ``Cannot
    evict pod as it would violate the pod's disruption budget.``; ``kubectl get pdb`` prints
    ``ALLOWED DISRUPTIONS`` from the controller's status."""
    kubectl("create", "namespace", "evict")
    for name in ("a", "b"):
        made = pod(name, node="n1")
        made["metadata"].update(namespace="evict", labels={"app": "db"})
        kubectl("create", "-f", "-", stdin=json.dumps(made))
        kubectl(
            "-n", "evict", "patch", "pod", name, "--subresource=status", "--type=merge",
            "-p", '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}',
        )  # fmt: skip
    kubectl("-n", "evict", "create", "pdb", "db", "--selector=app=db", "--min-available=2")
    row = kubectl("-n", "evict", "get", "pdb", "db", "--no-headers").split()
    assert row[:4] == ["db", "2", "N/A", "0"]
    eviction = json.dumps(
        {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": "a", "namespace": "evict"},
        }
    )
    refused = kubectl.result(
        "create", "--raw", "/api/v1/namespaces/evict/pods/a/eviction", "-f", "-", stdin=eviction
    )
    assert refused.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in refused.stderr


async def test_budget_status_follows_the_controllers_scale(fake_apiserver: FakeApiServer) -> None:
    """``getExpectedScale``: with ``maxUnavailable`` (or a percentage) the expected pods are
    the replicas of the pods' controllers (a Deployment through its ReplicaSet), each counted
    once; a pod whose controller has no ``/scale`` fails the sync (``SyncFailed``,
    ``disruptionsAllowed: 0``)."""
    server = fake_apiserver
    owner = server.objects.create("deployments", deployment("web", replicas=4))
    rs_ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
              "uid": owner["metadata"]["uid"], "controller": True}  # fmt: skip
    replica_set = server.objects.create(
        "replicasets",
        {
            "metadata": {"name": "web-1", "ownerReferences": [rs_ref], "labels": {"app": "web"}},
            "spec": {
                "replicas": 4,
                "selector": {"matchLabels": {"app": "web"}},
                "template": deployment("web")["spec"]["template"],
            },
        },
    )
    pod_ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
               "uid": replica_set["metadata"]["uid"], "controller": True}  # fmt: skip
    for i in range(3):
        made = pod(f"web-{i}", node="n1")
        made["metadata"].update(labels={"app": "web"}, ownerReferences=[pod_ref])
        created = server.objects.create("pods", made)
        created["status"] = {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
        }
        server.objects.update("pods", created, subresource="status")
    budget = {
        "metadata": {"name": "web"},
        "spec": {"maxUnavailable": "25%", "selector": {"matchLabels": {"app": "web"}}},
    }
    server.objects.create("poddisruptionbudgets", budget)
    status = server.objects.get("poddisruptionbudgets", "web")["status"]
    assert (status["expectedPods"], status["desiredHealthy"], status["currentHealthy"]) == (4, 3, 3)
    assert status["disruptionsAllowed"] == 0
    server.objects.patch("deployments", "web", {"spec": {"replicas": 2}})
    status = server.objects.get("poddisruptionbudgets", "web")["status"]
    assert (status["expectedPods"], status["desiredHealthy"], status["disruptionsAllowed"]) == (
        2,
        1,
        2,
    )
    job = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u", "controller": True}
    orphan = pod("batch-0", node="n1")
    orphan["metadata"].update(labels={"app": "web"}, ownerReferences=[job])
    server.objects.create("pods", orphan)
    failed = server.objects.get("poddisruptionbudgets", "web")["status"]
    assert failed["disruptionsAllowed"] == 0
    assert failed["conditions"][0]["reason"] == "SyncFailed"
    assert (
        failed["conditions"][0]["message"] == "jobs.batch does not implement the scale subresource"
    )


async def test_eviction_rules_before_the_budget(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """``EvictionREST.Create``: a ``Pending`` pod is deleted whatever the budgets
    (``canIgnorePDB``); two budgets over one pod answer a ``Failure`` Status with code 500 in a
    201 (a returned object, not an error); a name mismatch is 400."""
    base = "/api/v1/namespaces/default/pods"
    fake_apiserver.objects.create("pods", pod("pending"))
    block = {"spec": {"minAvailable": 5, "selector": {}}}
    fake_apiserver.objects.create("poddisruptionbudgets", {"metadata": {"name": "all"}, **block})
    async with http.post(f"{base}/pending/eviction", json=_evict("pending")) as response:
        assert response.status == 201
    _ready_pod(fake_apiserver, "ready")
    fake_apiserver.objects.create("poddisruptionbudgets", {"metadata": {"name": "also"}, **block})
    async with http.post(f"{base}/ready/eviction", json=_evict("ready")) as response:
        assert response.status == 201
        body = await _json(response)
    assert (body["status"], body["code"]) == ("Failure", 500)
    assert body["message"] == (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does "
        "not support."
    )
    async with http.post(f"{base}/ready/eviction", json=_evict("other")) as response:
        assert response.status == 400


def test_budget_validation() -> None:
    """``ValidatePodDisruptionBudgetSpec`` (``pkg/apis/policy/validation/validation.go``):
    not both ``minAvailable`` and ``maxUnavailable``, percentages up to 100%, a valid
    ``unhealthyPodEvictionPolicy``."""
    server = FakeApiServer()
    both = {"metadata": {"name": "x"}, "spec": {"minAvailable": 1, "maxUnavailable": 1}}
    with pytest.raises(UnprocessableEntityError) as refused:
        server.objects.create("poddisruptionbudgets", both)
    assert "spec: Invalid value: " in refused.value.message
    assert refused.value.message.endswith("minAvailable and maxUnavailable cannot be both set")
    over = {
        "metadata": {"name": "y"},
        "spec": {"minAvailable": "150%", "unhealthyPodEvictionPolicy": "Never"},
    }
    with pytest.raises(UnprocessableEntityError) as refused:
        server.objects.create("poddisruptionbudgets", over)
    fields = [c["field"] for c in refused.value.status["details"]["causes"]]
    assert fields == ["spec.minAvailable", "spec.unhealthyPodEvictionPolicy"]


# -- the other groups ---------------------------------------------------------------------


def test_priority_class_rules() -> None:
    """``ValidatePriorityClass`` / ``ValidatePriorityClassUpdate``
    (``pkg/apis/scheduling/validation/validation.go``): ``system-`` names are reserved, a user
    class may not exceed 1,000,000,000, ``value`` may not change; ``preemptionPolicy``
    defaults to ``PreemptLowerPriority`` (``SetDefaults_PriorityClass``)."""
    server = FakeApiServer()
    with pytest.raises(UnprocessableEntityError) as refused:
        server.objects.create("priorityclasses", {"metadata": {"name": "system-mine"}, "value": 5})
    assert refused.value.message.endswith(
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for "
        "system use only. error: system-mine is not a known system priority class"
    )
    with pytest.raises(UnprocessableEntityError):
        server.objects.create(
            "priorityclasses", {"metadata": {"name": "huge"}, "value": 2_000_000_000}
        )
    made = server.objects.create("priorityclasses", {"metadata": {"name": "high"}, "value": 1000})
    assert made["preemptionPolicy"] == "PreemptLowerPriority"
    with pytest.raises(UnprocessableEntityError) as refused:
        server.objects.patch("priorityclasses", "high", {"value": 2000})
    assert refused.value.message.endswith("value: Forbidden: may not be changed in an update.")


def test_storage_class_defaults_and_fixed_fields() -> None:
    """``SetDefaults_StorageClass`` (``Delete``, ``Immediate``) and
    ``ValidateStorageClass``/``ValidateStorageClassUpdate``
    (``pkg/apis/storage/validation/validation.go``): a provisioner is required; parameters and
    provisioner may not change. CSIDriver defaults (``SetDefaults_CSIDriver``)."""
    server = FakeApiServer()
    made = server.objects.create(
        "storageclasses", {"metadata": {"name": "fast"}, "provisioner": "csi.example.com"}
    )
    assert (made["reclaimPolicy"], made["volumeBindingMode"]) == ("Delete", "Immediate")
    with pytest.raises(UnprocessableEntityError) as refused:
        server.objects.create("storageclasses", {"metadata": {"name": "none"}})
    assert refused.value.message.endswith("provisioner: Required value")
    with pytest.raises(UnprocessableEntityError) as refused:
        server.objects.patch("storageclasses", "fast", {"parameters": {"type": "ssd"}})
    assert refused.value.message.endswith(
        "parameters: Forbidden: updates to parameters are forbidden."
    )
    driver = server.objects.create(
        "csidrivers", {"metadata": {"name": "csi.example.com"}, "spec": {}}
    )
    assert driver["spec"]["attachRequired"] is True
    assert driver["spec"]["volumeLifecycleModes"] == ["Persistent"]


@needs_kubectl
def test_kubectl_get_sc_marks_the_default_class(kubectl: Kubectl) -> None:
    """``printStorageClass`` (``pkg/printers/internalversion/printers.go``): the class with
    ``storageclass.kubernetes.io/is-default-class: "true"`` prints as ``<name> (default)``."""
    manifest = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": "standard",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "rancher.io/local-path",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    kubectl("apply", "-f", "-", stdin=json.dumps(manifest))
    row = kubectl("get", "sc", "standard", "--no-headers").split()
    assert row[:5] == [
        "standard",
        "(default)",
        "rancher.io/local-path",
        "Delete",
        "WaitForFirstConsumer",
    ]


async def test_admission_configuration_is_stored_not_enforced(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """admissionregistration.k8s.io/v1 objects are validated
    (``ValidateValidatingWebhookConfiguration``: fully qualified webhook names,
    ``sideEffects``, ``admissionReviewVersions``) and defaulted
    (``SetDefaults_ValidatingWebhook``: ``failurePolicy: Fail``, ``timeoutSeconds: 10``,
    ``matchPolicy: Equivalent``), then only stored: the fake calls no webhook and evaluates no
    ValidatingAdmissionPolicy, so a configuration that would refuse every pod does not."""
    webhook = {
        "metadata": {"name": "deny-all"},
        "webhooks": [
            {
                "name": "deny.example.com",
                "clientConfig": {"url": "https://127.0.0.1:1/deny"},
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["pods"],
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
        ],
    }
    stored = fake_apiserver.objects.create("validatingwebhookconfigurations", webhook)
    hook = stored["webhooks"][0]
    assert (hook["failurePolicy"], hook["timeoutSeconds"], hook["matchPolicy"]) == (
        "Fail",
        10,
        "Equivalent",
    )
    assert hook["rules"][0]["scope"] == "*"
    policy = {
        "metadata": {"name": "no-pods"},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["pods"],
                    }
                ]
            },
            "validations": [{"expression": "false"}],
        },
    }
    assert (
        fake_apiserver.objects.create("validatingadmissionpolicies", policy)["spec"][
            "failurePolicy"
        ]
        == "Fail"
    )
    async with http.post("/api/v1/namespaces/default/pods", json=pod("allowed")) as response:
        assert response.status == 201
    bad = {
        "metadata": {"name": "bad"},
        "webhooks": [{"name": "short", "clientConfig": {"url": "https://x"}}],
    }
    with pytest.raises(UnprocessableEntityError) as refused:
        fake_apiserver.objects.create("mutatingwebhookconfigurations", bad)
    fields = [c["field"] for c in refused.value.status["details"]["causes"]]
    assert fields == [
        "webhooks[0].name",
        "webhooks[0].sideEffects",
        "webhooks[0].admissionReviewVersions",
    ]


def test_limit_ranges_and_quotas_are_stored() -> None:
    """A LimitRange is defaulted (``SetDefaults_LimitRangeItem``: a container's default limit
    is its max, its default request the default limit) and stored; the fake's LimitRanger
    admission does not apply it. A ResourceQuota is stored with an empty status: its used
    counts are kube-controller-manager's resourcequota controller's, which the fake does not
    run (as in envtest, a quota without ``status.hard`` restricts nothing)."""
    server = FakeApiServer()
    limits = {
        "metadata": {"name": "l"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]},
    }
    stored = server.objects.create("limitranges", limits)
    item = stored["spec"]["limits"][0]
    assert (item["default"], item["defaultRequest"]) == ({"cpu": "2"}, {"cpu": "2"})
    quota = server.objects.create(
        "resourcequotas", {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}}
    )
    assert quota["status"] == {}
    server.objects.create("pods", pod("one"))
    server.objects.create("pods", pod("two"))
    assert len(server.objects.list("pods")) == 2


def test_reviews_and_denials_never_touch_the_in_process_api() -> None:
    """Writes through ``server.objects`` are the server's own (a loopback client in
    ``system:masters``): deny rules do not apply to them."""
    server = FakeApiServer()
    server.auth.deny()
    server.objects.create("configmaps", {"metadata": {"name": "c"}})
    assert server.objects.delete("configmaps", "c")["metadata"]["name"] == "c"
