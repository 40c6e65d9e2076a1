"""The Widget operator: what it reconciles, and how it is put together.

:func:`operate` runs it on a :class:`~aioinformer.KubeClient` until cancelled;
:class:`WidgetReconciler` is one reconcile, level-triggered: it reads only the informers'
caches and writes through the client.
"""

from __future__ import annotations

import logging
import os
import socket
from contextlib import AsyncExitStack
from typing import Any, Self

import anyio
import anyio.abc

from aioinformer import (
    Controller,
    EventRecorder,
    Finalizer,
    KubeClient,
    KubeObject,
    LeaderElector,
    Resource,
    Result,
    SharedIndexInformer,
    SharedInformerFactory,
    conditions,
    predicates,
    set_controller_reference,
    split_meta_namespace_key,
)
from aioinformer.errors import ConflictError

__all__ = [
    "FIELD_MANAGER",
    "FINALIZER",
    "LEASE",
    "REPORTING_CONTROLLER",
    "WIDGETS",
    "WidgetOperator",
    "WidgetReconciler",
    "configmap_name",
    "desired_configmap",
    "operate",
]

logger = logging.getLogger("widget-operator")

#: The custom resource (``crd.yaml``); the kind lets ``owner=`` match owner references.
WIDGETS = Resource("example.com", "v1", "widgets", kind="Widget")
#: Held on every Widget until the operator has cleaned up after it.
FINALIZER = "example.com/cleanup"
#: Who owns the fields the operator writes (server-side apply, finalizer and status patches).
FIELD_MANAGER = "widget-operator"
#: ``reportingController`` of the operator's Events.
REPORTING_CONTROLLER = "example.com/widget-operator"
#: The Lease that elects the one replica that reconciles.
LEASE = "widget-operator"


def configmap_name(widget_name: str) -> str:
    """The name of a Widget's ConfigMap."""
    return f"{widget_name}-widget"


def message_of(widget: KubeObject) -> str:
    """A Widget's ``spec.message`` (``""`` when missing)."""
    spec = widget.get("spec") or {}
    return str(spec.get("message") or "")


def desired_configmap(widget: KubeObject) -> dict[str, Any]:
    """The ConfigMap a Widget asks for: ``data.message`` is its ``spec.message``, and the
    Widget is its controller (an owner reference with ``controller: true``, so the garbage
    collector deletes it with the Widget and its events reach the Widget's key)."""
    metadata = widget["metadata"]
    configmap: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": configmap_name(metadata["name"]),
            "namespace": metadata["namespace"],
            "labels": {"app.kubernetes.io/managed-by": FIELD_MANAGER},
        },
        "data": {"message": message_of(widget)},
    }
    set_controller_reference(configmap, owner=widget)
    return configmap


class WidgetReconciler:
    """One reconcile of a Widget's key (``namespace/name``).

    :param client: writes go through it.
    :param widgets: the Widgets' informer (read from its cache).
    :param configmaps: the metadata-only informer of ConfigMaps (their resource versions tell
        whether an apply changed anything).
    :param recorder: Events about the Widgets.
    """

    def __init__(
        self,
        client: KubeClient,
        widgets: SharedIndexInformer,
        configmaps: SharedIndexInformer,
        recorder: EventRecorder,
    ) -> None:
        self._client = client
        self._widgets = widgets
        self._configmaps = configmaps
        self._recorder = recorder
        self.finalizer = Finalizer(client, WIDGETS, FINALIZER, field_manager=FIELD_MANAGER)

    async def reconcile(self, key: str) -> Result | None:
        """Bring one Widget's world to what it asks for (or clean up after it)."""
        namespace, name = split_meta_namespace_key(key)
        widget = self._widgets.lister().get(name, namespace)
        if widget is None:
            return None  # gone: its ConfigMap goes with it (garbage collector)
        try:
            return await self.finalizer.reconcile(widget, apply=self.apply, cleanup=self.cleanup)
        except ConflictError:
            # The cache was behind the server (our own last write not seen yet): try again
            # soon, with the fresh state (the rate limiter's backoff), without an error.
            logger.debug("widget %s changed since it was read; again", key)
            return Result(requeue=True)

    async def apply(self, widget: KubeObject) -> None:
        """The Widget lives (and holds the finalizer): server-side apply its ConfigMap, set
        ``Ready``, record what changed."""
        metadata = widget["metadata"]
        desired = desired_configmap(widget)
        cm_name = desired["metadata"]["name"]
        before = self._configmaps.lister().get(cm_name, metadata["namespace"])
        # force: the operator owns data.message, even if someone edited it meanwhile.
        applied = await self._client.apply(
            "configmaps", desired, field_manager=FIELD_MANAGER, force=True
        )
        changed_configmap = before is None or (
            before["metadata"].get("resourceVersion") != applied["metadata"]["resourceVersion"]
        )
        current = conditions.conditions_of(widget)
        changed_status = conditions.set_condition(
            current,
            type="Ready",
            status=True,
            reason="Reconciled",
            message=f"config map {cm_name} holds the message",
            observed_generation=metadata.get("generation"),
        )
        if changed_status:
            # The resourceVersion as a precondition: 409 if the Widget changed since it was
            # read, and the controller retries with the fresh one.
            await conditions.write_conditions(
                self._client, WIDGETS, widget, current, field_manager=FIELD_MANAGER
            )
        if changed_configmap or changed_status:
            what = "created" if before is None else "updated"
            self._recorder.record(
                widget,
                reason="Reconciled",
                action="Reconcile",
                note=f"config map {cm_name} {what if changed_configmap else 'up to date'}",
            )
            logger.info(
                "widget %s/%s reconciled (generation %s, config map %s)",
                metadata["namespace"],
                metadata["name"],
                metadata.get("generation"),
                what if changed_configmap else "unchanged",
            )

    async def cleanup(self, widget: KubeObject) -> None:
        """The Widget is being deleted: say goodbye (its ConfigMap is the garbage collector's
        once the Widget is gone). The finalizer is removed when this returns."""
        metadata = widget["metadata"]
        self._recorder.record(
            widget,
            reason="Cleanup",
            action="Cleanup",
            note=f"config map {configmap_name(metadata['name'])} goes with the widget",
        )
        # Send it before the finalizer goes (bounded: Events must never hold a Widget).
        with anyio.move_on_after(10):
            await self._recorder.wait_flushed()
        logger.info("widget %s/%s cleaned up", metadata["namespace"], metadata["name"])


