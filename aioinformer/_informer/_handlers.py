"""Handler objects: what ``informer.add_event_handler`` accepts, and the task body that
delivers a listener's notifications to one (:class:`Registration`)."""

from __future__ import annotations

import difflib
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from .._deprecation import warn_renamed
from .._lifecycle import in_cancelled_scope
from .._objects import DeletedFinalStateUnknown, KubeObject
from ._listener import Event, EventType, Listener

__all__ = [
    "HANDLER_METHODS",
    "Registration",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "validate_handler",
]

logger = logging.getLogger(__name__)


class ResourceEventHandler(Protocol):
    """A handler object; any subset of the three methods may exist (sync or async)."""

    def on_add(self, obj: KubeObject, is_in_initial_list: bool) -> Any: ...

    def on_update(self, old: KubeObject, new: KubeObject) -> Any: ...

    def on_delete(self, obj: KubeObject | DeletedFinalStateUnknown) -> Any: ...


Callback = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ResourceEventHandlerFuncs:
    """A handler made of functions (each optional, sync or async).

    ``on_add`` may take ``(obj)`` or ``(obj, is_in_initial_list)``.
    """

    on_add: Callback | None = None
    on_update: Callback | None = None
    on_delete: Callback | None = None


#: The methods a handler may have.
HANDLER_METHODS = ("on_add", "on_update", "on_delete")


def validate_handler(
    handler: object, *, warn: bool = True
) -> tuple[Callback | None, Callback | None, Callback | None]:
    """The ``(on_add, on_update, on_delete)`` callables of a handler (None where absent).

    A misspelt method next to a valid one (``on_updated`` beside ``on_add``) is logged as a
    warning (unless ``warn`` is False), since it would never be called.

    :raises TypeError: when the handler has none of the three (a plain function, a misspelt
        method, an empty :class:`ResourceEventHandlerFuncs`) or one of them is not callable.
    """
    found = tuple(getattr(handler, name, None) for name in HANDLER_METHODS)
    for name, callback in zip(HANDLER_METHODS, found, strict=True):
        if callback is not None and not callable(callback):
            raise TypeError(f"handler {handler!r}: {name} is {callback!r}, not a callable")
    missing = [name for name, callback in zip(HANDLER_METHODS, found, strict=True) if not callback]
    misspelt = [
        f"{name} (did you mean {close[0]}?)"
        for name in dir(handler)
        if name.startswith("on") and name not in HANDLER_METHODS
        for close in [difflib.get_close_matches(name, missing, n=1, cutoff=0.7)]
        if close
    ]
    if len(missing) == len(HANDLER_METHODS):
        if not misspelt and callable(handler) and not isinstance(handler, type):
            raise TypeError(
                f"a handler is an object with on_add, on_update or on_delete, not a function"
                f" ({handler!r}): wrap it, e.g. ResourceEventHandlerFuncs(on_add=...)"
            )
        hint = f": {', '.join(misspelt)}" if misspelt else ""
        raise TypeError(
            f"handler {handler!r} has none of on_add, on_update, on_delete, so it would never"
            f" be called{hint}"
        )
    if misspelt and warn:
        logger.warning(
            "handler %r: %s is never called; handler methods are on_add, on_update, on_delete",
            handler,
            ", ".join(misspelt),
        )
    return found[0], found[1], found[2]


def _takes_initial_list_flag(func: Callback) -> bool:
    """Whether ``on_add`` takes ``(obj, is_in_initial_list)`` rather than ``(obj)``: it has a
    parameter of that name, two required positional parameters, or ``*args``. (A second
    parameter with a default, as in ``lambda obj, k=k: ...``, is not the flag.)"""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return True
    if any(p.name == "is_in_initial_list" for p in params):
        return True
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return True
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in kinds and p.default is inspect.Parameter.empty]
    return len(required) >= 2


class Registration:
    """A handler added with ``informer.add_event_handler``; also its delivery task's body.

    :meth:`has_synced` / :meth:`wait_for_cache_sync` turn true once the handler has processed every
    object of the initial list (client-go's per-handler ``HasSynced``).
    """

    __slots__ = ("_add_takes_flag", "_handler", "_on_add", "_on_delete", "_on_update", "listener")

    def __init__(self, handler: object, listener: Listener) -> None:
        self._handler = handler
        self.listener = listener
        # add_event_handler validated it (and warned) before creating the listener.
        self._on_add, self._on_update, self._on_delete = validate_handler(handler, warn=False)
        self._add_takes_flag = self._on_add is not None and _takes_initial_list_flag(self._on_add)

    def __repr__(self) -> str:
        return f"<Registration {self.listener.name} backlog={self.listener.backlog}>"

    @property
    def handler(self) -> object:
        """The handler object."""
        return self._handler

    @property
    def name(self) -> str:
        """The listener's name (``"<informer>/handler-N"``), as logs and metrics show it."""
        return self.listener.name

    @property
    def backlog(self) -> int:
        """Notifications waiting for the handler."""
        return self.listener.backlog

    @property
    def peak_backlog(self) -> int:
        """The largest backlog seen."""
        return self.listener.peak_backlog

    @property
    def handler_errors(self) -> int:
        """How many times the handler raised."""
        return self.listener.handler_errors

    def has_synced(self) -> bool:
        """True once the informer synced and this handler processed every initial-list add."""
        return self.listener.has_synced()

    async def wait_for_cache_sync(self) -> bool:
        """Wait until :meth:`has_synced` is true, or the handler was removed or the informer
        stopped first; returns :meth:`has_synced`."""
        return await self.listener.wait_for_cache_sync()

    async def wait_synced(self) -> bool:
        """Deprecated alias of :meth:`wait_for_cache_sync` (warns)."""
        warn_renamed("Registration.wait_synced()", "wait_for_cache_sync()")
        return await self.wait_for_cache_sync()

    async def run(self) -> None:
        """Deliver notifications to the handler until the listener closes."""
        listener = self.listener
        while True:
            event = await listener.next()
            if event is None:
                return
            try:
                result = self._call(event)
                if result is not None and inspect.isawaitable(result):
                    await result
            except anyio.get_cancelled_exc_class() as exc:
                if in_cancelled_scope():
                    raise  # we are being cancelled: the informer stops
                # The handler awaited something that was cancelled: its failure, not ours.
                self._failed(event, exc)
            except Exception as exc:
                self._failed(event, exc)
            listener.processed(event)

    def _failed(self, event: Event, exc: BaseException) -> None:
        listener = self.listener
        listener.handler_errors += 1
        logger.error(
            "%s: handler raised on %s: %s: %s",
            listener.name,
            event.type.value,
            type(exc).__name__,
            exc,
            exc_info=(type(exc), exc, exc.__traceback__)
            if logger.isEnabledFor(logging.DEBUG)
            else None,
        )

    def _call(self, event: Event) -> Awaitable[Any] | Any:
        if event.type is EventType.ADDED:
            if self._on_add is None:
                return None
            if self._add_takes_flag:
                return self._on_add(event.object, event.is_in_initial_list)
            return self._on_add(event.object)
        if event.type is EventType.UPDATED:
            if self._on_update is None:
                return None
            return self._on_update(event.old_object, event.object)
        if self._on_delete is None:
            return None
        return self._on_delete(event.object)
