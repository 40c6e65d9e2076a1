"""The one exception the fake API server raises inside: a failure ``Status`` to answer.

Every refusal in the fake (storage, patches, selectors, watches, injected faults) travels as a
:class:`StatusFailure` carrying exactly what the real server answers; the HTTP face writes its
:attr:`~StatusFailure.status` as the response body. Nothing in the fake's internals knows the
client's exception classes: the in-process API turns a failure into one of them at its
boundary (:mod:`._boundary`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["StatusFailure"]


class StatusFailure(Exception):
    """A request the real API server refuses, with the ``Status`` it answers.

    :param code: the HTTP code.
    :param reason: the Status ``reason`` (``""`` for errors the real server does not classify,
        which it answers as 500 with no reason).
    :param message: the Status ``message``.
    :param details: the Status ``details``, if any.
    :param retry_after: seconds for the ``Retry-After`` header, if any.
    :param continue_token: the Status ``metadata.continue`` (410 answers to a continue token).
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
        continue_token: str = "",
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = None if details is None else dict(details)
        self.retry_after = retry_after
        self.continue_token = continue_token

    @property
    def status(self) -> dict[str, Any]:
        """The ``Status`` object, fields in the order and with the omissions of the real
        server's JSON (``metav1.Status``: empty ``message``, ``reason`` and ``details`` are
        left out; ``metadata`` is always there)."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {"continue": self.continue_token} if self.continue_token else {},
            "status": "Failure",
        }
        if self.message:
            body["message"] = self.message
        if self.reason:
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = dict(self.details)
        body["code"] = self.code
        return body

    @classmethod
    def bad_request(cls, message: str) -> StatusFailure:
        """400 BadRequest."""
        return cls(400, "BadRequest", message)

    @classmethod
    def internal(cls, message: str) -> StatusFailure:
        """What a real server answers for an error that is not an API status: 500, no reason."""
        return cls(500, "", message)
