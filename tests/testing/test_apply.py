"""Server-side apply and ``managedFields`` as the fake keeps them, one rule per test.

The rules are those of the API server's field manager (apimachinery
``pkg/util/managedfields/internal``) over structured-merge-diff (``merge/update.go``,
``typed/``, ``fieldpath/``); the list and map semantics come from the OpenAPI extensions
``x-kubernetes-list-type``, ``-list-map-keys`` and ``-map-type``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._apply._managed import LAST_APPLIED, manager_from_user_agent
from aioinformer.testing._apiserver._apply._server_side import apply, track_update
from aioinformer.testing._apiserver._schema._fieldpath import FieldSet
from aioinformer.testing._apiserver._schema._published import DEDUCED, TypeInfo, schemas

NOW = "2026-11-23T10:00:00Z"
LATER = "2026-11-23T11:00:00Z"


def _root(group: str, version: str, kind: str) -> TypeInfo:
    root = schemas().root(group, version, kind)
    assert root is not None
    return root


DEPLOYMENT = _root("apps", "v1", "Deployment")
CONFIGMAP = _root("", "v1", "ConfigMap")


def _deployment(*containers: dict[str, Any], replicas: int | None = 2) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": list(containers) or [{"name": "app", "image": "shop:1"}]},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": spec,
    }


def _apply(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    manager: str,
    *,
    force: bool = False,
    root: TypeInfo = DEPLOYMENT,
    now: str = NOW,
    gvk: tuple[str, str] = ("apps/v1", "Deployment"),
) -> dict[str, Any]:
    """Apply and return the stored object (with its managedFields), as the storage would."""
    api_version, kind = gvk
    new, managed = apply(
        live,
        config,
        root,
        manager=manager,
        force=force,
        api_version=api_version,
        kind=kind,
        subresource="",
        now=now,
    )
    result = copy.deepcopy(new if new is not None else live)
    assert result is not None
    result["metadata"]["uid"] = "uid-1"
    if managed is None:
        result["metadata"].pop("managedFields", None)
    else:
        result["metadata"]["managedFields"] = managed
    return result


def _entries(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"].get("managedFields") or []}


def _fields(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    fields: dict[str, Any] = _entries(obj)[manager]["fieldsV1"]
    return fields


def _update(
    live: dict[str, Any] | None,
    new: dict[str, Any],
    manager: str,
    root: TypeInfo = CONFIGMAP,
    now: str = NOW,
) -> dict[str, Any]:
    managed = track_update(
        live,
        new,
        root,
        manager=manager,
        api_version=new["apiVersion"],
        kind=new["kind"],
        subresource="",
        now=now,
    )
    out = copy.deepcopy(new)
    out["metadata"]["uid"] = "uid-1"
    out["metadata"].pop("managedFields", None)
    if managed is not None:
        out["metadata"]["managedFields"] = managed
    return out


def _configmap(data: dict[str, str], **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "c", "namespace": "default"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


# -- field sets -------------------------------------------------------------------------------


def test_fields_v1_round_trips_in_the_servers_order() -> None:
    """``FieldsV1`` keys are ``f:`` fields, ``k:`` list-map keys (compact JSON of the key
    fields, sorted by name), ``v:`` set values and ``i:`` indices; a node that is a member and
    has children carries ``"."``; fields sort before keys, values and indices
    (structured-merge-diff ``fieldpath/serialize.go``, ``serialize-pe.go``)."""
    document = {
        "f:b": {},
        "f:spec": {
            ".": {},
            "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:name": {}}},
        },
        "f:finalizers": {'v:"x"': {}},
        "f:list": {"i:0": {}},
    }
    fields = FieldSet.from_fields(document)
    encoded = fields.to_fields()
    assert list(encoded) == ["f:b", "f:finalizers", "f:list", "f:spec"]
    assert encoded["f:spec"] == document["f:spec"]
    assert FieldSet.from_fields(encoded) == fields


# -- updates ----------------------------------------------------------------------------------


def test_a_create_gives_its_manager_every_field_it_set() -> None:
    """A create is an ``Update`` from an empty object: the creator owns every field it set,
    new maps are members too (``"."``), ``apiVersion``/``kind``/server-owned metadata are
    stripped (``stripmeta.go``), and the entry names manager, operation, version and time."""
    created = _update(None, _configmap({"a": "1"}, app="web"), "kubectl-create")
    [entry] = created["metadata"]["managedFields"]
    assert entry == {
        "manager": "kubectl-create",
        "operation": "Update",
        "apiVersion": "v1",
        "time": NOW,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:data": {".": {}, "f:a": {}},
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        },
    }


def test_an_update_takes_the_fields_it_changes_from_other_managers() -> None:
    """Fields an update changes move to its manager; fields it removes leave every manager
    (``Updater.update`` with force for non-apply writes)."""
    created = _update(None, _configmap({"a": "1", "b": "2"}), "creator")
    changed = copy.deepcopy(created)
    changed["data"] = {"a": "9"}
    updated = _update(created, changed, "editor", now=LATER)
    assert _fields(updated, "creator") == {"f:data": {}}
    assert _fields(updated, "editor") == {"f:data": {"f:a": {}}}
    assert _entries(updated)["editor"]["time"] == LATER


def test_objects_without_managed_fields_stay_untracked() -> None:
    """An update of an existing object that has no managed fields records none
    (``skipNonAppliedManager``); ``managedFields: []`` in a request resets tracking."""
    untracked = _configmap({"a": "1"})
    untracked["metadata"]["uid"] = "uid-1"
    assert (
        track_update(
            untracked,
            _configmap({"a": "2"}),
            CONFIGMAP,
            manager="m",
            api_version="v1",
            kind="ConfigMap",
            subresource="",
            now=NOW,
        )
        is None
    )
    created = _update(None, _configmap({"a": "1"}), "creator")
    reset = copy.deepcopy(created)
    reset["metadata"]["managedFields"] = []
    assert _update(created, reset, "resetter")["metadata"].get("managedFields") is None


def test_update_managers_are_capped_at_ten() -> None:
    """At most 10 ``Update`` entries are kept: the oldest ones merge into
    ``ancient-changes`` (``capmanagers.go``, ``DefaultMaxUpdateManagers``)."""
    obj = _update(None, _configmap({"k0": "v"}), "m00", now="2026-01-01T00:00:00Z")
    for i in range(1, 12):
        new = copy.deepcopy(obj)
        new["data"][f"k{i}"] = "v"
        obj = _update(obj, new, f"m{i:02d}", now=f"2026-01-01T00:00:{i:02d}Z")
    managers = set(_entries(obj))
    assert len(managers) == 10 and "ancient-changes" in managers
    assert {"m00", "m01", "m02"}.isdisjoint(managers)


def test_the_manager_of_a_write_without_field_manager_comes_from_the_user_agent() -> None:
    """Without ``fieldManager`` the server names the manager after the User-Agent up to its
    first ``/`` (``prefixFromUserAgent`` in apiserver ``handlers/create.go``)."""
    assert manager_from_user_agent("OpenAPI-Generator/36.1.0/python") == "OpenAPI-Generator"
    assert manager_from_user_agent("kubectl/v1.32.4 (linux/amd64)") == "kubectl"
    assert manager_from_user_agent("a\x00b/1") == "ab"
    assert manager_from_user_agent("x" * 200) == "x" * 128


# -- apply ------------------------------------------------------------------------------------


def test_apply_creates_and_owns_exactly_the_applied_fields() -> None:
    """An apply owns what its configuration sets: list-map items by key (``k:{"name":..}``,
    themselves members with ``"."``), atomic maps (``selector``) as one field, struct fields
    only through their leaves (``ToFieldSet``); the entry has operation ``Apply``."""
    created = _apply(None, _deployment(), "ci")
    entry = _entries(created)["ci"]
    assert (entry["operation"], entry["apiVersion"], entry["time"]) == ("Apply", "apps/v1", NOW)
    spec = entry["fieldsV1"]["f:spec"]
    assert spec["f:selector"] == {} and spec["f:replicas"] == {}
    assert spec["f:template"]["f:spec"]["f:containers"] == {
        'k:{"name":"app"}': {".": {}, "f:image": {}, "f:name": {}}
    }


def test_a_second_manager_changing_an_owned_field_conflicts() -> None:
    """Applying a different value to a field another manager owns is a 409 Conflict whose
    message and ``details.causes[]`` name the field and the manager (``NewConflictError`` in
    ``internal/conflict.go``, ``reason: FieldManagerConflict``)."""
    live = _apply(None, _deployment(), "ci")
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    config["spec"] = {"replicas": 5}
    with pytest.raises(StatusFailure) as caught:
        _apply(live, config, "autoscaler")
    failure = caught.value
    assert (failure.code, failure.reason) == (409, "Conflict")
    assert failure.message == 'Apply failed with 1 conflict: conflict with "ci": .spec.replicas'
    assert failure.details == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "ci"',
                "field": ".spec.replicas",
            }
        ]
    }


def test_force_takes_the_ownership_of_conflicting_fields() -> None:
    """With ``force=true`` the applier gets the conflicting fields and the other manager
    loses them (``Updater.update``: conflicts removed from their owners)."""
    live = _apply(None, _deployment(), "ci")
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    config["spec"] = {"replicas": 5}
    forced = _apply(live, config, "autoscaler", force=True)
    assert forced["spec"]["replicas"] == 5
    assert "f:replicas" not in _fields(forced, "ci")["f:spec"]
    assert _fields(forced, "autoscaler") == {"f:spec": {"f:replicas": {}}}


def test_conflicts_with_several_fields_and_update_managers_are_listed_by_manager() -> None:
    """Several conflicts print one line per field, grouped by manager; an ``Update`` manager
    is named with its version (``getConflictMessage``, ``printManager``)."""
    live = _update(None, _deployment(), "kubectl-create", root=DEPLOYMENT)
    config = _deployment({"name": "app", "image": "shop:2"}, replicas=3)
    with pytest.raises(StatusFailure) as caught:
        _apply(live, config, "ci")
    assert caught.value.message == (
        'Apply failed with 2 conflicts: conflicts with "kubectl-create" using apps/v1:\n'
        '- .spec.replicas\n- .spec.template.spec.containers[name="app"].image'
    )


def test_applying_the_same_value_shares_ownership() -> None:
    """Setting a field to the value it already has is not a conflict: both managers own it."""
    live = _apply(None, _deployment(), "ci")
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    config["spec"] = {"replicas": 2}
    shared = _apply(live, config, "other")
    assert "f:replicas" in _fields(shared, "ci")["f:spec"]
    assert _fields(shared, "other") == {"f:spec": {"f:replicas": {}}}


def test_fields_a_manager_stops_applying_are_removed() -> None:
    """Re-applying without a container, an env entry or a field removes them when no other
    manager owns them (``Updater.prune``)."""
    app = {
        "name": "app",
        "image": "shop:1",
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
    }
    first = _apply(None, _deployment(app, {"name": "proxy", "image": "envoy"}), "ci")
    second = _apply(
        first, _deployment({**app, "env": [{"name": "B", "value": "2"}]}, replicas=None), "ci"
    )
    assert "replicas" not in second["spec"]
    [container] = second["spec"]["template"]["spec"]["containers"]
    assert container["env"] == [{"name": "B", "value": "2"}]


def test_fields_another_manager_owns_survive_when_the_applier_drops_them() -> None:
    """A field the applier stops applying stays when another applier still owns it
    (``addBackOwnedItems``)."""
    live = _apply(None, _deployment(), "ci")
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    config["spec"] = {"replicas": 2}
    shared = _apply(live, config, "other")
    dropped = _apply(shared, _deployment(replicas=None), "ci")
    assert dropped["spec"]["replicas"] == 2


def test_list_and_map_types_decide_how_applied_values_merge() -> None:
    """``set`` lists (finalizers) merge by value, ``atomic`` lists (args) and ``atomic`` maps
    (the selector) are replaced whole, granular maps (labels) merge by key (``typed/merge.go``
    with the schema's ``x-kubernetes-list-type``/``-map-type``)."""
    live = _deployment({"name": "app", "image": "x", "args": ["--a", "--b"]})
    live["metadata"]["finalizers"] = ["keep"]
    live["metadata"]["labels"] = {"keep": "yes"}
    live["spec"]["selector"] = {"matchLabels": {"app": "web"}, "matchExpressions": []}
    created = _apply(None, live, "owner")
    config: dict[str, Any] = _deployment({"name": "app", "args": ["--c"]}, replicas=None)
    config["metadata"]["finalizers"] = ["new"]
    config["metadata"]["labels"] = {"extra": "1"}
    config["spec"]["selector"] = {"matchLabels": {"app": "web"}}
    merged = _apply(created, config, "second", force=True)
    assert sorted(merged["metadata"]["finalizers"]) == ["keep", "new"]
    assert merged["metadata"]["labels"] == {"keep": "yes", "extra": "1"}
    assert merged["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert merged["spec"]["template"]["spec"]["containers"][0]["args"] == ["--c"]
    assert _fields(merged, "second")["f:metadata"]["f:finalizers"] == {'v:"new"': {}}


def test_list_map_keys_default_as_the_openapi_document_says() -> None:
    """Container ports are keyed by ``containerPort`` and ``protocol``; a port without a
    protocol is keyed with the declared default ``TCP`` (``getAssociativeKeyDefault``)."""
    created = _apply(None, _deployment({"name": "app", "ports": [{"containerPort": 80}]}), "ci")
    container = _fields(created, "ci")["f:spec"]["f:template"]["f:spec"]["f:containers"]
    ports = container['k:{"name":"app"}']["f:ports"]
    assert list(ports) == ['k:{"containerPort":80,"protocol":"TCP"}']


@pytest.mark.parametrize(
    ("config", "code", "message"),
    [
        ({"apiVersion": "v1", "kind": "Pod"}, 400, "invalid object type: /v1, Kind=Pod"),
        (
            {"metadata": {"managedFields": [{"manager": "x"}]}},
            400,
            "metadata.managedFields must be nil",
        ),
        (
            {"spec": {"replicaz": 1}},
            500,
            "failed to create typed patch object (/web; apps/v1, Kind=Deployment): "
            ".spec.replicaz: field not declared in schema",
        ),
    ],
)
def test_configurations_the_server_refuses(config: dict[str, Any], code: int, message: str) -> None:
    """An apply of another kind is 400 (``versioncheck.go``), one carrying managed fields is
    400, one the schema refuses is the 500 of ``structuredmerge.go``'s typed conversion."""
    base: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
    }
    base.update(config)
    with pytest.raises(StatusFailure) as caught:
        _apply(None, base, "ci")
    assert (caught.value.code, caught.value.message) == (code, message)


def test_duplicate_keys_in_an_applied_list_are_refused() -> None:
    """An applied list-map with two items of one key is refused ("duplicate entries for key")."""
    config = _deployment({"name": "app", "image": "a"}, {"name": "app", "image": "b"})
    with pytest.raises(StatusFailure) as caught:
        _apply(None, config, "ci")
    assert 'duplicate entries for key [name="app"]' in caught.value.message


def test_the_first_apply_to_an_untracked_object_records_its_earlier_fields() -> None:
    """Applying to an object without managed fields first gives its existing fields to
    ``before-first-apply`` (``skipNonAppliedManager.Apply``)."""
    untracked = _deployment()
    untracked["metadata"]["uid"] = "uid-1"
    config = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"a": "b"}},
    }
    applied = _apply(untracked, config, "ci")
    assert set(_entries(applied)) == {"before-first-apply", "ci"}
    assert _entries(applied)["before-first-apply"]["operation"] == "Update"


