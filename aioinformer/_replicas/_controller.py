"""A controller that shares its work with the other replicas of its group (issue 14).

Each replica of a :class:`ShardedController` holds its own Lease, labelled with the group,
and watches the group's Leases; together they split the hash space of the objects' UIDs
(a consistent-hash ring over the ready members) and hand ranges over without two replicas
ever reconciling one object at once (the protocol: :mod:`aioinformer._replicas._membership`;
its I/O: :mod:`aioinformer._replicas._member`). Leader election remains for controllers that
must be singletons.

A replica's informer caches only the ranges it serves (active + draining) with a KEP-5866 shard
selector (server-side on servers that filter, client-side everywhere:
:mod:`aioinformer._sharding._informer_filter`); when they change it lists and watches again with
the new selector, and the objects whose range left reach ``on_range_exit`` as
:class:`~aioinformer.RangeExit` values, not as deletes. Its queue only
takes keys of the ranges it takes work for, and a key handed out for any other range is
dropped unreconciled (:mod:`aioinformer._replicas._work`). When a range moves away the replica
stops taking work for it, lets the reconciles running on it finish, then releases it on its
Lease; another replica starts it only after that, or after fencing the Lease of a replica that
stopped renewing (it stopped every reconcile before its Lease could look expired).

Fenced writes: :attr:`ShardedController.client` is a fenced view of the client
(:mod:`aioinformer._control._fence`). A reconcile's write is sent only if, at the write and on
the clock, the replica is a member, its lease was renewed less than ``renew_deadline`` ago (the
lease duration minus a safety margin), its lease was not taken over, the key's range is still
served here, and the replica has not stopped everything since the reconcile began
(:func:`~aioinformer._replicas._membership.write_refusal`). Otherwise the write raises
:class:`~aioinformer.errors.FencedWriteError`, is counted (``fenced_writes``) and the
reconcile is not retried here. The check runs at the write itself, so a replica that was paused
(SIGSTOP, a frozen VM) or cut off from the API server refuses the writes of reconciles that
resume before its membership loop does.

Lifecycle as :class:`~aioinformer.Controller`: ``async with``, ``run(task_status=...)``
(ready once the workers run), graceful :meth:`~ShardedController.aclose`: the replica leaves the
group (drains, releases and deletes its Lease, so others take over at once), then its workers stop.
A hard stop (cancellation) releases nothing: the others take over once its Lease expired.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from .._clock import SYSTEM_CLOCK, Clock
from .._config import WatchConfig
from .._control._fence import Ticket, WriteFence, run_fenced
from .._control._workers import Reconciler, Result, WorkerPool
from .._informer._informer import SharedIndexInformer
from .._lifecycle import DEFAULT_STOP_TIMEOUT, Service, State, stop_timeout_argument
from .._listwatch import Resource, as_resource
from .._names import check_label_value, check_namespace, check_subdomain
from .._sharding._ranges import EMPTY, HashRanges
from .._sharding._selector import FIELD_UID, ShardField
from .._wire._transport import KubeListerWatcher
from ..workqueue._metrics import MetricsProvider
from ..workqueue._rate_limiting import RateLimitingQueue
from ._handover import Action, RangeExit, ShardTiming
from ._member import Member
from ._membership import write_refusal
from ._ring import DEFAULT_VNODES, ring
from ._work import ShardWork

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = ["ShardedController", "ShardedControllerStatistics"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True, slots=True)
class ShardedControllerStatistics:
    """A snapshot of a sharded controller, read with :meth:`ShardedController.statistics`.

    Also exposed as Prometheus metrics by
    :class:`~aioinformer.metrics.ShardedControllerCollector`.

    :ivar state: where the controller is in its life.
    :ivar identity: this replica's name in the group.
    :ivar phase: ``joining``, ``member``, ``leaving``, ``released`` or ``left``.
    :ivar active: the hash ranges it takes work for, as ``[start, end)`` pairs.
    :ivar draining: ranges it stopped taking work for; running reconciles finish there.
    :ivar share: the fraction of the hash space it serves (active + draining).
    :ivar hand_overs_in: ranges started (after their owner released them, or was fenced).
    :ivar hand_overs_out: ranges drained and released.
    :ivar stop_alls: times it stopped everything at once (its lease may have been lost).
    :ivar range_exits: objects that left its cache because their range moved.
    :ivar cache_restarts: lists and watches started again for new ranges.
    :ivar objects: objects in its cache now.
    :ivar filtering: who applies its shard selector (``server-side``, ``client-side``), None
        while it serves nothing.
    :ivar reconciles: reconcile calls that returned or raised (skipped keys included).
    :ivar errors: reconcile calls that raised.
    :ivar skipped: keys handed out for a range it does not take: dropped unreconciled.
    :ivar in_flight: reconciles running now.
    :ivar queue_depth: keys waiting in the queue now.
    :ivar lease_writes: lease writes carried out (``failed_lease_writes`` did not succeed).
    :ivar lease_write_failures: the failed lease writes by cause: the HTTP code (``"403"``,
        ``"409"``, ...), ``"timeout"`` or ``"transport"``.
    :ivar last_lease_error: what the last failed lease write (or lease list/watch) said, with
        what the replica needs when it was refused (None once a write succeeded again).
    :ivar joined: whether the replica is a ready member of its group (it takes a share).
    :ivar fenced_writes: writes :attr:`ShardedController.client` refused: the replica could not
        prove it owned the key any more (those reconciles were not retried here).
    """

    state: State
    identity: str
    phase: str
    active: tuple[tuple[int, int], ...]
    draining: tuple[tuple[int, int], ...]
    share: float
    hand_overs_in: int
    hand_overs_out: int
    stop_alls: int
    range_exits: int
    cache_restarts: int
    objects: int
    filtering: str | None
    reconciles: int
    errors: int
    skipped: int
    in_flight: int
    queue_depth: int
    lease_writes: int
    failed_lease_writes: int
    lease_write_failures: Mapping[str, int]
    last_lease_error: str | None
    joined: bool
    fenced_writes: int


def _ring_share(members: frozenset[str], member: str, *, vnodes: int) -> HashRanges:
    return ring(members, vnodes=vnodes).share(member)


class _Offer:
    """The informer handler: every object delivered is offered to the work layer."""

    def __init__(self, work: ShardWork) -> None:
        self._work = work

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self._work.offer(obj)

    def on_update(self, old: Any, new: Any) -> None:
        self._work.offer(new)

    def on_delete(self, obj: Any) -> None:
        self._work.offer(obj)


class ShardedController(Service):
    """Reconciles the objects of ``resource`` in this replica's share of the group (module
    docs). Keys are ``namespace/name`` strings (``name`` for cluster-scoped objects).

    :param name: the controller's name (logs, queue metrics).
    :param reconcile: ``async def reconcile(key) -> Result | None``.
    :param client: the connection for the objects and the Leases.
    :param resource: the resource reconciled (e.g. ``"v1/configmaps"``).
    :param group: the replica group: every replica of this controller uses the same. A label
        value (at most 63 letters, digits, ``-``, ``_``, ``.``).
    :param identity: this replica's name, unique among the running replicas (e.g. the pod
        name): the name of its Lease, so a DNS-1123 subdomain (lowercase).
    :param lease_namespace: where the group's Leases live. Default ``"default"``.
    :param namespace: watch one namespace only (None: all). Default None.
    :param workers: reconciles at once. Default 1.
    :param field: the field objects are hashed by. Default ``object.metadata.uid``.
    :param timing: lease timing, the same for the whole group. Default
        :class:`~aioinformer.ShardTiming` ``()`` (15 s / 10 s / 2 s).
    :param vnodes: ring points per replica, the same for the whole group: more spread the
        work more evenly, but each is a range in the selector, which is in the URL. Default 64.
    :param watch: how the informers list and watch. Default ``WatchConfig()``.
    :param stop_timeout: seconds a graceful stop lets reconciles finish, on ``clock``; leaving
        the group then gets its own bound (lease duration plus renew deadline). Default 30
        (:data:`~aioinformer._lifecycle.DEFAULT_STOP_TIMEOUT`).
    :param on_range_exit: called with a ``RangeExit`` for every object that leaves the cache
        because its range moved to another replica. Default None.
    :param metrics_provider: metrics for the queue. Default None.
    :param clock: the local clock (lease timing, queue delays). Default the system clock.
    :param shutdown_timeout: deprecated former name of ``stop_timeout`` (warns).
    :raises InvalidNameError: when ``identity``, ``group`` or ``lease_namespace`` is not a
        name the API server accepts there (it names the value and the rule).
    """

    def __init__(
        self,
        *,
        name: str,
        reconcile: Reconciler[str],
        client: KubeClient,
        resource: Resource | str,
        group: str,
        identity: str,
        lease_namespace: str = "default",
        namespace: str | None = None,
        workers: int = 1,
        field: ShardField = FIELD_UID,
        timing: ShardTiming = ShardTiming(),  # noqa: B008 (immutable)
        vnodes: int = DEFAULT_VNODES,
        watch: WatchConfig = WatchConfig(),
        stop_timeout: float = DEFAULT_STOP_TIMEOUT,
        on_range_exit: Callable[[RangeExit], object] | None = None,
        metrics_provider: MetricsProvider | None = None,
        clock: Clock = SYSTEM_CLOCK,
        shutdown_timeout: float | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        stop_timeout = stop_timeout_argument("ShardedController", stop_timeout, shutdown_timeout)
        check_subdomain(identity, what="replica identity (its Lease's name)")
        check_label_value(group, what="replica group (a label on every member's Lease)")
        check_namespace(lease_namespace, what="lease namespace")
        self.name = name
        self.identity = identity
        self.resource = as_resource(resource)
        self.namespace = namespace
        self._client = client
        self._reconcile = reconcile
        self._field: ShardField = field
        self._watch = watch
        self._clock = clock
        self._on_range_exit = on_range_exit
        #: The queue the workers take keys from (only keys of the ranges taken).
        self.queue: RateLimitingQueue[str] = RateLimitingQueue(
            None, name=name, metrics_provider=metrics_provider, clock=clock
        )
        self._work = ShardWork(
            name=f"{name}/{identity}",
            field=field,
            enqueue=self.queue.add,
            report_drained=self._report_drained,
        )
        self._timing = timing
        self._fence = WriteFence(
            owner=self, name=f"sharded controller {name} ({identity})", refusal=self._refusal
        )
        self._fenced_client = client.fenced(self._fence)
        self._member = Member(
            client,
            group=group,
            identity=identity,
            namespace=lease_namespace,
            on_action=self._on_action,
            timing=timing,
            assign=functools.partial(_ring_share, vnodes=vnodes),
            watch=watch,
            clock=clock,
        )
        self._pool = WorkerPool(
            owner=self,
            name=name,
            queue=self.queue,
            reconcile=self._gated,
            workers=workers,
            stop_timeout=stop_timeout,
            clock=clock,
        )
        self._leave_timeout = timing.lease_duration + timing.renew_deadline
        self._stop_timeout = stop_timeout + self._leave_timeout + 1.0
        #: The informer of the ranges served now (None while it serves nothing).
        self.informer: SharedIndexInformer | None = None
        self._serving_changed = anyio.Event()
        self._ranges_changed = anyio.Event()
        self._range_exits = 0
        self._cache_restarts = 0

    def __repr__(self) -> str:
        return f"<ShardedController {self.name!r} {self.identity} [{self.state.value}]>"

    @property
    def client(self) -> KubeClient:
        """The client for the reconciles' reads and writes: a fenced view of ``client``.

        Every write (create, replace, patch, apply, delete, status writes) is sent only while
        this replica provably owns the key being reconciled (module docs); otherwise it raises
        :class:`~aioinformer.errors.FencedWriteError` and sends nothing. Reads always pass.
        Outside a reconcile, a write is checked against the replica's lease alone.
        """
        return self._fenced_client

    @property
    def member(self) -> Member:
        """The membership (its lease view and protocol state)."""
        return self._member

    def statistics(self) -> ShardedControllerStatistics:
        """A snapshot of the replica's ranges, hand-overs and counters."""
        s, work, pool, informer = self._member.state, self._work, self._pool, self.informer
        shard = informer.statistics().shard if informer is not None else None
        return ShardedControllerStatistics(
            state=self.state,
            identity=self.identity,
            phase=s.phase.value,
            active=s.active.ranges,
            draining=s.draining.ranges,
            share=s.serving.fraction,
            hand_overs_in=work.starts,
            hand_overs_out=work.drains,
            stop_alls=work.stop_alls,
            range_exits=self._range_exits,
            cache_restarts=self._cache_restarts,
            objects=len(informer.indexer) if informer is not None else 0,
            filtering=shard.filtering if shard is not None else None,
            reconciles=pool.reconciles,
            errors=pool.errors,
            skipped=work.skipped,
            in_flight=pool.in_flight,
            queue_depth=len(self.queue),
            lease_writes=self._member.writes,
            failed_lease_writes=self._member.failed_writes,
            lease_write_failures=MappingProxyType(dict(self._member.failures)),
            last_lease_error=self._member.last_error,
            joined=self._member.joined,
            fenced_writes=self._fence.refused,
        )

    async def wait_ranges_changed(self) -> None:
        """Wait for the next change of this replica's ranges or of its cache's selector."""
        await self._ranges_changed.wait()

    def _changed(self) -> None:
        self._serving_changed.set()
        self._ranges_changed.set()
        self._ranges_changed = anyio.Event()

    def serves(self, obj: Any) -> bool:
        """Whether ``obj``'s hash is in the ranges this replica takes work for now."""
        return self._work.hash_of(obj) in self._work.taking

    # -- the work layer ----------------------------------------------------------------------

    def _on_action(self, action: Action) -> None:
        self._work.on_action(action, self._requeue)
        self._changed()

    def _report_drained(self, ranges: HashRanges) -> None:
        self._member.report_drained(ranges)
        self._changed()

    def _requeue(self, ranges: HashRanges) -> None:
        if self.informer is not None:
            self._work.requeue_from(self.informer.indexer.list(), ranges)

    async def _gated(self, key: str) -> Result | None:
        work = self._work
        h = work.admit(key)
        if h is None:
            return None
        ticket = Ticket(owner=self, key=key, epoch=work.epoch, hash=h)
        result = None  # stays None when cancelled at once: the lease may be lost
        try:
            with work.cancel_group.scope():
                result = await run_fenced(ticket, lambda: self._reconcile(key))
            return result
        finally:
            work.finish(key)

    def _refusal(self, ticket: Ticket | None) -> str | None:
        """Why a write is not safe now (the fence): read from the clock at the write."""
        member = self._member
        reason = write_refusal(
            member.state,
            member.view,
            self._clock.now(),
            timing=self._timing,
            hash_value=ticket.hash if ticket is not None else None,
        )
        if reason is None and ticket is not None and ticket.epoch != self._work.epoch:
            reason = "the replica stopped every reconcile since this one began"
        return reason

    # -- the cache ---------------------------------------------------------------------------

    def _new_informer(self, ranges: HashRanges) -> SharedIndexInformer:
        informer = SharedIndexInformer(
            KubeListerWatcher(self._client, self.resource, namespace=self.namespace),
            name=f"{self.resource} of {self.identity}",
            watch=self._watch,
            clock=self._clock,
            shard_selector=ranges.selector(self._field),
        )
        informer.add_event_handler(_Offer(self._work))
        return informer

    async def _cache_loop(self) -> None:
        current: SharedIndexInformer | None = None
        current_ranges = EMPTY
        async with anyio.create_task_group() as tg:
            while True:
                self._serving_changed = anyio.Event()
                wanted = self._member.state.serving
                if wanted == current_ranges:
                    await self._serving_changed.wait()
                    continue
                new = None
                if wanted:
                    new = self._new_informer(wanted)
                    await tg.start(new.run)  # listed with the new selector
                    self._cache_restarts += 1
                self.informer = new
                if current is not None:
                    self._exit(current, wanted)
                    tg.start_soon(current.aclose)
                current, current_ranges = new, wanted
                self._requeue(self._work.taking)
                self._ranges_changed.set()
                self._ranges_changed = anyio.Event()

    def _exit(self, old: SharedIndexInformer, kept: HashRanges) -> None:
        for exit_ in self._work.exits(old.indexer.list(), kept):
            self._range_exits += 1
            if self._on_range_exit is not None:
                try:
                    self._on_range_exit(exit_)
                except Exception:
                    logger.exception("%s: on_range_exit failed for %s", self.name, exit_.key)

    # -- lifecycle ---------------------------------------------------------------------------

    async def _serve(self, ready: Callable[[], None]) -> None:
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._member.run, name=f"membership {self.identity}")
                tg.start_soon(self._cache_loop, name=f"cache {self.identity}")
                await self._pool.run(ready=ready)
                with self._clock.move_on_after(self._leave_timeout):
                    await self._member.wait_left()
                tg.cancel_scope.cancel()
        finally:
            logger.info("sharded controller %s (%s) stopped", self.name, self.identity)

    def _on_stop_requested(self) -> None:
        self._member.leave()  # drain, release, delete the lease
        self.queue.shutdown()

    def _on_stopped(self) -> None:
        self.queue.shutdown()
