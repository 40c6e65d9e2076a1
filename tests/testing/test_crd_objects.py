"""Custom resources through the write path of a real API server: decoding, create, update and
status update.

Specified by apiextensions-apiserver ``pkg/apiserver/customresource_handler.go`` (the
decoder: ``schemaCoercingDecoder``, ``unstructuredSchemaCoercer``, ``unstructuredDefaulter``),
``pkg/registry/customresource`` (``strategy.go``, ``status_strategy.go``, ``validator.go``) and
``pkg/apiserver/schema/listtype``; the expected texts of ``test/integration``
(``validation_test.go``, ``subresources_test.go``, ``objectmeta_test.go``) where it has them;
the API documentation ("Extend the Kubernetes API with CustomResourceDefinitions": Field
pruning, Defaulting, Subresources).
"""

from __future__ import annotations

import json
from typing import Any

from aioinformer.testing._apiserver._crd._objects import (
    before_custom_create,
    before_custom_status_update,
    before_custom_update,
    decode_custom,
)

from .crd_fixtures import crontab
from .crd_fixtures.helpers import KIND, NOW, create, refused


class TestDecode:
    """``schemaCoercingDecoder``: metadata through ``ObjectMeta``, pruning, ``null`` removal,
    embedded resources, then defaults; ``fieldValidation`` decides what unknown fields do."""

    def body(self) -> dict[str, Any]:
        body = crontab(foo=1)
        body["metadata"]["bogus"] = True
        return body

    def test_warn(self) -> None:
        """``Warn`` (the default): one warning per unknown field, metadata's first."""
        obj, warnings = decode_custom(KIND, "v1", self.body())
        assert warnings == ['unknown field "metadata.bogus"', 'unknown field "spec.foo"']
        assert obj["metadata"] == {"name": "nightly", "namespace": "default"}
        assert "foo" not in obj["spec"]

    def test_strict(self) -> None:
        """``Strict``: 400 naming every unknown field (kubectl sends ``Strict``)."""
        failure = refused(decode_custom, KIND, "v1", self.body(), directive="Strict")
        assert (failure.code, failure.message) == (
            400,
            'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: '
            'unknown field "metadata.bogus", unknown field "spec.foo"',
        )

    def test_ignore(self) -> None:
        """``Ignore``: unknown fields vanish silently."""
        obj, warnings = decode_custom(KIND, "v1", self.body(), directive="Ignore")
        assert warnings == []
        assert "foo" not in obj["spec"]

    def test_duplicate_keys_come_first(self) -> None:
        """The JSON decoder's duplicate keys precede the schema's unknown fields."""
        raw = json.dumps(crontab(foo=1))[:-2] + ', "image": "x"}}'
        failure = refused(decode_custom, KIND, "v1", json.loads(raw), raw=raw, directive="Strict")
        assert failure.message.endswith(
            'strict decoding error: duplicate field "spec.image", unknown field "spec.foo"'
        )

    def test_patch_strict_is_422(self) -> None:
        """A merge or JSON patch whose result has unknown fields: 422 on ``patch``."""
        failure = refused(
            decode_custom, KIND, "v1", crontab(foo=1), directive="Strict", operation="merge"
        )
        assert failure.code == 422
        assert failure.message.startswith(' "" is invalid: patch: Invalid value: "{')

    def test_metadata_of_the_wrong_type(self) -> None:
        """``GetObjectMetaWithOptions``: metadata Go cannot decode refuses the body (400)."""
        body = crontab()
        body["metadata"]["labels"] = {"a": 1}
        failure = refused(decode_custom, KIND, "v1", body)
        assert (failure.code, failure.message) == (
            400,
            'CronTab in version "v1" cannot be handled as a CronTab: json: cannot unmarshal '
            "number into Go struct field ObjectMeta.labels of type string",
        )

    def test_defaults_and_nulls(self) -> None:
        """Defaults of the request's version are applied; a ``null`` without default is
        dropped, one with a default takes it, a nullable one stays."""
        body = crontab(replicas=None, suspend=None, image=None)
        body["spec"]["concurrencyPolicy"] = None
        obj, _ = decode_custom(KIND, "v1", body)
        assert obj["spec"] == {
            "cronSpec": "*/5 * * * *",
            "image": "busybox:1.36",
            "replicas": 1,
            "suspend": None,
        }
        old, _ = decode_custom(KIND, "v1beta1", crontab())
        assert "replicas" not in old["spec"]

    def test_embedded_resources(self) -> None:
        """``x-kubernetes-embedded-resource``: the embedded metadata goes through
        ``ObjectMeta`` (unknown fields reported with their path); a non-string kind refuses
        the body."""
        job: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"x": 1}}
        obj, warnings = decode_custom(KIND, "v1", crontab(jobTemplate=job))
        assert warnings == ['unknown field "spec.jobTemplate.metadata.x"']
        assert obj["spec"]["jobTemplate"]["metadata"] == {}
        template: dict[str, Any] = {"apiVersion": "batch/v1", "kind": 1}
        failure = refused(decode_custom, KIND, "v1", crontab(jobTemplate=template))
        assert failure.message.endswith(
            "cannot be handled as a CronTab: spec.jobTemplate.kind: Invalid value: 1: must be a "
            "string"
        )


