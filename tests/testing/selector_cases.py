"""Golden selector cases: what kube-apiserver answers, run against the fake and the client.

One table, two implementations: the fake API server's own parser
(:mod:`aioinformer.testing._apiserver._selectors._labels`,
:mod:`aioinformer.testing._apiserver._selectors._fields`) and the client's
(:mod:`aioinformer._cache._selectors`).
An ``expected`` of True or False is whether the selector selects the labels or object; a
string is the message of the server's 400 BadRequest for a selector it refuses.

Where the cases come from:

* ``k8s.io/apimachinery/pkg/labels/selector_test.go`` (``TestSelectorParse``,
  ``TestSelectorMatches``, ``TestSetSelectorParser``, ``TestRequirementSelectorMatching``):
  which selectors parse and what they match;
* ``labels/selector.go`` (``Parse``, ``NewRequirement``), ``fields/selector.go``
  (``ParseSelector``, ``UnescapeValue``) and ``api/validate/content`` (``IsLabelKey``,
  ``IsLabelValue``): the messages, which apiserver's ``ListResource`` answers as
  ``errors.NewBadRequest(err.Error())``;
* ``k8s.io/kubernetes`` ``pkg/apis/core/v1/conversion.go`` (the Pod and Node field-label
  conversions) and ``runtime.DefaultMetaV1FieldSelectorConversion``: which fields a kind
  selects on; the ``ToSelectableFields`` of ``pkg/registry/core/pod/strategy.go`` (and of the
  node, replicaset, job and event strategies): the values.

``client_bug`` names a known divergence of the client from the server (the client case is an
expected failure until it is fixed); ``server_only`` marks what only a server checks (a
kind's field-label conversion), where the client must merely accept the selector.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["FIELD_CASES", "LABEL_CASES", "FieldCase", "LabelCase"]

_KEY_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    r"used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_INTEGER = "for 'Gt', 'Lt' operators, the value must be an integer"
_OPERATORS = "in, notin, =, ==, !=, gt, lt"
_PARSE = "unable to parse requirement: "


@dataclass(frozen=True)
class LabelCase:
    """A label selector, labels, and the server's verdict (match or refusal message)."""

    selector: str
    labels: dict[str, str]
    expected: bool | str
    client_bug: str = ""


@dataclass(frozen=True)
class FieldCase:
    """A field selector on a pod (or another kind), and the server's verdict."""

    selector: str
    expected: bool | str
    obj: dict[str, Any] = field(
        default_factory=lambda: {
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"nodeName": "n1"},
            "status": {"phase": "Running"},
        }
    )
    resource: str = "pods"
    client_bug: str = ""
    server_only: bool = False


def _value(index: int, key: str, value: str, rule: str = _VALUE_RULE) -> str:
    return f'values[{index}][{key}]: Invalid value: "{value}": {rule}'