def test_an_apply_that_changes_nothing_is_no_write() -> None:
    """Re-applying the same configuration returns no new object (``Updater.Apply`` answers
    nil when the merged object equals the live one) and keeps the entry's time."""
    created = _apply(None, _deployment(), "ci")
    new, managed = apply(
        created,
        _deployment(),
        DEPLOYMENT,
        manager="ci",
        force=False,
        api_version="apps/v1",
        kind="Deployment",
        subresource="",
        now=LATER,
    )
    assert new is None
    assert managed == created["metadata"]["managedFields"]


def test_kubectl_takes_over_client_side_applied_fields_without_conflicts() -> None:
    """``kubectl apply --server-side`` after a client-side apply takes the fields named in
    the last-applied annotation without conflicts and keeps that annotation current
    (``lastappliedmanager.go``, ``lastappliedupdater.go``)."""
    manifest = _deployment()
    annotated = copy.deepcopy(manifest)
    annotated["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(manifest)}
    live = _update(None, annotated, "kubectl-client-side-apply", root=DEPLOYMENT)
    config = _deployment(replicas=4)
    applied = _apply(live, config, "kubectl")
    assert applied["spec"]["replicas"] == 4
    last = json.loads(applied["metadata"]["annotations"][LAST_APPLIED])
    assert last["spec"]["replicas"] == 4
    with pytest.raises(StatusFailure):
        _apply(live, config, "someone-else")


def test_custom_resources_without_schema_merge_maps_and_replace_lists() -> None:
    """Kinds without a schema use the deduced type: maps are granular, lists atomic, and
    every map key is a member of its own (no declared fields: ``NewDeducedTypeConverter``,
    ``__untyped_deduced_``, ``ToFieldSet``)."""
    live = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": 1, "tags": ["a"]},
    }
    widget = ("example.com/v1", "Widget")
    created = _apply(None, live, "a", root=DEDUCED, gvk=widget)
    config = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    config["spec"] = {"color": "red", "tags": ["b"]}
    with pytest.raises(StatusFailure):
        _apply(created, config, "b", root=DEDUCED, gvk=widget)
    merged = _apply(created, config, "b", root=DEDUCED, force=True, gvk=widget)
    assert merged["spec"] == {"size": 1, "tags": ["b"], "color": "red"}
    assert _fields(merged, "b") == {"f:spec": {".": {}, "f:color": {}, "f:tags": {}}}


