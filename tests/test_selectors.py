"""Label and field selectors: Kubernetes syntax, matching and errors."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aioinformer._cache._selectors import (
    FieldSelector,
    LabelSelector,
    Operator,
    Requirement,
    label_selector_from_spec,
    parse_field_selector,
    parse_label_selector,
)
from aioinformer.errors import SelectorSyntaxError


def req(key: str, op: Operator, *values: str) -> Requirement:
    return Requirement(key, op, frozenset(values))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=b", [req("a", Operator.EQUALS, "b")]),
        ("a==b", [req("a", Operator.DOUBLE_EQUALS, "b")]),
        ("a!=b", [req("a", Operator.NOT_EQUALS, "b")]),
        ("a in (x,y)", [req("a", Operator.IN, "x", "y")]),
        ("a notin (x)", [req("a", Operator.NOT_IN, "x")]),
        ("a", [req("a", Operator.EXISTS)]),
        ("!a", [req("a", Operator.DOES_NOT_EXIST)]),
        ("a>3,b<10", [req("a", Operator.GREATER_THAN, "3"), req("b", Operator.LESS_THAN, "10")]),
        ("a=", [req("a", Operator.EQUALS, "")]),
        ("a in (x,,y)", [req("a", Operator.IN, "x", "", "y")]),
        ("a in ()", [req("a", Operator.IN, "")]),  # Kubernetes: () is the empty value
        ("a notin (x,)", [req("a", Operator.NOT_IN, "x", "")]),
        (
            "  example.com/app = web , tier notin( db , cache ) ,!canary ",
            [
                req("example.com/app", Operator.EQUALS, "web"),
                req("tier", Operator.NOT_IN, "db", "cache"),
                req("canary", Operator.DOES_NOT_EXIST),
            ],
        ),
    ],
)
def test_parse(text: str, expected: list[Requirement]) -> None:
    """Every operator of the Kubernetes grammar parses into its requirement."""
    assert parse_label_selector(text).requirements == tuple(expected)


@pytest.mark.parametrize("text", [None, "", "   "])
def test_the_empty_selector_matches_everything(text: str | None) -> None:
    """None, "" and blanks give the empty selector, which matches any labels."""
    selector = parse_label_selector(text)
    assert selector.empty and selector == LabelSelector()
    assert selector.matches({}) and selector.matches(None) and selector.matches({"a": "b"})


LABELS = {"app": "web", "tier": "front", "replicas": "3", "empty": ""}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("app!=db", True),
        ("app!=web", False),
        ("missing!=x", True),  # != holds when the label is absent
        ("app in (db,web)", True),
        ("app in (db)", False),
        ("missing in (x)", False),
        ("app notin (db)", True),
        ("app notin (web)", False),
        ("missing notin (x)", True),  # notin holds when the label is absent
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("empty=", True),
        ("empty", True),
        ("replicas>2", True),
        ("replicas>3", False),
        ("replicas<4", True),
        ("app>1", False),  # not an integer: no match
        ("missing<9", False),
        ("app=web,tier=front", True),
        ("app=web,tier=back", False),
    ],
)
def test_matching(text: str, matches: bool) -> None:
    """Matching follows Kubernetes, including absent labels for != and notin."""
    assert parse_label_selector(text).matches(LABELS) is matches
    assert parse_label_selector(text).matches_object({"metadata": {"labels": LABELS}}) is matches


def test_objects_without_labels() -> None:
    """An object without metadata.labels has no labels."""
    assert parse_label_selector("!a").matches_object({"metadata": {"name": "x"}})
    assert not parse_label_selector("a").matches_object({})


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a in web", "'in' must be followed by '('"),
        ("a notin", "'notin' must be followed by '('"),
        ("a in (b", "expected ',' or ')'"),
        ("a in (b c)", "expected ',' or ')' but found 'c'"),
        ("=b", "expected a label key but found '='"),
        ("a=b=c", "expected ',' but found '='"),
        ("a,", "expected a label key"),
        (",a", "expected a label key but found ','"),
        ("a=b,,c", "position 4"),
        ("a b", "unknown operator 'b'"),
        ("!", "expected a label key after '!'"),
        ("!a=b", "expected ','"),
        ("a>b", "'>' needs an integer value"),
        ("-bad=1", "invalid label key '-bad'"),
        ("x" * 64 + "=1", "invalid label key"),
        ("Foo.com/a", "invalid label key"),
        ("a/b/c=1", "invalid label key"),
        ("a=-bad", "invalid label value '-bad'"),
        ("a=" + "v" * 64, "invalid label value"),
        ("a=(b)", "expected a value but found '('"),
        ("a!b", "unknown operator '!'"),
    ],
)
def test_bad_syntax_says_what_and_where(text: str, fragment: str) -> None:
    """Malformed selectors raise SelectorSyntaxError naming the problem and quoting the input."""
    with pytest.raises(SelectorSyntaxError) as caught:
        parse_label_selector(text)
    message = str(caught.value)
    assert fragment in message
    assert "position" in message and repr(text) in message


def test_str_is_parseable() -> None:
    """str() of a selector is canonical Kubernetes syntax that parses back to it."""
    selector = parse_label_selector("b notin (y,x), a , !c,d==1,e>2")
    assert str(selector) == "b notin (x,y),a,!c,d==1,e>2"
    assert parse_label_selector(str(selector)) == selector


KEYS = st.sampled_from(["a", "b", "app.kubernetes.io/name", "x-y_z.1"])
VALUES = st.sampled_from(["", "v", "web", "a.b-c_d", "0"])


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    key = draw(KEYS)
    op = draw(st.sampled_from(list(Operator)))
    if op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        return Requirement(key, op)
    if op in (Operator.GREATER_THAN, Operator.LESS_THAN):
        return Requirement(key, op, frozenset({str(draw(st.integers(0, 5)))}))
    if op in (Operator.IN, Operator.NOT_IN):
        return Requirement(key, op, frozenset(draw(st.sets(VALUES, min_size=1, max_size=3))))
    return Requirement(key, op, frozenset({draw(VALUES)}))


def model_matches(requirement: Requirement, labels: dict[str, str]) -> bool:
    """The Kubernetes rules, written out plainly."""
    key, op, values = requirement.key, requirement.operator, requirement.values
    present = key in labels
    if op is Operator.EXISTS:
        return present
    if op is Operator.DOES_NOT_EXIST:
        return not present
    if op in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN):
        return present and labels[key] in values
    if op in (Operator.NOT_EQUALS, Operator.NOT_IN):
        return not present or labels[key] not in values
    if not present or not re.fullmatch(r"[+-]?[0-9]+", labels[key]):
        return False
    (limit,) = values
    if op is Operator.GREATER_THAN:
        return int(labels[key]) > int(limit)
    return int(labels[key]) < int(limit)


@given(
    st.lists(requirements(), min_size=1, max_size=4),
    st.dictionaries(KEYS, st.one_of(VALUES, st.integers(-5, 5).map(str)), max_size=4),
)
def test_round_trip_and_matching_agree_with_a_model(
    reqs: list[Requirement], labels: dict[str, str]
) -> None:
    """Any selector prints, parses back equal, and matches exactly like the plain rules."""
    selector = LabelSelector(tuple(reqs))
    assert parse_label_selector(str(selector)) == selector
    assert selector.matches(labels) == all(model_matches(r, labels) for r in reqs)


def test_selector_from_a_label_selector_spec() -> None:
    """matchLabels and matchExpressions become requirements (all must hold)."""
    selector = label_selector_from_spec(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "edge"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "track", "operator": "NotIn", "values": ["beta"]},
                {"key": "owner", "operator": "Exists"},
            ],
        }
    )
    assert selector.matches({"app": "web", "tier": "edge", "owner": "me"})
    assert not selector.matches({"app": "web", "tier": "edge", "owner": "me", "canary": "1"})
    assert not selector.matches({"app": "web", "tier": "back", "owner": "me"})
    assert label_selector_from_spec(None).empty and label_selector_from_spec({}).empty


@pytest.mark.parametrize(
    "spec",
    [
        {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
        {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
        {"matchExpressions": [{"key": "-a", "operator": "Exists"}]},
        {"matchLabels": {"a": "-bad"}},
    ],
)
def test_bad_label_selector_specs(spec: dict[str, object]) -> None:
    """Unknown operators, empty value sets and invalid keys or values raise."""
    with pytest.raises(SelectorSyntaxError):
        label_selector_from_spec(spec)


def test_field_selectors() -> None:
    """Field selectors: = / == / != terms, all must hold; a missing field is ""."""
    selector = parse_field_selector("spec.nodeName=node-1, status.phase!=Running,metadata.name==x")
    assert selector.terms == (
        ("spec.nodeName", "=", "node-1"),
        ("status.phase", "!=", "Running"),
        ("metadata.name", "=", "x"),
    )
    fields = {"spec.nodeName": "node-1", "status.phase": "Pending", "metadata.name": "x"}
    assert selector.matches(fields)
    assert not selector.matches({**fields, "status.phase": "Running"})
    assert not selector.matches({})
    assert parse_field_selector("a=").matches({})
    assert str(selector) == "spec.nodeName=node-1,status.phase!=Running,metadata.name=x"
    assert parse_field_selector(None) == FieldSelector() and FieldSelector().empty


@pytest.mark.parametrize("text", ["a", "=b", "a<b"])
def test_bad_field_selectors(text: str) -> None:
    """A field selector term without a field name or operator raises."""
    with pytest.raises(SelectorSyntaxError, match="invalid field selector term"):
        parse_field_selector(text)


def test_field_selector_values_may_escape_commas_equals_and_backslashes() -> None:
    """`\\,`, `\\=` and `\\\\` in a value stand for the character; str() escapes them back."""
    from aioinformer._cache._selectors import parse_field_selector

    selector = parse_field_selector(r"metadata.name=a\,b\=c\\d,spec.nodeName!=n1")
    assert selector.terms == (("metadata.name", "=", "a,b=c\\d"), ("spec.nodeName", "!=", "n1"))
    assert parse_field_selector(str(selector)) == selector


def test_field_selector_matches_object_fields_like_the_api_server() -> None:
    """Objects are matched on dotted field paths; booleans compare as true/false."""
    from aioinformer._cache._selectors import field_value, parse_field_selector

    pod = {"metadata": {"name": "web"}, "spec": {"nodeName": "n1", "hostNetwork": True}}
    assert field_value(pod, "spec.hostNetwork") == "true"
    assert field_value(pod, "status.phase") == ""
    assert parse_field_selector("spec.nodeName=n1,status.phase!=Running").matches_object(pod)
    assert not parse_field_selector("metadata.name=db").matches_object(pod)


@pytest.mark.parametrize("text", [r"a=b\x", "a=b\\", "=b", "nooperator"])
def test_bad_field_selectors_are_refused(text: str) -> None:
    """Bad escapes, a trailing backslash, a missing field name or operator raise."""
    from aioinformer._cache._selectors import parse_field_selector

    with pytest.raises(SelectorSyntaxError):
        parse_field_selector(text)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("x>-1", "invalid bound '-1' for '>'"),  # a valid int64, not a valid label value
        ("x<+1", "invalid bound '+1' for '<'"),
        ("x>" + "0" * 63 + "1", "invalid bound"),  # 64 characters: too long for a label value
        ("x>99999999999999999999", "'>' needs an integer value"),
        ("x>9223372036854775808", "'>' needs an integer value"),  # int64 max + 1
        ("x>1_0", "'>' needs an integer value"),  # Go's ParseInt has no '_' in base 10
        ("x>\u0661", "'>' needs an integer value"),  # int() reads Arabic-Indic digits; Go does not
        ("x>", "'>' needs an integer value"),
    ],
)
def test_a_bound_is_an_int64_that_is_also_a_label_value(text: str, fragment: str) -> None:
    """``labels.NewRequirement``: a ``Gt``/``Lt`` bound must parse with
    ``strconv.ParseInt(v, 10, 64)`` and be a valid label value, so it has no sign."""
    with pytest.raises(SelectorSyntaxError, match=re.escape(fragment)):
        parse_label_selector(text)


@pytest.mark.parametrize(
    ("text", "labels", "matches"),
    [
        ("x>9223372036854775806", {"x": "9223372036854775807"}, True),  # int64 max
        ("x<9223372036854775807", {"x": "-9223372036854775808"}, True),  # int64 min
        ("x>1", {"x": "9223372036854775808"}, False),  # beyond int64: no number
        ("x<1", {"x": "-9223372036854775809"}, False),
        ("x>007", {"x": "8"}, True),
        ("x>1", {"x": "1_0"}, False),  # int() would read 10
        ("x>1", {"x": " 5"}, False),  # int() would strip the blank
        ("x>1", {"x": "\u0663"}, False),  # int() would read 3
        ("x>1", {"x": "+5"}, True),  # Go's ParseInt takes a sign
        ("x<0", {"x": "-3"}, True),
        ("x>1", {"x": ""}, False),
    ],
)
def test_gt_and_lt_read_label_values_as_go_parse_int(
    text: str, labels: dict[str, str], matches: bool
) -> None:
    """``Requirement.Matches``: a label value that ``strconv.ParseInt(v, 10, 64)`` refuses
    matches neither ``>`` nor ``<``."""
    assert parse_label_selector(text).matches(labels) is matches


@pytest.mark.parametrize("bound", ["1_0", "99999999999999999999", "x", ""])
def test_a_requirement_built_with_a_bad_bound_matches_nothing(bound: str) -> None:
    """Like ``Requirement.Matches``, a bound that is no int64 matches no labels (a
    ``Requirement`` built directly is not checked), nor does a ``>``/``<`` with two bounds."""
    for op in (Operator.GREATER_THAN, Operator.LESS_THAN):
        assert not req("x", op, bound).matches({"x": "5"})
    assert not Requirement("x", Operator.GREATER_THAN, frozenset({"1", "2"})).matches({"x": "5"})


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("metadata.name=p,", (("metadata.name", "=", "p"),)),
        (",metadata.name=p", (("metadata.name", "=", "p"),)),
        ("a=1,,b!=2", (("a", "=", "1"), ("b", "!=", "2"))),
        (",", ()),
        (",,", ()),
        (r"a=x\,", (("a", "=", "x,"),)),  # an escaped comma ends no term
    ],
)
def test_empty_field_selector_terms_are_skipped(
    text: str, terms: tuple[tuple[str, str, str], ...]
) -> None:
    """``fields.ParseSelector`` skips empty terms; only empty terms select everything."""
    selector = parse_field_selector(text)
    assert selector.terms == terms
    assert selector.empty is (not terms)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("metadata.name=a=b", "unescaped '=' in the value of 'metadata.name=a=b'"),
        ("z=1,a=b=c", "unescaped '=' in the value of 'a=b=c'"),
        ("a==b=c", "unescaped '='"),
        ("a!==b", "unescaped '='"),  # '!=' then the value '=b'
        # The field name has no escapes: the term splits at the first '=' after 'metadata\'.
        (r"metadata\=name=x", r"unescaped '=' in the value of 'metadata\\=name=x'"),
    ],
)
def test_an_unescaped_equals_sign_in_a_field_value_is_refused(text: str, fragment: str) -> None:
    """``fields.UnescapeValue`` refuses a bare ``=`` (or ``,``) in a value; ``splitTerm``
    splits at the first operator, escaped or not."""
    with pytest.raises(SelectorSyntaxError, match=re.escape(fragment)):
        parse_field_selector(text)


def test_a_field_term_splits_at_its_first_operator() -> None:
    """``splitTerm`` tries ``!=``, ``==`` and ``=`` at each position in turn."""
    assert parse_field_selector("a!=b").terms == (("a", "!=", "b"),)
    assert parse_field_selector("a==b").terms == (("a", "=", "b"),)
    assert parse_field_selector(r"a=\=b").terms == (("a", "=", "=b"),)
    assert parse_field_selector("a!b=c").terms == (("a!b", "=", "c"),)


FIELD_NAMES = st.sampled_from(["metadata.name", "spec.nodeName", "status.phase"])


@given(st.lists(st.tuples(FIELD_NAMES, st.sampled_from(["=", "!="]), st.text()), max_size=4))
def test_field_selectors_print_and_parse_back(terms: list[tuple[str, str, str]]) -> None:
    """Any values, commas, equals signs and backslashes included, survive str() and parse."""
    selector = FieldSelector(tuple(terms))
    assert parse_field_selector(str(selector)) == selector


POD = {"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}}


@pytest.mark.parametrize(
    ("obj", "field", "value"),
    [
        # pkg/registry/core/pod/strategy.go ToSelectableFields
        (POD, "spec.hostNetwork", "false"),
        ({"spec": {"hostNetwork": True}}, "spec.hostNetwork", "true"),
        ({"apiVersion": "v1", "kind": "Pod", **POD}, "spec.hostNetwork", "false"),
        ({"kind": "Pod", **POD}, "spec.hostNetwork", "false"),
        (POD, "spec.host", "n1"),  # the v1 conversion's old name for spec.nodeName
        (POD, "status.phase", ""),
        # pkg/registry/core/node/strategy.go NodeToSelectableFields
        ({"metadata": {"name": "n"}}, "spec.unschedulable", "false"),
        ({"spec": {"unschedulable": True}}, "spec.unschedulable", "true"),
        # the ReplicaSet and ReplicationController strategies
        ({"apiVersion": "apps/v1", "kind": "ReplicaSet"}, "status.replicas", "0"),
        ({"apiVersion": "v1", "kind": "ReplicationController"}, "status.replicas", "0"),
        ({"status": {"replicas": 3}}, "status.replicas", "3"),
        # pkg/registry/batch/job/strategy.go JobToSelectableFields: Status.Succeeded
        ({"status": {"succeeded": 2}}, "status.successful", "2"),
        ({"status": {"successful": 2}}, "status.successful", "0"),
        # pkg/registry/core/event/strategy.go: Source.Component, else ReportingController
        ({"source": {"component": "kubelet"}}, "source", "kubelet"),
        ({"source": {}, "reportingComponent": "ctrl"}, "source", "ctrl"),
        ({"source": {"component": "a"}, "reportingComponent": "b"}, "source", "a"),
        # a custom resource (apiextensions v1 SelectableField: absent means "")
        ({"apiVersion": "example.com/v1", "kind": "Widget"}, "spec.hostNetwork", ""),
        ({"apiVersion": "example.com/v1", "kind": "Widget"}, "status.replicas", ""),
        ({"apiVersion": "example.com/v1", "kind": "Pod"}, "spec.hostNetwork", ""),
        (
            {"apiVersion": "example.com/v1", "kind": "W", "status": {"successful": 1}},
            "status.successful",
            "1",
        ),
        (
            {"apiVersion": "example.com/v1", "kind": "W", "source": "s", "reportingComponent": "r"},
            "source",
            "s",
        ),
        ({"apiVersion": "example.com/v1", "kind": "W", "spec": {"n": 7}}, "spec.n", "7"),
    ],
)
def test_field_values_are_what_the_server_field_sets_hold(
    obj: dict[str, object], field: str, value: str
) -> None:
    """A built-in kind's typed field reads as its Go zero value when absent, and a few labels
    name another field; an object naming another kind is read at the label's path."""
    from aioinformer._cache._selectors import field_value

    assert field_value(obj, field) == value


def test_an_absent_bool_field_selects_on_false() -> None:
    """``spec.hostNetwork=false`` selects a pod that leaves the field out, as on the server."""
    assert parse_field_selector("spec.hostNetwork=false").matches_object(POD)
    assert not parse_field_selector("spec.hostNetwork!=false").matches_object(POD)
    assert not parse_field_selector("spec.hostNetwork=").matches_object(POD)
