"""The Lease object of leader election: its record, its time format, and its REST calls.

A ``coordination.k8s.io/v1`` Lease is read and written as a plain dict through kubernetes_asyncio
(``_preload_content=False``, decoded with orjson), like every other object in aioinformer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

from .errors import TransportError
from .objects import KubeObject
from .transport import error_from_body, transport_error

if TYPE_CHECKING:
    from kubernetes_asyncio.client import ApiClient

__all__ = ["LeaseClient", "LeaseRecord", "int_or_none", "micro_time"]


def micro_time(moment: datetime) -> str:
    """RFC 3339 in UTC with microseconds, as Kubernetes writes ``MicroTime``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def int_or_none(value: object) -> int | None:
    """An int field of a decoded object, or None when absent or not an int."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The leader-election fields of a Lease's ``spec``.

    :ivar holder_identity: who holds the lease (None or ``""``: nobody; ``""`` after a release).
    :ivar lease_duration_seconds: how long the holder's lease lasts after each renewal.
    :ivar acquire_time: when the current holder acquired it.
    :ivar renew_time: when the current holder last renewed it.
    :ivar lease_transitions: how many times the lease changed holders.
    """

    holder_identity: str | None
    lease_duration_seconds: int | None
    acquire_time: datetime | None
    renew_time: datetime | None
    lease_transitions: int

    @classmethod
    def from_lease(cls, lease: Mapping[str, Any]) -> LeaseRecord:
        """Read the record from a Lease object (a dict as decoded from JSON)."""
        spec = lease.get("spec")
        if not isinstance(spec, Mapping):
            spec = {}
        holder = spec.get("holderIdentity")
        return cls(
            holder_identity=holder if isinstance(holder, str) else None,
            lease_duration_seconds=int_or_none(spec.get("leaseDurationSeconds")),
            acquire_time=_parse_time(spec.get("acquireTime")),
            renew_time=_parse_time(spec.get("renewTime")),
            lease_transitions=int_or_none(spec.get("leaseTransitions")) or 0,
        )


class LeaseClient:
    """GET/POST/PUT of one Lease through kubernetes_asyncio, as raw dicts decoded by orjson."""

    def __init__(self, api_client: ApiClient, namespace: str, name: str) -> None:
        from kubernetes_asyncio.client import CoordinationV1Api

        self._api = CoordinationV1Api(api_client)
        self.namespace = namespace
        self.name = name

    async def get(self) -> KubeObject:
        return await self._call(
            self._api.read_namespaced_lease(self.name, self.namespace, _preload_content=False)
        )

    async def create(self, body: KubeObject) -> KubeObject:
        raw: Any = body  # a dict is serialised as is
        return await self._call(
            self._api.create_namespaced_lease(self.namespace, raw, _preload_content=False)
        )

    async def replace(self, body: KubeObject) -> KubeObject:
        raw: Any = body
        return await self._call(
            self._api.replace_namespaced_lease(
                self.name, self.namespace, raw, _preload_content=False
            )
        )

    async def _call(self, request: Awaitable[Any]) -> KubeObject:
        try:
            response = await request
            try:
                body: bytes = await response.read()
            finally:
                response.release()
        except (aiohttp.ClientError, OSError) as exc:
            raise transport_error(exc, "lease request") from exc
        if response.status >= 400:
            raise error_from_body(response, body)
        try:
            decoded = orjson.loads(body)
        except orjson.JSONDecodeError:
            decoded = None
        if not isinstance(decoded, dict):
            raise TransportError(f"lease request: undecodable response (HTTP {response.status})")
        return decoded
