"""One replica's membership in a sharded group: the I/O around :func:`~._membership.plan`.

:class:`Member` lists and watches the group's Leases (label :data:`~._lease_view.GROUP_LABEL`
in one namespace) with a :class:`~aioinformer.lowlevel.Reflector` whose store folds every
list and watch event into a :class:`~._lease_view.LeaseView`, **in the order the watch
delivered them** (an informer's DeltaFIFO would hand them over grouped by key, which breaks the
order the protocol's checks rely on). It calls :func:`~._membership.plan` after every lease
event, after every write completed, after the work layer reported drained ranges, and at the
plan's ``wake_at``. It carries out the plan's lease writes one at a time
(:func:`~._lease_io.carry_out`, with the resource-version precondition, each bounded by the
renew deadline) and hands the work actions (:class:`~._handover.Start`,
:class:`~._handover.StopTaking`, :class:`~._handover.Resume`, :class:`~._handover.StopAll`) to
the work layer's ``on_action`` callback, synchronously and in order: a ``StopAll`` must take
effect before ``on_action`` returns.

A relist (the first list, or after a watch failure the reflector cannot resume from) makes a
new view (``LeaseView.listed``, which keeps what it knew of unchanged records and starts a new
horizon); so does, defensively, an event that does not come after the view.

**Saying why.** A failed lease write is logged at WARNING with what the API server said (code,
reason, message) the first time and whenever that changes, then at DEBUG until a write succeeds
again (logged at INFO); a 403 also says which verb on ``leases.coordination.k8s.io`` in which
namespace the replica needs. Failures are counted by cause (:attr:`Member.failures`). A list or
watch of the Leases that fails is reported the same way. A replica that has not joined (a ready
member, taking a share) :data:`JOIN_PERIODS` lease durations after it started says so once at
ERROR, with the last failure.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

import anyio

from .._clock import Clock
from .._config import WatchConfig
from .._names import check_label_value, check_namespace, check_subdomain
from .._objects import KubeObject
from .._reflector import Reflector
from .._sharding._ranges import HashRanges
from .._wire._transport import KubeListerWatcher
from ..errors import (
    ApiError,
    ExpiredError,
    ForbiddenError,
    TooManyRequestsError,
    TransportError,
    TransportTimeoutError,
)
from ._handover import Action, Outcome, ShardTiming, WriteKind, WriteLease, WriteResult
from ._lease_io import LEASES, carry_out
from ._lease_view import GROUP_LABEL, EventKind, LeaseRecord, LeaseView, record_from_lease
from ._membership import Assign, Phase, ReplicaState, drained, leave, plan, written

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = ["JOIN_PERIODS", "Member"]

logger = logging.getLogger(__name__)

JOIN_PERIODS: Final = 3
"""A replica that is not a ready member this many lease durations after it started logs one
ERROR (a joiner needs one lease duration of watching, plus a few writes)."""

#: The verbs a replica needs on ``leases.coordination.k8s.io`` in its lease namespace.
NEEDED_VERBS: Final = "get, list, watch, create, update and delete"

_VERBS: Final = {
    WriteKind.CREATE: "create",
    WriteKind.UPDATE: "update",
    WriteKind.RELEASE: "update",
    WriteKind.FENCE: "update",
    WriteKind.DELETE: "delete",
}


def failure_cause(error: BaseException | None) -> str:
    """How a failed lease request is counted: the HTTP code, ``timeout`` or ``transport``."""
    if isinstance(error, ApiError):
        return str(error.code)
    if isinstance(error, TimeoutError):
        return "timeout"
    return "transport"


def describe_failure(
    what: str, error: BaseException | None, *, verb: str, namespace: str, identity: str
) -> str:
    """One line on a failed lease request: what the server said, and for a 403 what the
    replica needs (``verb`` on leases in ``namespace``)."""
    if error is None:
        return f"{what} failed"
    if isinstance(error, ApiError):
        said = f"{error.code} {error.reason}: {error.message}".rstrip(": ")
    else:
        said = f"{type(error).__name__}: {error}".rstrip(": ")
    text = f"{what}: {said}"
    if isinstance(error, ForbiddenError):
        text += (
            f"; replica {identity} needs {verb} on leases.coordination.k8s.io in namespace"
            f" {namespace} (a sharded replica needs {NEEDED_VERBS} there)"
        )
    return text


class _ViewStore:
    """The lease reflector's store: each list and watch event, in order, into the view."""

    def __init__(self, member: Member) -> None:
        self._member = member
        self._records: dict[str, LeaseRecord] = {}

    def _read(self, obj: Any) -> LeaseRecord | None:
        try:
            return record_from_lease(obj) if isinstance(obj, dict) else None
        except ValueError:
            m = self._member
            logger.warning("%s: ignoring a malformed lease of group %s", m.identity, m.group)
            return None

    async def replace(self, objs: Iterable[KubeObject], resource_version: str) -> None:
        records = [r for r in map(self._read, objs) if r is not None]
        self._records = {r.name: r for r in records}
        newest = max((r.rv for r in records), default=0)
        rv = int(resource_version) if resource_version.isdigit() else newest
        self._member._listed(records, max(rv, newest))

    async def add(self, obj: KubeObject) -> None:
        self._event("ADDED", obj)

    async def update(self, obj: KubeObject) -> None:
        self._event("MODIFIED", obj)

    async def delete(self, obj: Any) -> None:
        self._event("DELETED", obj)

    async def resync(self) -> None:
        """Nothing: the view has no resync."""

    def _event(self, kind: EventKind, obj: Any) -> None:
        record = self._read(obj)
        if record is None:
            return
        if kind == "DELETED":
            self._records.pop(record.name, None)
        else:
            self._records[record.name] = record
        m = self._member
        if record.rv <= m.view.rv:
            # Not after the view (a server that reorders, or a replay): start from what the
            # store holds, with a new horizon, as after a list.
            m._listed(list(self._records.values()), max(record.rv, m.view.rv))
            return
        m._applied(kind, record)


