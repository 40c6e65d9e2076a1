"""Owned objects (issue 22): the map from an owned object to its controller owner's key
(controller-runtime ``pkg/handler/enqueue_owner.go``, ``getOwnerReconcileRequest``: kind and
group match, namespace from the owned object unless the owner is cluster-scoped), and the
controller reference set on created objects (``controllerutil.SetControllerReference``,
``validateOwner``, ``upsertOwnerRef``) — as tables, then end to end over HTTP."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

import aioinformer
from aioinformer import (
    Controller,
    KubeObject,
    Resource,
    SharedInformerFactory,
    owner_keys,
    set_controller_reference,
)
from aioinformer.errors import AlreadyOwnedError, OwnerReferenceError
from aioinformer.testing import FakeApiServer

from .support import FAST_WATCH, wait_until

WIDGETS = Resource("example.com", "v1", "widgets", kind="Widget")
CLUSTER_WIDGETS = Resource(
    "example.com", "v1", "clusterwidgets", kind="ClusterWidget", namespaced=False
)


def ref(
    name: str = "w",
    *,
    kind: str = "Widget",
    api_version: str = "example.com/v1",
    controller: bool | None = True,
) -> dict[str, Any]:
    reference: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": "u-" + name,
    }
    if controller is not None:
        reference["controller"] = controller
    return reference


def owned(*refs: dict[str, Any], namespace: str = "ns") -> KubeObject:
    metadata: dict[str, Any] = {"name": "cm", "ownerReferences": list(refs)}
    if namespace:
        metadata["namespace"] = namespace
    return {"metadata": metadata}


OWNER_KEYS: list[tuple[str, KubeObject, list[str]]] = [
    ("the controller owner", owned(ref("w")), ["ns/w"]),
    ("another version of the same group", owned(ref("w", api_version="example.com/v2")), ["ns/w"]),
    ("another group", owned(ref("w", api_version="other.io/v1")), []),
    ("another kind", owned(ref("w", kind="Gadget")), []),
    ("an owner that is not the controller", owned(ref("w", controller=False)), []),
    ("controller unset", owned(ref("w", controller=None)), []),
    ("no owner references", {"metadata": {"name": "cm", "namespace": "ns"}}, []),
    ("a malformed apiVersion", owned(ref("w", api_version="a/b/c")), []),
    ("a cluster-scoped object cannot have a namespaced owner", owned(ref("w"), namespace=""), []),
    (
        "the controller among other owners",
        owned(ref("x", controller=False), ref("w"), ref("y", kind="Gadget")),
        ["ns/w"],
    ),
]


@pytest.mark.parametrize(("name", "obj", "keys"), OWNER_KEYS, ids=[c[0] for c in OWNER_KEYS])
def test_owner_keys_of_a_namespaced_owner(name: str, obj: KubeObject, keys: list[str]) -> None:
    assert owner_keys(WIDGETS)(obj) == keys


def test_owner_keys_of_a_cluster_scoped_owner_are_names() -> None:
    keys = owner_keys(CLUSTER_WIDGETS)
    reference = ref("big", kind="ClusterWidget")
    assert keys(owned(reference)) == ["big"]
    assert keys(owned(reference, namespace="")) == ["big"]


def test_owner_keys_may_take_every_owner_of_the_kind() -> None:
    obj = owned(ref("a", controller=False), ref("b"), ref("a", controller=False))
    assert owner_keys(WIDGETS, controller_only=False)(obj) == ["ns/a", "ns/b"]


def test_owner_keys_of_a_builtin_owner_by_name() -> None:
    """kubectl's names work: a ReplicaSet's Deployment owner (group apps)."""
    obj = owned(ref("web", kind="Deployment", api_version="apps/v1"))
    assert owner_keys("deployments.apps")(obj) == ["ns/web"]
    assert repr(owner_keys("deployments.apps")) == "owner_keys(Deployment.apps: controller owner)"


def test_owner_keys_needs_a_kind() -> None:
    with pytest.raises(ValueError, match="no kind"):
        owner_keys(Resource("example.com", "v1", "widgets"))


# -- set_controller_reference ----------------------------------------------------------------

OWNER: KubeObject = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w", "namespace": "ns", "uid": "u-w", "resourceVersion": "5"},
}
EXPECTED_REF = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "name": "w",
    "uid": "u-w",
    "controller": True,
    "blockOwnerDeletion": True,
}


def test_set_controller_reference_adds_the_reference() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "cm", "namespace": "ns"}}
    assert set_controller_reference(obj, owner=OWNER) is obj
    assert obj["metadata"]["ownerReferences"] == [EXPECTED_REF]


def test_set_controller_reference_keeps_other_owners_and_replaces_its_own() -> None:
    """upsertOwnerRef: the same group, kind and name is replaced (here: a new uid, another
    version), others stay."""
    other = ref("x", controller=False)
    stale = {**ref("w", api_version="example.com/v1beta1"), "uid": "old"}
    obj: dict[str, Any] = {
        "metadata": {"name": "cm", "namespace": "ns", "ownerReferences": [other, stale]}
    }
    set_controller_reference(obj, owner=OWNER, block_owner_deletion=False)
    assert obj["metadata"]["ownerReferences"] == [
        other,
        {**EXPECTED_REF, "blockOwnerDeletion": False},
    ]


def test_a_cluster_scoped_owner_may_own_anything() -> None:
    owner = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "uid": "u-t"}}
    namespaced: dict[str, Any] = {"metadata": {"name": "cm", "namespace": "ns"}}
    cluster_scoped: dict[str, Any] = {"metadata": {"name": "pv"}}
    set_controller_reference(namespaced, owner=owner)
    set_controller_reference(cluster_scoped, owner=owner)
    assert cluster_scoped["metadata"]["ownerReferences"][0]["kind"] == "Namespace"


REFUSED: list[tuple[str, dict[str, Any], KubeObject, str]] = [
    (
        "cross-namespace",
        {"metadata": {"name": "cm", "namespace": "other"}},
        OWNER,
        "cross-namespace owner references are disallowed",
    ),
    (
        "cluster-scoped object, namespaced owner",
        {"metadata": {"name": "pv"}},
        OWNER,
        "cluster-scoped object cannot have a namespaced owner",
    ),
    (
        "an owner without uid (not stored yet)",
        {"metadata": {"name": "cm", "namespace": "ns"}},
        {**OWNER, "metadata": {"name": "w", "namespace": "ns"}},
        "has no metadata.uid",
    ),
    (
        "an owner without kind",
        {"metadata": {"name": "cm", "namespace": "ns"}},
        {"metadata": OWNER["metadata"]},
        "has no apiVersion, kind",
    ),
    (
        "a metadata-only owner",
        {"metadata": {"name": "cm", "namespace": "ns"}},
        {**OWNER, "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata"},
        "metadata-only",
    ),
]


@pytest.mark.parametrize(("name", "obj", "owner", "message"), REFUSED, ids=[c[0] for c in REFUSED])
def test_set_controller_reference_refuses_what_kubernetes_would_not_honour(
    name: str, obj: dict[str, Any], owner: KubeObject, message: str
) -> None:
    before = copy.deepcopy(obj)
    with pytest.raises(OwnerReferenceError, match=message):
        set_controller_reference(obj, owner=owner)
    assert obj == before


def test_an_object_with_another_controller_is_already_owned() -> None:
    theirs = ref("other")
    obj: dict[str, Any] = {
        "metadata": {"name": "cm", "namespace": "ns", "ownerReferences": [theirs]}
    }
    with pytest.raises(
        AlreadyOwnedError, match="already owned by another Widget controller other"
    ) as info:
        set_controller_reference(obj, owner=OWNER)
    assert info.value.owner == theirs
    assert isinstance(info.value, ValueError)


# -- end to end: watch(owner=) --------------------------------------------------------------


async def test_a_controller_reconciles_the_owner_of_a_changed_owned_object(
    fake_apiserver: FakeApiServer,
) -> None:
    """Create, change and delete an owned ConfigMap: each enqueues its Widget's key, never
    the ConfigMap's; an unowned ConfigMap enqueues nothing."""
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
    keys: list[str] = []
    changed = asyncio.Event()

    async def reconcile(key: str) -> None:
        keys.append(key)
        changed.set()

    async with aioinformer.connect(server=fake_apiserver.url) as client:
        widget = await client.create(
            WIDGETS, {"metadata": {"name": "w", "namespace": "default"}, "spec": {}}
        )
        factory = SharedInformerFactory(client, watch=FAST_WATCH)
        configmaps = factory.for_resource("configmaps")
        controller: Controller[str] = Controller(name="owners", reconcile=reconcile)
        controller.watch(configmaps, owner=WIDGETS)
        async with factory, controller:
            desired: dict[str, Any] = {"metadata": {"name": "w-config", "namespace": "default"}}
            set_controller_reference(desired, owner=widget)
            await client.create("configmaps", desired)
            await client.create(
                "configmaps", {"metadata": {"name": "loose", "namespace": "default"}}
            )
            await wait_until(changed, lambda: len(keys) >= 1)
            await client.patch("configmaps", "w-config", {"data": {"a": "b"}})
            await wait_until(changed, lambda: len(keys) >= 2)
            await client.delete("configmaps", "w-config")
            await wait_until(changed, lambda: len(keys) >= 3)
            # The unowned ConfigMap's change comes first; only the owned one's is enqueued
            # (one informer, one handler, one worker: in order).
            await client.patch("configmaps", "loose", {"data": {"a": "b"}})
            await client.create("configmaps", desired)
            await wait_until(changed, lambda: len(keys) >= 4)
    assert keys == ["default/w"] * 4


def test_watch_refuses_owner_with_map_func() -> None:
    controller: Controller[str] = Controller(name="x", reconcile=lambda key: asyncio.sleep(0))
    with pytest.raises(ValueError, match="not several"):
        controller.watch(
            None,  # type: ignore[arg-type]  # refused before the informer is used
            owner=WIDGETS,
            map_func=lambda o: [],
        )