def default_identity() -> str:
    """This replica's name in the Lease: ``<hostname>-<pid>``."""
    return f"{socket.gethostname()}-{os.getpid()}"


class WidgetOperator:
    """The operator's parts, wired: ``async with WidgetOperator(client) as operator:`` runs
    them (the informers, the Event recorder, the leader-elected controller) for the block.

    :param client: the connection (the caller closes it).
    :param namespace: watch one namespace only (None: all).
    :param lease_namespace: the namespace of the Lease ``widget-operator``.
    :param identity: this replica's name in the Lease (default: hostname and pid).
    """

    def __init__(
        self,
        client: KubeClient,
        *,
        namespace: str | None = None,
        lease_namespace: str = "default",
        identity: str | None = None,
    ) -> None:
        self.factory = SharedInformerFactory(client, namespace=namespace)
        self.widgets = self.factory.for_resource(WIDGETS)
        # Only the owner references of the ConfigMaps matter here: their metadata is enough.
        self.configmaps = self.factory.for_resource("configmaps", metadata_only=True)
        self.recorder = EventRecorder(client, reporting_controller=REPORTING_CONTROLLER)
        self.reconciler = WidgetReconciler(client, self.widgets, self.configmaps, self.recorder)
        self.elector = LeaderElector(
            client=client,
            lease_name=LEASE,
            namespace=lease_namespace,
            identity=identity or default_identity(),
        )
        self.controller: Controller[str] = Controller(
            name="widgets", reconcile=self.reconciler.reconcile, leader_elector=self.elector
        )
        # Spec changes (and deletions: they bump the generation too), not status writes.
        self.controller.watch(self.widgets, filter=predicates.generation_changed)
        # A ConfigMap changed or deleted behind the operator's back: reconcile its Widget.
        self.controller.watch(self.configmaps, owner=WIDGETS)
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> Self:
        """Start the informers, the recorder and the controller; returns once the caches
        synced and the controller campaigns for the Lease (it reconciles while it leads)."""
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self.factory)
            await stack.enter_async_context(self.recorder)
            await stack.enter_async_context(self.controller)
            self._stack = stack.pop_all()
        logger.info(
            "widget operator running as %s (lease %s/%s)",
            self.elector.identity,
            self.elector.namespace,
            LEASE,
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Stop: the controller (in-flight reconciles finish, the Lease is released), then
        the recorder (recorded Events are sent), then the informers."""
        await self._stack.aclose()


async def operate(
    client: KubeClient,
    *,
    namespace: str | None = None,
    lease_namespace: str = "default",
    identity: str | None = None,
    stop: anyio.Event | None = None,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Run a :class:`WidgetOperator`; ``task_status.started()`` once it runs.

    :param stop: once set, stop gracefully: in-flight reconciles finish, the Lease is
        released, recorded Events are sent. Default None: run until cancelled (a hard stop).
    """
    async with WidgetOperator(
        client, namespace=namespace, lease_namespace=lease_namespace, identity=identity
    ):
        task_status.started()
        if stop is None:
            await anyio.sleep_forever()
        else:
            await stop.wait()
        logger.info("widget operator stopping")
