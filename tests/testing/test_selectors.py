"""Label and field selector parsing and matching of the fake API server."""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.errors import SelectorSyntaxError
from aioinformer.testing._selectors import compile_selectors, field_value

POD_FIELDS = ("metadata.name", "metadata.namespace", "spec.nodeName", "status.phase")


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
    matcher = compile_selectors(selector, "", POD_FIELDS)
    assert (matcher is None or matcher(_pod(labels))) is expected


@pytest.mark.parametrize(
    "selector", ["a in (x", "=b", "a b", "a>x", "a=b=c", "-bad=x", "a=(", "a notin"]
)
def test_invalid_label_selectors_are_refused(selector: str) -> None:
    """Malformed label selectors raise SelectorSyntaxError."""
    with pytest.raises(SelectorSyntaxError):
        compile_selectors(selector, "", POD_FIELDS)


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
    matcher = compile_selectors("", selector, POD_FIELDS)
    assert matcher is not None
    assert matcher(_pod({}, spec={"nodeName": "n1"})) is expected


def test_field_selector_on_an_unsupported_field_is_refused() -> None:
    """A field the resource does not declare selectable is an error, as on the server."""
    with pytest.raises(SelectorSyntaxError, match=r"field label not supported: spec\.foo"):
        compile_selectors("", "spec.foo=x", POD_FIELDS)


def test_field_selector_values_may_escape_commas_and_equals() -> None:
    """``\\,`` and ``\\=`` are literal characters in a field selector value."""
    matcher = compile_selectors("", r"metadata.name=a\,b\=c", POD_FIELDS)
    assert matcher is not None
    assert matcher({"metadata": {"name": "a,b=c"}})


def test_field_value_renders_booleans_and_numbers_like_the_server() -> None:
    """Booleans are ``true``/``false`` and numbers their decimal text."""
    obj = {"spec": {"hostNetwork": True, "unschedulable": False}, "status": {"replicas": 3}}
    assert field_value(obj, "spec.hostNetwork") == "true"
    assert field_value(obj, "spec.unschedulable") == "false"
    assert field_value(obj, "status.replicas") == "3"
    assert field_value(obj, "spec.nodeName") == ""
