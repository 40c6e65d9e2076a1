"""Label and field selector parsing and matching of the fake API server (more cases, with
the server's messages, in ``selector_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing import BUILTIN_RESOURCES, ResourceInfo
from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._selectors._matching import (
    Matcher,
    compile_selectors,
    field_value,
)

PODS = next(info for info in BUILTIN_RESOURCES if info.plural == "pods")
WIDGETS = ResourceInfo(
    "example.com", "v1", "widgets", "Widget", True, selectable_fields=("spec.colour",)
)


def _compile(label_selector: str, field_selector: str, info: ResourceInfo = PODS) -> Matcher | None:
    return compile_selectors(label_selector, field_selector, info)


def _pod(labels: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "ns", "labels": labels}, **extra}


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("a=b", {"a": "b"}, True),
        ("a==b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a!=b", {}, True),
        ("a!=b", {"a": "b"}, False),
        ("a in (x, y)", {"a": "y"}, True),
        ("a in (x,y)", {"a": "z"}, False),
        ("a notin (x,y)", {}, True),
        ("a notin (x,y)", {"a": "x"}, False),
        ("a", {"a": ""}, True),
        ("a", {}, False),
        ("!a", {}, True),
        ("!a", {"a": "1"}, False),
        ("a>3", {"a": "4"}, True),
        ("a>3", {"a": "3"}, False),
        ("a<3", {"a": "x"}, False),
        ("a=", {"a": ""}, True),
        (
            "app.kubernetes.io/name=web,tier in (fe), !legacy",
            {"app.kubernetes.io/name": "web", "tier": "fe"},
            True,
        ),
        (
            "app.kubernetes.io/name=web,tier in (fe), !legacy",
            {"app.kubernetes.io/name": "web", "tier": "fe", "legacy": "1"},
            False,
        ),
        ("", {"anything": "x"}, True),
    ],
)
def test_label_selector_matches_like_the_api_server(
    selector: str, labels: dict[str, str], expected: bool
) -> None:
    """Every label selector operator matches as in Kubernetes."""
    matcher = _compile(selector, "")
    assert (matcher is None or matcher(_pod(labels))) is expected


@pytest.mark.parametrize(
    "selector", ["a in (x", "=b", "a b", "a>x", "a=b=c", "-bad=x", "a=(", "a notin"]
)
def test_invalid_label_selectors_are_refused(selector: str) -> None:
    """Malformed label selectors are refused with a 400 BadRequest."""
    with pytest.raises(StatusFailure) as caught:
        _compile(selector, "")
    assert (caught.value.code, caught.value.reason) == (400, "BadRequest")


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("metadata.name=p", True),
        ("metadata.name==p,metadata.namespace=ns", True),
        ("metadata.namespace!=ns", False),
        ("spec.nodeName=n1", True),
        ("spec.nodeName!=n1", False),
        ("status.phase=Running", False),
        ("status.phase=", True),
    ],
)
def test_field_selector_matches_selectable_fields(selector: str, expected: bool) -> None:
    """Field selectors compare the string value of a field; a missing field is ``""``."""
    matcher = _compile("", selector)
    assert matcher is not None
    assert matcher(_pod({}, spec={"nodeName": "n1"})) is expected


def test_field_selector_on_an_unsupported_field_is_refused() -> None:
    """A field the resource does not declare selectable is an error, as on the server."""
    with pytest.raises(StatusFailure, match=r"^field label not supported: spec\.foo$"):
        _compile("", "spec.foo=x")


def test_field_selector_values_may_escape_commas_and_equals() -> None:
    """``\\,`` and ``\\=`` are literal characters in a field selector value."""
    matcher = _compile("", r"metadata.name=a\,b\=c")
    assert matcher is not None
    assert matcher({"metadata": {"name": "a,b=c"}})


def test_field_value_renders_booleans_and_numbers_like_the_server() -> None:
    """Booleans are ``true``/``false`` and numbers their decimal text."""
    obj = {"spec": {"hostNetwork": True, "unschedulable": False}, "status": {"replicas": 3}}
    assert field_value(obj, "spec.hostNetwork") == "true"
    assert field_value(obj, "spec.unschedulable") == "false"
    assert field_value(obj, "status.replicas") == "3"
    assert field_value(obj, "spec.nodeName") == ""


def test_typed_fields_read_their_zero_value_when_absent() -> None:
    """The server's field set holds Go values: an absent bool is ``false``, an absent count
    ``0`` (``ToSelectableFields`` of pods, nodes, replica sets and jobs)."""
    assert field_value({}, "spec.hostNetwork") == "false"
    assert field_value({}, "spec.unschedulable") == "false"
    assert field_value({}, "status.replicas") == "0"
    assert field_value({"status": {"succeeded": 2}}, "status.successful") == "2"


def test_an_events_source_falls_back_to_its_reporting_component() -> None:
    """``source`` is ``source.component``, else ``reportingComponent`` (core/v1 events)."""
    assert field_value({"source": {"component": "kubelet"}}, "source") == "kubelet"
    assert field_value({"reportingComponent": "ctrl"}, "source") == "ctrl"


def test_custom_resources_select_on_their_selectable_fields() -> None:
    """A custom resource's ``selectableFields`` work as field selectors; others are refused."""
    matcher = _compile("", "spec.colour=blue", WIDGETS)
    assert matcher is not None and matcher({"spec": {"colour": "blue"}})
    with pytest.raises(StatusFailure, match=r"^field label not supported: spec\.size$"):
        _compile("", "spec.size=1", WIDGETS)
