"""The demo's fault schedule, and how it tells that the informer recovered.

Each fault is injected at a fixed fraction of the run. Right after it (or, for a compaction,
right before the history is forgotten) the schedule changes a *marker* pod. The informer has
recovered once it delivers a notification at or beyond the marker's resource version: only a
working watch (or a relist) can bring that change, so it proves that changes made after the
fault are flowing again. The next fault waits for that, so faults never overlap.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

from aioinformer import EventStream, SharedIndexInformer
from aioinformer.testing import FakeApiServer

from .churn import DEMO_NAMESPACE

__all__ = ["FAULTS", "FaultRecord", "FaultSchedule", "Progress"]

logger = logging.getLogger(__name__)

#: The marker pod (on no node, so no node summary counts it).
MARKER = "fault-marker"

#: (fraction of the run, kind, description). The stall comes early, so that its recovery
#: (which takes the informer's idle timeout) ends before the next fault.
FAULTS: tuple[tuple[float, str, str], ...] = (
    (0.15, "drop", "watch dropped"),
    (0.30, "stall", "watch stalled (no bytes, no bookmarks)"),
    (0.60, "compact", "history compacted + watch dropped (410 on resume)"),
    (0.80, "throttle", "watch dropped + 2 watches refused (429, Retry-After 1 s)"),
)


def _rv_int(obj: object) -> int:
    if isinstance(obj, dict):
        metadata = obj.get("metadata")
        if isinstance(metadata, dict):
            try:
                return int(metadata.get("resourceVersion") or 0)
            except ValueError:
                return 0
    return 0


class Progress:
    """Follows one informer's notifications: counts them, remembers the highest resource
    version delivered, and wakes waiters.

    :param informer: the informer to follow (subscribe before or after it starts).
    :param on_event: called after every notification.
    """

    def __init__(
        self, informer: SharedIndexInformer, *, on_event: Callable[[], None] | None = None
    ) -> None:
        self._stream: EventStream = informer.events()
        self._on_event = on_event
        self._waiters: list[tuple[int, anyio.Event]] = []
        #: The highest resource version of an object delivered so far.
        self.max_rv = 0
        #: Notifications delivered, by type (resync/relist no-op updates not counted).
        self.delivered: Counter[str] = Counter()

    @property
    def stream(self) -> EventStream:
        """The subscription (its backlog is one of the informer's listeners)."""
        return self._stream

    async def run(self) -> None:
        """Read notifications until the informer stops or :meth:`close`."""
        async for event in self._stream:
            if not event.is_sync:
                self.delivered[event.type.value] += 1
            rv = _rv_int(event.object)
            if rv > self.max_rv:
                self.max_rv = rv
                if self._waiters:
                    self._wake()
            if self._on_event is not None:
                self._on_event()

    def _wake(self) -> None:
        remaining = []
        for threshold, event in self._waiters:
            if self.max_rv >= threshold:
                event.set()
            else:
                remaining.append((threshold, event))
        self._waiters = remaining

    async def wait_for_rv(self, rv: int) -> None:
        """Until a notification at resource version ``rv`` or later was delivered."""
        if self.max_rv >= rv:
            return
        waiter = (rv, anyio.Event())
        self._waiters.append(waiter)
        try:
            await waiter[1].wait()
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def close(self) -> None:
        """Unsubscribe (idempotent)."""
        self._stream.close()


@dataclass
class FaultRecord:
    """One injected fault and what followed.

    :ivar kind: ``drop``, ``stall``, ``compact`` or ``throttle``.
    :ivar description: what was done, for people.
    :ivar at: seconds since the start of the run.
    :ivar affected: watches the fault hit (dropped or stalled) when injected.
    :ivar recovered_in: seconds until the informer delivered a change made after the fault
        (None: not, or not yet).
    :ivar relists: relists between the fault and the recovery.
    :ivar restarts: watch restarts, by cause, between the fault and the recovery.
    """

    kind: str
    description: str
    at: float
    affected: int = 0
    recovered_in: float | None = None
    relists: int = 0
    restarts: dict[str, int] = field(default_factory=dict)

    @property
    def recovered(self) -> bool:
        """True once the informer recovered from it."""
        return self.recovered_in is not None

    def outcome(self) -> str:
        """How it ended, in a few words."""
        if self.recovered_in is None:
            return "recovering..."
        how = []
        if self.relists:
            how.append(f"{self.relists} relist{'s' if self.relists != 1 else ''}")
        how.extend(f"{cause} {n}" for cause, n in sorted(self.restarts.items()))
        via = f" ({', '.join(how)})" if how else ""
        return f"recovered in {self.recovered_in:.2f} s{via}"


class FaultSchedule:
    """Injects :data:`FAULTS` into ``server`` at fixed fractions of ``duration``.

    :param server: the fake API server.
    :param informer: the informer whose recovery is measured (its resource is ``pods``).
    :param progress: follows that informer's notifications.
    :param duration: the length of the run in seconds.
    :param recovery_timeout: the longest wait for a recovery, in seconds.
    """

    def __init__(
        self,
        server: FakeApiServer,
        informer: SharedIndexInformer,
        progress: Progress,
        *,
        duration: float,
        recovery_timeout: float = 30.0,
    ) -> None:
        self._server = server
        self._informer = informer
        self._progress = progress
        self._duration = duration
        self._recovery_timeout = recovery_timeout
        self._start = 0.0
        self._marks = 0
        #: The faults injected so far, oldest first.
        self.records: list[FaultRecord] = []

    @property
    def planned(self) -> int:
        """How many faults the schedule has."""
        return len(FAULTS)

    @property
    def recovered(self) -> int:
        """How many injected faults were recovered from."""
        return sum(record.recovered for record in self.records)

    async def setup(self) -> None:
        """Create the marker pod (before the informer lists, so it is in the initial list)."""
        body = {
            "metadata": {"name": MARKER, "namespace": DEMO_NAMESPACE},
            "spec": {"containers": [{"name": "main", "image": "busybox"}]},
        }
        self._server.objects.create("pods", body, namespace=DEMO_NAMESPACE)

    async def run(self, stop: anyio.Event, *, start: float) -> None:
        """Inject the faults on schedule until they are all done or ``stop`` is set.

        After ``stop`` no new fault is injected, but the recovery from the last one is still
        awaited (within ``recovery_timeout``), so the summary can tell whether it recovered.

        :param start: the run's start, on the event loop's clock (:func:`anyio.current_time`).
        """
        self._start = start
        for fraction, kind, description in FAULTS:
            with anyio.move_on_after(start + fraction * self._duration - anyio.current_time()):
                await stop.wait()
            if stop.is_set():
                return
            stats = self._informer.statistics().reflector
            relists = stats.relists
            restarts = dict(stats.watch_restarts)
            record, marker_rv = await self._inject(kind, description, anyio.current_time() - start)
            self.records.append(record)
            await self._await_recovery(record, marker_rv, relists, restarts)

    async def _mark(self) -> int:
        """Change the marker pod; returns the resource version of the change."""
        self._marks += 1
        patch = {"metadata": {"labels": {"demo/fault": str(self._marks)}}}
        obj = self._server.objects.patch("pods", MARKER, patch, namespace=DEMO_NAMESPACE)
        return _rv_int(obj)

    async def _inject(self, kind: str, description: str, at: float) -> tuple[FaultRecord, int]:
        server = self._server
        record = FaultRecord(kind, description, at)
        # The in-process API does not yield: fault and marker land atomically for the client.
        if kind == "compact":
            marker_rv = await self._mark()
            server.faults.compact()
            record.affected = server.faults.drop_watches("pods")
        else:
            if kind == "drop":
                record.affected = server.faults.drop_watches("pods")
            elif kind == "stall":
                record.affected = server.faults.stall_watches("pods")
            elif kind == "throttle":
                server.faults.fail_next(2, 429, retry_after=1.0, verb="watch", resource="pods")
                record.affected = server.faults.drop_watches("pods")
            else:  # pragma: no cover - FAULTS lists the kinds
                raise ValueError(f"unknown fault {kind!r}")
            marker_rv = await self._mark()
        logger.info("t=%.1fs fault: %s (%d watches)", at, description, record.affected)
        return record, marker_rv

    async def _await_recovery(
        self, record: FaultRecord, marker_rv: int, relists: int, restarts: dict[str, int]
    ) -> None:
        injected = self._start + record.at
        try:
            with anyio.fail_after(self._recovery_timeout):
                await self._progress.wait_for_rv(marker_rv)
        except TimeoutError:
            logger.warning("no recovery from %r within %.0f s", record.kind, self._recovery_timeout)
            return
        finally:
            stats = self._informer.statistics().reflector
            record.relists = stats.relists - relists
            record.restarts = {
                cause: n - restarts.get(cause, 0)
                for cause, n in stats.watch_restarts.items()
                if n > restarts.get(cause, 0)
            }
        record.recovered_in = anyio.current_time() - injected