_NAMES = st.sampled_from(["app", "proxy", "log", "init"])
_ENV = st.lists(st.sampled_from(["A", "B", "C", "D"]), unique=True, max_size=3)


@st.composite
def _containers(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(_NAMES, unique=True, min_size=1, max_size=4))
    out = []
    for name in names:
        container: dict[str, Any] = {"name": name, "image": f"{name}:{draw(st.integers(1, 3))}"}
        env = draw(_ENV)
        if env:
            container["env"] = [
                {"name": e, "value": draw(st.sampled_from(["x", "y"]))} for e in env
            ]
        out.append(container)
    return out


def _by_name(containers: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        c["name"]: (c["image"], {e["name"]: e["value"] for e in c.get("env", [])})
        for c in containers
    }


@settings(max_examples=60, deadline=None)
@given(_containers(), _containers(), st.booleans())
def test_a_sole_applier_ends_with_exactly_its_last_configuration(
    first: list[dict[str, Any]], second: list[dict[str, Any]], replicas: bool
) -> None:
    """With one manager, applying one configuration after another leaves exactly the second
    one's containers and env entries: everything it dropped is pruned, everything it sets is
    merged in (structured-merge-diff ``Updater.Apply``)."""
    created = _apply(None, _deployment(*first), "ci")
    again = _apply(created, _deployment(*second, replicas=2 if replicas else None), "ci")
    assert _by_name(again["spec"]["template"]["spec"]["containers"]) == _by_name(second)
    assert ("replicas" in again["spec"]) == replicas
    assert _apply(again, _deployment(*second, replicas=2 if replicas else None), "ci") == again
