"""Qualified names and DNS subdomains as apimachinery validates them
(``staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go``: ``IsQualifiedName``,
``IsDNS1123Subdomain``) — what condition types, finalizers and reporting controllers are."""

from __future__ import annotations

import pytest

from aioinformer._names import is_dns_subdomain, qualified_name_problems

QUALIFIED = [
    ("Ready", []),
    ("example.com/Ready", []),
    ("a", []),
    ("1-2_3.4", []),
    ("x" * 63, []),
    ("x" * 64, ["name part must be no more than 63 characters"]),
    ("", ["name part must be non-empty"]),
    ("example.com/", ["name part must be non-empty"]),
    ("/x", ["prefix part must be non-empty"]),
    ("Example.com/x", ["prefix part must be a lowercase RFC 1123 subdomain"]),
    ("a/b/c", ["a qualified name must have at most one '/'"]),
    ("-x", ["name part must consist of alphanumeric characters"]),
    ("x.", ["name part must consist of alphanumeric characters"]),
    ("has space", ["name part must consist of alphanumeric characters"]),
    ("a" * 254 + "/x", ["prefix part must be a lowercase RFC 1123 subdomain"]),
]


@pytest.mark.parametrize(
    ("value", "problems"), QUALIFIED, ids=[q[0][:20] or "empty" for q in QUALIFIED]
)
def test_qualified_names(value: str, problems: list[str]) -> None:
    found = qualified_name_problems(value)
    assert len(found) == len(problems)
    for got, expected in zip(found, problems, strict=True):
        assert got.startswith(expected)


@pytest.mark.parametrize(
    ("value", "valid"),
    [("example.com", True), ("a", True), ("a-b.c-d", True), ("A.com", False), ("a_b", False),
     ("-a", False), ("a.", False), ("", False), ("a" * 253, True), ("a" * 254, False)],
)  # fmt: skip
def test_dns_subdomains(value: str, valid: bool) -> None:
    assert is_dns_subdomain(value) is valid
