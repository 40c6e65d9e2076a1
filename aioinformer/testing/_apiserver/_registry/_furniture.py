"""What a fresh cluster already holds, and the controllers that keep it there.

Ports of the behaviour of the control plane's own writers (kube-apiserver's post-start hooks and
two kube-controller-manager controllers), run by the fake synchronously:

* **system namespaces** (``pkg/controlplane/controller/systemnamespaces``,
  ``createNamespaceIfNeeded``): ``kube-system``, ``kube-public``, ``kube-node-lease`` and
  ``default``, created as ``{"metadata": {"name": …}}`` by ``kube-apiserver``; the namespace
  strategy adds the ``kubernetes.io/metadata.name`` label, the ``kubernetes`` finalizer and
  ``Active``. ``default``, ``kube-system`` and ``kube-public`` may not be deleted
  (``NamespaceLifecycle`` admission: 403 ``this namespace may not be deleted``);
* **PriorityClasses** (``pkg/registry/scheduling/rest/storage_scheduling.go``,
  ``AddSystemPriorityClasses``): ``system-node-critical`` (2000001000) and
  ``system-cluster-critical`` (2000000000);
* **the ``default`` ServiceAccount** of every active namespace (kube-controller-manager's
  ``serviceaccount-controller``, ``pkg/controller/serviceaccount/serviceaccounts_controller.go``
  ``syncNamespace``): created with nothing but its name, and again when deleted while the
  namespace is active;
* **``kube-root-ca.crt``** in every active namespace (kube-controller-manager's
  ``root-ca-cert-publisher``, ``pkg/controller/certificates/rootcacertpublisher/publisher.go``):
  ``data["ca.crt"]`` the cluster's CA (:mod:`.._tls`) and the ``kubernetes.io/description``
  annotation, recreated when deleted and put back when changed;
* **the ``kubernetes`` Service**, its Endpoints and EndpointSlice in ``default``
  (``pkg/controlplane/controller/kubernetesservice/controller.go``,
  ``CreateOrUpdateMasterServiceIfNeeded``, and the endpoint reconciler of
  ``pkg/controlplane/reconcilers``): written once the server listens (they name its address and
  port; a real apiserver's bootstrap controller is a post-start hook too), ClusterIP
  ``10.96.0.1`` port 443 ``https`` to the server's port, and restored when deleted or changed.

Objects the fake does not create: RBAC bootstrap roles, FlowSchemas, the apiserver identity
Lease, ``extension-apiserver-authentication``; nothing a client needs (see the conformance
report).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Protocol

from .._api import _status as status
from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo, ResourceRegistry
from .._validation._scheduling import SYSTEM_PRIORITY_CLASSES
from ._rest_types import Observer, WriteOptions, Written
from ._storage import Storage
from ._strategy_service import ServiceAllocator

__all__ = [
    "IMMORTAL_NAMESPACES",
    "KUBERNETES_SERVICE_IP",
    "ROOT_CA_CONFIGMAP",
    "SYSTEM_NAMESPACES",
    "ClusterFurniture",
    "FurnitureHost",
    "immortal_namespace",
]

#: In the order the system namespaces controller creates them.
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "default")
#: ``NamespaceLifecycle``'s immortal namespaces.
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
_DESCRIPTION_KEY = "kubernetes.io/description"
_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)
#: The first address of the service CIDR (``10.96.0.0/12``, kubeadm's).
KUBERNETES_SERVICE_IP = "10.96.0.1"
_APISERVER = WriteOptions(field_manager="kube-apiserver")
#: The kinds whose writes the controllers react to.
_WATCHED = frozenset(
    {
        ("", "Namespace"),
        ("", "ServiceAccount"),
        ("", "ConfigMap"),
        ("", "Service"),
        ("", "Endpoints"),
        ("discovery.k8s.io", "EndpointSlice"),
    }
)
_CONTROLLERS = WriteOptions(field_manager="kube-controller-manager")


class FurnitureHost(Protocol):
    """What the furniture needs of the REST layer (:class:`._rest.RestStorage`)."""

    @property
    def storage(self) -> Storage: ...

    @property
    def registry(self) -> ResourceRegistry: ...

    @property
    def services(self) -> ServiceAllocator: ...

    def create(
        self, info: ResourceInfo, body: Any, *, namespace: str = "", options: WriteOptions = ...
    ) -> Written: ...

    def update(
        self,
        info: ResourceInfo,
        body: Any,
        *,
        name: str = "",
        namespace: str = "",
        subresource: str = "",
        options: WriteOptions = ...,
    ) -> Written: ...


def immortal_namespace(name: str) -> StatusFailure:
    """The 403 of ``NamespaceLifecycle`` for a DELETE of an immortal namespace."""
    return status.status_error(
        403,
        "Forbidden",
        f'namespaces "{name}" is forbidden: this namespace may not be deleted',
        details={"name": name, "kind": "namespaces"},
    )


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _advertised(host: str) -> str:
    """The address the endpoints name: the host's, loopback for a wildcard or a name."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "127.0.0.1"
    if address.is_unspecified:
        return "::1" if address.version == 6 else "127.0.0.1"
    return str(address)


