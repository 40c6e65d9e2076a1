"""The built-in Kubernetes resources: one data table, read by the client and the fake server.

Each row says what a real API server's discovery says about a resource (group, version,
plural, kind, singular name, short names, scope, verbs, categories, and the ``status``/``scale``
subresources where it has them), plus three facts of the server's registry that only the fake
API server uses: the field labels its field selectors accept beyond ``metadata.name`` and
``metadata.namespace`` (the kind's field-label conversion in the API server; empty: the kind
has none), whether a DELETE answers with the object rather than a ``Status``, and the
resource whose objects these are when a version of another group serves the same storage
(events.k8s.io/v1 ``events`` are the core/v1 ``events``).

This module is data, not logic: the client (:class:`~aioinformer.Resource` and its kubectl
names) and the fake (:mod:`aioinformer.testing._apiserver._api._resources`) each build their
own view of it. Sources: ``kubectl api-resources`` of a Kubernetes 1.3x cluster; the field
labels from the ``AddFieldLabelConversionsFor*`` functions of ``k8s.io/kubernetes``
(``pkg/apis/core/v1/conversion.go``, ``pkg/apis/apps/v1/conversion.go``,
``pkg/apis/batch/v1/conversion.go``, ``pkg/apis/events/v1/conversion.go``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ALL_VERBS", "BUILTIN_RESOURCES", "BuiltinResource"]

#: The verbs of almost every resource, in the order discovery lists them.
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True, slots=True)
class BuiltinResource:
    """One row of the table (see the module docstring)."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = ()
    selectable_fields: tuple[str, ...] = ()
    delete_returns_object: bool = False
    categories: tuple[str, ...] = ()
    #: Older versions also served, each converted to and from ``version`` (the storage
    #: version): autoscaling/v1 HorizontalPodAutoscalers.
    also_served: tuple[str, ...] = ()
    #: ``version/plural`` or ``group/version/plural`` of the resource whose stored objects
    #: these are (read and written through a conversion); ``""``: their own.
    stored_as: str = ""

    @property
    def api_version(self) -> str:
        """``"v1"`` for the core group, else ``"group/version"``."""
        return f"{self.group}/{self.version}" if self.group else self.version


_STATUS = ("status",)
_SCALABLE = ("scale", "status")
#: ``kubectl get all`` (the registries' ``Categories()``).
_ALL = ("all",)
#: The admission configuration kinds and CRDs (``kubectl get api-extensions``).
_EXTENSIONS = ("api-extensions",)
#: The review resources of authorization.k8s.io and authentication.k8s.io: create only,
#: nothing stored (their REST storage is a ``rest.Creater`` alone).
_CREATE = ("create",)

_POD_FIELDS = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)

_EVENTS_V1_FIELDS = (
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reason",
    "reportingController",
    "source",
    "type",
)

_R = BuiltinResource

