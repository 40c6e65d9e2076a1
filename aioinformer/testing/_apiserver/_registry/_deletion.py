"""DELETE as the real registry runs it: grace periods, finalizers, propagation, namespaces.

The steps of kube-apiserver's ``Store.Delete`` (``k8s.io/apiserver/pkg/registry/generic/
registry/store.go``) and ``rest.BeforeDelete`` (``pkg/registry/rest/delete.go``):

* ``ValidateDeleteOptions``: 422 ``DeleteOptions.meta.k8s.io "" is invalid`` for an unknown
  ``propagationPolicy``, ``orphanDependents`` together with ``propagationPolicy``, a ``dryRun``
  other than ``All``;
* the preconditions (``uid``, ``resourceVersion``): 409 ``Conflict`` on the object's Kind;
* graceful deletion (pods only, ``podStrategy.CheckGracefulDelete``): the period is
  ``gracePeriodSeconds``, else ``spec.terminationGracePeriodSeconds``; 0 when the pod is not
  scheduled (no ``spec.nodeName``) or has finished; negative means 1. The pod gets
  ``deletionTimestamp`` (now + period) and ``deletionGracePeriodSeconds`` and stays until a
  delete with a shorter period (the kubelet's ``gracePeriodSeconds=0``) removes it; a
  second delete may only shorten the period;
* the garbage collector's finalizers (``deletionFinalizersForGarbageCollection``):
  ``propagationPolicy=Orphan`` (or ``orphanDependents=true``) adds ``orphan``, ``Foreground``
  adds ``foregroundDeletion``, ``Background`` removes both;
* an object with finalizers is only marked (``deletionTimestamp``,
  ``deletionGracePeriodSeconds: 0``, ``generation`` + 1 where it has one) and is removed by
  the update that takes its last finalizer (``ShouldDeleteDuringUpdate``);
* a namespace (``pkg/registry/core/namespace/storage``) is marked ``Terminating`` first; it
  goes once the namespace controller emptied it and dropped the ``kubernetes`` finalizer;
* ``dryRun=All``: every check runs and the answer is what would happen; nothing is stored.

What follows a deletion (dependents, namespace contents) is :mod:`._gc`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from .._api import _status as status
from .._api._failure import StatusFailure
from .._api._objects import KubeObject
from .._api._resources import ResourceInfo
from .._validation._fielderrors import FieldError, invalid, invalid_failure, not_supported
from ._history import DELETED, MODIFIED, with_resource_version
from ._object_rules import check_preconditions, now, object_key
from ._podlog import PodLogs
from ._rest_types import Written
from ._storage import Storage

__all__ = [
    "FOREGROUND",
    "ORPHAN",
    "DeleteOptions",
    "DeletionHost",
    "delete_object",
    "deleted_by_update",
    "is_namespace",
]


class DeletionHost(Protocol):
    """What a deletion needs of the REST layer (:class:`._rest.RestStorage`)."""

    @property
    def storage(self) -> Storage: ...

    @property
    def pod_logs(self) -> PodLogs: ...

    def release(self, info: ResourceInfo, obj: Mapping[str, Any]) -> None:
        """Give back what a removed object held (a Service's IPs and ports)."""
        ...

    def committed(
        self,
        info: ResourceInfo,
        obj: KubeObject,
        *,
        gone: bool = False,
        previous: KubeObject | None = None,
    ) -> None:
        """A committed update or removal: the delegates and the controllers hear of it."""
        ...


#: The garbage collector's finalizers (``metav1.FinalizerOrphanDependents`` and
#: ``metav1.FinalizerDeleteDependents``).
ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
_POLICIES = ("Foreground", "Background", "Orphan")


@dataclass(frozen=True, kw_only=True, slots=True)
class DeleteOptions:
    """The options of one DELETE (``meta/v1 DeleteOptions``).

    :param preconditions: ``{"uid": ..., "resourceVersion": ...}`` that must match.
    :param dry_run: the ``dryRun`` values (``("All",)``: change nothing).
    :param grace_period_seconds: ``gracePeriodSeconds`` (None: the object's default).
    :param propagation_policy: ``Orphan``, ``Background`` or ``Foreground`` (None: the
        finalizers the object has, else ``Background``).
    :param orphan_dependents: the deprecated ``orphanDependents``.
    """

    preconditions: Mapping[str, Any] | None = None
    dry_run: tuple[str, ...] = ()
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None

    @property
    def dry(self) -> bool:
        return "All" in self.dry_run

    def check(self) -> None:
        """``ValidateDeleteOptions`` (``apimachinery/pkg/apis/meta/v1/validation``).

        :raises StatusFailure: 422.
        """
        errors: list[FieldError] = []
        policy = self.propagation_policy
        if self.orphan_dependents is not None and policy is not None:
            errors.append(
                invalid(
                    "propagationPolicy",
                    policy,
                    "orphanDependents and deletionPropagation cannot be both set",
                )
            )
        if policy is not None and policy not in _POLICIES:
            errors.append(not_supported("propagationPolicy", policy, [*_POLICIES, "nil"]))
        if any(value != "All" for value in self.dry_run):
            errors.append(not_supported("dryRun", list(self.dry_run), ["All"]))
        if errors:
            raise invalid_failure("meta.k8s.io", "DeleteOptions", "", errors)

    @classmethod
    def parse(cls, body: Any, query: Mapping[str, Sequence[str]]) -> DeleteOptions:
        """The options of a DELETE request: from the ``DeleteOptions`` body when there is
        one, else from the query (as ``handlers/delete.go`` decodes them).

        :raises StatusFailure: 400 for a value of the wrong type.
        """
        if isinstance(body, dict):
            return cls._from_body(body)
        return cls._from_query(query)

    @classmethod
    def _from_body(cls, body: Mapping[str, Any]) -> DeleteOptions:
        dry = body.get("dryRun") or []
        grace = body.get("gracePeriodSeconds")
        orphan = body.get("orphanDependents")
        policy = body.get("propagationPolicy")
        pre = body.get("preconditions")
        if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
            raise status.bad_request(
                "json: cannot unmarshal into Go struct field DeleteOptions.gracePeriodSeconds "
                "of type int64"
            )
        return cls(
            preconditions=pre if isinstance(pre, dict) else None,
            dry_run=tuple(str(v) for v in dry) if isinstance(dry, list) else (str(dry),),
            grace_period_seconds=grace,
            propagation_policy=None if policy is None else str(policy),
            orphan_dependents=orphan if isinstance(orphan, bool) else None,
        )

    @classmethod
    def _from_query(cls, query: Mapping[str, Sequence[str]]) -> DeleteOptions:
        def one(name: str) -> str | None:
            values = query.get(name)
            return values[-1] if values else None

        grace_text, orphan_text = one("gracePeriodSeconds"), one("orphanDependents")
        try:
            grace = None if grace_text is None else int(grace_text)
        except ValueError:
            raise status.bad_request(
                f'strconv.ParseInt: parsing "{grace_text}": invalid syntax'
            ) from None
        orphan = None
        if orphan_text is not None:
            if orphan_text.lower() not in ("true", "false", "1", "0", "t", "f"):
                raise status.bad_request(
                    f'strconv.ParseBool: parsing "{orphan_text}": invalid syntax'
                )
            orphan = orphan_text.lower() in ("true", "1", "t")
        return cls(
            dry_run=tuple(query.get("dryRun") or ()),
            grace_period_seconds=grace,
            propagation_policy=one("propagationPolicy"),
            orphan_dependents=orphan,
        )


def is_namespace(info: ResourceInfo) -> bool:
    return (info.group, info.kind) == ("", "Namespace")


def _is_pod(info: ResourceInfo) -> bool:
    return (info.group, info.kind) == ("", "Pod")


def _timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _shifted(seconds: int) -> str:
    return _timestamp(_parse(now()) + timedelta(seconds=seconds))


def pod_grace_period(pod: Mapping[str, Any], requested: int | None) -> int:
    """``podStrategy.CheckGracefulDelete``: the grace period a pod deletion gets."""
    spec = pod.get("spec") or {}
    period = requested
    if period is None:
        default = spec.get("terminationGracePeriodSeconds")
        period = int(default) if isinstance(default, int) else 0
    if not spec.get("nodeName"):
        period = 0
    if (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
        period = 0
    return 1 if period < 0 else period


def _conflict_on_kind(info: ResourceInfo, name: str, why: str) -> StatusFailure:
    """``BeforeDelete``'s Conflict: its resource is the object's Kind (and group)."""
    resource = f"{info.kind}.{info.group}" if info.group else info.kind
    details: dict[str, Any] = {"name": name}
    if info.group:
        details["group"] = info.group
    details["kind"] = info.kind
    return status.status_error(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {resource} "{name}": {why}',
        details=details,
    )


def _check_preconditions(
    info: ResourceInfo, meta: Mapping[str, Any], pre: Mapping[str, Any]
) -> None:
    name = str(meta.get("name") or "")
    uid, rv = pre.get("uid"), pre.get("resourceVersion")
    if uid and str(uid) != str(meta.get("uid")):
        raise _conflict_on_kind(
            info,
            name,
            f"the UID in the precondition ({uid}) does not match the UID in record "
            f"({meta.get('uid')}). The object might have been deleted and then recreated",
        )
    if rv and str(rv) != str(meta.get("resourceVersion")):
        raise _conflict_on_kind(
            info,
            name,
            f"the ResourceVersion in the precondition ({rv}) does not match the "
            f"ResourceVersion in record ({meta.get('resourceVersion')}). The object might "
            "have been modified",
        )


def _gc_finalizers(finalizers: list[str], options: DeleteOptions) -> list[str]:
    """``deletionFinalizersForGarbageCollection``: the finalizers after the options."""
    policy, orphan_flag = options.propagation_policy, options.orphan_dependents
    if orphan_flag is not None:
        orphan, foreground = orphan_flag, False
    elif policy is not None:
        orphan, foreground = policy == "Orphan", policy == "Foreground"
    else:
        first = next((f for f in finalizers if f in (ORPHAN, FOREGROUND)), None)
        orphan, foreground = first == ORPHAN, first == FOREGROUND
    out = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)]
    if orphan:
        out.append(ORPHAN)
    if foreground:
        out.append(FOREGROUND)
    return finalizers if set(out) == set(finalizers) else out


