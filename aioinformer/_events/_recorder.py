"""EventRecorder: Kubernetes Events about objects, written in the background.

:meth:`EventRecorder.record` is synchronous and never waits: it checks its arguments, stamps
the occurrence (name, time) and appends it to a bounded queue — or drops and counts it when
the queue is full or the recorder has stopped. One sender task, owned by the recorder's
lifecycle, empties the queue in order:

* **events.k8s.io/v1** when the server serves it (one discovery request,
  ``/apis/events.k8s.io/v1``, before the first event, as client-go's
  ``NewEventBroadcasterAdapter``): repeats become series (:mod:`._series`), with the refresh
  every 30 minutes and the finish after 6 quiet minutes of client-go's ``tools/events``;
* **core/v1** otherwise (one WARNING says so): through client-go's ``EventCorrelator``
  (:mod:`._correlator`: aggregation, deduplication into ``count``, a per-object spam filter),
  as client-go's events adapter falls back to ``tools/record``.

Sending follows client-go's ``recordEvent``: a series is a strategic merge ``PATCH``, which
becomes a create when the event is gone (404); an error answer from the server drops the event
(``AlreadyExists`` quietly, anything else with an ERROR log), except that an ``AlreadyExists``
of a series is retried; no answer (and 429) is retried up to 12 tries, 10 s apart (events.k8s.io:
±25 % jitter; core/v1: the first wait random in [0, 10 s)), on the recorder's clock. Unlike
client-go (8 workers for events.k8s.io) one task sends, so events leave in the order recorded.

Stopping (``aclose``, leaving ``async with``) stops accepting events and sends what is queued,
then the series counts not sent yet, within ``flush_timeout``; what is left then is counted as
failed.
"""

from __future__ import annotations

import logging
import random
import socket
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
from anyio import CancelScope

from .._clock import SYSTEM_CLOCK, Clock
from .._lifecycle import Service, State
from .._listwatch import Resource
from .._names import qualified_name_problems
from .._wire._discovery import group_version_resources
from .._wire._verbs import PatchType
from ..errors import (
    AlreadyExistsError,
    ApiError,
    NotFoundError,
    TooManyRequestsError,
    TransportError,
)
from ._correlator import Correlated, EventCorrelator, core_event
from ._model import Occurrence, event_name, reference_of, unix_nanos
from ._series import FINISH, REFRESH, SeriesCache, SeriesSend, event_body

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = ["EventRecorder", "EventRecorderStatistics"]

logger = logging.getLogger(__name__)

#: The events.k8s.io/v1 resource, and the core/v1 one.
EVENTS_V1: Final = Resource("events.k8s.io", "v1", "events", kind="Event")
CORE_EVENTS: Final = Resource("", "v1", "events", kind="Event")

#: client-go's ``maxTriesPerEvent`` and ``defaultSleepDuration``.
MAX_TRIES: Final = 12
RETRY_SLEEP: Final = 10.0
#: Limits of events.k8s.io/v1 validation (``pkg/apis/core/validation/events.go``).
_REASON_MAX: Final = 128
_ACTION_MAX: Final = 128
_INSTANCE_MAX: Final = 128
_NOTE_MAX: Final = 1024
Api = Literal["auto", "events.k8s.io/v1", "v1"]


@dataclass(frozen=True, kw_only=True, slots=True)
class EventRecorderStatistics:
    """Counters of an :class:`EventRecorder`, read with :meth:`EventRecorder.statistics`.

    :ivar state: where the recorder is in its life.
    :ivar api: the API events are written to: ``"events.k8s.io/v1"``, ``"v1"``, or None
        before the first event decided it.
    :ivar recorded: :meth:`~EventRecorder.record` calls accepted.
    :ivar dropped: :meth:`~EventRecorder.record` calls dropped because the queue was full or
        the recorder had stopped.
    :ivar queued: occurrences waiting to be sent now.
    :ivar created: events created on the server.
    :ivar patched: series or counts updated on the server.
    :ivar series: occurrences counted into a series without a request of their own.
    :ivar filtered: occurrences dropped by the core/v1 spam filter.
    :ivar failed: events given up: refused by the server, out of retries, or still unsent
        when the flush on stopping ran out of time.
    """

    state: State
    api: str | None
    recorded: int
    dropped: int
    queued: int
    created: int
    patched: int
    series: int
    filtered: int
    failed: int


