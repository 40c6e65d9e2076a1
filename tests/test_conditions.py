"""Status conditions (issue 22): apimachinery ``pkg/api/meta/conditions.go``
(``SetStatusCondition``: ``lastTransitionTime`` moves only with ``status``) and
``pkg/apis/meta/v1/validation/validation.go`` (``ValidateCondition``) as tables on given times,
then the write through the status subresource against the fake API server."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast

import pytest

import aioinformer
from aioinformer import Resource, conditions
from aioinformer.conditions import Condition
from aioinformer.errors import ConflictError
from aioinformer.testing import FakeApiServer

T0 = datetime(2026, 1, 2, 3, 4, 5, 678_000, tzinfo=UTC)
T0_TEXT = "2026-01-02T03:04:05Z"  # metav1.Time: whole seconds
T1 = T0 + timedelta(minutes=5)
T1_TEXT = "2026-01-02T03:09:05Z"


def ready(
    status: str, reason: str = "Reconciled", message: str = "", generation: int = 1
) -> Condition:
    return {
        "type": "Ready",
        "status": status,
        "observedGeneration": generation,
        "lastTransitionTime": T0_TEXT,
        "reason": reason,
        "message": message,
    }


def without_generation(condition: Condition) -> Condition:
    trimmed = dict(condition)
    del trimmed["observedGeneration"]
    return cast(Condition, trimmed)


# name, before, set_condition arguments (at T1), changed, after
TRANSITIONS: list[tuple[str, list[Condition], dict[str, Any], bool, list[Condition]]] = [
    (
        "a new condition gets now as its transition time",
        [],
        {"status": True, "reason": "Reconciled", "observed_generation": 1},
        True,
        [{**ready("True"), "lastTransitionTime": T1_TEXT}],
    ),
    (
        "the same everything: unchanged",
        [ready("True")],
        {"status": "True", "reason": "Reconciled", "observed_generation": 1},
        False,
        [ready("True")],
    ),
    (
        "a status change moves the transition time",
        [ready("True")],
        {"status": False, "reason": "Failed", "observed_generation": 1},
        True,
        [{**ready("False", reason="Failed"), "lastTransitionTime": T1_TEXT}],
    ),
    (
        "a new reason alone keeps the transition time",
        [ready("False", reason="Waiting")],
        {"status": "False", "reason": "Failed", "observed_generation": 1},
        True,
        [ready("False", reason="Failed")],
    ),
    (
        "a new message alone keeps the transition time",
        [ready("True")],
        {
            "status": "True",
            "reason": "Reconciled",
            "message": "3 replicas",
            "observed_generation": 1,
        },
        True,
        [ready("True", message="3 replicas")],
    ),
    (
        "a new observed generation alone keeps the transition time",
        [ready("True", generation=1)],
        {"status": "True", "reason": "Reconciled", "observed_generation": 2},
        True,
        [ready("True", generation=2)],
    ),
    (
        "no observed generation removes it (Go's zero value)",
        [ready("True", generation=3)],
        {"status": "True", "reason": "Reconciled"},
        True,
        [without_generation(ready("True"))],
    ),
    (
        "Unknown to True is a transition",
        [ready("Unknown", reason="Starting")],
        {"status": "True", "reason": "Reconciled", "observed_generation": 1},
        True,
        [{**ready("True"), "lastTransitionTime": T1_TEXT}],
    ),
    (
        "other conditions are left alone, the new one appended",
        [{**ready("True"), "type": "Synced"}],
        {"status": True, "reason": "Reconciled", "observed_generation": 1},
        True,
        [{**ready("True"), "type": "Synced"}, {**ready("True"), "lastTransitionTime": T1_TEXT}],
    ),
]


@pytest.mark.parametrize(
    ("name", "before", "arguments", "changed", "after"),
    TRANSITIONS,
    ids=[t[0] for t in TRANSITIONS],
)
def test_set_condition(
    name: str,
    before: list[Condition],
    arguments: dict[str, Any],
    changed: bool,
    after: list[Condition],
) -> None:
    edited = copy.deepcopy(before)
    assert conditions.set_condition(edited, type="Ready", now=T1, **arguments) is changed
    assert edited == after


def test_transition_times_over_a_life() -> None:
    """False at t0, reasons and messages change at t1 and t2, True at t3, True again at t4:
    the transition time is t0, then t3."""
    history: list[Condition] = []
    times = [T0 + timedelta(seconds=60 * i) for i in range(5)]
    steps: list[tuple[Literal["True", "False"], str, str]] = [
        ("False", "Waiting", "no pods"),
        ("False", "Waiting", "1 of 3 pods"),
        ("False", "Progressing", "2 of 3 pods"),
        ("True", "Reconciled", "3 of 3 pods"),
        ("True", "Reconciled", "3 of 3 pods"),
    ]
    seen = []
    for now, (status, reason, message) in zip(times, steps, strict=True):
        conditions.set_condition(
            history,
            type="Ready",
            status=status,
            reason=reason,
            message=message,
            now=now,
        )
        seen.append(history[0]["lastTransitionTime"])
    first, fourth = times[0].strftime("%Y-%m-%dT%H:%M:%SZ"), times[3].strftime("%Y-%m-%dT%H:%M:%SZ")
    assert seen == [first, first, first, fourth, fourth]


def test_now_defaults_to_the_current_time() -> None:
    found: list[Condition] = []
    before = datetime.now(UTC).replace(microsecond=0)
    conditions.set_condition(found, type="Ready", status=True, reason="Reconciled")
    stamp = datetime.fromisoformat(found[0]["lastTransitionTime"])
    assert before <= stamp <= datetime.now(UTC)


INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("empty reason", {"reason": ""}, "needs a reason"),
    ("reason with a space", {"reason": "Not Ready"}, "must start with alphabetic character"),
    ("reason starting with a digit", {"reason": "1Bad"}, "must start with alphabetic"),
    ("reason ending with a comma", {"reason": "A,"}, "must end with an alphanumeric"),
    ("reason too long", {"reason": "A" * 1025}, "longer than 1024"),
    ("message too long (bytes)", {"message": "é" * 16385}, "longer than 32768 bytes"),
    ("status not True/False/Unknown", {"status": "Yes"}, "not one of True, False, Unknown"),
    ("negative observed generation", {"observed_generation": -1}, ">= 0"),
    ("naive time", {"now": datetime(2026, 1, 1)}, "timezone-aware"),
    ("type with a space", {"type": "Is Ready"}, "not a qualified name"),
    ("type with a bad prefix", {"type": "Example.com/Ready"}, "prefix part"),
    ("empty type", {"type": ""}, "needs a type"),
]


@pytest.mark.parametrize(("name", "override", "message"), INVALID, ids=[c[0] for c in INVALID])
def test_set_condition_validates_as_the_api_server(
    name: str, override: dict[str, Any], message: str
) -> None:
    arguments: dict[str, Any] = {
        "type": "Ready",
        "status": "True",
        "reason": "Reconciled",
        "now": T0,
    }
    found: list[Condition] = []
    with pytest.raises(ValueError, match=message):
        conditions.set_condition(found, **{**arguments, **override})
    assert found == []


@pytest.mark.parametrize(
    "reason", ["A", "MyReason", "my_name", "MY_NAME", "ReasonA,ReasonB", "ReasonA:ReasonB", "A_"]
)
def test_valid_reasons(reason: str) -> None:
    """The examples of apimachinery's error message, and the edges of the pattern."""
    found: list[Condition] = []
    assert conditions.set_condition(
        found, type="example.com/Synced", status=True, reason=reason, now=T0
    )