def deleted_by_update(info: ResourceInfo, new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """``ShouldDeleteDuringUpdate`` (and the namespace's variant): an update that leaves a
    terminating object without finalizers deletes it, unless a grace period runs."""
    meta, old_meta = new.get("metadata") or {}, old.get("metadata") or {}
    if meta.get("finalizers") or not old_meta.get("deletionTimestamp"):
        return False
    if is_namespace(info) and (new.get("spec") or {}).get("finalizers"):
        return False
    return not old_meta.get("deletionGracePeriodSeconds")


def delete_object(
    rest: DeletionHost, info: ResourceInfo, name: str, namespace: str, options: DeleteOptions
) -> Written:
    """DELETE one object (see the module docstring).

    :raises StatusFailure: 404, 409 (a precondition failed), 422 (invalid options).
    """
    options.check()
    ns = (namespace or "default") if info.namespaced else ""
    key = object_key(ns, name)
    old = rest.storage.objects(info).get(key)
    if old is None:
        raise status.not_found(info, name)
    if is_namespace(info):
        return _delete_namespace(rest, info, key, old, options)
    meta = old["metadata"]
    _check_preconditions(info, meta, options.preconditions or {})
    new_meta = dict(meta)
    grace = options.grace_period_seconds
    if grace is not None and grace < 0:
        grace = 1
    graceful = False
    period = 0
    if _is_pod(info):
        current = meta.get("deletionGracePeriodSeconds")
        if meta.get("deletionTimestamp"):
            if current:
                if grace is None or grace >= int(current):
                    return Written(old)  # graceful deletion pending: nothing changes
                start = _parse(meta["deletionTimestamp"]) - timedelta(seconds=int(current))
                new_meta["deletionTimestamp"] = _timestamp(start + timedelta(seconds=grace))
                new_meta["deletionGracePeriodSeconds"] = period = grace
                graceful = True
        else:
            period = pod_grace_period(old, grace)
            new_meta["deletionTimestamp"] = _shifted(period)
            new_meta["deletionGracePeriodSeconds"] = period
            if new_meta.get("generation"):
                new_meta["generation"] = int(new_meta["generation"]) + 1
            graceful = True
    finalizers = list(meta.get("finalizers") or [])
    new_finalizers = _gc_finalizers(finalizers, options)
    if new_finalizers != finalizers:
        new_meta["finalizers"] = new_finalizers
    if not graceful and new_finalizers:
        # markAsDeleting
        if not meta.get("deletionTimestamp") and new_meta.get("generation"):
            new_meta["generation"] = int(new_meta["generation"]) + 1
        if not meta.get("deletionTimestamp"):
            new_meta["deletionTimestamp"] = now()
        new_meta["deletionGracePeriodSeconds"] = 0
    if not graceful and not new_finalizers:
        return remove(rest, info, old, options)  # errDeleteNow: no update before the delete
    if new_meta == meta:
        return Written(old)  # already marked: a no-op update
    marked: KubeObject = {**old, "metadata": new_meta}
    if new_finalizers or period > 0:
        return _store(rest, info, key, ns, marked, old, options)
    if options.dry:
        return Written(marked, gone=True)
    return remove(rest, info, _store(rest, info, key, ns, marked, old, options).obj)


def _store(
    rest: DeletionHost,
    info: ResourceInfo,
    key: str,
    ns: str,
    new: KubeObject,
    old: KubeObject,
    options: DeleteOptions,
) -> Written:
    """Write a marked object (a MODIFIED event), unless a dry run."""
    if options.dry:
        return Written(new)
    new["metadata"]["resourceVersion"] = str(rest.storage.next_resource_version())
    rest.storage.commit(info, MODIFIED, key, ns, new, old)
    rest.committed(info, new)
    return Written(new)


def remove(
    rest: DeletionHost, info: ResourceInfo, obj: KubeObject, options: DeleteOptions | None = None
) -> Written:
    """Take an object out of storage (a DELETED event with a new resource version)."""
    if options is not None and options.dry:
        return Written(obj, gone=True)
    meta = obj["metadata"]
    ns = str(meta.get("namespace") or "") if info.namespaced else ""
    key = object_key(ns, str(meta["name"]))
    stored = rest.storage.objects(info).get(key)
    if stored is None:
        raise status.not_found(info, str(meta["name"]))
    final = with_resource_version(stored, rest.storage.next_resource_version())
    rest.storage.commit(info, DELETED, key, ns, final, stored)
    rest.release(info, final)
    if _is_pod(info):
        rest.pod_logs.forget(ns, str(meta["name"]))
    rest.committed(info, final, gone=True)
    return Written(final, gone=True)


def _delete_namespace(
    rest: DeletionHost, info: ResourceInfo, key: str, old: KubeObject, options: DeleteOptions
) -> Written:
    """The namespace registry's ``Delete``: mark it ``Terminating`` (the namespace controller
    of :mod:`._gc` empties it), or remove it once its ``spec.finalizers`` are gone."""
    meta = old["metadata"]
    check_preconditions(info, meta, options.preconditions or {})
    if meta.get("deletionTimestamp"):
        if (old.get("spec") or {}).get("finalizers"):
            return Written(old)
        return remove(rest, info, old, options)
    finalizers = list(meta.get("finalizers") or [])
    have_orphan, have_foreground = ORPHAN in finalizers, FOREGROUND in finalizers
    policy = options.propagation_policy
    if options.orphan_dependents is not None:
        have_orphan = options.orphan_dependents
    elif policy is not None:
        have_orphan = policy == "Orphan"
    if options.orphan_dependents is not None:
        have_foreground = False
    elif policy is not None:
        have_foreground = policy == "Foreground"
    wanted = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)]
    wanted += [ORPHAN] if have_orphan else []
    wanted += [FOREGROUND] if have_foreground else []
    new_meta = {**meta, "deletionTimestamp": now()}
    if set(wanted) != set(finalizers):
        new_meta["finalizers"] = wanted
    new = {**old, "metadata": new_meta, "status": {**(old.get("status") or {})}}
    new["status"]["phase"] = "Terminating"
    return _store(rest, info, key, "", new, old, options)


def terminating_namespace(info: ResourceInfo, name: str, namespace: str) -> StatusFailure:
    """``NamespaceLifecycle`` admission's 403 for a create in a terminating namespace."""
    why = f"unable to create new content in namespace {namespace} because it is being terminated"
    message = f'{info.group_resource} "{name}" is forbidden: {why}' if name else why
    details: dict[str, Any] = {"name": name} if name else {}
    if info.group:
        details["group"] = info.group
    details["kind"] = info.plural
    details["causes"] = [
        {
            "reason": "NamespaceTerminating",
            "message": f"namespace {namespace} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    return status.status_error(403, "Forbidden", message, details=details)
