"""``server.objects`` writes run the same rules as HTTP writes (in process, synchronously).

Each test states the real server's behaviour and where it is specified; the in-process API
adds one choice of its own, ``fieldValidation=Strict`` by default (what kubectl sends).
"""

from __future__ import annotations

import logging

import pytest

from aioinformer.errors import BadRequestError, NotFoundError, UnprocessableEntityError
from aioinformer.testing import FakeApiServer

from .valid import deployment, pod


def test_objects_come_back_defaulted_as_a_real_server_stores_them() -> None:
    """Defaults (``SetDefaults_Deployment``, ``SetDefaults_PodSpec``) are applied on create,
    so the returned and the stored object are what a controller reads from a cluster."""
    server = FakeApiServer()
    created = server.objects.create("deployments.apps", deployment("web"))
    spec = created["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (
        1,
        10,
        600,
    )
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert server.objects.get("deployments.apps", "web") == created


def test_unknown_fields_are_refused_by_default_and_warned_about_on_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The in-process API defaults to ``fieldValidation=Strict`` (as kubectl sends it): a
    typo in seeded data is a 400 naming the field (``handlers/create.go``); with ``Warn``
    the field is dropped and the warning logged; wrong types are a 400 whatever the
    directive (the Go decoder fails)."""
    server = FakeApiServer()
    body = deployment("web")
    body["spec"]["replica"] = 3
    with pytest.raises(BadRequestError, match=r'unknown field "spec\.replica"'):
        server.objects.create("deployments.apps", body)
    with caplog.at_level(logging.WARNING, logger="aioinformer.testing._apiserver._objects"):
        created = server.objects.create("deployments.apps", body, field_validation="Warn")
    assert "replica" not in created["spec"]
    assert 'unknown field "spec.replica"' in caplog.text
    with pytest.raises(BadRequestError, match="cannot unmarshal number"):
        server.objects.create(
            "configmaps", {"metadata": {"name": "c"}, "data": {"n": 5}}, field_validation="Ignore"
        )


def test_invalid_objects_are_refused_with_the_servers_422() -> None:
    """A Pod without containers is a 422 ``spec.containers: Required value``
    (``ValidatePodSpec``), raised as the client's ``UnprocessableEntityError``."""
    server = FakeApiServer()
    with pytest.raises(UnprocessableEntityError) as caught:
        server.objects.create("pods", {"metadata": {"name": "p"}, "spec": {"containers": []}})
    assert caught.value.status["details"]["kind"] == "Pod"
    assert caught.value.status["details"]["causes"][0]["field"] == "spec.containers"


def test_status_is_reset_on_create_kept_on_update_and_written_through_status() -> None:
    """``podStrategy``: a create sets ``Pending``, a main-resource update keeps the stored
    status, ``subresource="status"`` writes it; a kind without a status subresource has no
    ``status`` to write (404)."""
    server = FakeApiServer()
    created = server.objects.create("pods", {**pod("p"), "status": {"phase": "Running"}})
    assert created["status"]["phase"] == "Pending"
    updated = server.objects.update("pods", {**created, "status": {"phase": "Failed"}})
    assert updated["status"]["phase"] == "Pending"
    written = server.objects.patch(
        "pods", "p", {"status": {"phase": "Running"}}, subresource="status"
    )
    assert written["status"]["phase"] == "Running"
    server.objects.create("configmaps", {"metadata": {"name": "c"}})
    with pytest.raises(NotFoundError):
        server.objects.patch("configmaps", "c", {"status": {}}, subresource="status")


def test_dry_run_returns_the_would_be_object_and_stores_nothing() -> None:
    """``dry_run=True`` is ``dryRun=All``: the answer is validated and defaulted, nothing is
    stored and the resource version does not move; a dry-run delete leaves the object."""
    server = FakeApiServer()
    rv = server.objects.resource_version
    dry = server.objects.create("pods", pod("p"), dry_run=True)
    assert dry["metadata"]["uid"] and dry["spec"]["restartPolicy"] == "Always"
    assert "resourceVersion" not in dry["metadata"]
    assert server.objects.list("pods") == [] and server.objects.resource_version == rv
    with pytest.raises(UnprocessableEntityError):
        server.objects.create("pods", {"metadata": {"name": "q"}}, dry_run=True)
    stored = server.objects.create("pods", pod("p"))
    patched = server.objects.patch("pods", "p", {"metadata": {"labels": {"a": "b"}}}, dry_run=True)
    assert patched["metadata"]["labels"] == {"a": "b"}
    assert patched["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    server.objects.delete("pods", "p", dry_run=True)
    assert server.objects.get("pods", "p") == stored


def test_custom_resources_follow_their_crds_status_subresource() -> None:
    """A CRD with ``subresources.status`` (apiextensions ``customResourceStrategy``): a
    create drops ``status``, a main-resource update keeps the stored one, ``/status``
    writes it; without it ``status`` is an ordinary field and ``/status`` does not exist."""
    server = FakeApiServer()
    server.register_resource("example.com", "v1", "widgets", "Widget")
    server.register_resource("example.com", "v1", "gadgets", "Gadget", status_subresource=False)
    body = {"metadata": {"name": "w"}, "spec": {"size": 1}, "status": {"ready": True}}
    widget = server.objects.create("widgets.example.com", body)
    assert "status" not in widget and widget["metadata"]["generation"] == 1
    server.objects.patch(
        "widgets.example.com", "w", {"status": {"ready": True}}, subresource="status"
    )
    updated = server.objects.patch("widgets.example.com", "w", {"status": {"ready": False}})
    assert updated["status"] == {"ready": True} and updated["metadata"]["generation"] == 1
    gadget = server.objects.create("gadgets.example.com", body)
    assert gadget["status"] == {"ready": True}
    with pytest.raises(NotFoundError):
        server.objects.patch("gadgets.example.com", "w", {"status": {}}, subresource="status")
