"""The EventRecorder (issue 22) on virtual time.

* events.k8s.io/v1 against an in-memory double of the events API (the fake API server does not
  serve that group yet): client-go ``tools/events/event_broadcaster.go`` — ``recordToSink``
  (isomorphic events become a series: POST, then one PATCH, then counting only),
  ``finishSeries`` (6 minutes), ``refreshExistingEventSeries`` (30 minutes), ``recordEvent``
  (404 → create, 12 tries 10 s ± 25 % apart, refusals dropped); names from
  ``tools/record/util.GenerateEventName``.
* core/v1 through client-go's ``EventCorrelator`` (``tools/record/events_cache.go``) as tables,
  and end to end against the fake API server over HTTP, which answers 404 for
  ``/apis/events.k8s.io/v1`` (so the recorder falls back, as ``NewEventBroadcasterAdapter``).
* the lifecycle: ``record`` never waits, a bounded queue, a bounded flush on stopping.
"""

from __future__ import annotations

import copy
import logging
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import anyio
import pytest

import aioinformer
from aioinformer import EventRecorder, KubeClient, KubeObject, PatchType, Resource, State
from aioinformer._events._correlator import AGGREGATE_PREFIX, EventCorrelator, core_event
from aioinformer._events._model import reference_of
from aioinformer.errors import (
    AlreadyExistsError,
    ConnectionRefused,
    InvalidError,
    NotFoundError,
)
from aioinformer.testing import FakeApiServer, FakeClock

CONTROLLER = "example.com/widget-operator"
INSTANCE = "widget-operator-0"
WIDGET: KubeObject = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w", "namespace": "default", "uid": "u-1", "resourceVersion": "7"},
}
OTHER: KubeObject = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "w-config", "namespace": "default", "uid": "u-2", "resourceVersion": "9"},
}


class EventsApi:
    """The events resource of an API server, in memory: ``create`` and ``patch`` as
    :class:`~aioinformer.KubeClient` has them, every request logged, failures scripted."""

    def __init__(self) -> None:
        self.stored: dict[tuple[str, str], dict[str, Any]] = {}
        self.requests: list[tuple[str, str, str, Any]] = []  # verb, resource, name, body
        self.failures: deque[BaseException | None] = deque()  # per request; None: no failure
        self.blocked: anyio.Event | None = None  # while set to an unset event, requests wait
        self._version = 0

    async def _enter(self) -> None:
        if self.blocked is not None:
            await self.blocked.wait()
        if self.failures and (failure := self.failures.popleft()) is not None:
            raise failure

    async def create(
        self, resource: Resource | str, body: dict[str, Any], *, namespace: str | None = None
    ) -> dict[str, Any]:
        name = body["metadata"]["name"]
        self.requests.append(("create", str(resource), name, copy.deepcopy(body)))
        await self._enter()
        key = (namespace or "", name)
        if key in self.stored:
            raise AlreadyExistsError(code=409, reason="AlreadyExists", message=f"{name} exists")
        self._version += 1
        stored = copy.deepcopy(body)
        stored["metadata"]["resourceVersion"] = str(self._version)
        self.stored[key] = stored
        return copy.deepcopy(stored)

    async def patch(
        self,
        resource: Resource | str,
        name: str,
        patch: dict[str, Any],
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
    ) -> dict[str, Any]:
        assert patch_type is PatchType.STRATEGIC
        self.requests.append(("patch", str(resource), name, copy.deepcopy(patch)))
        await self._enter()
        key = (namespace or "", name)
        if key not in self.stored:
            raise NotFoundError(code=404, reason="NotFound", message=f"{name} not found")
        self._version += 1
        self.stored[key].update(copy.deepcopy(patch))
        self.stored[key]["metadata"]["resourceVersion"] = str(self._version)
        return copy.deepcopy(self.stored[key])

    def verbs(self) -> list[str]:
        return [verb for verb, *_ in self.requests]


