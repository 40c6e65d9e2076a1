"""events.k8s.io/v1 Events on the fake API server, over HTTP.

Each test names the rule of a real kube-apiserver it checks and where it is written:
``pkg/apis/core/validation/events.go`` (``ValidateEventCreate``, ``ValidateEventUpdate``,
``legacyValidateEvent``, ``validateV1EventSeries``), ``pkg/apis/events/v1/conversion.go``
(the one stored object under two sets of names, and ``AddFieldLabelConversionsForEvent``),
``pkg/registry/core/event`` (one storage for both groups) and
``pkg/printers/internalversion/printers.go`` (``printEvent``).
"""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest

from aioinformer.testing import FakeApiServer

from .watching import decode, raw_lines

V1_EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"
CORE_EVENTS = "/api/v1/namespaces/default/events"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
WHEN = "2026-07-01T10:00:00.123456Z"


async def _json(response: aiohttp.ClientResponse) -> Any:
    return orjson.loads(await response.read())


def v1_event(name: str = "w.17a", **fields: Any) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as client-go's ``tools/events`` recorder writes it."""
    event: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": WHEN,
        "reportingController": "example.com/widget-operator",
        "reportingInstance": "example.com/widget-operator-host",
        "action": "Reconcile",
        "reason": "Reconciled",
        "note": "config map w-widget is up to date",
        "type": "Normal",
        "regarding": {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "namespace": "default",
            "name": "w",
            "uid": "u-1",
        },
    }
    event.update(fields)
    return event


async def _create(http: aiohttp.ClientSession, body: dict[str, Any]) -> aiohttp.ClientResponse:
    async with http.post(V1_EVENTS, json=body) as resp:
        await resp.read()
        return resp


async def _invalid(http: aiohttp.ClientSession, url: str, body: Any, method: str = "POST") -> str:
    async with http.request(method, url, json=body) as resp:
        answer = await _json(resp)
    assert resp.status == 422, answer
    assert answer["reason"] == "Invalid"
    return str(answer["message"])


async def test_discovery_serves_events_k8s_io_v1(http: aiohttp.ClientSession) -> None:
    """``/apis/events.k8s.io/v1`` lists ``events`` (kind Event, namespaced, short name ``ev``,
    every verb): ``pkg/registry/events/rest/storage_events.go``."""
    async with http.get("/apis/events.k8s.io/v1") as resp:
        listed = await _json(resp)
    [events] = [r for r in listed["resources"] if r["name"] == "events"]
    assert (events["kind"], events["namespaced"], events["shortNames"]) == ("Event", True, ["ev"])
    assert set(events["verbs"]) >= {"create", "get", "list", "watch", "patch", "update"}
    async with http.get("/apis") as resp:
        groups = {g["name"] for g in (await _json(resp))["groups"]}
    assert "events.k8s.io" in groups


