"""Golden selector cases (``selector_cases.py``) against both implementations.

The fake API server must answer every case exactly as kube-apiserver does: the same match,
or a 400 BadRequest with the same message. The client's parser must agree on what matches
and what is refused (its messages are its own). A bug on one side therefore cannot hide
behind the same bug on the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from aioinformer._cache._selectors import parse_field_selector, parse_label_selector
from aioinformer.errors import SelectorSyntaxError
from aioinformer.testing import BUILTIN_RESOURCES, ResourceInfo
from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._selectors._matching import compile_selectors

from .selector_cases import FIELD_CASES, LABEL_CASES, FieldCase, LabelCase

RESOURCES = {info.plural: info for info in BUILTIN_RESOURCES}
PODS = RESOURCES["pods"]


def _fake_verdict(
    label_selector: str, field_selector: str, info: ResourceInfo, obj: Mapping[str, Any]
) -> bool | str:
    try:
        matcher = compile_selectors(label_selector, field_selector, info)
    except StatusFailure as failure:
        assert (failure.code, failure.reason) == (400, "BadRequest")
        return failure.message
    return matcher is None or matcher(obj)


def _client_verdict(match: Callable[[], bool]) -> bool | None:
    """The client's match, or None when it refuses the selector."""
    try:
        return match()
    except SelectorSyntaxError:
        return None


def _client_cases(cases: tuple[Any, ...]) -> list[Any]:
    return [
        pytest.param(
            case,
            marks=pytest.mark.xfail(reason=f"client bug: {case.client_bug}", strict=True),
            id=repr(case.selector),
        )
        if case.client_bug
        else pytest.param(case, id=repr(case.selector))
        for case in cases
        if not getattr(case, "server_only", False)
    ]


@pytest.mark.parametrize("case", LABEL_CASES, ids=lambda c: repr(c.selector))
def test_the_fake_answers_label_selectors_as_kube_apiserver(case: LabelCase) -> None:
    """Matches and refusal messages of ``labels.Parse`` (origins: ``selector_cases.py``)."""
    obj = {"metadata": {"name": "p", "namespace": "ns", "labels": case.labels}}
    assert _fake_verdict(case.selector, "", PODS, obj) == case.expected


@pytest.mark.parametrize("case", _client_cases(LABEL_CASES))
def test_the_client_agrees_on_label_selectors(case: LabelCase) -> None:
    """The client selects what the server selects and refuses what it refuses."""
    verdict = _client_verdict(lambda: parse_label_selector(case.selector).matches(case.labels))
    assert verdict == (None if isinstance(case.expected, str) else case.expected)


@pytest.mark.parametrize("case", FIELD_CASES, ids=lambda c: f"{c.resource}:{c.selector!r}")
def test_the_fake_answers_field_selectors_as_kube_apiserver(case: FieldCase) -> None:
    """Matches and refusal messages of ``fields.ParseSelector`` and the kinds' field-label
    conversions (origins: ``selector_cases.py``)."""
    info = RESOURCES[case.resource]
    assert _fake_verdict("", case.selector, info, case.obj) == case.expected


@pytest.mark.parametrize("case", _client_cases(FIELD_CASES))
def test_the_client_agrees_on_field_selectors(case: FieldCase) -> None:
    """The client selects what the server selects and refuses what it refuses to parse."""
    verdict = _client_verdict(lambda: parse_field_selector(case.selector).matches_object(case.obj))
    assert verdict == (None if isinstance(case.expected, str) else case.expected)


def test_a_label_selector_error_wins_over_a_field_selector_error() -> None:
    """The server decodes ``labelSelector`` before ``fieldSelector`` (``ListOptions`` field
    order in ``metainternalversion``), so a request with two bad selectors gets the label
    one's message."""
    verdict = _fake_verdict("a b", "spec.foo=x", PODS, {})
    assert (
        verdict == "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
    )


def test_the_case_table_is_large_enough_to_mean_something() -> None:
    """Both tables cover matches and refusals (a guard against an emptied table)."""
    for cases in (LABEL_CASES, FIELD_CASES):
        kinds = {type(case.expected) for case in cases}
        assert kinds == {bool, str} and len(cases) >= 25