@pytest.fixture
def api() -> EventsApi:
    return EventsApi()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def recorder_of(api: EventsApi, clock: FakeClock, **options: Any) -> EventRecorder:
    options.setdefault("api", "events.k8s.io/v1")
    return EventRecorder(
        cast(KubeClient, api),
        reporting_controller=CONTROLLER,
        reporting_instance=INSTANCE,
        clock=clock,
        **options,
    )


@asynccontextmanager
async def running(recorder: EventRecorder) -> AsyncIterator[EventRecorder]:
    async with anyio.create_task_group() as tg:
        await tg.start(recorder.run)
        try:
            yield recorder
        finally:
            await recorder.aclose()


async def settled(recorder: EventRecorder) -> None:
    with anyio.fail_after(10):
        await recorder.wait_flushed()


def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


# -- events.k8s.io/v1: series ------------------------------------------------------------------


async def test_the_first_event_is_created_as_client_go_builds_it(
    api: EventsApi, clock: FakeClock
) -> None:
    async with running(recorder_of(api, clock)) as recorder:
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile", note="all good")
        await settled(recorder)
    [(verb, resource, name, body)] = api.requests
    assert (verb, resource) == ("create", "events.k8s.io/v1/events")
    prefix, _, nanos = name.partition(".")
    assert prefix == "w" and int(nanos, 16) > 0
    assert body["metadata"] == {"name": name, "namespace": "default"}
    assert body["eventTime"].endswith("Z") and len(body["eventTime"].split(".")[1]) == 7  # µs
    assert {k: v for k, v in body.items() if k not in ("metadata", "eventTime")} == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "reportingController": CONTROLLER,
        "reportingInstance": INSTANCE,
        "action": "Reconcile",
        "reason": "Reconciled",
        "note": "all good",
        "type": "Normal",
        "regarding": {
            "kind": "Widget",
            "namespace": "default",
            "name": "w",
            "uid": "u-1",
            "apiVersion": "example.com/v1",
            "resourceVersion": "7",
        },
    }
    assert unix_nanos_of(body["eventTime"]) == int(nanos, 16)


def unix_nanos_of(text: str) -> int:
    delta = when(text) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000


async def test_repeats_become_a_series_and_a_quiet_series_finishes(
    api: EventsApi, clock: FakeClock
) -> None:
    """POST, one PATCH with count 2, then counting only; 6 quiet minutes later the last count
    is sent and the series forgotten, so the next repeat is a new event."""
    async with running(recorder_of(api, clock)) as recorder:
        for _ in range(2):
            recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
            await settled(recorder)
            await clock.advance(10)
        assert api.verbs() == ["create", "patch"]
        first = api.requests[0][3]
        name = first["metadata"]["name"]
        patch = api.requests[1]
        assert patch[2] == name
        assert patch[3] == {
            "series": {"count": 2, "lastObservedTime": patch[3]["series"]["lastObservedTime"]}
        }
        assert when(patch[3]["series"]["lastObservedTime"]) - when(first["eventTime"]) == timedelta(
            seconds=10
        )
        for _ in range(3):
            recorder.record(WIDGET, reason="Reconciled", action="Reconcile", note="another note")
            await settled(recorder)
            await clock.advance(10)
        assert api.verbs() == ["create", "patch"]  # counted only (the note is not in the key)
        assert recorder.statistics().series == 3
        # Last observed at t=40; the finish runs every 6 minutes (t=360, 720): at 720 it has
        # been quiet for more than 6 minutes.
        await clock.advance(360 - 50)
        assert api.verbs() == ["create", "patch"]
        await clock.advance(360)
        assert api.verbs() == ["create", "patch", "patch"]
        final = api.requests[2][3]["series"]
        assert final["count"] == 5
        assert when(final["lastObservedTime"]) - when(first["eventTime"]) == timedelta(seconds=40)
        assert api.stored[("default", name)]["series"]["count"] == 5
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        await settled(recorder)
    assert api.verbs() == ["create", "patch", "patch", "create"]
    assert api.requests[3][2] != name


