"""The Widget operator of ``examples/operator`` (issue 22), in process against the fake API
server: its CRD (``crd.yaml``) is installed as a user would, and every behaviour the issue
lists is awaited through the server's watches (no sleeps).

The same operator as a process against ``aioinformer fake-apiserver``, driven by kubectl, is
``tests/test_operator_acceptance.py``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
import yaml

import aioinformer
from aioinformer import KubeClient, KubeObject, SharedIndexInformer, SharedInformerFactory
from aioinformer.testing import FakeApiServer, load_manifests
from examples.operator.command import build_parser
from examples.operator.widgets import (
    FINALIZER,
    LEASE,
    REPORTING_CONTROLLER,
    WIDGETS,
    WidgetOperator,
    desired_configmap,
)

from ._examples import EXAMPLES

CRD = EXAMPLES / "operator" / "crd.yaml"
V1_EVENTS = "events.events.k8s.io"


def widget(name: str, message: str) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"message": message},
    }


class Watched:
    """The test's own view of the server (its own informers), to await what the operator
    does: each wait re-checks its condition on every event of the informer it reads."""

    def __init__(self, factory: SharedInformerFactory) -> None:
        self.widgets = factory.for_resource(WIDGETS)
        self.configmaps = factory.for_resource("configmaps")
        self.events = factory.for_resource(V1_EVENTS)

    @staticmethod
    async def until(informer: SharedIndexInformer, holds: Callable[[], Any]) -> Any:
        """``holds()`` once it is true, re-checked on each of the informer's events."""
        found = holds()
        if found:
            return found
        with anyio.fail_after(15):
            async for _ in informer.events():  # the cache first, then every change
                found = holds()
                if found:
                    return found
        raise AssertionError("the informer stopped")

    def widget(self, name: str) -> KubeObject | None:
        return self.widgets.lister().get(name, "default")

    def configmap(self, name: str) -> KubeObject | None:
        return self.configmaps.lister().get(f"{name}-widget", "default")

    def event(self, reason: str, name: str) -> KubeObject | None:
        for event in self.events.lister().list():
            if event["reason"] == reason and event["regarding"]["name"] == name:
                return event
        return None

    async def ready(self, name: str, generation: int) -> KubeObject:
        """Until the Widget holds the finalizer and reports Ready at ``generation``."""

        def check() -> KubeObject | None:
            found = self.widget(name)
            if found is None or found["metadata"].get("generation") != generation:
                return None
            ready = aioinformer.conditions.find_condition(found, "Ready")
            if ready is None or ready.get("observedGeneration") != generation:
                return None
            return found

        found: KubeObject = await self.until(self.widgets, check)
        return found


@asynccontextmanager
async def watched(client: KubeClient) -> AsyncIterator[Watched]:
    factory = SharedInformerFactory(client)
    view = Watched(factory)
    async with factory:
        with anyio.fail_after(15):
            await factory.wait_for_cache_sync()
        yield view


@pytest.fixture
async def client(fake_apiserver: FakeApiServer) -> AsyncIterator[KubeClient]:
    await load_manifests(fake_apiserver, CRD)
    async with aioinformer.connect(server=fake_apiserver.url) as connected:
        yield connected


