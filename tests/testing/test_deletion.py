"""Issue 12's deletion rows, in process: grace periods, finalizers, preconditions, dry runs,
propagation policies with garbage collection, and namespace termination.

Each test names the real server's behaviour it checks and where that is specified: the
generic registry's ``Store.Delete`` (``k8s.io/apiserver/pkg/registry/generic/registry/
store.go``), ``rest.BeforeDelete`` (``.../pkg/registry/rest/delete.go``), the pod strategy
(``pkg/registry/core/pod/strategy.go``), the namespace registry and controller, the garbage
collector (``pkg/controller/garbagecollector``) and the "Garbage Collection" and
"Namespaces" concept pages.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from aioinformer.errors import (
    ConflictError,
    ForbiddenError,
    NotFoundError,
    UnprocessableEntityError,
)
from aioinformer.testing import FakeApiServer

from .valid import deployment, pod

Obj = dict[str, Any]


def _server() -> FakeApiServer:
    return FakeApiServer()  # objects work before start: no HTTP needed here


def _seconds(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def _history(server: FakeApiServer, since: str) -> list[tuple[str, str, str]]:
    """(type, kind, name) of every stored event after resource version ``since``."""
    out: list[tuple[str, int, str, str]] = []
    for info in server.resources:
        events = server._storage.history(info).since(int(since)) or []
        out += [(e.type, e.rv, info.kind, str(e.obj["metadata"]["name"])) for e in events]
    return [(t, kind, name) for t, _, kind, name in sorted(out, key=lambda e: e[1])]


def _owned(server: FakeApiServer, owner: Obj, kind: str, obj: Obj, *, block: bool = True) -> Obj:
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": block,
    }
    obj["metadata"]["ownerReferences"] = [ref]
    resource = {"ReplicaSet": "replicasets.apps", "Pod": "pods", "ConfigMap": "configmaps"}[kind]
    return server.objects.create(resource, obj)


def _replicaset(name: str) -> Obj:
    rs = deployment(name)
    return {**rs, "kind": "ReplicaSet"}


def _tree(server: FakeApiServer) -> tuple[Obj, Obj, Obj]:
    """A Deployment owning a ReplicaSet owning a Pod, as the controllers leave them."""
    web = server.objects.create("deployments.apps", deployment("web"))
    rs = _owned(server, web, "ReplicaSet", _replicaset("web-1"))
    p = _owned(server, rs, "Pod", pod("web-1-a"))
    return web, rs, p


# -- grace periods ------------------------------------------------------------------------


def test_an_unscheduled_pod_goes_at_once_after_a_zero_grace_mark() -> None:
    """A pod with no ``spec.nodeName`` is deleted with period 0
    (``podStrategy.CheckGracefulDelete``): ``Store.Delete`` writes ``deletionTimestamp``
    and ``deletionGracePeriodSeconds: 0`` (MODIFIED), then deletes (DELETED)."""
    server = _server()
    server.objects.create("pods", pod("p"))
    rv = server.objects.resource_version
    final = server.objects.delete("pods", "p")
    assert final["metadata"]["deletionGracePeriodSeconds"] == 0
    assert _history(server, rv) == [("MODIFIED", "Pod", "p"), ("DELETED", "Pod", "p")]
    with pytest.raises(NotFoundError):
        server.objects.get("pods", "p")


def test_a_scheduled_pod_waits_out_its_grace_period_until_the_kubelet_finishes() -> None:
    """A scheduled pod gets ``deletionTimestamp`` = now + its grace period (default
    ``spec.terminationGracePeriodSeconds``, 30) and ``deletionGracePeriodSeconds``; it stays
    until the kubelet deletes it with ``gracePeriodSeconds=0``. A second delete may only
    shorten the period (``rest.BeforeDelete``); a longer one changes nothing."""
    server = _server()
    server.objects.create("pods", pod("p", node="node-1"))
    marked = server.objects.delete("pods", "p")
    meta = marked["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 30
    created = _seconds(meta["creationTimestamp"])
    assert 30 <= _seconds(meta["deletionTimestamp"]) - created <= 32
    assert server.objects.get("pods", "p")["metadata"]["deletionTimestamp"]
    rv = server.objects.resource_version
    assert server.objects.delete("pods", "p", grace_period_seconds=60) == server.objects.get(
        "pods", "p"
    )
    assert server.objects.resource_version == rv
    shorter = server.objects.delete("pods", "p", grace_period_seconds=10)
    assert shorter["metadata"]["deletionGracePeriodSeconds"] == 10
    assert (
        _seconds(shorter["metadata"]["deletionTimestamp"])
        == _seconds(meta["deletionTimestamp"]) - 20
    )
    server.objects.finish_deletion("pods", "p")
    with pytest.raises(NotFoundError):
        server.objects.get("pods", "p")


@pytest.mark.parametrize(
    ("spec", "requested", "period"),
    [
        ({"terminationGracePeriodSeconds": 5}, None, 5),
        ({}, 7, 7),
        ({}, -3, 1),  # negative means 1 (rest.BeforeDelete)
    ],
)
def test_the_grace_period_comes_from_the_request_else_the_spec(
    spec: Obj, requested: int | None, period: int
) -> None:
    """``gracePeriodSeconds`` wins over ``spec.terminationGracePeriodSeconds``; a negative
    value is 1 (``rest.BeforeDelete``, ``podStrategy.CheckGracefulDelete``)."""
    server = _server()
    body = pod("p", node="n")
    body["spec"].update(spec)
    server.objects.create("pods", body)
    marked = server.objects.delete("pods", "p", grace_period_seconds=requested)
    assert marked["metadata"]["deletionGracePeriodSeconds"] == period


def test_grace_zero_or_a_finished_pod_goes_at_once() -> None:
    """``gracePeriodSeconds=0`` and a pod in phase Succeeded/Failed are deleted at once
    (``podStrategy.CheckGracefulDelete``)."""
    server = _server()
    server.objects.create("pods", pod("a", node="n"))
    server.objects.delete("pods", "a", grace_period_seconds=0)
    server.objects.create("pods", pod("b", node="n"))
    server.objects.patch("pods", "b", {"status": {"phase": "Succeeded"}}, subresource="status")
    server.objects.delete("pods", "b")
    assert server.objects.list("pods") == []


# -- finalizers and preconditions -----------------------------------------------------------


def test_finalizers_keep_an_object_until_the_last_one_is_removed() -> None:
    """An object with finalizers is only marked (``deletionTimestamp``,
    ``deletionGracePeriodSeconds: 0``: ``markAsDeleting``); adding a finalizer to it is 422
    (``ValidateObjectMetaUpdate``: "no new finalizers can be added if the object is being
    deleted"); the update removing the last finalizer deletes it
    (``ShouldDeleteDuringUpdate``)."""
    server = _server()
    server.objects.create(
        "configmaps", {"metadata": {"name": "c", "finalizers": ["example.com/a", "example.com/b"]}}
    )
    marked = server.objects.delete("configmaps", "c")
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0
    with pytest.raises(UnprocessableEntityError) as caught:
        server.objects.patch(
            "configmaps",
            "c",
            {"metadata": {"finalizers": ["example.com/a", "example.com/b", "example.com/c"]}},
        )
    assert "no new finalizers can be added if the object is being deleted" in str(caught.value)
    server.objects.patch("configmaps", "c", {"metadata": {"finalizers": ["example.com/b"]}})
    assert server.objects.get("configmaps", "c")["metadata"]["finalizers"] == ["example.com/b"]
    server.objects.patch("configmaps", "c", {"metadata": {"finalizers": None}})
    with pytest.raises(NotFoundError):
        server.objects.get("configmaps", "c")


def test_a_terminating_pod_in_its_grace_period_outlives_its_last_finalizer() -> None:
    """``ShouldDeleteDuringUpdate`` deletes only when the grace period is 0: a pod in its
    grace period stays after its finalizers go, until the kubelet's final delete."""
    server = _server()
    body = pod("p", node="n")
    body["metadata"]["finalizers"] = ["example.com/x"]
    server.objects.create("pods", body)
    server.objects.delete("pods", "p")
    server.objects.patch("pods", "p", {"metadata": {"finalizers": None}})
    assert server.objects.get("pods", "p")["metadata"]["deletionGracePeriodSeconds"] == 30
    server.objects.finish_deletion("pods", "p")
    assert server.objects.list("pods") == []


def test_preconditions_that_do_not_hold_are_409_on_the_kind() -> None:
    """``rest.BeforeDelete``: a ``uid`` or ``resourceVersion`` precondition that does not
    hold is 409 Conflict naming the object's Kind; nothing is deleted."""
    server = _server()
    made = server.objects.create("deployments.apps", deployment("web"))
    with pytest.raises(ConflictError) as caught:
        server.objects.delete("deployments.apps", "web", preconditions={"resourceVersion": "1"})
    assert str(caught.value.status["message"]).startswith(
        'Operation cannot be fulfilled on Deployment.apps "web": the ResourceVersion in the '
        f"precondition (1) does not match the ResourceVersion in record "
        f"({made['metadata']['resourceVersion']}). The object might have been modified"
    )
    assert caught.value.status["details"] == {"name": "web", "group": "apps", "kind": "Deployment"}
    server.objects.get("deployments.apps", "web")


def test_a_dry_run_delete_changes_nothing() -> None:
    """``dryRun=All`` runs every step and answers the would-be result; nothing is stored, no
    resource version is taken (``DryRunnableStorage``): for a graceful pod, a plain object
    and a namespace."""
    server = _server()
    server.objects.create("pods", pod("p", node="n"))
    server.objects.create("configmaps", {"metadata": {"name": "c"}})
    rv = server.objects.resource_version
    assert server.objects.delete("pods", "p", dry_run=True)["metadata"]["deletionTimestamp"]
    server.objects.delete("configmaps", "c", dry_run=True)
    answered = server.objects.delete("namespaces", "default", dry_run=True)
    assert answered["status"]["phase"] == "Terminating"
    assert server.objects.resource_version == rv
    assert "deletionTimestamp" not in server.objects.get("pods", "p")["metadata"]
    assert server.objects.get("namespaces", "default")["status"]["phase"] == "Active"


def test_an_unknown_propagation_policy_is_422() -> None:
    """``ValidateDeleteOptions``: the policy must be Foreground, Background or Orphan."""
    server = _server()
    server.objects.create("configmaps", {"metadata": {"name": "c"}})
    with pytest.raises(UnprocessableEntityError) as caught:
        server.objects.delete("configmaps", "c", propagation_policy="Sideways")
    assert caught.value.status["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
        '"Sideways": supported values: "Foreground", "Background", "Orphan", "nil"'
    )


# -- propagation and garbage collection -----------------------------------------------------


async def test_background_deletes_the_owner_then_its_dependents_after_the_delete() -> None:
    """``Background`` (the default): the owner goes at once and the DELETE answers; then
    the garbage collector deletes each dependent whose owners are all gone, down the tree
    ("the Kubernetes API server deletes the owner object immediately and the garbage
    collector controller cleans up the dependent objects in the background")."""
    async with FakeApiServer() as server:
        _tree(server)
        rv = server.objects.resource_version
        server.objects.delete("deployments.apps", "web")
        deleted = [(kind, name) for t, kind, name in _history(server, rv) if t == "DELETED"]
        assert deleted == [("Deployment", "web")]
        assert len(server.objects.list("replicasets.apps")) == 1
        await server.objects.wait_idle()
        deleted = [(kind, name) for t, kind, name in _history(server, rv) if t == "DELETED"]
        assert deleted == [("Deployment", "web"), ("ReplicaSet", "web-1"), ("Pod", "web-1-a")]


def test_with_sync_gc_the_dependents_go_inside_the_delete() -> None:
    """``FakeApiServer(sync_gc=True)`` keeps the former behaviour: the collector works
    inside the DELETE, so the dependents are gone when it returns (no server running)."""
    server = FakeApiServer(sync_gc=True)
    _tree(server)
    rv = server.objects.resource_version
    server.objects.delete("deployments.apps", "web")
    deleted = [(kind, name) for t, kind, name in _history(server, rv) if t == "DELETED"]
    assert deleted == [("Deployment", "web"), ("ReplicaSet", "web-1"), ("Pod", "web-1-a")]


async def test_work_queued_before_the_server_runs_is_done_when_it_starts() -> None:
    """The controllers run while the server runs: a delete made before it starts leaves
    the dependents until it does."""
    server = _server()
    _tree(server)
    server.objects.delete("deployments.apps", "web")
    assert len(server.objects.list("replicasets.apps")) == 1
    async with server:
        await server.objects.wait_idle()
        assert server.objects.list("replicasets.apps") == []


async def test_foreground_removes_the_dependents_before_the_owner() -> None:
    """``Foreground``: the owner is marked (``deletionTimestamp`` + ``foregroundDeletion``
    finalizer) and stays while a dependent with ``blockOwnerDeletion`` exists; the collector
    deletes the dependents (in foreground where they own others), then drops the finalizer
    and the owner goes. Its ReplicaSets are gone before the Deployment."""
    async with FakeApiServer() as server:
        _tree(server)
        rv = server.objects.resource_version
        marked = server.objects.delete("deployments.apps", "web", propagation_policy="Foreground")
        assert marked["metadata"]["finalizers"] == ["foregroundDeletion"]
        assert marked["metadata"]["deletionTimestamp"]
        await server.objects.wait_idle()
        events = _history(server, rv)
        deleted = [(kind, name) for t, kind, name in events if t == "DELETED"]
        assert deleted == [("Pod", "web-1-a"), ("ReplicaSet", "web-1"), ("Deployment", "web")]
        assert events[0] == ("MODIFIED", "Deployment", "web")


async def test_a_blocking_dependent_holds_a_foreground_owner() -> None:
    """A dependent that cannot go yet (a finalizer) keeps a foreground owner with its
    ``deletionTimestamp``; once the dependent is gone the owner goes. A non-blocking
    dependent (``blockOwnerDeletion`` unset) does not hold it."""
    async with FakeApiServer() as server:
        web = server.objects.create("deployments.apps", deployment("web"))
        held = _replicaset("held")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        _owned(server, web, "ReplicaSet", held)
        server.objects.delete("deployments.apps", "web", propagation_policy="Foreground")
        await server.objects.wait_idle()
        assert server.objects.get("deployments.apps", "web")["metadata"]["deletionTimestamp"]
        assert server.objects.get("replicasets.apps", "held")["metadata"]["deletionTimestamp"]
        server.objects.patch("replicasets.apps", "held", {"metadata": {"finalizers": None}})
        await server.objects.wait_idle()
        assert server.objects.list("deployments.apps") == []
        other = server.objects.create("deployments.apps", deployment("other"))
        loose = _replicaset("loose")
        loose["metadata"]["finalizers"] = ["example.com/hold"]
        _owned(server, other, "ReplicaSet", loose, block=False)
        server.objects.delete("deployments.apps", "other", propagation_policy="Foreground")
        await server.objects.wait_idle()
        assert server.objects.list("deployments.apps") == []


async def test_orphan_removes_the_owner_references_and_keeps_the_dependents() -> None:
    """``Orphan``: the owner gets the ``orphan`` finalizer; the collector removes the
    references to it from every dependent, then the finalizer, and the owner goes."""
    async with FakeApiServer() as server:
        _tree(server)
        marked = server.objects.delete("deployments.apps", "web", propagation_policy="Orphan")
        assert marked["metadata"]["finalizers"] == ["orphan"]
        await server.objects.wait_idle()
        assert server.objects.list("deployments.apps") == []
        rs = server.objects.get("replicasets.apps", "web-1")
        assert "ownerReferences" not in rs["metadata"]
        assert server.objects.get("pods", "web-1-a")["metadata"]["ownerReferences"]


async def test_a_dependent_with_another_living_owner_only_loses_the_reference() -> None:
    """The collector deletes a dependent only when all its owners are gone; otherwise it
    removes the references to the owners that are gone."""
    async with FakeApiServer() as server:
        a = server.objects.create("configmaps", {"metadata": {"name": "a"}})
        b = server.objects.create("configmaps", {"metadata": {"name": "b"}})
        shared = _owned(server, a, "ConfigMap", {"metadata": {"name": "shared"}})
        refs = shared["metadata"]["ownerReferences"] + [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": b["metadata"]["uid"]}
        ]
        server.objects.patch("configmaps", "shared", {"metadata": {"ownerReferences": refs}})
        server.objects.delete("configmaps", "a")
        await server.objects.wait_idle()
        left = server.objects.get("configmaps", "shared")["metadata"]["ownerReferences"]
        assert [r["name"] for r in left] == ["b"]
        server.objects.delete("configmaps", "b")
        await server.objects.wait_idle()
        with pytest.raises(NotFoundError):
            server.objects.get("configmaps", "shared")


async def test_delete_collection_applies_the_same_rules_to_each_object() -> None:
    """``DeleteCollection`` deletes each object with the request's options (``Store.
    DeleteCollection``): an orphaning collection delete keeps the dependents."""
    async with FakeApiServer() as server:
        _tree(server)
        server.objects.delete_collection("deployments.apps", propagation_policy="Orphan")
        await server.objects.wait_idle()
        assert server.objects.list("deployments.apps") == []
        assert len(server.objects.list("replicasets.apps")) == 1


# -- namespaces -----------------------------------------------------------------------------


async def test_a_namespace_passes_through_terminating_then_goes() -> None:
    """Deleting a namespace marks it (``deletionTimestamp``, ``status.phase: Terminating``)
    and answers it with its content still there; then the namespace controller deletes the
    content, reports its conditions (``pkg/controller/namespace/deletion``), removes the
    ``kubernetes`` finalizer and the namespace is gone."""
    async with FakeApiServer() as server:
        server.objects.create("namespaces", {"metadata": {"name": "demo"}})
        server.objects.create("configmaps", {"metadata": {"name": "c", "namespace": "demo"}})
        rv = server.objects.resource_version
        answered = server.objects.delete("namespaces", "demo")
        assert answered["status"]["phase"] == "Terminating"
        assert answered["spec"]["finalizers"] == ["kubernetes"]
        assert len(server.objects.list("configmaps", namespace="demo")) == 1
        await server.objects.wait_idle()
        assert _history(server, rv) == [
            ("MODIFIED", "Namespace", "demo"),
            ("DELETED", "ConfigMap", "c"),
            ("MODIFIED", "Namespace", "demo"),
            ("DELETED", "Namespace", "demo"),
        ]


async def test_a_terminating_namespace_refuses_new_content_until_it_is_empty() -> None:
    """Content that stays (a finalizer) keeps the namespace ``Terminating``; a create in it
    is 403 from ``NamespaceLifecycle`` admission with the real message and a
    ``NamespaceTerminating`` cause; once the content is gone, so is the namespace."""
    async with FakeApiServer() as server:
        await _terminating_namespace(server)


async def _terminating_namespace(server: FakeApiServer) -> None:
    server.objects.create("namespaces", {"metadata": {"name": "demo"}})
    held = {"metadata": {"name": "held", "namespace": "demo", "finalizers": ["example.com/x"]}}
    server.objects.create("configmaps", held)
    server.objects.delete("namespaces", "demo")
    await server.objects.wait_idle()
    ns = server.objects.get("namespaces", "demo")
    assert ns["status"]["phase"] == "Terminating"
    reported = {
        c["type"]: (c["status"], c["reason"], c["message"]) for c in ns["status"]["conditions"]
    }
    assert reported["NamespaceContentRemaining"] == (
        "True",
        "SomeResourcesRemain",
        "Some resources are remaining: configmaps. has 1 resource instances",
    )
    assert reported["NamespaceFinalizersRemaining"] == (
        "True",
        "SomeFinalizersRemain",
        "Some content in the namespace has finalizers remaining: example.com/x in 1 resource "
        "instances",
    )
    assert reported["NamespaceDeletionContentFailure"][:2] == ("False", "ContentDeleted")
    with pytest.raises(ForbiddenError) as caught:
        server.objects.create("configmaps", {"metadata": {"name": "new", "namespace": "demo"}})
    status = caught.value.status
    assert status["message"] == (
        'configmaps "new" is forbidden: unable to create new content in namespace demo '
        "because it is being terminated"
    )
    assert status["details"]["causes"] == [
        {
            "reason": "NamespaceTerminating",
            "message": "namespace demo is being terminated",
            "field": "metadata.namespace",
        }
    ]
    server.objects.patch("configmaps", "held", {"metadata": {"finalizers": None}}, namespace="demo")
    await server.objects.wait_idle()
    with pytest.raises(NotFoundError):
        server.objects.get("namespaces", "demo")
