"""How a reflector reports what went wrong: counters, one log line, the watch-error handler.

Every error goes to the handler. Logs stay readable under a flood: an object that keeps being
rejected (an invalid object the server sends again at every relist, a transform that fails on
every update of one key) is logged at WARNING once per key, then at DEBUG until a version of
it is accepted; objects without a key are logged once per reason until the next good list.
Objects of another namespace (a namespaced informer's) are reported at most once per
:data:`FOREIGN_REPORT_INTERVAL`, with how many were dropped since the last report.
Log lines name keys and error types, never object contents.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .._clock import SYSTEM_CLOCK, Clock
from .._objects import KubeObject
from ..errors import (
    ExpiredError,
    ForeignObjectError,
    IndexFuncError,
    InformerError,
    InvalidObjectError,
    KeyFuncError,
    ObjectRejectedError,
    ResourceVersionError,
    WatchIdleTimeoutError,
)
from ._checks import key_hint
from ._statistics import Counters

__all__ = ["FOREIGN_REPORT_INTERVAL", "Reporter"]

#: Objects of another namespace are reported (hook and WARNING) at most once per this many
#: seconds; each is counted.
FOREIGN_REPORT_INTERVAL = 60.0

logger = logging.getLogger("aioinformer._reflector._loop")

#: Called with the error for every report (the reflector calls its watch-error handler).
Hook = Callable[[BaseException], None]


class Reporter:
    """The reporting side of one reflector.

    :param name: the reflector's name, the first word of every log line.
    :param counters: the reflector's counters.
    :param hook: calls the watch-error handler (which may change over time).
    :param clock: paces the reports of objects of another namespace.
    """

    __slots__ = (
        "_clock",
        "_counters",
        "_foreign_at",
        "_foreign_since",
        "_hook",
        "_keyless",
        "name",
    )

    def __init__(
        self, name: str, counters: Counters, hook: Hook, *, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self.name = name
        self._counters = counters
        self._hook = hook
        self._clock = clock
        # When objects of another namespace were last reported (None: never), and how many
        # were dropped since.
        self._foreign_at: float | None = None
        self._foreign_since = 0
        # Reasons of keyless invalid objects already logged since the last good list.
        self._keyless: set[str] = set()

    def report(self, exc: BaseException, *, level: int | None = None) -> None:
        """Count an error, log it on one line and hand it to the watch-error handler."""
        counters = self._counters
        counters.errors += 1
        counters.last_error = f"{type(exc).__name__}: {exc}"
        if level is None:
            quiet = isinstance(exc, ExpiredError | WatchIdleTimeoutError)
            level = logging.INFO if quiet else logging.WARNING
        logger.log(level, "%s: list/watch error: %s: %s", self.name, type(exc).__name__, exc)
        self._call(exc)

    def _call(self, exc: BaseException) -> None:
        try:
            self._hook(exc)
        except Exception:
            logger.exception("%s: watch error handler failed", self.name)

    # -- what the server sent wrong ----------------------------------------------------------

    def invalid(self, error: InvalidObjectError) -> None:
        """An object that cannot be cached was skipped."""
        self._counters.invalid_objects += 1
        self.report(error, level=logging.WARNING if self._first(error) else logging.DEBUG)

    def foreign(self, key: str, namespace: str, *, position: int | None = None) -> None:
        """An object of another namespace (``key``) reached a reflector of ``namespace``: count
        it; report it unless one was reported less than :data:`FOREIGN_REPORT_INTERVAL` ago."""
        self._counters.foreign_objects += 1
        self._foreign_since += 1
        now = self._clock.now()
        last = self._foreign_at
        if last is not None and now - last < FOREIGN_REPORT_INTERVAL:
            return
        self._foreign_at = now
        dropped, self._foreign_since = self._foreign_since, 0
        error = ForeignObjectError(key, namespace=namespace, position=position)
        counters = self._counters
        counters.errors += 1
        counters.last_error = f"{type(error).__name__}: {error}"
        logger.warning(
            "%s: %s: %s (%d object(s) of other namespaces dropped since the last report)",
            self.name,
            type(error).__name__,
            error,
            dropped,
        )
        self._call(error)

    def version(self, error: ResourceVersionError) -> None:
        """A resource version that is not a string, or went backwards."""
        self._counters.resource_version_errors += 1
        self.report(error)

    def refused(self, obj: Any, exc: Exception, *, has_transform: bool) -> None:
        """The store refused ``obj`` (its transform or key function raised)."""
        counters = self._counters
        counters.store_errors += 1
        key = key_hint(obj) or "?"
        if isinstance(exc, KeyFuncError):
            stage = "key"
        elif isinstance(exc, IndexFuncError):
            stage = "index"
        else:
            stage = "transform" if has_transform else "store"
        error = ObjectRejectedError(key, stage, exc)
        error.__cause__ = exc
        first = key not in counters.stale
        counters.stale[key] = stage
        self.report(error, level=logging.WARNING if first else logging.DEBUG)

    def accepted(self, obj: KubeObject) -> None:
        """A version of ``obj`` was stored: its key is no longer stale (call only when some
        key is stale)."""
        key = key_hint(obj)
        if key is not None and self._counters.stale.pop(key, None) is not None:
            logger.info("%s: %s is up to date again", self.name, key)

    def listed(self, problems: tuple[InformerError, ...], items: list[KubeObject]) -> None:
        """A list was stored: report its problems; its stale keys replace the old ones."""
        counters = self._counters
        old, self._keyless = counters.stale, set()
        stale: dict[str, str] = {}
        kept: set[str] | None = None
        for problem in problems:
            if isinstance(problem, ResourceVersionError):
                self.version(problem)
                continue
            if isinstance(problem, ForeignObjectError):
                assert problem.key is not None
                self.foreign(problem.key, problem.namespace, position=problem.position)
                continue
            assert isinstance(problem, InvalidObjectError)
            counters.invalid_objects += 1
            key = problem.key
            if key is not None:
                if kept is None:
                    kept = {k for item in items if (k := key_hint(item)) is not None}
                if key not in kept:
                    stale[key] = "invalid"
            first = key not in old if key is not None else self._first(problem)
            self.report(problem, level=logging.WARNING if first else logging.DEBUG)
        counters.stale = stale

    def _first(self, error: InvalidObjectError) -> bool:
        """Whether this invalid object is reported for the first time (and note it)."""
        key = error.key
        if key is None:
            if error.reason in self._keyless:
                return False
            self._keyless.add(error.reason)
            return True
        stale = self._counters.stale
        first = key not in stale
        stale[key] = "invalid"
        return first