WIDGET: dict[str, Any] = {
    "metadata": {"name": "w"},
    "status": {"conditions": [ready("True"), {**ready("False"), "type": "Degraded"}]},
}


def test_reading_conditions_of_an_object_or_a_list() -> None:
    listed = WIDGET["status"]["conditions"]
    for source in (WIDGET, listed):
        assert conditions.find_condition(source, "Ready") == ready("True")
        assert conditions.find_condition(source, "Missing") is None
        assert conditions.is_true(source, "Ready")
        assert not conditions.is_false(source, "Ready")
        assert conditions.is_false(source, "Degraded")
        assert not conditions.is_true(source, "Missing")
        assert not conditions.is_false(source, "Missing")
        assert conditions.is_unknown(source, "Missing")  # absent reads as unknown


def test_exactly_one_of_true_false_unknown_holds() -> None:
    for status in ("True", "False", "Unknown", "garbage"):
        source = [ready(status)]
        answers = [
            f(source, "Ready")
            for f in (conditions.is_true, conditions.is_false, conditions.is_unknown)
        ]
        assert answers.count(True) == 1, status


def test_objects_without_conditions() -> None:
    for obj in ({}, {"status": None}, {"status": {"conditions": None}}):
        assert conditions.conditions_of(obj) == []
        assert conditions.find_condition(obj, "Ready") is None