async def test_a_long_series_is_refreshed_every_30_minutes(
    api: EventsApi, clock: FakeClock
) -> None:
    async with running(recorder_of(api, clock)) as recorder:
        for _ in range(8):  # every 5 minutes: never quiet for 6
            recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
            await settled(recorder)
            await clock.advance(300)
        # t = 2400: the refresh ran at t = 1800 with the count seen by then (the occurrences
        # at 0, 300, ..., 1500), before the one of t = 1800.
        assert api.verbs() == ["create", "patch", "patch"]
        assert api.requests[2][3]["series"]["count"] == 6


async def test_a_single_event_is_forgotten_after_6_minutes(
    api: EventsApi, clock: FakeClock
) -> None:
    async with running(recorder_of(api, clock)) as recorder:
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        await settled(recorder)
        await clock.advance(720)
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        await settled(recorder)
    assert api.verbs() == ["create", "create"]  # no request when forgotten; then a new event


KEYS: list[tuple[str, dict[str, Any], bool]] = [
    ("another note", {"note": "different"}, True),
    ("another reason", {"reason": "Failed"}, False),
    ("another action", {"action": "Delete"}, False),
    ("another type", {"type": "Warning"}, False),
    ("a related object", {"related": OTHER}, False),
    (
        "another resourceVersion of the object",
        {"regarding": {**WIDGET, "metadata": {**WIDGET["metadata"], "resourceVersion": "8"}}},
        False,
    ),
]


@pytest.mark.parametrize(("name", "change", "isomorphic"), KEYS, ids=[k[0] for k in KEYS])
async def test_what_makes_events_isomorphic(
    api: EventsApi, clock: FakeClock, name: str, change: dict[str, Any], isomorphic: bool
) -> None:
    """client-go's ``getKey``: type, action, reason, reporter, regarding (with its
    resourceVersion) and related — not the note."""
    base: dict[str, Any] = {"regarding": WIDGET, "reason": "Reconciled", "action": "Reconcile"}
    async with running(recorder_of(api, clock)) as recorder:
        recorder.record(**base)
        recorder.record(**{**base, **change})
        await settled(recorder)
    assert api.verbs() == (["create", "patch"] if isomorphic else ["create", "create"])


async def test_a_series_of_a_vanished_event_is_created_with_its_series(
    api: EventsApi, clock: FakeClock
) -> None:
    """PATCH 404 (the event expired) → create, series included, resourceVersion cleared."""
    async with running(recorder_of(api, clock)) as recorder:
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        await settled(recorder)
        api.stored.clear()
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        await settled(recorder)
    assert api.verbs() == ["create", "patch", "create"]
    recreated = api.requests[2][3]
    assert recreated["series"]["count"] == 2
    assert "resourceVersion" not in recreated["metadata"]
    assert recorder.statistics().created == 2


async def test_no_answer_is_retried_10_seconds_apart_on_the_clock(
    api: EventsApi, clock: FakeClock
) -> None:
    api.failures.extend([ConnectionRefused("refused"), ConnectionRefused("refused")])
    async with running(recorder_of(api, clock)) as recorder:
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        await anyio.wait_all_tasks_blocked()
        assert api.verbs() == ["create"]
        await clock.advance(9.9)  # wait.Jitter(10 s, 0.25): at least 10 s
        assert api.verbs() == ["create"]
        await clock.advance(2.6)
        assert api.verbs() == ["create", "create"]
        await clock.advance(12.5)
        await settled(recorder)
    assert api.verbs() == ["create"] * 3
    assert recorder.statistics().created == 1


async def test_retries_end_after_12_tries(api: EventsApi, clock: FakeClock) -> None:
    api.failures.extend(ConnectionRefused("refused") for _ in range(12))
    async with running(recorder_of(api, clock)) as recorder:
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        for _ in range(11):
            await anyio.wait_all_tasks_blocked()
            await clock.advance(12.5)
        await settled(recorder)
        stats = recorder.statistics()
    assert api.verbs() == ["create"] * 12
    assert (stats.created, stats.failed) == (0, 1)