def test_scripts_run_from_examples_still_import_the_standard_operator() -> None:
    """``examples/operator`` has no ``__init__.py`` (a namespace package), so a script run
    from ``examples/`` (``python examples/controller.py`` puts that directory first on
    ``sys.path``) imports the standard library's ``operator``, not the example."""
    check = "import operator, sys; assert operator.add(1, 2) == 3, operator; print('ok')"
    done = subprocess.run(
        [sys.executable, "-c", check], cwd=EXAMPLES, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr
    assert not (EXAMPLES / "operator" / "__init__.py").exists()


def test_the_crd_is_the_issue_s() -> None:
    """``widgets.example.com``: v1, namespaced, kind Widget, ``spec.message`` a string, the
    status subresource."""
    crd = yaml.safe_load(CRD.read_text())
    spec = crd["spec"]
    assert (crd["metadata"]["name"], spec["group"], spec["scope"]) == (
        "widgets.example.com", "example.com", "Namespaced",
    )  # fmt: skip
    assert (spec["names"]["kind"], spec["names"]["plural"]) == ("Widget", "widgets")
    [version] = spec["versions"]
    assert (version["name"], version["subresources"]) == ("v1", {"status": {}})
    schema = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert schema["properties"]["message"]["type"] == "string"


def test_the_command_line_defaults() -> None:
    """``python -m examples.operator`` watches every namespace and takes the context's
    namespace for its Lease unless told otherwise."""
    args = build_parser().parse_args([])
    assert (args.namespace, args.lease_namespace, args.identity) == (None, None, None)
    args = build_parser().parse_args(["--namespace", "team", "--lease-namespace", "ops"])
    assert (args.namespace, args.lease_namespace) == ("team", "ops")


def test_the_desired_config_map_is_controlled_by_its_widget() -> None:
    """The ConfigMap ``<widget>-widget`` holds ``spec.message`` and names the Widget as its
    controller (``controller: true``, ``blockOwnerDeletion: true``)."""
    owner = widget("hello", "hi")
    owner["metadata"]["uid"] = "u-1"
    configmap = desired_configmap(owner)
    assert configmap["metadata"]["name"] == "hello-widget"
    assert configmap["data"] == {"message": "hi"}
    assert configmap["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "name": "hello",
            "uid": "u-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


async def test_the_operator_does_what_the_issue_lists(
    fake_apiserver: FakeApiServer, client: KubeClient
) -> None:
    """Finalizer, owned ConfigMap (put back when deleted, updated when ``spec.message``
    changes), ``Ready=True`` with the Widget's generation, ``Reconciled`` and ``Cleanup``
    Events (events.k8s.io/v1), and the Widget gone after its cleanup; it holds the Lease while
    it runs and releases it when it stops."""
    async with watched(client) as view, WidgetOperator(client) as operator:
        await client.create(WIDGETS, widget("hello", "hi"))
        hello = await view.ready("hello", 1)
        assert hello["metadata"]["finalizers"] == [FINALIZER]
        ready = aioinformer.conditions.find_condition(hello, "Ready")
        assert ready is not None
        assert (ready["status"], ready["reason"]) == ("True", "Reconciled")
        configmap = await view.until(view.configmaps, lambda: view.configmap("hello"))
        assert configmap["data"] == {"message": "hi"}
        [reference] = configmap["metadata"]["ownerReferences"]
        assert (reference["kind"], reference["name"], reference["uid"]) == (
            "Widget", "hello", hello["metadata"]["uid"],
        )  # fmt: skip
        assert reference["controller"] is True
        event = await view.until(view.events, lambda: view.event("Reconciled", "hello"))
        assert (event["type"], event["reportingController"]) == ("Normal", REPORTING_CONTROLLER)
        assert event["regarding"]["kind"] == "Widget"
        lease = await client.get("leases", LEASE, namespace="default")
        assert lease["spec"]["holderIdentity"] == operator.elector.identity

        # A ConfigMap deleted behind the operator's back comes back (a new one).
        await client.delete("configmaps", "hello-widget", namespace="default")
        old_uid = configmap["metadata"]["uid"]
        back = await view.until(
            view.configmaps,
            lambda: (cm := view.configmap("hello")) and cm["metadata"]["uid"] != old_uid and cm,
        )
        assert back["data"] == {"message": "hi"}

        # spec.message changes: the ConfigMap follows, Ready observes generation 2.
        await client.patch(WIDGETS, "hello", {"spec": {"message": "bye"}}, namespace="default")
        await view.ready("hello", 2)
        updated = await view.until(
            view.configmaps,
            lambda: (cm := view.configmap("hello")) and cm["data"] == {"message": "bye"} and cm,
        )
        assert updated["metadata"]["uid"] == back["metadata"]["uid"]
        assert operator.controller.statistics().errors == 0

        # Deletion: a Cleanup Event, then the finalizer goes and so does the Widget.
        await client.delete(WIDGETS, "hello", namespace="default")
        await view.until(view.widgets, lambda: view.widget("hello") is None)
        cleanup = await view.until(view.events, lambda: view.event("Cleanup", "hello"))
        assert cleanup["type"] == "Normal"
        await view.until(view.configmaps, lambda: view.configmap("hello") is None)
    # Stopping released the Lease.
    lease = await client.get("leases", LEASE, namespace="default")
    assert not lease["spec"].get("holderIdentity")


async def test_status_only_changes_are_not_queued_spec_changes_are(
    fake_apiserver: FakeApiServer, client: KubeClient
) -> None:
    """The generation predicate: a Widget's status (or metadata) changing does not queue its
    key, a ``spec`` change (a new ``metadata.generation``) does. Watched while another
    replica holds the Lease, so nothing takes keys off the queue (a follower's informers and
    queue keep running); the test takes the initial key itself."""
    other = {
        "metadata": {"name": LEASE},
        "spec": {"holderIdentity": "another-replica", "leaseDurationSeconds": 3600,
                 "renewTime": _now(), "acquireTime": _now()},
    }  # fmt: skip
    await client.create("leases", other, namespace="default")
    created = await client.create(WIDGETS, widget("quiet", "hi"))
    async with WidgetOperator(client, identity="follower") as operator:
        queue = operator.controller.queue
        with anyio.fail_after(15):
            assert await queue.get() == "default/quiet"  # the initial list's add
        queue.done("default/quiet")
        assert not operator.controller.leading

        async def seen(version: str) -> None:
            """Until the operator's informer delivered this version (and its handlers ran)."""
            await Watched.until(
                operator.widgets,
                lambda: (
                    (w := operator.widgets.lister().get("quiet", "default"))
                    and w["metadata"]["resourceVersion"] == version
                ),
            )
            await anyio.wait_all_tasks_blocked()

        status = {"status": {"conditions": [_other()]}}
        patched = await client.patch_status(WIDGETS, "quiet", status, namespace="default")
        await seen(patched["metadata"]["resourceVersion"])
        labelled = await client.patch(
            WIDGETS, "quiet", {"metadata": {"labels": {"a": "b"}}}, namespace="default"
        )
        await seen(labelled["metadata"]["resourceVersion"])
        assert len(queue) == 0
        assert labelled["metadata"]["generation"] == created["metadata"]["generation"]
        changed = await client.patch(
            WIDGETS, "quiet", {"spec": {"message": "bye"}}, namespace="default"
        )
        await seen(changed["metadata"]["resourceVersion"])
        assert len(queue) == 1


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _other() -> dict[str, Any]:
    return {
        "type": "Audited",
        "status": "True",
        "reason": "Checked",
        "message": "",
        "lastTransitionTime": "2026-07-01T10:00:00Z",
    }