def test_conditions_of_is_a_copy() -> None:
    widget = copy.deepcopy(WIDGET)
    copied = conditions.conditions_of(widget)
    conditions.set_condition(copied, type="Ready", status=False, reason="Broken", now=T1)
    assert widget == WIDGET


def test_remove_condition() -> None:
    found = conditions.conditions_of(WIDGET)
    assert conditions.remove_condition(found, "Ready") is True
    assert [c["type"] for c in found] == ["Degraded"]
    assert conditions.remove_condition(found, "Ready") is False


# -- the write through /status ----------------------------------------------------------------

WIDGETS = Resource("example.com", "v1", "widgets", kind="Widget")


async def test_write_conditions_through_the_status_subresource(
    fake_apiserver: FakeApiServer,
) -> None:
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
    async with aioinformer.connect(server=fake_apiserver.url) as client:
        widget = await client.create(
            WIDGETS, {"metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 1}}
        )
        current = conditions.conditions_of(widget)
        conditions.set_condition(
            current, type="Ready", status=True, reason="Reconciled", observed_generation=1, now=T0
        )
        written = await conditions.write_conditions(client, WIDGETS, widget, current)
        assert written["status"]["conditions"] == [ready("True")]
        assert written["spec"] == {"size": 1}
        patch = fake_apiserver.requests.records[-1]
        assert (patch.verb, patch.subresource) == ("patch", "status")

        # The cache's copy is now stale: the precondition refuses to overwrite.
        with pytest.raises(ConflictError):
            await conditions.write_conditions(client, WIDGETS, widget, [])
        # Without it, the write goes through (last writer wins).
        emptied = await conditions.write_conditions(client, WIDGETS, widget, [], precondition=False)
        assert emptied["status"]["conditions"] == []


async def test_write_conditions_by_server_side_apply(fake_apiserver: FakeApiServer) -> None:
    fake_apiserver.register_resource("example.com", "v1", "widgets", "Widget")
    async with aioinformer.connect(server=fake_apiserver.url) as client:
        widget = await client.create(
            WIDGETS, {"metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 1}}
        )
        applied = await conditions.write_conditions(
            client, WIDGETS, widget, [ready("True")], method="apply", field_manager="widgets"
        )
        assert applied["status"]["conditions"] == [ready("True")]
        managers = {
            (m["manager"], m["operation"], m.get("subresource"))
            for m in applied["metadata"]["managedFields"]
        }
        assert ("widgets", "Apply", "status") in managers
        with pytest.raises(ValueError, match="field_manager"):
            await conditions.write_conditions(client, WIDGETS, widget, [], method="apply")