async def test_a_refused_event_is_dropped_at_once(
    api: EventsApi, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    api.failures.append(InvalidError(code=422, reason="Invalid", message="reason: Required value"))
    async with running(recorder_of(api, clock)) as recorder:
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        await settled(recorder)
        stats = recorder.statistics()
    assert (api.verbs(), stats.failed) == (["create"], 1)
    assert "refused event Reconciled about Widget w (not retried)" in caplog.text


async def test_an_existing_single_event_is_not_retried_but_a_series_is(
    api: EventsApi, clock: FakeClock
) -> None:
    def already() -> AlreadyExistsError:
        return AlreadyExistsError(code=409, reason="AlreadyExists", message="exists")

    api.failures.append(already())
    async with running(recorder_of(api, clock)) as recorder:
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        await settled(recorder)
        assert api.verbs() == ["create"]  # dropped: not retried
        # The series: its PATCH meets 404 (nothing stored), its create AlreadyExists (a race
        # with another writer): tried again 10 s later.
        api.failures.extend([None, already()])
        recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        await anyio.wait_all_tasks_blocked()
        assert api.verbs() == ["create", "patch", "create"]
        await clock.advance(12.5)
        await settled(recorder)
    assert api.verbs() == ["create", "patch", "create", "patch", "create"]
    stats = recorder.statistics()
    assert (stats.created, stats.failed) == (1, 1)


# -- record() and the lifecycle ---------------------------------------------------------------


def test_record_checks_its_arguments(api: EventsApi, clock: FakeClock) -> None:
    recorder = recorder_of(api, clock)
    good: dict[str, Any] = {"reason": "Reconciled", "action": "Reconcile"}
    with pytest.raises(ValueError, match="not 'Normal' or 'Warning'"):
        recorder.record(WIDGET, type="Info", **good)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reason"):
        recorder.record(WIDGET, reason="", action="Reconcile")
    with pytest.raises(ValueError, match="action"):
        recorder.record(WIDGET, reason="Reconciled", action="A" * 129)
    with pytest.raises(ValueError, match="apiVersion"):
        recorder.record({"metadata": {"name": "x"}}, **good)
    with pytest.raises(ValueError, match="metadata-only"):
        recorder.record(
            {**WIDGET, "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata"}, **good
        )
    with pytest.raises(ValueError, match="kind and name"):
        recorder.record({"name": "x"}, **good)
    assert recorder.statistics().recorded == 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"reporting_controller": "Not A Name"}, "qualified name"),
        ({"reporting_instance": "x" * 129}, "1 to 128"),
        ({"queue_size": 0}, "queue_size"),
        ({"flush_timeout": -1}, "flush_timeout"),
        ({"api": "v2"}, "api must be"),
    ],
)
def test_recorder_options_are_checked(options: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"reporting_controller": CONTROLLER, **options}
    with pytest.raises(ValueError, match=message):
        EventRecorder(cast(KubeClient, None), **arguments)


def test_the_default_instance_is_controller_dash_hostname() -> None:
    import socket

    recorder = EventRecorder(cast(KubeClient, None), reporting_controller=CONTROLLER)
    assert recorder.reporting_instance == f"{CONTROLLER}-{socket.gethostname()}"[:128]


async def test_a_reference_is_accepted_and_names_stay_unique_at_one_instant(
    api: EventsApi, clock: FakeClock
) -> None:
    reference = {"kind": "Node", "name": "node-1", "uid": "n-1", "apiVersion": "v1"}
    async with running(recorder_of(api, clock)) as recorder:
        recorder.record(reference, reason="A", action="Check")
        recorder.record(reference, reason="B", action="Check")
        recorder.record({"kind": "Thing", "name": "Upper_Case"}, reason="C", action="Check")
        await settled(recorder)
    names = [r[2] for r in api.requests]
    assert names[0].startswith("node-1.") and names[1].startswith("node-1.")
    assert int(names[1].split(".")[1], 16) == int(names[0].split(".")[1], 16) + 1
    assert len(names[2]) == 36 and names[2].count("-") == 4  # not a valid name: a UUID
    assert api.requests[0][3]["metadata"]["namespace"] == "default"  # cluster-scoped object