LABEL_CASES: tuple[LabelCase, ...] = (
    # TestSelectorMatches
    LabelCase("", {"x": "y"}, True),
    LabelCase("x=y", {"x": "y"}, True),
    LabelCase("x=y,z=w", {"x": "y", "z": "w"}, True),
    LabelCase("x!=y,z!=w", {"x": "z", "z": "a"}, True),
    LabelCase("notin=in", {"notin": "in"}, True),
    LabelCase("x", {"x": "z"}, True),
    LabelCase("!x", {"y": "z"}, True),
    LabelCase("x>1", {"x": "2"}, True),
    LabelCase("x<1", {"x": "0"}, True),
    LabelCase("x=z", {}, False),
    LabelCase("x=y", {"x": "z"}, False),
    LabelCase("x=y,z=w", {"x": "w", "z": "w"}, False),
    LabelCase("x!=y,z!=w", {"x": "z", "z": "w"}, False),
    LabelCase("x", {"y": "z"}, False),
    LabelCase("!x", {"x": "z"}, False),
    LabelCase("x>1", {"x": "0"}, False),
    LabelCase("x<1", {"x": "2"}, False),
    # TestRequirementSelectorMatching
    LabelCase("x in (foo),y notin (alpha)", {"x": "foo", "y": "baz"}, True),
    LabelCase("x in (foo),y in (alpha)", {"x": "foo", "y": "baz"}, False),
    LabelCase("x notin (),y", {"y": ""}, True),
    LabelCase("!x,y", {"y": ""}, True),
    LabelCase("x notin (),!y", {"y": ""}, False),
    LabelCase("x in ()", {"y": "baz"}, False),
    LabelCase("z>1", {"z": "2"}, True),
    LabelCase("z>1", {"z": "v2"}, False),
    # TestSetSelectorParser: accepted spellings
    LabelCase("\rx", {"x": "1"}, True),
    LabelCase(
        "this-is-a-dns.domain.com/key-with-dash",
        {"this-is-a-dns.domain.com/key-with-dash": "v"},
        True,
    ),
    LabelCase(
        "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", {"0.1.2.domain/99": "x"}, True
    ),
    LabelCase("foo  in\t (abc)", {"foo": "abc"}, True),
    LabelCase("x notin\n (abc)", {"x": "abc"}, False),
    LabelCase("x  notin\t\t(abc,def)", {"x": "ghi"}, True),
    LabelCase("x in (abc,)", {"x": ""}, True),
    LabelCase("x in (abc,abc)", {"x": "abc"}, True),
    LabelCase("x in ()", {"x": ""}, True),
    LabelCase("x in (a,,a,,a,,a,,)", {"x": ""}, True),
    LabelCase("x notin (abc,,def),bar,z in (),w", {"bar": "1", "w": "2", "z": ""}, True),
    LabelCase("x notin ( )", {"x": "a"}, True),
    LabelCase("x notin (, a)", {"x": ""}, False),
    LabelCase("a ", {"a": "1"}, True),
    LabelCase("a in (x,y,notin, z,in)", {"a": "in"}, True),
    LabelCase("x=", {"x": ""}, True),
    LabelCase("x= ,z= ", {"x": "", "z": ""}, True),
    LabelCase("x==a", {"x": "a"}, True),
    LabelCase("in in (in)", {"in": "in"}, True),
    LabelCase("x>007", {"x": "8"}, True),
    LabelCase("x>1", {"x": "1_0"}, False),
    # TestSelectorParse and TestSetSelectorParser: refused, with the server's messages
    LabelCase("x=a||y=b", {}, _PARSE + _value(0, "x", "a||y")),
    LabelCase("x==a==b", {}, "found '==', expected: ',' or 'end of string'"),
    LabelCase("!x=a", {}, "found '=', expected: ',' or 'end of string'"),
    LabelCase("x<a", {}, _PARSE + f'values[0]: Invalid value: "a": {_INTEGER}'),
    LabelCase("x,,y", {}, "found ',', expected: identifier after ','"),
    LabelCase(",x,y", {}, "found ',', expected: !, identifier, or 'end of string'"),
    LabelCase("x nott in (y)", {}, _PARSE + f"found 'nott', expected: {_OPERATORS}"),
    LabelCase("a in (xyz),", {}, "found '', expected: identifier after ','"),
    LabelCase("a in (xyz)b notin ()", {}, "found 'b', expected: ',' or 'end of string'"),
    LabelCase("a in (xyz abc)", {}, _PARSE + "found 'abc', expected: ',' or ')'"),
    LabelCase("a notin(", {}, _PARSE + "found '', expected: ',', ')' or identifier"),
    LabelCase("a (", {}, _PARSE + f"found '(', expected: {_OPERATORS}"),
    LabelCase("(", {}, "found '(', expected: !, identifier, or 'end of string'"),
    # more refusals, from the parser's and the validators' rules
    LabelCase("a in (x", {}, _PARSE + "found '', expected: ',' or ')'"),
    LabelCase("a in (x,(", {}, _PARSE + "found '(', expected: ',', or identifier"),
    LabelCase("=b", {}, "found '=', expected: !, identifier, or 'end of string'"),
    LabelCase("a b", {}, _PARSE + f"found 'b', expected: {_OPERATORS}"),
    LabelCase("a=b=c", {}, "found '=', expected: ',' or 'end of string'"),
    LabelCase("a=b c", {}, "found 'c', expected: ',' or 'end of string'"),
    LabelCase("a=(", {}, _PARSE + "found '(', expected: identifier"),
    LabelCase("a notin", {}, _PARSE + "found '' expected: '('"),
    LabelCase("!!a", {}, _PARSE + "found '!', expected: identifier"),
    LabelCase("a,", {}, "found '', expected: identifier after ','"),
    LabelCase("-bad=x", {}, _PARSE + f'<nil>: Invalid value: "-bad": name part {_KEY_RULE}'),
    LabelCase("/x", {}, _PARSE + '<nil>: Invalid value: "/x": prefix part must be non-empty'),
    LabelCase(
        "x/",
        {},
        _PARSE + f'<nil>: Invalid value: "x/": name part must be non-empty; name part {_KEY_RULE}',
    ),
    LabelCase(
        "Example.COM/x=y",
        {},
        _PARSE + f'<nil>: Invalid value: "Example.COM/x": prefix part {_SUBDOMAIN_RULE}',
    ),
    LabelCase(
        "a/b/c",
        {},
        _PARSE + f'<nil>: Invalid value: "a/b/c": a valid label key {_KEY_RULE} with an '
        "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ),
    LabelCase(
        "k" * 64,
        {},
        _PARSE + f'<nil>: Invalid value: "{"k" * 64}": name part must be no more than 63 bytes',
    ),
    LabelCase(
        "x=" + "v" * 64,
        {},
        _PARSE + _value(0, "x", "v" * 64, "must be no more than 63 bytes"),
    ),
    LabelCase(
        "x in (z,-b,-a)",
        {},
        _PARSE + f"[{_value(0, 'x', '-a')}, {_value(1, 'x', '-b')}]",
    ),
    LabelCase(
        "x>-",
        {},
        _PARSE + f'[values[0]: Invalid value: "-": {_INTEGER}, {_value(0, "x", "-")}]',
    ),
    LabelCase(
        'x="a"',
        {},
        _PARSE + f'values[0][x]: Invalid value: "\\"a\\"": {_VALUE_RULE}',
    ),
    LabelCase("x>-1", {}, _PARSE + _value(0, "x", "-1")),
    LabelCase(
        "x>99999999999999999999",
        {},
        _PARSE + f'values[0]: Invalid value: "99999999999999999999": {_INTEGER}',
    ),
)


_NODE = {"metadata": {"name": "n"}, "spec": {"unschedulable": True}}
_META = {"name": "x", "namespace": "ns"}

FIELD_CASES: tuple[FieldCase, ...] = (
    FieldCase("metadata.name=p", True),
    FieldCase("metadata.name==p,metadata.namespace=ns", True),
    FieldCase("metadata.namespace!=ns", False),
    FieldCase("spec.nodeName=n1", True),
    FieldCase("spec.nodeName!=n1", False),
    FieldCase("status.phase=Pending", False),
    FieldCase("status.podIP=", True),
    FieldCase("", True),
    FieldCase(r"metadata.name=a\,b\=c\\", True, obj={"metadata": {"name": "a,b=c\\"}}),
    FieldCase("metadata.name=ü", True, obj={"metadata": {"name": "ü"}}),
    FieldCase("metadata.name=p,", True),
    FieldCase(",", True),
    FieldCase("spec.hostNetwork=false", True),
    FieldCase("spec.unschedulable=true", True, obj=_NODE, resource="nodes"),
    # the kinds' ToSelectableFields: Go zero values, Job's Status.Succeeded, Event's source
    FieldCase("spec.unschedulable=false", True, obj={"metadata": {"name": "n"}}, resource="nodes"),
    FieldCase("status.replicas=0", True, obj={"metadata": _META}, resource="replicasets"),
    FieldCase(
        "status.successful=2",
        True,
        obj={"metadata": _META, "status": {"succeeded": 2}},
        resource="jobs",
    ),
    FieldCase(
        "source=ctrl",
        True,
        obj={"metadata": _META, "source": {}, "reportingComponent": "ctrl"},
        resource="events",
    ),
    FieldCase(
        "metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
    ),
    FieldCase("b=1,a", "invalid selector: 'b=1,a'; can't understand 'a'"),
    FieldCase("metadata.name=a=b", "invalid field selector: unescaped character in value: 61"),
    FieldCase("z=1,a=b=c", "invalid field selector: unescaped character in value: 61"),
    FieldCase(r"metadata.name=a\x", r"invalid field selector: invalid escape sequence: \x"),
    FieldCase("metadata.name=a\\", "invalid field selector: invalid escape sequence: \\"),
    FieldCase(r"metadata\=name=x", "invalid field selector: unescaped character in value: 61"),
    FieldCase("spec.foo=x", "field label not supported: spec.foo", server_only=True),
    FieldCase("=x", "field label not supported: ", server_only=True),
    FieldCase("spec.host=n1", True, server_only=True),  # the v1 conversion's old name
    FieldCase(
        "metadata.namespace=x",
        "field label not supported: metadata.namespace",
        obj=_NODE,
        resource="nodes",
        server_only=True,
    ),
    FieldCase(
        "data.x=1",
        '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
        resource="configmaps",
        server_only=True,
    ),
)