#: Every built-in resource this package knows by name, core group first.
BUILTIN_RESOURCES: tuple[BuiltinResource, ...] = (
    _R(
        "",
        "v1",
        "pods",
        "Pod",
        True,
        "pod",
        ("po",),
        subresources=_STATUS,
        selectable_fields=_POD_FIELDS,
        delete_returns_object=True,
        categories=_ALL,
    ),
    _R(
        "",
        "v1",
        "services",
        "Service",
        True,
        "service",
        ("svc",),
        subresources=_STATUS,
        selectable_fields=("spec.clusterIP", "spec.type"),
        delete_returns_object=True,
        categories=_ALL,
    ),
    _R("", "v1", "endpoints", "Endpoints", True, "endpoints", ("ep",)),
    _R("", "v1", "configmaps", "ConfigMap", True, "configmap", ("cm",)),
    _R("", "v1", "secrets", "Secret", True, "secret", selectable_fields=("type",)),
    _R("", "v1", "events", "Event", True, "event", ("ev",), selectable_fields=_EVENT_FIELDS),
    # events.k8s.io/v1: the core/v1 Events under their new names (one storage, two views;
    # the field labels of ``AddFieldLabelConversionsForEvent``).
    _R(
        "events.k8s.io",
        "v1",
        "events",
        "Event",
        True,
        "event",
        ("ev",),
        selectable_fields=_EVENTS_V1_FIELDS,
        stored_as="v1/events",
    ),
    _R("", "v1", "serviceaccounts", "ServiceAccount", True, "serviceaccount", ("sa",)),
    _R(
        "",
        "v1",
        "replicationcontrollers",
        "ReplicationController",
        True,
        "replicationcontroller",
        ("rc",),
        subresources=_SCALABLE,
        selectable_fields=("status.replicas",),
        categories=_ALL,
    ),
    _R(
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        True,
        "persistentvolumeclaim",
        ("pvc",),
        subresources=_STATUS,
    ),
    _R(
        "",
        "v1",
        "namespaces",
        "Namespace",
        False,
        "namespace",
        ("ns",),
        verbs=tuple(v for v in ALL_VERBS if v != "deletecollection"),
        subresources=_STATUS,
        selectable_fields=("status.phase",),
    ),
    _R(
        "",
        "v1",
        "nodes",
        "Node",
        False,
        "node",
        ("no",),
        subresources=_STATUS,
        selectable_fields=("spec.unschedulable",),
    ),
    _R(
        "",
        "v1",
        "persistentvolumes",
        "PersistentVolume",
        False,
        "persistentvolume",
        ("pv",),
        subresources=_STATUS,
    ),
    _R("", "v1", "limitranges", "LimitRange", True, "limitrange", ("limits",)),
    _R(
        "",
        "v1",
        "resourcequotas",
        "ResourceQuota",
        True,
        "resourcequota",
        ("quota",),
        subresources=_STATUS,
    ),
    _R(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        True,
        "deployment",
        ("deploy",),
        subresources=_SCALABLE,
        categories=_ALL,
    ),
    _R(
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        True,
        "replicaset",
        ("rs",),
        subresources=_SCALABLE,
        selectable_fields=("status.replicas",),
        categories=_ALL,
    ),
    _R(
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        True,
        "statefulset",
        ("sts",),
        subresources=_SCALABLE,
        categories=_ALL,
    ),
    _R(
        "apps",
        "v1",
        "daemonsets",
        "DaemonSet",
        True,
        "daemonset",
        ("ds",),
        subresources=_STATUS,
        categories=_ALL,
    ),
    _R(
        "batch",
        "v1",
        "jobs",
        "Job",
        True,
        "job",
        subresources=_STATUS,
        selectable_fields=("status.successful",),
        categories=_ALL,
    ),
    _R(
        "batch",
        "v1",
        "cronjobs",
        "CronJob",
        True,
        "cronjob",
        ("cj",),
        subresources=_STATUS,
        categories=_ALL,
    ),
    _R("coordination.k8s.io", "v1", "leases", "Lease", True, "lease"),
    _R("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True, "endpointslice"),
    _R(
        "networking.k8s.io",
        "v1",
        "ingresses",
        "Ingress",
        True,
        "ingress",
        ("ing",),
        subresources=_STATUS,
    ),
    _R("rbac.authorization.k8s.io", "v1", "roles", "Role", True, "role"),
    _R("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True, "rolebinding"),
    _R("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, "clusterrole"),
    _R(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        False,
        "clusterrolebinding",
    ),
    _R(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        True,
        "horizontalpodautoscaler",
        ("hpa",),
        subresources=_STATUS,
        categories=_ALL,
        also_served=("v1",),
    ),
    _R(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        True,
        "poddisruptionbudget",
        ("pdb",),
        subresources=_STATUS,
    ),
    _R(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        False,
        "priorityclass",
        ("pc",),
    ),
    _R("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, "storageclass", ("sc",)),
    _R("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, "csidriver"),
    _R("storage.k8s.io", "v1", "csinodes", "CSINode", False, "csinode"),
    _R(
        "storage.k8s.io",
        "v1",
        "csistoragecapacities",
        "CSIStorageCapacity",
        True,
        "csistoragecapacity",
    ),
    _R(
        "storage.k8s.io",
        "v1",
        "volumeattachments",
        "VolumeAttachment",
        False,
        "volumeattachment",
        subresources=_STATUS,
    ),
    _R(
        "storage.k8s.io",
        "v1",
        "volumeattributesclasses",
        "VolumeAttributesClass",
        False,
        "volumeattributesclass",
        ("vac",),
    ),
    _R(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        False,
        "mutatingwebhookconfiguration",
        categories=_EXTENSIONS,
    ),
    _R(
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        False,
        "validatingwebhookconfiguration",
        categories=_EXTENSIONS,
    ),
    _R(
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicies",
        "ValidatingAdmissionPolicy",
        False,
        "validatingadmissionpolicy",
        subresources=_STATUS,
        categories=_EXTENSIONS,
    ),
    _R(
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicybindings",
        "ValidatingAdmissionPolicyBinding",
        False,
        "validatingadmissionpolicybinding",
        categories=_EXTENSIONS,
    ),
    _R(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        False,
        "selfsubjectaccessreview",
        verbs=_CREATE,
    ),
    _R(
        "authorization.k8s.io",
        "v1",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        False,
        "selfsubjectrulesreview",
        verbs=_CREATE,
    ),
    _R(
        "authorization.k8s.io",
        "v1",
        "subjectaccessreviews",
        "SubjectAccessReview",
        False,
        "subjectaccessreview",
        verbs=_CREATE,
    ),
    _R(
        "authorization.k8s.io",
        "v1",
        "localsubjectaccessreviews",
        "LocalSubjectAccessReview",
        True,
        "localsubjectaccessreview",
        verbs=_CREATE,
    ),
    _R(
        "authentication.k8s.io",
        "v1",
        "selfsubjectreviews",
        "SelfSubjectReview",
        False,
        "selfsubjectreview",
        verbs=_CREATE,
    ),
    _R(
        "authentication.k8s.io",
        "v1",
        "tokenreviews",
        "TokenReview",
        False,
        "tokenreview",
        verbs=_CREATE,
    ),
    _R(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        "customresourcedefinition",
        ("crd", "crds"),
        subresources=_STATUS,
        categories=_EXTENSIONS,
    ),
)
