"""Reading a Kubernetes ``Status`` (the parts of :func:`aioinformer.errors.api_error_from_status`
that need no exception class)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["causes", "is_too_large_rv"]


def causes(status: Mapping[str, Any]) -> list[dict[str, Any]]:
    details = status.get("details")
    causes = details.get("causes") if isinstance(details, Mapping) else None
    return [c for c in causes if isinstance(c, dict)] if isinstance(causes, list) else []


def is_too_large_rv(status: Mapping[str, Any], code: int, reason: str, message: str) -> bool:
    for cause in causes(status):
        if cause.get("reason") == "ResourceVersionTooLarge":
            return True
        # API servers 1.17.0-1.18.5 sent a cause with only this message.
        if cause.get("message") == "Too large resource version":
            return True
    # Older servers say it only in the message of a Timeout.
    return (code == 504 or reason == "Timeout") and "Too large resource version" in message
