"""The membership protocol's Lease writes over HTTP: bodies and outcomes.

A replica's Lease (``coordination.k8s.io/v1``, one per replica, name = holder = its identity)
is built with leader election's body builders (:func:`~aioinformer._election._lease.new_lease`,
:func:`~aioinformer._election._lease.released`), labelled with the group
(:data:`~._lease_view.GROUP_LABEL`) and annotated with the ranges it serves and whether it is
ready. Every write but a create carries the resource version it expects (``PUT`` with
``metadata.resourceVersion``, ``DELETE`` with a precondition): a stale one is 409 Conflict.
:func:`carry_out` maps the answer to the :class:`~._handover.WriteResult` that
:func:`~._membership.written` takes; after a 409 on its own lease it reads the lease afresh
(GET, not the cache) so the replica can retry at once or learn it was fenced.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from .._election._lease import new_lease, released
from .._listwatch import Resource
from .._objects import KubeObject
from ..errors import ConflictError, InformerError, NotFoundError
from ._handover import Outcome, WriteKind, WriteLease, WriteResult
from ._lease_view import GROUP_LABEL, READY_ANNOTATION, SERVING_ANNOTATION, record_from_lease

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = ["LEASES", "carry_out", "lease_body"]

LEASES = Resource.parse("coordination.k8s.io/v1/leases")


def lease_body(
    write: WriteLease, *, namespace: str, group: str, lease_duration: float, now: datetime
) -> KubeObject:
    """The Lease a write puts (CREATE, UPDATE, RELEASE, FENCE; not DELETE)."""
    holding = write.kind in (WriteKind.CREATE, WriteKind.UPDATE)
    body = new_lease(
        name=write.name,
        namespace=namespace,
        identity=write.name,
        lease_duration=lease_duration,
        now=now,
    )
    if not holding:
        body = released(body, now=now)
    metadata = body["metadata"]
    metadata["labels"] = {GROUP_LABEL: group}
    metadata["annotations"] = {
        SERVING_ANNOTATION: write.serving.encode() if holding else "",
        READY_ANNOTATION: "true" if holding and write.ready else "false",
    }
    if write.expected_rv is not None:
        metadata["resourceVersion"] = str(write.expected_rv)
    return body


def _rv(obj: KubeObject, fallback: int | None) -> int | None:
    rv = (obj.get("metadata") or {}).get("resourceVersion")
    return int(rv) if isinstance(rv, str) and rv.isdigit() else fallback


async def carry_out(
    client: KubeClient, write: WriteLease, *, namespace: str, group: str, lease_duration: float
) -> WriteResult:
    """Send one lease write; never raises for an API or transport error (FAILED, with the
    error in ``WriteResult.error``)."""
    try:
        if write.kind is WriteKind.DELETE:
            expected = None if write.expected_rv is None else str(write.expected_rv)
            answer = await client.delete(
                LEASES, write.name, namespace=namespace, resource_version=expected
            )
            return WriteResult(Outcome.OK, rv=_rv(answer, write.expected_rv or 0))
        body = lease_body(
            write,
            namespace=namespace,
            group=group,
            lease_duration=lease_duration,
            now=datetime.now(UTC),
        )
        if write.kind is WriteKind.CREATE:
            stored = await client.create(LEASES, body, namespace=namespace)
        else:
            stored = await client.replace(LEASES, body, namespace=namespace)
        return WriteResult(Outcome.OK, rv=_rv(stored, None))
    except ConflictError as exc:
        if write.kind is WriteKind.FENCE:
            return WriteResult(Outcome.CONFLICT, error=exc)
        try:
            current = record_from_lease(await client.get(LEASES, write.name, namespace=namespace))
        except (InformerError, ValueError):
            current = None
        return WriteResult(Outcome.CONFLICT, current=current, error=exc)
    except NotFoundError as exc:
        return WriteResult(Outcome.NOT_FOUND, error=exc)
    except InformerError as exc:
        return WriteResult(Outcome.FAILED, error=exc)
