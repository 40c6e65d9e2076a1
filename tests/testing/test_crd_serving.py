"""Custom resources read in each version, their ``/scale`` subresource, the serving view of a
CRD and field selectors.

Specified by apiextensions-apiserver ``pkg/apiserver/customresource_handler.go`` (the storage
codec, ``defaultDeprecationWarning``), ``pkg/registry/customresource/etcd.go`` (``ScaleREST``),
``pkg/apiserver/conversion/converter.go`` (``nopConverter``, ``ConvertFieldLabel``) and
``pkg/registry/customresource/strategy.go`` (``GetAttrs``); the API documentation ("Versions
in CustomResourceDefinitions", "Scale subresource").
"""

from __future__ import annotations

from aioinformer.testing._apiserver._crd._kind import CustomKind, apply_scale, scale_of
from aioinformer.testing._apiserver._crd._lifecycle import default_crd
from aioinformer.testing._apiserver._crd._objects import (
    before_custom_create,
    before_custom_update,
    decode_custom,
    read_custom,
    to_storage,
)

from .crd_fixtures import crontab, crontab_crd
from .crd_fixtures.helpers import KIND, NOW, create, refused


class TestVersions:
    """Objects are stored in the storage version; ``strategy: None`` changes only
    ``apiVersion``; each version prunes by its own schema."""

    def test_write_in_another_version(self) -> None:
        """A v1beta1 write is stored as v1 (and pruned by v1's schema)."""
        obj, _ = decode_custom(
            KIND, "v1beta1", crontab() | {"apiVersion": "stable.example.com/v1beta1"}
        )
        before_custom_create(KIND, "v1beta1", obj, uid="u", now=NOW)
        stored = to_storage(KIND, obj)
        assert stored["apiVersion"] == "stable.example.com/v1"
        assert stored["spec"] == {"cronSpec": "*/5 * * * *", "image": "my-awesome-cron-image"}

    def test_read_in_another_version(self) -> None:
        """A read decodes with the storage version's schema (its defaults apply), converts,
        then prunes by the requested version's schema."""
        stored = create(crontab(concurrencyPolicy="Forbid"))
        old = read_custom(KIND, stored, "v1beta1")
        assert old["apiVersion"] == "stable.example.com/v1beta1"
        assert old["spec"] == {
            "cronSpec": "*/5 * * * *",
            "image": "my-awesome-cron-image",
            "replicas": 1,
        }

    def test_read_repairs_stored_objects(self) -> None:
        """The storage decoder drops malformed metadata fields and gives a missing generation
        the value 1."""
        stored = create(crontab())
        stored["metadata"]["labels"] = {"a": 5}
        del stored["metadata"]["generation"]
        obj = read_custom(KIND, stored, "v1")
        assert "labels" not in obj["metadata"]
        assert obj["metadata"]["generation"] == 1

    def test_deprecation_warning(self) -> None:
        """``defaultDeprecationWarning``: deprecated versions point to the newest served one."""
        assert KIND.version("v1beta1").warning == (
            "stable.example.com/v1beta1 CronTab is deprecated; use stable.example.com/v1 CronTab"
        )
        assert KIND.version("v1").warning == ""


class TestScale:
    """``ScaleREST``: an ``autoscaling/v1`` ``Scale`` over the CRD's scale paths."""

    def test_get(self) -> None:
        """The Scale carries the object's identity and the values at the three paths."""
        obj = create(crontab(replicas=3))
        obj["status"] = {"replicas": 2, "labelSelector": "app=cron"}
        assert scale_of(KIND, "v1", obj) == {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": "nightly",
                "namespace": "default",
                "uid": "uid-1",
                "resourceVersion": "10",
                "creationTimestamp": NOW,
            },
            "spec": {"replicas": 3},
            "status": {"replicas": 2, "selector": "app=cron"},
        }

    def test_get_without_spec_replicas(self) -> None:
        """A missing spec path is a 500 on GET."""
        obj = create(crontab())
        del obj["spec"]["replicas"]
        failure = refused(scale_of, KIND, "v1", obj)
        assert (failure.code, failure.reason, failure.message) == (
            500,
            "InternalError",
            'Internal error occurred: the spec replicas field ".spec.replicas" does not exist',
        )

    def test_update(self) -> None:
        """An update writes the replicas back and goes through the main resource's rules:
        ``generation`` is bumped, the schema still applies."""
        old = create(crontab(replicas=3))
        scale = scale_of(KIND, "v1", old)
        scale["spec"]["replicas"] = 5
        new = apply_scale(KIND, "v1", old, scale)
        before_custom_update(KIND, "v1", new, old)
        assert new["spec"]["replicas"] == 5
        assert new["metadata"]["generation"] == 2
        scale["spec"]["replicas"] = 11
        failure = refused(
            before_custom_update, KIND, "v1", apply_scale(KIND, "v1", old, scale), old
        )
        assert failure.code == 422

    def test_patch_that_leaves_replicas_unset(self) -> None:
        """An object without spec replicas, patched through ``/scale`` without setting them:
        400."""
        obj = create(crontab())
        del obj["spec"]["replicas"]
        scale = scale_of(KIND, "v1", obj, for_update=True)
        failure = refused(apply_scale, KIND, "v1", obj, scale)
        assert (failure.code, failure.message) == (
            400,
            'the spec replicas field ".spec.replicas" cannot be empty',
        )


def test_custom_kind() -> None:
    """The serving view of the CRD: names, scope, storage version, per-version subresources
    and columns."""
    assert (KIND.group, KIND.kind, KIND.list_kind, KIND.plural, KIND.singular) == (
        "stable.example.com",
        "CronTab",
        "CronTabList",
        "crontabs",
        "crontab",
    )
    assert (KIND.namespaced, KIND.storage, KIND.short_names, KIND.categories) == (
        True,
        "v1",
        ("ct",),
        ("all",),
    )
    assert KIND.version("v1").scale is not None
    assert KIND.version("v1beta1").scale is None
    assert [c["name"] for c in KIND.version("v1").columns] == ["Spec", "Replicas", "Age"]


def test_field_selectors() -> None:
    """``crConverter.ConvertFieldLabel`` and ``GetAttrs``: names, plus a version's
    ``selectableFields`` with their values printed as ``fmt.Sprint`` (missing: empty)."""
    crd = crontab_crd()
    crd["spec"]["versions"][1]["selectableFields"] = [
        {"jsonPath": ".spec.image"},
        {"jsonPath": ".spec.replicas"},
        {"jsonPath": ".spec.suspend"},
    ]
    default_crd(crd)
    kind = CustomKind.from_crd(crd)
    assert kind.field_labels("v1") == (
        "metadata.name",
        "metadata.namespace",
        "spec.image",
        "spec.replicas",
        "spec.suspend",
    )
    assert kind.field_labels("v1beta1") == ("metadata.name", "metadata.namespace")
    assert kind.field_values("v1", crontab(replicas=2, suspend=True)) == {
        "metadata.name": "nightly",
        "metadata.namespace": "default",
        "spec.image": "my-awesome-cron-image",
        "spec.replicas": "2",
        "spec.suspend": "true",
    }
    assert kind.field_values("v1", crontab())["spec.suspend"] == ""
