"""The one exception the fake's write machinery raises: a failure ``Status`` to answer.

The strategic-merge and server-side-apply modules know which code, reason and message a real
API server answers with; the storage turns this into the answer (over HTTP, a ``Status``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["StatusFailure"]


class StatusFailure(Exception):
    """A request the real API server refuses, with the ``Status`` it answers.

    :param code: the HTTP code.
    :param reason: the Status ``reason`` (``""`` for errors the real server does not classify,
        which it answers as 500 with an empty reason).
    :param message: the Status ``message``.
    :param details: the Status ``details``, if any.
    """

    def __init__(
        self, code: int, reason: str, message: str, *, details: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = None if details is None else dict(details)

    @classmethod
    def bad_request(cls, message: str) -> StatusFailure:
        """400 BadRequest."""
        return cls(400, "BadRequest", message)

    @classmethod
    def internal(cls, message: str) -> StatusFailure:
        """What a real server answers for an error that is not an API status: 500, no reason."""
        return cls(500, "", message)