async def test_a_long_note_is_cut_to_1024_bytes(api: EventsApi, clock: FakeClock) -> None:
    async with running(recorder_of(api, clock)) as recorder:
        recorder.record(WIDGET, reason="R", action="A", note="é" * 600)  # 1200 bytes
        await settled(recorder)
    note = api.requests[0][3]["note"]
    assert len(note.encode()) == 1024 and note == "é" * 512


async def test_a_full_queue_drops_and_counts(
    api: EventsApi, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """record() never waits: before the recorder runs the queue holds queue_size events; the
    rest are dropped, with one WARNING for the episode."""
    recorder = recorder_of(api, clock, queue_size=3)
    with caplog.at_level(logging.DEBUG, logger="aioinformer"):
        for i in range(5):
            recorder.record(WIDGET, reason=f"R{i}", action="A")
    stats = recorder.statistics()
    assert (stats.recorded, stats.dropped, stats.queued) == (3, 2, 3)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "its queue is full" in warnings[0].getMessage()
    async with running(recorder):
        await settled(recorder)
    assert [r[3]["reason"] for r in api.requests] == ["R0", "R1", "R2"]


async def test_stopping_flushes_the_queue_and_the_unsent_series(
    api: EventsApi, clock: FakeClock
) -> None:
    recorder = recorder_of(api, clock)
    async with running(recorder):
        for _ in range(4):
            recorder.record(WIDGET, reason="Reconciled", action="Reconcile")
        recorder.record(OTHER, reason="Updated", action="Update")
    assert recorder.state is State.STOPPED
    assert api.verbs() == ["create", "patch", "create", "patch"]
    assert api.requests[3][3]["series"]["count"] == 4  # the count not sent yet, on close
    recorder.record(WIDGET, reason="Late", action="A")
    assert recorder.statistics().dropped == 1


async def test_stopping_is_bounded_by_the_flush_timeout(api: EventsApi, clock: FakeClock) -> None:
    """A server that never answers: aclose() gives up after flush_timeout on the clock, and
    what was not sent counts as failed."""
    api.blocked = anyio.Event()
    recorder = recorder_of(api, clock, flush_timeout=3.0)
    async with anyio.create_task_group() as tg:
        await tg.start(recorder.run)
        for i in range(3):
            recorder.record(WIDGET, reason=f"R{i}", action="A")
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(recorder.aclose)
        await anyio.wait_all_tasks_blocked()
        assert recorder.state is State.STOPPING
        await clock.advance(3.0)
    stats = recorder.statistics()
    assert (stats.state, stats.created, stats.failed) == (State.STOPPED, 0, 3)


async def test_record_before_run_and_wait_flushed(api: EventsApi, clock: FakeClock) -> None:
    recorder = recorder_of(api, clock)
    recorder.record(WIDGET, reason="Early", action="A")
    async with running(recorder):
        await settled(recorder)
        assert recorder.statistics().created == 1


# -- core/v1: the correlator as tables ----------------------------------------------------------


def core(
    reason: str = "Failed",
    message: str = "boom",
    *,
    obj: KubeObject = WIDGET,
    type: str = "Warning",
    name: str = "e",
) -> dict[str, Any]:
    return core_event(
        name=name,
        namespace="default",
        involved=reference_of(obj),
        type=type,
        reason=reason,
        message=message,
        component=CONTROLLER,
        wall=datetime(2026, 1, 1, tzinfo=UTC),
    )


T_WALL = datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)


def test_the_spam_filter_allows_25_then_one_per_5_minutes() -> None:
    correlator = EventCorrelator()
    passed = [not correlator.correlate(core(f"R{i}"), now=0.0, wall=T_WALL).skip for i in range(30)]
    assert passed == [True] * 25 + [False] * 5
    # Per object and type: another object, or another type, has its own bucket.
    assert not correlator.correlate(core("X", obj=OTHER), now=0.0, wall=T_WALL).skip
    assert not correlator.correlate(core("X", type="Normal"), now=0.0, wall=T_WALL).skip
    assert correlator.correlate(core("Y"), now=299.0, wall=T_WALL).skip
    assert not correlator.correlate(core("Y"), now=300.0, wall=T_WALL).skip  # one refilled
    assert correlator.correlate(core("Z"), now=301.0, wall=T_WALL).skip


