"""The ``/scale`` subresource: an ``autoscaling/v1`` ``Scale`` read from and written to the
replicas of a workload.

Built-in kinds (``pkg/registry/apps/deployment/storage/storage.go``, ``…/replicaset/…``,
``…/statefulset/…``, ``pkg/registry/core/replicationcontroller/storage/storage.go``,
``ScaleREST``): a GET answers ``spec.replicas`` (omitted when 0), ``status.replicas`` and
``status.selector``, the label selector as a string (``metav1.LabelSelectorAsSelector`` or,
for a ReplicationController, ``labels.SelectorFromSet``); an update (PUT, or a PATCH of the
old ``Scale``) is validated (``ValidateScale``: 422 ``Scale.autoscaling "web" is invalid``),
its replicas written to the object's ``spec.replicas`` with the ``Scale``'s
``resourceVersion`` as the precondition (none: unconditional), and the object goes through its
own update rules (``generation`` bumped; ``managedFields`` name the subresource ``scale``); the
answer is the new ``Scale``.

Custom resources (apiextensions-apiserver ``registry/customresource/etcd.go``): the CRD's
``specReplicasPath``/``statusReplicasPath``/``labelSelectorPath`` (``.._crd._kind``), through
the resource's strategy (:meth:`._rest_types.ResourceStrategy.scale` and ``scaled``).

A server-side apply on ``/scale`` is served as a merge of the applied ``spec.replicas``
(no managed fields of its own).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo
from .._api._status import bad_request, not_found
from .._apply._writes import patched_object
from .._validation._fielderrors import invalid, invalid_failure
from ._object_rules import check_resource_version, object_key
from ._rest_types import ResourceStrategy, WriteOptions, Written
from ._storage import Storage

__all__ = [
    "ScaleHost",
    "builtin_scale",
    "builtin_scaled",
    "get_scale",
    "label_selector_text",
    "patch_scale",
    "update_scale",
]


class ScaleHost(Protocol):
    """What ``/scale`` needs of the REST layer (:class:`._rest.RestStorage`)."""

    @property
    def storage(self) -> Storage: ...

    def strategy(self, info: ResourceInfo) -> ResourceStrategy: ...

    def locate(
        self, info: ResourceInfo, name: str, namespace: str
    ) -> tuple[str, str, KubeObject]: ...

    def replace(
        self,
        info: ResourceInfo,
        key: str,
        namespace: str,
        old: KubeObject,
        new: dict[str, Any],
        subresource: str,
        options: WriteOptions,
        warnings: list[str],
    ) -> Written: ...


#: The ``Scale`` kind, for patches of it (strategic merge by its schema).
_SCALE = ResourceInfo("autoscaling", "v1", "scale", "Scale", True, subresources=())
_OPERATORS = {"In": "in", "NotIn": "notin"}


def _requirement(expression: Mapping[str, Any]) -> tuple[str, str]:
    key, operator = str(expression.get("key") or ""), expression.get("operator")
    values = sorted(str(v) for v in expression.get("values") or ())
    if operator == "Exists":
        return key, key
    if operator == "DoesNotExist":
        return key, f"!{key}"
    return key, f"{key} {_OPERATORS.get(str(operator), str(operator))} ({','.join(values)})"


def label_selector_text(selector: Any) -> str:
    """``metav1.LabelSelectorAsSelector(s).String()``: requirements sorted by key, values
    sorted; an empty or missing selector is ``""``."""
    if not isinstance(selector, Mapping):
        return ""
    found = [(str(k), f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    found += [_requirement(e) for e in selector.get("matchExpressions") or () if e]
    return ",".join(text for _, text in sorted(found, key=lambda pair: pair[0]))


def _selector(info: ResourceInfo, obj: Mapping[str, Any]) -> str:
    selector = (obj.get("spec") or {}).get("selector")
    if info.group == "" and isinstance(selector, Mapping):
        return ",".join(f"{k}={selector[k]}" for k in sorted(selector))
    return label_selector_text(selector)


def builtin_scale(info: ResourceInfo, obj: Mapping[str, Any]) -> dict[str, Any]:
    """The ``Scale`` of a built-in workload (``ScaleREST.Get``)."""
    meta = obj.get("metadata") or {}
    keys = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
    replicas = (obj.get("spec") or {}).get("replicas") or 0
    scale_status: dict[str, Any] = {"replicas": (obj.get("status") or {}).get("replicas") or 0}
    selector = _selector(info, obj)
    if selector:
        scale_status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in keys if meta.get(k)},
        "spec": {"replicas": replicas} if replicas else {},
        "status": scale_status,
    }


def _current(rest: ScaleHost, info: ResourceInfo, name: str, namespace: str) -> Any:
    if "scale" not in info.subresources:
        raise StatusFailure(404, "NotFound", "the server could not find the requested resource")
    ns = (namespace or "default") if info.namespaced else ""
    found = rest.storage.objects(info).get(object_key(ns, name))
    if found is None:
        raise not_found(info, name)
    return rest.strategy(info).view(info, found)


def get_scale(rest: ScaleHost, info: ResourceInfo, name: str, namespace: str) -> Any:
    """GET ``…/{name}/scale``.

    :raises StatusFailure: 404 (no object, or no scale subresource), 500 (a custom
        resource whose replicas cannot be read).
    """
    found = _current(rest, info, name, namespace)
    return rest.strategy(info).scale(info, found, for_update=False)


def _validate(scale: Mapping[str, Any]) -> int:
    """``ValidateScale``: the replicas to write."""
    spec = scale.get("spec") or {}
    replicas = spec.get("replicas", 0) if isinstance(spec, Mapping) else 0
    name = str((scale.get("metadata") or {}).get("name") or "")
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise bad_request(
            f"json: cannot unmarshal {type(replicas).__name__} into Go struct field "
            "ScaleSpec.spec.replicas of type int32"
        )
    if replicas < 0:
        error = invalid("spec.replicas", replicas, "must be greater than or equal to 0")
        raise invalid_failure("autoscaling", "Scale", name, [error])
    return replicas


def builtin_scaled(old: dict[str, Any], scale: dict[str, Any]) -> dict[str, Any]:
    """A built-in workload after a ``Scale`` update (``scaleUpdatedObjectInfo``): a copy of
    ``old`` with the validated replicas and the Scale's ``resourceVersion`` (none:
    unconditional).

    :raises StatusFailure: 400 for replicas of the wrong type, 422 for negative ones.
    """
    replicas = _validate(scale)
    new = copy.deepcopy(old)
    new.setdefault("spec", {})["replicas"] = replicas
    version_seen = (scale.get("metadata") or {}).get("resourceVersion")
    new["metadata"]["resourceVersion"] = version_seen or ""
    return new


def _write(
    rest: ScaleHost,
    info: ResourceInfo,
    old: dict[str, Any],
    scale: Any,
    name: str,
    namespace: str,
    options: WriteOptions,
) -> Written:
    if not isinstance(scale, dict):
        raise bad_request("the body of the request must be a Scale object")
    in_body = (scale.get("metadata") or {}).get("name")
    if in_body and in_body != name:
        raise bad_request(
            f"the name of the object ({in_body}) does not match the name on the URL ({name})"
        )
    strategy = rest.strategy(info)
    new = strategy.scaled(info, old, scale)
    options.check("UpdateOptions")
    obj, warnings = strategy.decode(info, new, options, operation="update")
    ns, key, current = rest.locate(info, name, namespace)
    check_resource_version(info, current, obj["metadata"].get("resourceVersion"))
    # The main resource's update rules; managed fields are recorded for ``scale``.
    written = rest.replace(info, key, ns, current, obj, "scale", options, warnings)
    return Written(strategy.scale(info, written.obj, for_update=False), written.warnings)


def update_scale(
    rest: ScaleHost,
    info: ResourceInfo,
    body: Any,
    *,
    name: str,
    namespace: str,
    options: WriteOptions,
) -> Written:
    """PUT ``…/{name}/scale``: the ``Scale`` after the write."""
    old = _current(rest, info, name, namespace)
    if not name:
        name = str(((body or {}).get("metadata") or {}).get("name") or "")
    return _write(rest, info, old, body, name, namespace, options)


def patch_scale(
    rest: ScaleHost,
    info: ResourceInfo,
    patch: Any,
    name: str,
    namespace: str,
    patch_type: str,
    options: WriteOptions,
) -> Written:
    """PATCH ``…/{name}/scale``: the patch applies to the current ``Scale``."""
    old = _current(rest, info, name, namespace)
    old_scale = rest.strategy(info).scale(info, old, for_update=True)
    options.check("PatchOptions", patch_type)
    if patch_type == "apply":
        spec = patch.get("spec") if isinstance(patch, dict) else None
        wanted = spec.get("replicas") if isinstance(spec, dict) else None
        patch_type, patch = "merge", {"spec": {"replicas": wanted}} if wanted is not None else {}
        options = replace(options, force=None)
    scale = patched_object(_SCALE, old_scale, patch, patch_type)
    return _write(rest, info, old, scale, name, namespace, options)