class ClusterFurniture(Observer):
    """The system objects of one fake server, and the controllers that keep them (a registry
    delegate that only listens, :class:`._rest_types.Observer`).

    :param ca: the PEM of the cluster's certificate authority (``kube-root-ca.crt``).
    """

    def __init__(self, host: FurnitureHost, *, ca: str) -> None:
        self._host = host
        self._ca = ca
        self._endpoint: tuple[str, int] | None = None
        self._queue: list[tuple[ResourceInfo, Mapping[str, Any], bool]] = []
        self._busy = False

    def _info(self, group: str, plural: str) -> ResourceInfo:
        info = self._host.registry.lookup(group, "v1", plural)
        assert info is not None, plural  # every one is in the built-in table
        return info

    def _get(self, group: str, plural: str, namespace: str, name: str) -> KubeObject | None:
        key = f"{namespace}/{name}" if namespace else name
        return self._host.storage.objects(self._info(group, plural)).get(key)

    # -- at start ------------------------------------------------------------------------

    def bootstrap(self) -> None:
        """Create the system namespaces (with their ServiceAccount and CA ConfigMap) and the
        system PriorityClasses."""
        for name in SYSTEM_NAMESPACES:
            self._ensure_namespace(name)
        classes = self._info("scheduling.k8s.io", "priorityclasses")
        for name, (value, description) in SYSTEM_PRIORITY_CLASSES.items():
            if self._get("scheduling.k8s.io", "priorityclasses", "", name) is None:
                body = {"metadata": {"name": name}, "value": value, "description": description}
                self._host.create(classes, body, options=_APISERVER)

    def _ensure_namespace(self, name: str) -> None:
        if self._get("", "namespaces", "", name) is None:
            self._host.create(
                self._info("", "namespaces"), {"metadata": {"name": name}}, options=_APISERVER
            )

    def serve_endpoints(self, host: str, port: int) -> None:
        """The server listens on ``host``:``port``: the ``kubernetes`` Service and its
        endpoints point there."""
        self._endpoint = (_advertised(host), port)
        self._reconcile_service()

    # -- the controllers -----------------------------------------------------------------

    def written(self, info: ResourceInfo, obj: Mapping[str, Any], *, gone: bool) -> None:
        """React to a committed write (queued while a reaction is being written)."""
        if (info.group, info.kind) not in _WATCHED:
            return
        self._queue.append((info, obj, gone))
        if self._busy:
            return
        self._busy = True
        try:
            while self._queue:
                self._react(*self._queue.pop(0))
        finally:
            self._busy = False

    def _react(self, info: ResourceInfo, obj: Mapping[str, Any], gone: bool) -> None:
        meta = _meta(obj)
        name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        kind = info.kind
        try:
            if kind == "Namespace" and not gone:
                self._furnish(name)
            elif (kind, name, gone) == ("ServiceAccount", "default", True) or (
                kind,
                name,
            ) == ("ConfigMap", ROOT_CA_CONFIGMAP):
                self._furnish(namespace)
            elif namespace == "default" and name == "kubernetes" and self._endpoint is not None:
                self._reconcile_service()
        except StatusFailure:
            pass  # the namespace went meanwhile, or a client raced us: as a real controller

    def _active(self, namespace: str) -> bool:
        ns = self._get("", "namespaces", "", namespace)
        if ns is None or _meta(ns).get("deletionTimestamp"):
            return False
        return (ns.get("status") or {}).get("phase") == "Active"

    def _furnish(self, namespace: str) -> None:
        """``syncNamespace`` of both controllers: the ``default`` ServiceAccount and
        ``kube-root-ca.crt`` of an active namespace."""
        if not namespace or not self._active(namespace):
            return
        if self._get("", "serviceaccounts", namespace, "default") is None:
            self._host.create(
                self._info("", "serviceaccounts"),
                {"metadata": {"name": "default"}},
                namespace=namespace,
                options=_CONTROLLERS,
            )
        configmaps = self._info("", "configmaps")
        current = self._get("", "configmaps", namespace, ROOT_CA_CONFIGMAP)
        data = {"ca.crt": self._ca}
        if current is None:
            body = {
                "metadata": {
                    "name": ROOT_CA_CONFIGMAP,
                    "annotations": {_DESCRIPTION_KEY: _DESCRIPTION},
                },
                "data": data,
            }
            self._host.create(configmaps, body, namespace=namespace, options=_CONTROLLERS)
            return
        annotations = dict(_meta(current).get("annotations") or {})
        if current.get("data") == data and annotations.get(_DESCRIPTION_KEY) == _DESCRIPTION:
            return
        annotations[_DESCRIPTION_KEY] = _DESCRIPTION
        meta = {**_meta(current), "annotations": annotations}
        self._host.update(
            configmaps,
            {**current, "metadata": meta, "data": data},
            name=ROOT_CA_CONFIGMAP,
            namespace=namespace,
            options=_CONTROLLERS,
        )

    def _reconcile_service(self) -> None:
        """The ``kubernetes`` Service, Endpoints and EndpointSlice, as the bootstrap
        controller and the endpoint reconciler keep them."""
        if self._endpoint is None or not self._active("default"):
            return
        address, port = self._endpoint
        self._service(port)
        ports = [{"name": "https", "port": port, "protocol": "TCP"}]
        endpoints = {
            "metadata": {
                "name": "kubernetes",
                "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
            },
            "subsets": [{"addresses": [{"ip": address}], "ports": ports}],
        }
        self._put("", "endpoints", endpoints, ("metadata.labels", "subsets"))
        family = "IPv6" if ":" in address else "IPv4"
        endpoint = {"addresses": [address], "conditions": {"ready": True}}
        slice_body = {
            "metadata": {
                "name": "kubernetes",
                "labels": {"kubernetes.io/service-name": "kubernetes"},
            },
            "addressType": family,
            "endpoints": [endpoint],
            "ports": ports,
        }
        self._put(
            "discovery.k8s.io",
            "endpointslices",
            slice_body,
            ("metadata.labels", "addressType", "endpoints", "ports"),
        )

    def _service(self, port: int) -> None:
        """``CreateOrUpdateMasterServiceIfNeeded``: created when missing; its ports and type
        put back when they drift."""
        services = self._info("", "services")
        ports = [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}]
        current = self._get("", "services", "default", "kubernetes")
        if current is None:
            self._host.services.release({"spec": {"clusterIPs": [KUBERNETES_SERVICE_IP]}})
            body = {
                "metadata": {
                    "name": "kubernetes",
                    "labels": {"component": "apiserver", "provider": "kubernetes"},
                },
                "spec": {
                    "type": "ClusterIP",
                    "clusterIP": KUBERNETES_SERVICE_IP,
                    "sessionAffinity": "None",
                    "ports": ports,
                },
            }
            self._host.create(services, body, namespace="default", options=_APISERVER)
            return
        spec = dict(current.get("spec") or {})
        if spec.get("ports") == ports and spec.get("type") == "ClusterIP":
            return
        spec.update(ports=ports, type="ClusterIP")
        self._host.update(
            services,
            {**current, "spec": spec},
            name="kubernetes",
            namespace="default",
            options=_APISERVER,
        )

    def _put(self, group: str, plural: str, body: dict[str, Any], owned: tuple[str, ...]) -> None:
        """Create ``body`` in ``default``, or put back the ``owned`` fields that drifted."""
        info = self._info(group, plural)
        current = self._get(group, plural, "default", "kubernetes")
        if current is None:
            self._host.create(info, body, namespace="default", options=_APISERVER)
            return
        wanted = dict(current)
        for path in owned:
            if path == "metadata.labels":
                labels = {**(_meta(current).get("labels") or {}), **body["metadata"]["labels"]}
                wanted["metadata"] = {**_meta(current), "labels": labels}
            else:
                wanted[path] = body[path]
        if wanted == current:
            return
        self._host.update(info, wanted, name="kubernetes", namespace="default", options=_APISERVER)
