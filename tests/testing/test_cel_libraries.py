"""The Kubernetes CEL libraries (apiserver pkg/cel/library/*.go) and cel-go ext strings v2."""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._crd._cel import validate

from .cel_support import compiled, crd_schema, obj


def ok(rule: str, spec: dict[str, Any] | None = None) -> bool:
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "x-kubernetes-validations": [{"rule": rule}],
        }
    )
    errors = validate(compiled(schema), obj(spec or {}))
    assert all("evaluating rule" not in str(e) and "signature" not in str(e) for e in errors), (
        errors
    )
    return not errors


@pytest.mark.parametrize(
    "rule",
    [
        # lists.go
        "[1, 2, 3].isSorted() && ![2, 1].isSorted()",
        "[1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0",
        "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3 && ['b', 'a'].min() == 'a'",
        "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2 && [1].indexOf(5) == -1",
        # cel-go ext strings v2
        "'hello'.charAt(1) == 'e' && 'hello'.indexOf('l') == 2 && 'hello'.lastIndexOf('l') == 3",
        "'TacoCat'.lowerAscii() == 'tacocat' && 'a'.upperAscii() == 'A'",
        "'a,b'.split(',') == ['a', 'b'] && ['a', 'b'].join('-') == 'a-b'",
        "'  x '.trim() == 'x' && 'abc'.substring(1) == 'bc' && 'aaa'.replace('a', 'b', 2) == 'bba'",
        "'%s is %d'.format(['x', 3]) == 'x is 3'",
        # regex.go
        "'abc 123'.find('[0-9]+') == '123' && 'a1b2'.findAll('[0-9]') == ['1', '2'] && "
        "'a1b2'.findAll('[0-9]', 1) == ['1']",
        "'x'.find('[0-9]') == ''",
        # urls.go
        "isURL('https://example.com/a') && !isURL('not a url')",
        "url('https://user@example.com:8443/p%20x?a=1&a=2').getScheme() == 'https'",
        "url('https://example.com:8443/p').getHost() == 'example.com:8443'",
        "url('https://example.com:8443/p').getHostname() == 'example.com' && "
        "url('https://example.com:8443/p').getPort() == '8443'",
        "url('https://[::1]:80/').getHostname() == '::1'",
        "url('https://example.com/a b').getEscapedPath() == '/a%20b'",
        "url('https://example.com/?a=1&a=2&b=x').getQuery() == {'a': ['1', '2'], 'b': ['x']}",
        # quantity.go
        "quantity('1Gi').isGreaterThan(quantity('1G')) && "
        "quantity('500m').isLessThan(quantity('1'))",
        "quantity('1') == quantity('1000m') && quantity('1k').compareTo(quantity('1000')) == 0",
        "quantity('1.5Gi').asApproximateFloat() == 1610612736.0 && quantity('2k').asInteger() "
        "== 2000",
        "!quantity('1.5').isInteger() && quantity('-3').sign() == -1 && quantity('0').sign() == 0",
        "quantity('1').add(quantity('500m')) == quantity('1.5') && quantity('1').sub(1) == "
        "quantity('0')",
        "quantity('1Mi').add(10) == quantity('1048586') && isQuantity('1e3') && !isQuantity('1x')",
        # ip.go / cidr.go
        "isIP('1.2.3.4') && !isIP('1.2.3.04') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')",
        "ip('10.0.0.1').family() == 4 && ip('::1').family() == 6 && ip('127.0.0.1').isLoopback()",
        "ip('0.0.0.0').isUnspecified() && ip('169.254.1.1').isLinkLocalUnicast() && "
        "ip('224.0.0.1').isLinkLocalMulticast()",
        "ip('8.8.8.8').isGlobalUnicast() && string(ip('2001:db8::1')) == '2001:db8::1' && "
        "ip.isCanonical('2001:db8::1')",
        "!ip.isCanonical('2001:DB8::1')",
        "cidr('10.0.0.0/8').containsIP('10.1.2.3') && "
        "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
        "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && "
        "!cidr('10.0.0.0/16').containsCIDR(cidr('10.0.0.0/8'))",
        "cidr('10.1.2.3/8').prefixLength() == 8 && cidr('10.1.2.3/8').ip() == ip('10.1.2.3')",
        "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && string(cidr('10.0.0.0/8')) == "
        "'10.0.0.0/8'",
        "isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0')",
        # format.go
        "!format.dns1123Label().validate('my-name').hasValue() && "
        "format.dns1123Label().validate('My_Name').hasValue()",
        "format.named('dns1035Label').value().validate('1abc').hasValue() && "
        "!format.named('nope').hasValue()",
        "!format.labelValue().validate('').hasValue() && "
        "!format.qualifiedName().validate('example.com/x').hasValue()",
        "!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue() && "
        "format.uri().validate('x').hasValue()",
        # semverlib.go
        "semver('1.2.3').isLessThan(semver('1.10.0')) && semver('2.0.0').major() == 2 && "
        "isSemver('1.0.0-rc.1')",
        "semver('v1.2', true) == semver('1.2.0') && !isSemver('1.2')",
        # cel-go ext sets / lists
        "sets.contains([1, 2, 3], [2]) && sets.equivalent([1, 2], [2, 1]) && "
        "sets.intersects([1], [1, 5])",
        "[3, 1].sort() == [1, 3] && [1, 1, 2].distinct() == [1, 2] && [[1], [2]].flatten() == "
        "[1, 2]",
        "[1, 2, 3].slice(1, 2) == [2] && lists.range(2) == [0, 1] && [1, 2].reverse() == [2, 1]",
        # optional types
        "[1].first().value() == 1 && [].last().orValue(7) == 7 && optional.of(1).hasValue()",
        "{'a': 1}[?'b'].orValue(2) == 2 && {'a': 1}.?a.value() == 1",
    ],
)
def test_library_true(rule: str) -> None:
    assert ok(rule)


def test_library_runtime_errors() -> None:
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "quantity('x').sign() == 1"},
                {"rule": "[].min() == 1"},
                {"rule": "url('foo').getHost() == ''"},
                {"rule": "ip('1.2.3').family() == 4"},
            ],
        }
    )
    assert [str(e) for e in validate(compiled(schema), obj({}))] == [
        'spec: Invalid value: "object": quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: quantity('x').sign() == 1",
        'spec: Invalid value: "object": min called on empty list evaluating rule: [].min() == 1',
        'spec: Invalid value: "object": URL parse error during conversion from string: '
        'parse "foo": '
        "invalid URI for request evaluating rule: url('foo').getHost() == ''",
        'spec: Invalid value: "object": IP Address "1.2.3" parse error during conversion from '
        "string: ParseAddr(\"1.2.3\"): unable to parse IP evaluating rule: ip('1.2.3').family() "
        "== 4",
    ]


def test_quantity_docs_example() -> None:
    """DOCS: compare resource quantities in a rule."""
    schema = crd_schema(
        {
            "type": "object",
            "x-kubernetes-validations": [
                {
                    "rule": "quantity(self.limit).compareTo(quantity(self.request)) >= 0",
                    "message": "limit below request",
                }
            ],
            "properties": {"limit": {"type": "string"}, "request": {"type": "string"}},
        }
    )
    assert [
        str(e) for e in validate(compiled(schema), obj({"limit": "1Gi", "request": "2Gi"}))
    ] == ["spec: Invalid value: limit below request"]
    assert validate(compiled(schema), obj({"limit": "2Gi", "request": "1500Mi"})) == []