async def test_one_stored_object_read_under_either_names(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """An Event created through events.k8s.io/v1 is the core/v1 Event of the same name
    (one storage, ``Convert_v1_Event_To_core_Event``): ``regarding`` is ``involvedObject``,
    ``note`` is ``message``, ``reportingController`` is ``reportingComponent``; a core/v1
    Event reads back through events.k8s.io/v1 with the deprecated fields renamed. Both
    share one resource version sequence and list each other's objects."""
    async with http.post(V1_EVENTS, json=v1_event()) as resp:
        assert resp.status == 201
        created = await _json(resp)
    assert created["apiVersion"] == "events.k8s.io/v1"
    assert created["regarding"]["name"] == "w" and created["note"].startswith("config map")
    assert created["deprecatedSource"] == {} and created["deprecatedFirstTimestamp"] is None
    async with http.get(f"{CORE_EVENTS}/w.17a") as resp:
        core = await _json(resp)
    assert core["apiVersion"] == "v1"
    assert core["involvedObject"] == created["regarding"]
    assert core["message"] == created["note"]
    assert core["reportingComponent"] == "example.com/widget-operator"
    assert core["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert "regarding" not in core and "note" not in core
    old_style = {
        "metadata": {"name": "old.1"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
        "reason": "Started",
        "message": "started container",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2026-07-01T10:00:00Z",
        "lastTimestamp": "2026-07-01T10:00:05Z",
        "count": 3,
        "type": "Normal",
    }
    async with http.post(CORE_EVENTS, json=old_style) as resp:
        assert resp.status == 201
    async with http.get(V1_EVENTS) as resp:
        listed = await _json(resp)
    assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
    by_name = {e["metadata"]["name"]: e for e in listed["items"]}
    assert set(by_name) == {"w.17a", "old.1"}
    old = by_name["old.1"]
    assert old["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    assert (old["deprecatedCount"], old["deprecatedLastTimestamp"]) == (3, "2026-07-01T10:00:05Z")
    assert old["regarding"]["name"] == "p" and "involvedObject" not in old
    assert fake_apiserver.objects.get("events.events.k8s.io", "old.1")["note"] == (
        "started container"
    )
    assert fake_apiserver.objects.get("events", "w.17a")["message"] == created["note"]


async def test_watches_of_either_group_see_writes_of_both(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """A watch of events.k8s.io/v1 Events sees Events written through core/v1, each under
    the events.k8s.io names, and a core/v1 watch the reverse (one watch cache of the stored
    objects, ``watchEmbeddedEncoder`` converting to the requested version)."""
    rv = fake_apiserver.objects.resource_version
    params = {"watch": "1", "resourceVersion": rv}
    async with (
        http.get(V1_EVENTS, params=params) as v1_watch,
        http.get(CORE_EVENTS, params=params) as core_watch,
    ):
        await fake_apiserver.requests.wait_for_watches(2)
        await _create(http, v1_event("a.1"))
        core_body = {
            "metadata": {"name": "b.1"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
            "reason": "Pulled",
            "message": "pulled",
        }
        async with http.post(CORE_EVENTS, json=core_body) as resp:
            assert resp.status == 201
        v1_events = decode(await raw_lines(v1_watch, 2))
        core_events = decode(await raw_lines(core_watch, 2))
    assert [(e["type"], e["object"]["apiVersion"]) for e in v1_events] == [
        ("ADDED", "events.k8s.io/v1"),
        ("ADDED", "events.k8s.io/v1"),
    ]
    assert v1_events[1]["object"]["note"] == "pulled"
    assert v1_events[1]["object"]["regarding"]["name"] == "p"
    assert [e["object"]["apiVersion"] for e in core_events] == ["v1", "v1"]
    assert core_events[0]["object"]["involvedObject"]["name"] == "w"


async def test_field_selectors_take_the_events_k8s_io_labels(
    http: aiohttp.ClientSession,
) -> None:
    """events.k8s.io/v1 selects on ``regarding.*``, ``reportingController``, ``reason``,
    ``type``, ``source`` and the metadata fields, mapped to the stored Event's
    ``involvedObject.*``/``reportingComponent`` (``AddFieldLabelConversionsForEvent``); the
    core/v1 names are not accepted there (``field label not supported``), and core/v1 keeps
    its own."""
    await _create(http, v1_event("a.1"))
    other = {"name": "x", "kind": "Widget", "apiVersion": "example.com/v1", "namespace": "default"}
    await _create(http, v1_event("b.1", regarding=other, reason="Cleanup", type="Warning"))

    async def names(url: str, selector: str) -> list[str]:
        async with http.get(url, params={"fieldSelector": selector}) as resp:
            body = await _json(resp)
        assert resp.status == 200, body
        return sorted(e["metadata"]["name"] for e in body["items"])

    assert await names(V1_EVENTS, "regarding.name=w") == ["a.1"]
    assert await names(V1_EVENTS, "reason=Cleanup,type=Warning") == ["b.1"]
    assert await names(V1_EVENTS, "reportingController=example.com/widget-operator") == [
        "a.1",
        "b.1",
    ]
    assert await names(V1_EVENTS, "source=example.com/widget-operator") == ["a.1", "b.1"]
    assert await names(CORE_EVENTS, "involvedObject.name=x") == ["b.1"]
    async with http.get(V1_EVENTS, params={"fieldSelector": "involvedObject.name=x"}) as resp:
        refused = await _json(resp)
    assert resp.status == 400
    assert refused["message"] == "field label not supported: involvedObject.name"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reportingController": ""}, "reportingController: Required value"),
        (
            {"reportingController": "not valid!"},
            'reportingController: Invalid value: "not valid!": name part must consist of',
        ),
        ({"reportingInstance": ""}, "reportingInstance: Required value"),
        (
            {"reportingInstance": "i" * 129},
            'reportingInstance: Invalid value: "": can have at most 128 characters',
        ),
        ({"action": ""}, "action: Required value"),
        ({"action": "a" * 129}, 'action: Invalid value: "": can have at most 128 characters'),
        ({"reason": ""}, "reason: Required value"),
        ({"reason": "r" * 129}, 'reason: Invalid value: "": can have at most 128 characters'),
        ({"note": "n" * 1025}, 'message: Invalid value: "": can have at most 1024 characters'),
        ({"type": "Fatal"}, 'type: Invalid value: "": has invalid value: Fatal'),
        ({"eventTime": None}, "eventTime: Required value"),
        (
            {"series": {"count": 1, "lastObservedTime": WHEN}},
            'series.count: Invalid value: "": should be at least 2',
        ),
        ({"series": {"count": 2}}, "series.lastObservedTime: Required value"),
        (
            {"deprecatedCount": 4},
            'count: Invalid value: "": needs to be unset',
        ),
        (
            {"deprecatedSource": {"component": "kubelet"}},
            'source: Invalid value: "": needs to be unset',
        ),
        (
            {"deprecatedFirstTimestamp": "2026-07-01T10:00:00Z"},
            'firstTimestamp: Invalid value: "": needs to be unset',
        ),
        (
            {"metadata": {"name": "Not_A_Subdomain", "namespace": "default"}},
            'metadata.name: Invalid value: "Not_A_Subdomain": a lowercase RFC 1123 subdomain',
        ),
    ],
)
async def test_events_k8s_io_v1_creates_are_validated(
    http: aiohttp.ClientSession, change: dict[str, Any], message: str
) -> None:
    """``ValidateEventCreate`` for events.k8s.io/v1: ``legacyValidateEvent`` (reporting
    controller and instance, action, reason, note, namespaces) and the strict part (event
    time, type, series, the deprecated fields unset); the paths are the internal ``core.Event``
    names, the kind ``Event``."""
    text = await _invalid(http, V1_EVENTS, v1_event(**change))
    assert text.startswith('Event "')
    assert message in text


async def test_a_new_style_event_about_a_cluster_object_lives_in_default_or_kube_system(
    fake_apiserver: FakeApiServer, http: aiohttp.ClientSession
) -> None:
    """An Event with ``eventTime`` whose ``regarding`` has no namespace (a Node) may only be
    in ``default`` or ``kube-system``; one about a namespaced object may be in any namespace
    (``legacyValidateEvent``)."""
    fake_apiserver.objects.create("namespaces", {"metadata": {"name": "team"}})
    node = {"apiVersion": "v1", "kind": "Node", "name": "n"}
    async with http.post(V1_EVENTS, json=v1_event("n.1", regarding=node)) as resp:
        assert resp.status == 201
    team = V1_EVENTS.replace("/default/", "/team/")
    body = v1_event("n.2", regarding=node)
    body["metadata"]["namespace"] = "team"
    text = await _invalid(http, team, body)
    assert 'involvedObject.namespace: Invalid value: "": does not match event.namespace' in text
    body = v1_event("w.2")
    body["metadata"]["namespace"] = "team"
    async with http.post(team, json=body) as resp:
        assert resp.status == 201  # regarding default/w from namespace team: allowed


async def test_core_v1_events_get_only_the_legacy_validation(
    http: aiohttp.ClientSession,
) -> None:
    """core/v1 Events keep their old leniency (``ValidateEventCreate`` with the core/v1
    request version: ``legacyValidateEvent`` only): no ``eventTime`` or ``type`` needed, the
    deprecated fields allowed, names only path segments; but an old-style Event outside its
    object's namespace, and a new-style one (``eventTime``) without a reporting controller,
    are refused."""
    lenient = {
        "metadata": {"name": "Mixed_Case.1"},
        "involvedObject": {"kind": "Node", "name": "n"},
        "count": 2,
        "type": "Whatever",
        "source": {"component": "kubelet"},
    }
    async with http.post(CORE_EVENTS, json=lenient) as resp:
        assert resp.status == 201, await resp.text()
    elsewhere = {**lenient, "metadata": {"name": "e.2"}}
    elsewhere["involvedObject"] = {"kind": "Pod", "name": "p", "namespace": "other"}
    text = await _invalid(http, CORE_EVENTS, elsewhere)
    assert 'involvedObject.namespace: Invalid value: "other": does not match' in text
    new_style = {**lenient, "metadata": {"name": "e.3"}, "eventTime": WHEN}
    text = await _invalid(http, CORE_EVENTS, new_style)
    assert "reportingController: Required value" in text
    assert "action: Required value" in text and "reason: Required value" in text


async def test_series_patches_pass_and_other_changes_are_immutable(
    http: aiohttp.ClientSession,
) -> None:
    """On an events.k8s.io/v1 update only ``series`` (and metadata) may change
    (``ValidateEventUpdate``: every other field ``ValidateImmutableField``, the series
    checked again when it changed): client-go's series PATCH
    (``{"series":{"count":2,"lastObservedTime":…}}``, strategic merge) passes; a PATCH of
    ``note`` or ``reason`` is 422 ``field is immutable``; through core/v1 the same Event may
    change (legacy validation only)."""
    await _create(http, v1_event())
    url = f"{V1_EVENTS}/w.17a"
    series = {"series": {"count": 2, "lastObservedTime": "2026-07-01T10:01:00.000000Z"}}
    async with http.patch(url, data=orjson.dumps(series), headers=STRATEGIC) as resp:
        patched = await _json(resp)
    assert resp.status == 200, patched
    assert patched["series"]["count"] == 2
    bad_series = {"series": {"count": 1, "lastObservedTime": WHEN}}
    async with http.patch(url, data=orjson.dumps(bad_series), headers=STRATEGIC) as resp:
        assert resp.status == 422
        assert "series.count: Invalid value" in (await _json(resp))["message"]
    note = {"note": "changed", "reason": "Other"}
    async with http.patch(url, data=orjson.dumps(note), headers=STRATEGIC) as resp:
        refused = await _json(resp)
    assert resp.status == 422
    assert 'message: Invalid value: "changed": field is immutable' in refused["message"]
    assert 'reason: Invalid value: "Other": field is immutable' in refused["message"]
    reasons = [c for c in refused["details"]["causes"] if c["field"] == "reason"]
    assert len(reasons) == 2  # checked twice by ValidateEventUpdate
    core_url = f"{CORE_EVENTS}/w.17a"
    async with http.patch(core_url, data=orjson.dumps({"message": "changed"}), headers=STRATEGIC):
        pass
    async with http.get(url) as resp:
        assert (await _json(resp))["note"] == "changed"


async def test_kubectl_columns_for_events_k8s_io(http: aiohttp.ClientSession) -> None:
    """``kubectl get events.events.k8s.io`` gets the core Event's columns (``printEvent`` of
    the one internal type): LAST SEEN, TYPE, REASON, OBJECT (``kind/name``, lower-cased),
    MESSAGE, and priority-1 SUBOBJECT, SOURCE, FIRST SEEN, COUNT (the series count), NAME."""
    series = {"count": 4, "lastObservedTime": WHEN}
    await _create(http, v1_event(series=series))
    async with http.get(V1_EVENTS, headers=TABLE) as resp:
        table = await _json(resp)
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == [
        "Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message",
        "First Seen", "Count", "Name",
    ]  # fmt: skip
    [row] = table["rows"]
    cells = dict(zip(names, row["cells"], strict=True))
    assert (cells["Type"], cells["Reason"], cells["Object"]) == ("Normal", "Reconciled", "widget/w")
    assert cells["Source"] == "example.com/widget-operator, example.com/widget-operator-host"
    assert (cells["Count"], cells["Name"]) == (4, "w.17a")
    assert cells["Message"] == "config map w-widget is up to date"
