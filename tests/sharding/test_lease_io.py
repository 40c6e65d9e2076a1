"""The membership's lease writes over HTTP against the fake API server (``_sharding._lease_io``).

Kubernetes rules relied on: an update carrying a stale ``metadata.resourceVersion`` fails with
409 Conflict, a create of an existing name with 409 AlreadyExists, a delete with a stale
``preconditions.resourceVersion`` with 409, and a write of a missing object with 404
(apiserver registry ``store.go`` ``Update``/``Create``/``Delete``).
"""

from __future__ import annotations

from typing import Any

import anyio

from aioinformer._replicas._handover import Outcome, WriteKind, WriteLease
from aioinformer._replicas._lease_io import carry_out
from aioinformer._replicas._lease_view import GROUP_LABEL, record_from_lease
from aioinformer._sharding._ranges import HashRanges
from aioinformer.testing import FakeApiServer
from tests.support import kube_client

RANGES = HashRanges([(0, 1 << 62), (1 << 63, 1 << 64)])


def _write(kind: WriteKind, name: str = "r1", **fields: Any) -> WriteLease:
    return WriteLease(kind=kind, name=name, issued_at=0.0, **fields)


def _stored(server: FakeApiServer, name: str = "r1") -> dict[str, Any]:
    return server.objects.get("leases", name, namespace="default")


async def test_the_lifecycle_of_a_replica_lease(fake_apiserver: FakeApiServer) -> None:
    options: dict[str, Any] = {"namespace": "default", "group": "g", "lease_duration": 15.0}
    with anyio.fail_after(10):
        async with kube_client(fake_apiserver) as client:
            created = await carry_out(client, _write(WriteKind.CREATE, ready=False), **options)
            assert created.outcome is Outcome.OK and created.rv is not None
            lease = _stored(fake_apiserver)
            assert lease["metadata"]["labels"] == {GROUP_LABEL: "g"}
            assert lease["spec"]["holderIdentity"] == "r1"
            assert lease["spec"]["leaseDurationSeconds"] == 15

            update = _write(WriteKind.UPDATE, serving=RANGES, ready=True, expected_rv=created.rv)
            updated = await carry_out(client, update, **options)
            assert updated.outcome is Outcome.OK and updated.rv is not None
            record = record_from_lease(_stored(fake_apiserver))
            assert (record.serving, record.ready, record.holder) == (RANGES, True, "r1")

            # A stale precondition: 409, with the lease read afresh for the replica.
            stale = await carry_out(client, update, **options)
            assert stale.outcome is Outcome.CONFLICT
            assert stale.current is not None and stale.current.rv == updated.rv
            again = await carry_out(client, _write(WriteKind.CREATE), **options)
            assert again.outcome is Outcome.CONFLICT and again.current is not None

            # Another replica fences it: no holder, nothing served.
            fence = _write(WriteKind.FENCE, expected_rv=updated.rv)
            assert (await carry_out(client, fence, **options)).outcome is Outcome.OK
            fenced = record_from_lease(_stored(fake_apiserver))
            assert not fenced.held and not fenced.serving
            assert (await carry_out(client, fence, **options)).outcome is Outcome.CONFLICT

            delete = _write(WriteKind.DELETE, expected_rv=updated.rv)
            assert (await carry_out(client, delete, **options)).outcome is Outcome.CONFLICT
            delete = _write(WriteKind.DELETE, expected_rv=fenced.rv)
            assert (await carry_out(client, delete, **options)).outcome is Outcome.OK
            gone = await carry_out(client, update, **options)
            assert gone.outcome is Outcome.NOT_FOUND