class TestCreate:
    """``rest.BeforeCreate`` with ``customResourceStrategy``."""

    def test_system_fields_status_and_generation(self) -> None:
        """``PrepareForCreate``: ``status`` dropped when ``/status`` is served, generation 1."""
        body = crontab()
        body["status"] = {"replicas": 5}
        obj = create(body)
        assert "status" not in obj
        assert obj["metadata"] == {
            "name": "nightly",
            "namespace": "default",
            "uid": "uid-1",
            "creationTimestamp": NOW,
            "generation": 1,
            "resourceVersion": "10",
        }
        assert obj["spec"]["replicas"] == 1

    def test_invalid_object(self) -> None:
        """``customResourceStrategy.Validate``: metadata (DNS subdomain names), the schema,
        the scale paths, list types; one 422 naming the group-qualified kind."""
        body = crontab("Bad_Name", cronSpec="x", replicas=-1, env=[{"name": "a"}, {"name": "a"}])
        obj, _ = decode_custom(KIND, "v1", body)
        failure = refused(before_custom_create, KIND, "v1", obj, uid="u", now=NOW)
        assert failure.code == 422
        assert failure.details is not None
        assert [c["field"] for c in failure.details["causes"]] == [
            "metadata.name",
            "spec.cronSpec",
            "spec.replicas",
            ".spec.replicas",
            "spec.env[1]",
        ]
        assert failure.message.startswith('CronTab.stable.example.com "Bad_Name" is invalid: [')
        assert failure.message.endswith(
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or "
            "equal to 1, .spec.replicas: Invalid value: -1: should be a non-negative integer, "
            'spec.env[1]: Duplicate value: {"name":"a"}]'
        )

    def test_type_meta(self) -> None:
        """``ValidateTypeMeta``: the object's kind and apiVersion must be the endpoint's; the
        422 names the object's own kind (``validation_test.go``)."""
        body = crontab()
        body["kind"] = "SomethingElse"
        obj, _ = decode_custom(KIND, "v1", body)
        failure = refused(before_custom_create, KIND, "v1", obj, uid="u", now=NOW)
        assert failure.message == (
            'SomethingElse.stable.example.com "nightly" is invalid: kind: Invalid value: '
            '"SomethingElse": must be CronTab'
        )

    def test_namespace_required(self) -> None:
        """A namespaced kind needs ``metadata.namespace``."""
        body = crontab()
        del body["metadata"]["namespace"]
        obj, _ = decode_custom(KIND, "v1", body)
        failure = refused(before_custom_create, KIND, "v1", obj, uid="u", now=NOW)
        assert failure.message.endswith("is invalid: metadata.namespace: Required value")

    def test_embedded_resource_validation(self) -> None:
        """``objectmeta.Validate``: embedded resources need apiVersion and kind, their kind is
        a DNS-1035 label in any case, their names path segments (``objectmeta_test.go``)."""
        template = {"kind": "%", "metadata": {"name": ".."}}
        obj, _ = decode_custom(KIND, "v1", crontab(jobTemplate=template))
        failure = refused(before_custom_create, KIND, "v1", obj, uid="u", now=NOW)
        assert failure.details is not None
        assert [(c["field"], c["reason"]) for c in failure.details["causes"]] == [
            ("spec.jobTemplate.apiVersion", "FieldValueRequired"),
            ("spec.jobTemplate.kind", "FieldValueInvalid"),
            ("spec.jobTemplate.metadata.name", "FieldValueInvalid"),
        ]

    def test_finalizer_warnings(self) -> None:
        """``WarningsOnCreate``: finalizers that are not domain-qualified."""
        body = crontab()
        body["metadata"]["finalizers"] = ["cleanup", "example.com", "example.com/cleanup"]
        obj, _ = decode_custom(KIND, "v1", body)
        assert before_custom_create(KIND, "v1", obj, uid="u", now=NOW) == [
            'metadata.finalizers: "cleanup": prefer a domain-qualified finalizer name to avoid '
            "accidental conflicts with other finalizer writers",
            'metadata.finalizers: "example.com": prefer a domain-qualified finalizer name '
            "including a path (/) to avoid accidental conflicts with other finalizer writers",
        ]


