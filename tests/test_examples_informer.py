"""The informer example runs on its own and prints the events it should."""

from __future__ import annotations

import pytest

from ._examples import run_example

#: Whole programs: left out of `make test-lowest` (-m "not slow").
pytestmark = pytest.mark.slow


def test_informer_events_example_prints_every_event() -> None:
    """`python examples/informer_events.py` exits 0 and prints each object's events in order."""
    result = run_example("informer_events.py")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "cache at exit: ['default/feature-flags', 'default/logging']"
    events = [line.split(None, 2) for line in lines[:-1]]
    by_key: dict[str, list[str]] = {}
    for kind, key, rest in events:
        by_key.setdefault(key, []).append(f"{kind} {rest}")
    # Events of one object arrive in order; across objects the order is not guaranteed.
    assert by_key == {
        "default/app-settings": [
            "ADDED {'replicas': '2'} (initial list)",
            "UPDATED {'replicas': '3'}",
            "DELETED {'replicas': '3'}",
        ],
        "default/logging": ["ADDED {'level': 'info'} (initial list)"],
        "default/feature-flags": ["ADDED {'beta': 'off'}", "UPDATED {'beta': 'on'}"],
    }
    # The initial list comes first.
    assert [key for _, key, rest in events[:2]] == ["default/app-settings", "default/logging"]
