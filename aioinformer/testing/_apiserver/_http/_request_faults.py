"""The request-level faults armed on a server: injected failure answers and latency, consulted
by the HTTP face for every request (``server.faults`` arms them)."""

from __future__ import annotations

from dataclasses import dataclass

from .._api._failure import StatusFailure
from .._api._resources import ResourceInfo
from .._api._status import status_error
from ._routing import RequestInfo

__all__ = ["FailRule", "RequestFaults"]


@dataclass(slots=True)
class FailRule:
    """Answer the next ``remaining`` matching requests with ``code``.

    :ivar verb: only requests with this verb (None: any).
    :ivar resource: only requests for this resource (None: any).
    """

    remaining: int
    code: int
    retry_after: float | None = None
    verb: str | None = None
    resource: ResourceInfo | None = None
    message: str = ""

    def matches(self, info: RequestInfo) -> bool:
        """Whether a request is one this rule answers."""
        if self.verb is not None and info.verb != self.verb:
            return False
        if self.resource is not None:
            wanted = (self.resource.group, self.resource.version, self.resource.plural)
            if (info.group, info.version, info.resource) != wanted:
                return False
        return True


class RequestFaults:
    """The request-level faults armed on a server."""

    def __init__(self) -> None:
        self.rules: list[FailRule] = []
        self.latency = 0.0

    def add(self, rule: FailRule) -> None:
        """Arm a rule (rules are consulted oldest first)."""
        if rule.remaining > 0:
            self.rules.append(rule)

    def take(self, info: RequestInfo) -> StatusFailure | None:
        """The injected failure for this request, consuming one use of the rule, or None."""
        for rule in self.rules:
            if rule.matches(info):
                rule.remaining -= 1
                if rule.remaining <= 0:
                    self.rules.remove(rule)
                return status_error(
                    rule.code,
                    message=rule.message or "",
                    retry_after=rule.retry_after,
                )
        return None

    def clear(self) -> None:
        """Disarm everything."""
        self.rules.clear()
        self.latency = 0.0