def update(old: dict[str, Any], change: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    new = json.loads(json.dumps(old))
    new.update(change)
    obj, _ = decode_custom(KIND, version, new, operation="update")
    before_custom_update(KIND, version, obj, old)
    return obj


class TestUpdate:
    """``rest.BeforeUpdate`` with ``customResourceStrategy`` (``PrepareForUpdate``,
    ``ValidateUpdate``)."""

    def test_status_is_kept_and_generation_bumped(self) -> None:
        """With ``/status``, a main-resource write keeps the stored status; any change outside
        metadata and status bumps ``generation``."""
        old = create(crontab())
        old["status"] = {"replicas": 1}
        new = update(old, {"spec": dict(old["spec"], replicas=2), "status": {"replicas": 9}})
        assert new["status"] == {"replicas": 1}
        assert new["metadata"]["generation"] == 2

    def test_metadata_and_status_changes_keep_generation(self) -> None:
        """Label or status changes do not bump ``generation``."""
        old = create(crontab())
        new = update(old, {"metadata": dict(old["metadata"], labels={"a": "b"})})
        assert new["metadata"]["generation"] == 1

    def test_resource_version_required(self) -> None:
        """Custom resources allow no unconditional update."""
        old = create(crontab())
        new = json.loads(json.dumps(old))
        del new["metadata"]["resourceVersion"]
        failure = refused(before_custom_update, KIND, "v1", new, old)
        assert failure.message == (
            'CronTab.stable.example.com "nightly" is invalid: metadata.resourceVersion: Invalid '
            'value: "": must be specified for an update'
        )

    def test_ratcheting(self) -> None:
        """``CRDValidationRatcheting``: an invalid value stored before the schema forbade it
        may stay while other fields change."""
        old = create(crontab())
        old["spec"]["replicas"] = 50
        new = update(old, {"spec": dict(old["spec"], image="other")})
        assert new["spec"]["replicas"] == 50
        failure = refused(update, old, {"spec": dict(old["spec"], replicas=60)})
        assert failure.message.endswith("spec.replicas in body should be less than or equal to 10")

    def test_list_types_of_invalid_old_objects(self) -> None:
        """``ValidateListSetsAndMaps`` runs on update only when the old object passes it."""
        old = create(crontab())
        old["spec"]["tags"] = ["a", "a"]
        new = update(old, {"spec": dict(old["spec"], tags=["a", "a", "b"])})
        assert new["spec"]["tags"] == ["a", "a", "b"]


class TestStatusUpdate:
    """``rest.BeforeUpdate`` with ``statusStrategy``."""

    def status_update(self, old: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
        new = json.loads(json.dumps(old))
        new.update(change)
        obj, _ = decode_custom(KIND, "v1", new, operation="update")
        before_custom_status_update(KIND, "v1", obj, old)
        return obj

    def test_only_status_changes(self) -> None:
        """``PrepareForUpdate``: everything but ``status`` comes from the stored object, labels
        included; ``generation`` stays."""
        old = create(crontab())
        spec = dict(old["spec"], replicas=5)
        meta = dict(old["metadata"], labels={"a": "b"})
        new = self.status_update(old, {"spec": spec, "metadata": meta, "status": {"replicas": 3}})
        assert new["status"] == {"replicas": 3}
        assert new["spec"] == old["spec"]
        assert "labels" not in new["metadata"]
        assert new["metadata"]["generation"] == 1

    def test_status_validation(self) -> None:
        """``ValidateStatusUpdate``: the status schema under ``status`` (paths inside the
        status in the messages, as ``subresources_test.go`` shows) and the scale status
        path."""
        old = create(crontab())
        failure = refused(self.status_update, old, {"status": {"replicas": -1}})
        assert failure.message == (
            'CronTab.stable.example.com "nightly" is invalid: [status.replicas: Invalid value: '
            "-1: replicas in body should be greater than or equal to 0, .status.replicas: "
            "Invalid value: -1: should be a non-negative integer]"
        )