class Member:
    """Membership of ``identity`` in ``group`` (module docs). Run :meth:`run` in a task.

    :param client: the connection for the lease reflector and the lease writes.
    :param group: the group's name (the label value on every member's Lease).
    :param identity: this replica's name: its Lease's name and holder; unique among the
        running replicas of the group.
    :param namespace: where the group's Leases live.
    :param on_action: the work layer: called with each work action, in order.
    :param timing: the lease timing (every replica of a group must use the same).
    :param assign: the assignment (every replica of a group must use the same).
    :param watch: how the lease reflector lists and watches.
    :param clock: the local clock.
    :raises InvalidNameError: for an identity that is not a DNS-1123 subdomain (a Lease name),
        a group that is not a label value, or a namespace that is not a DNS-1123 label.
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
        check_subdomain(identity, what="replica identity (its Lease's name)")
        check_label_value(group, what="replica group (a label on every member's Lease)")
        check_namespace(namespace, what="lease namespace")
        self._client = client
        self.group = group
        self.namespace = namespace
        self._on_action = on_action
        self._timing = timing
        self._assign = assign
        self._clock = clock
        self.state = ReplicaState(identity=identity)
        self.view = LeaseView()
        self.reflector = Reflector(
            KubeListerWatcher(
                client, LEASES, namespace=namespace, label_selector=f"{GROUP_LABEL}={group}"
            ),
            _ViewStore(self),
            config=watch,
            name=f"leases of {group}",
            watch_error_handler=self._watch_failed,
            clock=clock,
        )
        self._poke = anyio.Event()
        self._left = anyio.Event()
        self._synced = anyio.Event()
        #: Lease writes carried out, and those that did not succeed.
        self.writes = 0
        self.failed_writes = 0
        #: Failed lease writes by cause (:func:`failure_cause`).
        self.failures: dict[str, int] = {}
        #: The last failure said (a lease write, list or watch), None after a success.
        self.last_error: str | None = None
        self._streak = 0  # failed writes since the last success
        self._said: str | None = None  # the last failure logged at WARNING
        self._listing_failed = False  # the last failure was the lease list or watch
        self._joined_once = False
        self._started_at: float | None = None

    @property
    def identity(self) -> str:
        return self.state.identity

    @property
    def joined(self) -> bool:
        """A ready member of the group: it takes a share of the ring."""
        return self.state.phase is Phase.MEMBER and self.state.ready

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
        self._started_at = self._clock.now()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.reflector.run)
            tg.start_soon(self._watchdog)
            await self._synced.wait()
            try:
                await self._plan_loop(tg)
            finally:
                tg.cancel_scope.cancel()

    # -- the view (called by the reflector's store, in watch order) ---------------------------

    def _listed(self, records: list[LeaseRecord], rv: int) -> None:
        self.view = LeaseView.listed(
            records,
            rv=rv,
            now=self._clock.now(),
            previous=self.view if self.view.rv else None,
        )
        self._synced.set()
        self._poke.set()
        if self._listing_failed:
            self._listing_failed = False
            self.last_error = self._said = None
            logger.info("%s: listed the leases of group %s again", self.identity, self.group)

    def _applied(self, kind: EventKind, record: LeaseRecord) -> None:
        self.view = self.view.applied(kind, record, now=self._clock.now())
        self._poke.set()

    def _watch_failed(self, reflector: Reflector, error: BaseException) -> None:
        # 410 and 429 are the watch protocol at work (the reflector relists or waits).
        if isinstance(error, ExpiredError | TooManyRequestsError):
            return
        if not isinstance(error, ApiError | TransportError):
            return
        what = f"{self.identity}: list/watch of the leases of group {self.group}"
        self._failed(
            describe_failure(
                what, error, verb="list and watch", namespace=self.namespace,
                identity=self.identity,
            ),
            listing=True,
        )  # fmt: skip

    # -- the plan ------------------------------------------------------------------------------

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
            if self.joined and not self._joined_once:
                self._joined_once = True
                started = self._started_at if self._started_at is not None else now
                logger.info(
                    "%s: joined group %s after %.1f s", self.identity, self.group, now - started
                )
            if self.state.phase is Phase.LEFT:
                self._left.set()
                return
            wait = None if result.wake_at is None else max(0.0, result.wake_at - now)
            with self._clock.move_on_after(wait):
                await self._poke.wait()

    async def _watchdog(self) -> None:
        await self._clock.sleep(JOIN_PERIODS * self._timing.lease_duration)
        if self._joined_once or self.state.phase not in (Phase.JOINING, Phase.MEMBER):
            return
        if not self._synced.is_set():
            where = "its view of the group's leases never synced"
        elif self.state.phase is Phase.JOINING:
            where = "it could not create or take its lease"
        else:
            where = "it holds its lease but is not ready"
        logger.error(
            "%s: not a member of group %s after %g s (%d lease durations): %s; last: %s",
            self.identity,
            self.group,
            JOIN_PERIODS * self._timing.lease_duration,
            JOIN_PERIODS,
            where,
            self.last_error or "no error seen",
        )

    # -- lease writes --------------------------------------------------------------------------

    async def _write(self, write: WriteLease) -> None:
        budget = self._timing.renew_deadline
        result: WriteResult | None = None
        with self._clock.move_on_after(budget):
            result = await carry_out(
                self._client,
                write,
                namespace=self.namespace,
                group=self.group,
                lease_duration=self._timing.lease_duration,
            )
        if result is None:  # may have been written: a stale precondition will tell
            timeout = TransportTimeoutError(f"no answer within {budget:g} s")
            result = WriteResult(Outcome.FAILED, error=timeout)
        self.writes += 1
        self._report(write, result)
        self.state = written(self.state, result, self._clock.now())
        self._poke.set()

    def _report(self, write: WriteLease, result: WriteResult) -> None:
        if result.outcome is Outcome.OK:
            if self._streak:
                logger.info(
                    "%s: lease writes succeed again (after %d failed)", self.identity, self._streak
                )
            self._streak, self._said, self.last_error = 0, None, None
            return
        self.failed_writes += 1
        cause = failure_cause(result.error)
        self.failures[cause] = self.failures.get(cause, 0) + 1
        target = "its lease" if write.name == self.identity else f"lease {write.name}"
        what = f"{self.identity}: lease write ({write.kind.value} of {target})"
        if result.outcome is not Outcome.FAILED:
            # 409 and 404 are part of the protocol (a race, a fence, a deletion): the plan
            # acts on them.
            logger.info("%s: %s", what, result.outcome.value)
            return
        self._streak += 1
        self._failed(
            describe_failure(
                what, result.error, verb=_VERBS[write.kind], namespace=self.namespace,
                identity=self.identity,
            )
        )  # fmt: skip

    def _failed(self, text: str, *, listing: bool = False) -> None:
        """Say a failure at WARNING when it is new, at DEBUG while it repeats."""
        self._listing_failed = listing
        self.last_error = text
        if text != self._said:
            self._said = text
            logger.warning("%s", text)
        else:
            logger.debug("%s (again)", text)
