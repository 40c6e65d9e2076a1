"""Conversions between the versions of a built-in kind kept in one storage.

events.k8s.io/v1 ``Event`` and core/v1 ``Event`` are one stored object (kube-apiserver keeps
both as the internal ``core.Event``; the storage version is core/v1). The fields that differ
are renamed (``pkg/apis/events/v1/conversion.go``, ``Convert_v1_Event_To_core_Event`` and
back):

=============================  ========================  ==========================
events.k8s.io/v1               core/v1                   internal (validation paths)
=============================  ========================  ==========================
``regarding``                  ``involvedObject``        ``involvedObject``
``note``                       ``message``               ``message``
``reportingController``        ``reportingComponent``    ``reportingController``
``deprecatedSource``           ``source``                ``source``
``deprecatedFirstTimestamp``   ``firstTimestamp``        ``firstTimestamp``
``deprecatedLastTimestamp``    ``lastTimestamp``         ``lastTimestamp``
``deprecatedCount``            ``count``                 ``count``
=============================  ========================  ==========================

Everything else (``metadata``, ``eventTime``, ``series``, ``action``, ``reason``, ``type``,
``related``, ``reportingInstance``) keeps its name. These functions only rename: encoding the
result as its Go type (zero values, ``omitempty``) is the registry's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["EVENTS_V1", "event_to_core", "event_to_events_v1"]

#: The API version of the events.k8s.io Events.
EVENTS_V1 = "events.k8s.io/v1"

#: events.k8s.io/v1 name → core/v1 name.
_TO_CORE = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_FROM_CORE = {core: v1 for v1, core in _TO_CORE.items()}


def _renamed(obj: Mapping[str, Any], names: Mapping[str, str], api_version: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "apiVersion":
            out[key] = api_version
        else:
            out[names.get(key, key)] = value
    return out


def event_to_core(event: Mapping[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event under its core/v1 names (``apiVersion``, when present,
    becomes ``v1``)."""
    return _renamed(event, _TO_CORE, "v1")


def event_to_events_v1(event: Mapping[str, Any]) -> dict[str, Any]:
    """A core/v1 Event under its events.k8s.io/v1 names (``apiVersion``, when present,
    becomes ``events.k8s.io/v1``)."""
    return _renamed(event, _FROM_CORE, EVENTS_V1)
