"""One replica's membership in a sharded group: the I/O around :func:`~._membership.plan`.

:class:`Member` runs an informer on the group's Leases (label :data:`~._lease_view.GROUP_LABEL`
in one namespace), folds its events into a :class:`~._lease_view.LeaseView`, and calls
:func:`~._membership.plan` after every lease event, after every write completed, after the
work layer reported drained ranges, and at the plan's ``wake_at``. It carries out the plan's
lease writes one at a time (:func:`~._lease_io.carry_out`, with the resource-version
precondition) and hands the work actions (:class:`~._handover.Start`,
:class:`~._handover.StopTaking`, :class:`~._handover.Resume`, :class:`~._handover.StopAll`) to
the work layer's ``on_action`` callback, synchronously and in order: a ``StopAll`` must take
effect before ``on_action`` returns.

Lease events are applied in resource-version order as the watch delivers them; an event that
does not come after the view (the informer relisted: its replayed objects, a tombstone) makes
the view relist from the informer's cache instead (``LeaseView.listed``, which keeps what it
knew of unchanged records and starts a new horizon).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

from .._clock import Clock
from .._config import WatchConfig
from .._informer._event_stream import Event, EventStream, EventType
from .._informer._informer import SharedIndexInformer
from .._sharding._ranges import HashRanges
from .._wire._transport import KubeListerWatcher
from ._handover import Action, Outcome, ShardTiming, WriteLease
from ._lease_io import LEASES, carry_out
from ._lease_view import GROUP_LABEL, EventKind, LeaseRecord, LeaseView, record_from_lease
from ._membership import Assign, Phase, ReplicaState, drained, leave, plan, written

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = ["Member"]

logger = logging.getLogger(__name__)

_KINDS: dict[EventType, EventKind] = {
    EventType.ADDED: "ADDED",
    EventType.UPDATED: "MODIFIED",
    EventType.DELETED: "DELETED",
}


class Member:
    """Membership of ``identity`` in ``group`` (module docs). Run :meth:`run` in a task.

    :param client: the connection for the lease informer and the lease writes.
    :param group: the group's name (the label value on every member's Lease).
    :param identity: this replica's name: its Lease's name and holder; unique among the
        running replicas of the group.
    :param namespace: where the group's Leases live.
    :param on_action: the work layer: called with each work action, in order.
    :param timing: the lease timing (every replica of a group must use the same).
    :param assign: the assignment (every replica of a group must use the same).
    :param watch: how the lease informer lists and watches.
    :param clock: the local clock.
    """

    def __init__(
        self,
        client: KubeClient,
        *,
        group: str,
        identity: str,
        namespace: str,
        on_action: Callable[[Action], None],
        timing: ShardTiming,
        assign: Assign,
        watch: WatchConfig,
        clock: Clock,
    ) -> None:
        self._client = client
        self.group = group
        self.namespace = namespace
        self._on_action = on_action
        self._timing = timing
        self._assign = assign
        self._clock = clock
        self.state = ReplicaState(identity=identity)
        self.view = LeaseView()
        self.informer = SharedIndexInformer(
            KubeListerWatcher(
                client, LEASES, namespace=namespace, label_selector=f"{GROUP_LABEL}={group}"
            ),
            name=f"leases of {group}",
            watch=watch,
            clock=clock,
        )
        self._poke = anyio.Event()
        self._left = anyio.Event()
        #: Lease writes carried out, and those that did not succeed.
        self.writes = 0
        self.failed_writes = 0

    @property
    def identity(self) -> str:
        return self.state.identity

    def __repr__(self) -> str:
        return f"<Member {self.identity} of {self.group} [{self.state.phase.value}]>"

    # -- what the work layer calls -----------------------------------------------------------

    def report_drained(self, ranges: HashRanges) -> None:
        """No reconcile runs any more on ``ranges`` (which were stopping)."""
        if ranges:
            self.state = drained(self.state, ranges)
            self._poke.set()

    def leave(self) -> None:
        """Leave gracefully: drain, release and delete the lease (:meth:`wait_left`)."""
        self.state = leave(self.state)
        self._poke.set()

    async def wait_left(self) -> None:
        """Wait until the lease is released and deleted (or gone)."""
        await self._left.wait()

    # -- running -----------------------------------------------------------------------------

    async def run(self) -> None:
        """Watch the leases and follow the plan until the replica left (or cancelled)."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.informer.run)
            stream = self.informer.events()
            await self.informer.wait_for_cache_sync()
            self._relist()
            tg.start_soon(self._follow, stream)
            try:
                await self._plan_loop(tg)
            finally:
                tg.cancel_scope.cancel()

    def _records(self) -> list[LeaseRecord]:
        records = []
        for lease in self.informer.indexer.list():
            try:
                records.append(record_from_lease(lease))
            except ValueError:
                logger.warning(
                    "%s: ignoring a malformed lease of group %s", self.identity, self.group
                )
        return records

    def _relist(self) -> None:
        # The newest record's rv, not the informer's (which runs ahead of its cache): events
        # between the two are then applied, not mistaken for a replay.
        records = self._records()
        self.view = LeaseView.listed(
            records,
            rv=max((r.rv for r in records), default=self.view.rv),
            now=self._clock.now(),
            previous=self.view if self.view.rv else None,
        )
        self._poke.set()

    async def _follow(self, stream: EventStream) -> None:
        async for event in stream:
            self._apply(event)

    def _apply(self, event: Event) -> None:
        kind = _KINDS.get(event.type)
        obj = event.object
        if kind is None:
            return
        try:
            record = record_from_lease(obj) if isinstance(obj, dict) else None
        except ValueError:
            record = None
        if record is None:
            self._relist()  # a tombstone: the informer relisted; start from its cache
            return
        if record.rv <= self.view.rv:
            known = self.view.leases.get(record.name)
            if known is None or known.record.rv != record.rv or kind == "DELETED":
                self._relist()  # a relist's replay: start from the cache
            return
        self.view = self.view.applied(kind, record, now=self._clock.now())
        self._poke.set()

    async def _plan_loop(self, tg: anyio.abc.TaskGroup) -> None:
        while True:
            self._poke = anyio.Event()
            now = self._clock.now()
            result = plan(self.state, self.view, now, timing=self._timing, assign=self._assign)
            self.state = result.state
            for action in result.actions:
                if isinstance(action, WriteLease):
                    tg.start_soon(self._write, action)
                else:
                    self._on_action(action)
            if self.state.phase is Phase.LEFT:
                self._left.set()
                return
            wait = None if result.wake_at is None else max(0.0, result.wake_at - now)
            with self._clock.move_on_after(wait):
                await self._poke.wait()

    async def _write(self, write: WriteLease) -> None:
        result = await carry_out(
            self._client,
            write,
            namespace=self.namespace,
            group=self.group,
            lease_duration=self._timing.lease_duration,
        )
        self.writes += 1
        if result.outcome is not Outcome.OK:
            self.failed_writes += 1
            logger.debug("%s: lease write %s: %s", self.identity, write.kind.value, result.outcome)
        self.state = written(self.state, result, self._clock.now())
        self._poke.set()