def test_identical_events_are_counted_into_one() -> None:
    correlator = EventCorrelator()
    first = correlator.correlate(core(name="e1"), now=0.0, wall=T_WALL)
    assert (first.patch, first.event["count"]) == (None, 1)
    correlator.update_state(
        {**first.event, "metadata": {**first.event["metadata"], "resourceVersion": "5"}}
    )
    later = core(name="e2")
    later["lastTimestamp"] = "2026-01-01T00:01:00Z"
    second = correlator.correlate(later, now=60.0, wall=T_WALL)
    assert second.event["metadata"] == {
        "name": "e1",
        "namespace": "default",
        "resourceVersion": "5",
    }
    assert second.event["firstTimestamp"] == first.event["firstTimestamp"]
    assert second.patch == {"count": 2, "lastTimestamp": "2026-01-01T00:01:00Z", "message": "boom"}


def test_ten_distinct_messages_become_an_aggregate() -> None:
    """EventAggregator: the 10th distinct message of similar events within 600 s becomes
    "(combined from similar events): ..." counted from then on; 600 quiet seconds start over."""
    correlator = EventCorrelator()
    results = [
        correlator.correlate(core(message=f"m{i}", name=f"e{i}"), now=float(i), wall=T_WALL)
        for i in range(12)
    ]
    messages = [r.event["message"] for r in results]
    assert messages[:9] == [f"m{i}" for i in range(9)]
    assert messages[9:] == [AGGREGATE_PREFIX + f"m{i}" for i in (9, 10, 11)]
    aggregate = results[9]
    assert (aggregate.patch, aggregate.event["count"], aggregate.event["metadata"]["name"]) == (
        None,
        1,
        "e9",
    )
    assert aggregate.event["firstTimestamp"] == "2026-01-01T00:00:30Z"
    assert "reportingComponent" not in aggregate.event  # not copied (client-go)
    assert results[10].event["metadata"]["name"] == "e9" and results[10].patch is not None
    assert results[11].event["count"] == 3
    fresh = correlator.correlate(core(message="m99", name="e99"), now=11.0 + 601.0, wall=T_WALL)
    assert (fresh.event["message"], fresh.patch) == ("m99", None)


# -- core/v1 end to end --------------------------------------------------------------------------


async def test_without_events_k8s_io_the_recorder_falls_back_to_core_v1(
    fake_apiserver: FakeApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    caplog.set_level(logging.INFO, logger="aioinformer")
    async with aioinformer.connect(server=fake_apiserver.url) as client:
        recorder = EventRecorder(client, reporting_controller=CONTROLLER, clock=clock)
        async with running(recorder):
            for _ in range(3):
                recorder.record(WIDGET, type="Warning", reason="Failed", action="Sync", note="boom")
            for i in range(30):
                recorder.record(OTHER, reason=f"Step{i}", action="Sync")
            await settled(recorder)
            stats = recorder.statistics()
        events = (await client.list("events", namespace="default"))["items"]
    assert stats.api == "v1"
    discovery = [r for r in fake_apiserver.requests.records if r.path == "/apis/events.k8s.io/v1"]
    assert [r.status for r in discovery] == [404]  # asked once
    fallbacks = [r for r in caplog.records if "does not serve events.k8s.io/v1" in r.getMessage()]
    assert len(fallbacks) == 1 and fallbacks[0].levelno == logging.WARNING
    about_widget = [e for e in events if e["involvedObject"]["name"] == "w"]
    assert len(about_widget) == 1
    [event] = about_widget
    assert (event["count"], event["type"], event["reason"], event["message"]) == (
        3,
        "Warning",
        "Failed",
        "boom",
    )
    assert event["source"] == {"component": CONTROLLER}
    assert event["involvedObject"] == reference_of(WIDGET)
    # 30 distinct events about one object: the spam filter lets 25 through.
    assert len([e for e in events if e["involvedObject"]["name"] == "w-config"]) == 25
    assert (stats.created, stats.patched, stats.filtered, stats.failed) == (26, 2, 5, 0)