def _wall_clock(clock: Clock) -> Callable[[], datetime]:
    """Wall time for ``clock``: the real one for the system clock; for another (a test's
    fake clock) the wall time of this call, moved on by that clock's time since."""
    if clock is SYSTEM_CLOCK:
        return lambda: datetime.now(UTC)
    anchor_wall, anchor = datetime.now(UTC), clock.now()
    return lambda: anchor_wall + timedelta(seconds=clock.now() - anchor)


def _truncate(text: str, limit: int) -> str:
    """At most ``limit`` bytes of UTF-8, cut at a character boundary."""
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    return encoded[:limit].decode(errors="ignore")


def _without_version(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata`` without ``resourceVersion`` (a create must not carry one)."""
    return {k: v for k, v in metadata.items() if k != "resourceVersion"}


class _Retry(Exception):
    """A send that may succeed later (no answer, or 429)."""


class EventRecorder(Service):
    """Records Kubernetes Events about objects, as client-go's event recorders do, without
    ever blocking the caller::

        recorder = EventRecorder(client, reporting_controller="example.com/widget-operator")
        async with recorder:
            ...
            recorder.record(widget, reason="Reconciled", action="Reconcile",
                            note="config map web-config is up to date")

    Events go to events.k8s.io/v1 where the server serves it (repeats become series), else to
    core/v1 (client-go's correlator: counts, aggregation, a spam filter per object); the user
    guide's "Writing operators" page has the rules.

    Lifecycle: ``async with recorder:`` runs its sender for the block; ``await
    tg.start(recorder.run)`` returns once it runs; :meth:`aclose` (or leaving the block) stops
    taking events and sends what is queued within ``flush_timeout``. :meth:`record` may be
    called before it runs (the queue holds the events); after it stopped, events are dropped
    and counted.

    :param client: the client events are written with (it needs ``create`` and ``patch`` on
        ``events`` of either group; ``get`` of ``/apis/events.k8s.io/v1`` for the discovery).
    :param reporting_controller: the controller's name, a qualified name such as
        ``"example.com/widget-operator"`` (``reportingController``; core/v1:
        ``source.component``).
    :param reporting_instance: this replica's name (``reportingInstance``, at most 128
        characters). Default None: ``<reporting_controller>-<hostname>``, as client-go, cut
        to 128 characters.
    :param api: ``"auto"`` (discover), ``"events.k8s.io/v1"`` or ``"v1"``. Default ``"auto"``.
    :param queue_size: how many occurrences may wait to be sent; more are dropped. Default
        1000 (client-go's ``maxQueuedEvents``).
    :param flush_timeout: seconds, on ``clock``, that stopping may spend sending what is
        queued. Default 10.0.
    :param clock: times retries, the series' refresh and finish and the spam filter; event
        timestamps are the wall time moved on by it. Default the system clock.
    :raises ValueError: for an invalid ``reporting_controller``, ``reporting_instance``,
        ``queue_size`` or ``flush_timeout``.
    """

    def __init__(
        self,
        client: KubeClient,
        *,
        reporting_controller: str,
        reporting_instance: str | None = None,
        api: Api = "auto",
        queue_size: int = 1000,
        flush_timeout: float = 10.0,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        problems = qualified_name_problems(reporting_controller)
        if problems:
            raise ValueError(
                f"reporting_controller {reporting_controller!r} is not a qualified name like "
                f"'example.com/widget-operator': {'; '.join(problems)}"
            )
        if reporting_instance is None:
            reporting_instance = f"{reporting_controller}-{socket.gethostname()}"[:_INSTANCE_MAX]
        elif not reporting_instance or len(reporting_instance) > _INSTANCE_MAX:
            raise ValueError(f"reporting_instance must have 1 to {_INSTANCE_MAX} characters")
        if api not in ("auto", "events.k8s.io/v1", "v1"):
            raise ValueError(f"api must be 'auto', 'events.k8s.io/v1' or 'v1', not {api!r}")
        if queue_size < 1:
            raise ValueError("queue_size must be at least 1")
        if not flush_timeout >= 0:
            raise ValueError("flush_timeout must not be negative")
        self._client = client
        #: ``reportingController`` of every event.
        self.reporting_controller = reporting_controller
        #: ``reportingInstance`` of every events.k8s.io/v1 event.
        self.reporting_instance = reporting_instance
        self.queue_size = queue_size
        self.flush_timeout = flush_timeout
        self._clock = clock
        self._stop_timeout = flush_timeout + 5.0
        self._wall = _wall_clock(clock)
        self._last_nanos = 0
        self._api: str | None = None if api == "auto" else api
        self._queue: deque[Occurrence] = deque()
        self._current: Occurrence | None = None  # being sent
        self._warned_full = False
        self._wake: anyio.Event | None = None
        self._flushed: anyio.Event | None = None
        self._series = SeriesCache()
        self._correlator = EventCorrelator()
        self._next_finish = 0.0
        self._next_refresh = 0.0
        self._recorded = self._dropped = self._created = self._patched = 0
        self._counted = self._filtered = self._failed = 0

    def __repr__(self) -> str:
        return f"<EventRecorder {self.reporting_controller!r} [{self.state.value}]>"

    def _describe(self) -> str:
        return f"EventRecorder {self.reporting_controller!r}"

    # -- recording ---------------------------------------------------------------------------

    def record(
        self,
        regarding: Mapping[str, Any],
        *,
        reason: str,
        action: str,
        note: str = "",
        type: Literal["Normal", "Warning"] = "Normal",
        related: Mapping[str, Any] | None = None,
    ) -> None:
        """Record an event about ``regarding``; returns at once (the event is sent in the
        background, see the class).

        :param regarding: the object the event is about, as stored (its ``apiVersion``,
            ``kind``, ``metadata.name``, ``namespace``, ``uid`` and ``resourceVersion`` make
            the reference), or an ``ObjectReference`` dict (``kind``, ``name``, ...).
        :param reason: why, in CamelCase: ``"Reconciled"`` (at most 128 characters).
        :param action: what was done or failed: ``"Reconcile"`` (at most 128 characters;
            not written to core/v1 events).
        :param note: a human-readable description; cut to 1024 bytes. Default ``""``.
        :param type: ``"Normal"`` or ``"Warning"``. Default ``"Normal"``.
        :param related: a second object the event is about (events.k8s.io/v1 only), as
            ``regarding``. Default None.
        :raises ValueError: for an invalid type, reason, action or object (nothing is
            recorded).
        """
        if type not in ("Normal", "Warning"):
            raise ValueError(f"event type {type!r} is not 'Normal' or 'Warning'")
        if not reason or len(reason) > _REASON_MAX:
            raise ValueError(f"an event reason must have 1 to {_REASON_MAX} characters")
        if not action or len(action) > _ACTION_MAX:
            raise ValueError(f"an event action must have 1 to {_ACTION_MAX} characters")
        regarding_ref = reference_of(regarding)
        related_ref = reference_of(related) if related is not None else None
        if self._stop_requested or len(self._queue) >= self.queue_size:
            self._dropped += 1
            why = "it has stopped" if self._stop_requested else "its queue is full"
            # One WARNING per episode (until the queue drained again), then DEBUG.
            log = logger.debug if self._warned_full else logger.warning
            self._warned_full = True
            log(
                "event recorder %s: dropped a %s event %s about %s %s: %s (%d dropped so far)",
                self.reporting_controller,
                type,
                reason,
                regarding_ref["kind"],
                regarding_ref["name"],
                why,
                self._dropped,
            )
            return
        wall = self._wall()
        nanos = max(unix_nanos(wall), self._last_nanos + 1)  # unique names per recorder
        self._last_nanos = nanos
        self._queue.append(
            Occurrence(
                regarding=regarding_ref,
                related=related_ref,
                type=type,
                reason=reason,
                action=action,
                note=_truncate(note, _NOTE_MAX),
                name=event_name(regarding_ref["name"], nanos),
                namespace=regarding_ref.get("namespace") or "default",
                wall=wall,
                monotonic=self._clock.now(),
            )
        )
        self._recorded += 1
        if self._wake is not None:
            self._wake.set()

    # -- introspection -----------------------------------------------------------------------

    @property
    def api(self) -> str | None:
        """``"events.k8s.io/v1"`` or ``"v1"`` once known, else None."""
        return self._api

    def statistics(self) -> EventRecorderStatistics:
        """A snapshot of the recorder's state and counters."""
        return EventRecorderStatistics(
            state=self.state,
            api=self._api,
            recorded=self._recorded,
            dropped=self._dropped,
            queued=len(self._queue),
            created=self._created,
            patched=self._patched,
            series=self._counted,
            filtered=self._filtered,
            failed=self._failed,
        )

    async def wait_flushed(self) -> None:
        """Wait until every occurrence recorded so far has been sent, filtered or given up (the
        recorder must be running, or the wait lasts until it stops)."""
        while (self._queue or self._current is not None) and self.state is not State.STOPPED:
            if self._flushed is None:
                self._flushed = anyio.Event()
            await self._flushed.wait()

    # -- the sender --------------------------------------------------------------------------

    def _on_stop_requested(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _on_stopped(self) -> None:
        self._signal_flushed()

    def _signal_flushed(self) -> None:
        flushed, self._flushed = self._flushed, None
        if flushed is not None:
            flushed.set()

    async def _serve(self, ready: Callable[[], None]) -> None:
        if self._api is not None:
            self._use_api(self._api)  # given: the series timers start now
        work = CancelScope()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._bound_flush, work, name=f"{self._describe()} flush bound")
                ready()
                with work:
                    await self._work()
                tg.cancel_scope.cancel()
        finally:
            left = len(self._queue) + (self._current is not None)
            if left:
                logger.warning(
                    "event recorder %s: stopped with %d events unsent",
                    self.reporting_controller,
                    left,
                )
                self._failed += left
                self._queue.clear()
                self._current = None

    async def _bound_flush(self, work: CancelScope) -> None:
        await self._wait_stop_requested()
        await self._clock.sleep(self.flush_timeout)
        work.cancel()

    async def _work(self) -> None:
        while True:
            if self._queue:
                # Cleared only when done: cancelled half-way, it counts as unsent.
                self._current = self._queue.popleft()
                try:
                    await self._process(self._current)
                except Exception as exc:  # a bug must not stop the recorder: drop the event
                    self._failed += 1
                    logger.error(
                        "event recorder %s: recording event %s failed: %s: %s",
                        self.reporting_controller,
                        self._current.reason,
                        type(exc).__name__,
                        exc,
                    )
                    logger.debug("event recorder traceback", exc_info=exc)
                self._current = None
                continue
            self._warned_full = False
            self._signal_flushed()
            if self._stop_requested:
                await self._send_unsent_series()
                return
            await self._run_timers()
            if self._queue or self._stop_requested:
                continue
            self._wake = anyio.Event()
            try:
                with self._clock.move_on_after(self._timer_delay()):
                    await self._wake.wait()
            finally:
                self._wake = None

    # -- one occurrence ----------------------------------------------------------------------

    async def _process(self, occurrence: Occurrence) -> None:
        api = await self._decided_api()
        if api is None:
            self._failed += 1  # stopped (or out of tries) before the API was known
            return
        if api == "events.k8s.io/v1":
            body = event_body(
                occurrence,
                controller=self.reporting_controller,
                instance=self.reporting_instance,
            )
            send = self._series.observe(body, now=occurrence.monotonic)
            if send is None:
                self._counted += 1
                return
            await self._with_retries(lambda: self._send_v1(send), occurrence, jitter=True)
            return
        event = core_event(
            name=occurrence.name,
            namespace=occurrence.namespace,
            involved=occurrence.regarding,
            type=occurrence.type,
            reason=occurrence.reason,
            message=occurrence.note,
            component=self.reporting_controller,
            wall=occurrence.wall,
        )
        correlated = self._correlator.correlate(
            event, now=occurrence.monotonic, wall=occurrence.wall
        )
        if correlated.skip:
            self._filtered += 1
            logger.debug(
                "event recorder %s: spam filter dropped %s about %s %s",
                self.reporting_controller,
                occurrence.reason,
                occurrence.regarding["kind"],
                occurrence.regarding["name"],
            )
            return
        await self._with_retries(lambda: self._send_core(correlated), occurrence, jitter=False)

    async def _decided_api(self) -> str | None:
        """The API to write to, discovered before the first event (retried like a send)."""
        tries = 0
        while self._api is None:
            try:
                served = await group_version_resources(self._client, "events.k8s.io", "v1")
            except (TransportError, TooManyRequestsError) as exc:
                tries += 1
                if tries >= MAX_TRIES:
                    logger.error(
                        "event recorder %s: cannot tell whether events.k8s.io/v1 is served: %s",
                        self.reporting_controller,
                        exc,
                    )
                    return None
                await self._clock.sleep(RETRY_SLEEP)
                continue
            except ApiError as exc:
                served = None
                logger.debug("discovery of events.k8s.io/v1 failed: %s", exc)
            if served is not None and any(r.plural == "events" for r in served):
                self._use_api("events.k8s.io/v1")
            else:
                logger.warning(
                    "event recorder %s: the server does not serve events.k8s.io/v1; "
                    "recording core/v1 Events",
                    self.reporting_controller,
                )
                self._use_api("v1")
        return self._api

    def _use_api(self, api: str) -> None:
        self._api = api
        now = self._clock.now()
        self._next_finish, self._next_refresh = now + FINISH, now + REFRESH

    async def _with_retries(
        self, send: Callable[[], Any], occurrence: Occurrence, *, jitter: bool
    ) -> None:
        tries = 0
        while True:
            try:
                await send()
                return
            except _Retry as exc:
                tries += 1
                if tries >= MAX_TRIES:
                    self._failed += 1
                    logger.error(
                        "event recorder %s: giving up on event %s about %s %s after %d tries: %s",
                        self.reporting_controller,
                        occurrence.reason,
                        occurrence.regarding["kind"],
                        occurrence.regarding["name"],
                        tries,
                        exc.__cause__ or exc,
                    )
                    return
                if jitter:  # wait.Jitter(10 s, 0.25)
                    delay = RETRY_SLEEP * (1.0 + 0.25 * random.random())
                elif tries == 1:  # the first wait of tools/record is random
                    delay = RETRY_SLEEP * random.random()
                else:
                    delay = RETRY_SLEEP
                await self._clock.sleep(delay)

    # -- events.k8s.io/v1 -----------------------------------------------------------------

    async def _send_v1(self, send: SeriesSend) -> None:
        """client-go's ``recordEvent`` of tools/events. Raises :class:`_Retry` when worth
        another try; counts a refusal as failed."""
        body = send.body
        metadata = body["metadata"]
        try:
            if send.series:
                try:
                    await self._client.patch(
                        EVENTS_V1,
                        metadata["name"],
                        {"series": body["series"]},
                        namespace=metadata["namespace"],
                        patch_type=PatchType.STRATEGIC,
                    )
                    self._patched += 1
                    self._series.sent(send)
                    return
                except NotFoundError:
                    pass  # gone (expired, or not created yet): create it, series and all
            body = {**body, "metadata": _without_version(metadata)}
            await self._client.create(EVENTS_V1, body, namespace=metadata["namespace"])
            self._created += 1
            self._series.sent(send)
        except AlreadyExistsError as exc:
            if send.series:
                raise _Retry() from exc
            self._failed += 1
            logger.debug("event %s already exists; not retried", metadata["name"])
        except (TransportError, TooManyRequestsError) as exc:
            raise _Retry() from exc
        except ApiError as exc:
            self._failed += 1
            self._log_refused(body, exc)

    async def _run_timers(self) -> None:
        if self._api != "events.k8s.io/v1":
            return
        now = self._clock.now()
        if now >= self._next_finish:
            await self._finish_series(now)
            self._next_finish = self._clock.now() + FINISH
        if now >= self._next_refresh:
            for send in self._series.series():
                await self._send_once(send)
            self._next_refresh = self._clock.now() + REFRESH

    def _timer_delay(self) -> float | None:
        if self._api != "events.k8s.io/v1":
            return None
        return max(0.0, min(self._next_finish, self._next_refresh) - self._clock.now())

    async def _finish_series(self, now: float) -> None:
        for due in self._series.due_to_finish(now):
            if isinstance(due, SeriesSend):
                if not await self._send_once(due):
                    continue  # kept: tried again at the next finish
                self._series.forget(due.key, due.version)
            else:
                self._series.forget(*due)

    async def _send_once(self, send: SeriesSend) -> bool:
        """One try (the timers' way); False when worth trying again later."""
        try:
            await self._send_v1(send)
        except _Retry as exc:
            logger.debug("event %s: update failed (%s); later", send.body["metadata"]["name"], exc)
            return False
        return True

    async def _send_unsent_series(self) -> None:
        if self._api == "events.k8s.io/v1":
            for send in self._series.unsent():
                await self._send_once(send)

    # -- core/v1 ----------------------------------------------------------------------------

    async def _send_core(self, correlated: Correlated) -> None:
        """client-go's ``recordEvent`` of tools/record."""
        event = correlated.event
        metadata = event["metadata"]
        try:
            stored: Any = None
            if correlated.patch is not None:
                try:
                    stored = await self._client.patch(
                        CORE_EVENTS,
                        metadata["name"],
                        correlated.patch,
                        namespace=metadata["namespace"],
                        patch_type=PatchType.STRATEGIC,
                    )
                    self._patched += 1
                except NotFoundError:
                    stored = None
            if stored is None:
                body = {**event, "metadata": _without_version(metadata)}
                stored = await self._client.create(
                    CORE_EVENTS, body, namespace=metadata["namespace"]
                )
                self._created += 1
            if isinstance(stored, dict) and stored.get("kind") == "Event":
                self._correlator.update_state(stored)
        except AlreadyExistsError:
            self._failed += 1
            logger.debug("event %s already exists; not retried", metadata["name"])
        except (TransportError, TooManyRequestsError) as exc:
            raise _Retry() from exc
        except ApiError as exc:
            self._failed += 1
            if any(c.get("reason") == "NamespaceTerminating" for c in exc.causes):
                logger.debug("event %s: its namespace is terminating", metadata["name"])
            else:
                self._log_refused(event, exc)

    def _log_refused(self, event: Mapping[str, Any], exc: ApiError) -> None:
        regarding = event.get("regarding") or event.get("involvedObject") or {}
        logger.error(
            "event recorder %s: the server refused event %s about %s %s (not retried): %s",
            self.reporting_controller,
            event.get("reason"),
            regarding.get("kind"),
            regarding.get("name"),
            exc,
        )
