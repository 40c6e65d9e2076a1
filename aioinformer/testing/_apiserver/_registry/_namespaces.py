"""The namespace controller's status conditions on a terminating namespace.

``pkg/controller/namespace/deletion`` (``namespaced_resources_deleter.go`` and
``status_condition_utils.go``) reports its progress in ``status.conditions``, five types in
this order, each ``False`` while all is well:

* ``NamespaceDeletionDiscoveryFailure`` (``ResourcesDiscovered``),
* ``NamespaceDeletionGroupVersionParsingFailure`` (``ParsedGroupVersions``),
* ``NamespaceDeletionContentFailure`` (``ContentDeleted``),
* ``NamespaceContentRemaining``: ``True`` / ``SomeResourcesRemain`` "Some resources are
  remaining: configmaps. has 1 resource instances" while objects stay, else
  ``ContentRemoved``;
* ``NamespaceFinalizersRemaining``: ``True`` / ``SomeFinalizersRemain`` "Some content in the
  namespace has finalizers remaining: example.com/x in 1 resource instances", else
  ``ContentHasNoFinalizers``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["namespace_conditions", "same_conditions"]

_OK = (
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered",
     "All resources successfully discovered"),
    ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions",
     "All legacy kube types successfully parsed"),
    ("NamespaceDeletionContentFailure", "ContentDeleted",
     "All content successfully deleted, may be waiting on finalization"),
)  # fmt: skip


def _condition(kind: str, true: bool, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True" if true else "False",
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def namespace_conditions(
    remaining: Mapping[str, int], finalizers: Mapping[str, int], now: str
) -> list[dict[str, Any]]:
    """The conditions for the objects left (by ``resource.group``) and their finalizers."""
    out = [_condition(kind, False, reason, message, now) for kind, reason, message in _OK]
    left = ", ".join(f"{gr} has {n} resource instances" for gr, n in sorted(remaining.items()))
    held = ", ".join(f"{f} in {n} resource instances" for f, n in sorted(finalizers.items()))
    rows = (
        ("NamespaceContentRemaining", left, "SomeResourcesRemain",
         "Some resources are remaining: ", "ContentRemoved", "All content successfully removed"),
        ("NamespaceFinalizersRemaining", held, "SomeFinalizersRemain",
         "Some content in the namespace has finalizers remaining: ", "ContentHasNoFinalizers",
         "All content-preserving finalizers finished"),
    )  # fmt: skip
    for kind, detail, bad_reason, bad_prefix, ok_reason, ok_message in rows:
        if detail:
            out.append(_condition(kind, True, bad_reason, bad_prefix + detail, now))
        else:
            out.append(_condition(kind, False, ok_reason, ok_message, now))
    return out


def same_conditions(old: Any, new: list[dict[str, Any]]) -> bool:
    """Whether two condition lists differ only in their transition times."""

    def key(items: Any) -> list[tuple[Any, ...]]:
        return [
            (c.get("type"), c.get("status"), c.get("reason"), c.get("message"))
            for c in items or []
            if isinstance(c, dict)
        ]

    return key(old) == key(new)
