"""The reflector machine's hot path: a run of watch events in the :class:`Watching` state.

Each event is an :class:`Apply` (the RV follows the event's, except while a watch from RV
``""``/``"0"`` replays synthetic ADDED events), a :class:`Skip` for an unknown type or a
:class:`Reject` for an object that cannot be cached; an event whose RV goes back ends the run
with a :class:`Pause` and the state that relists from the last good RV.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from .._listwatch import WatchEvent, WatchEventType
from .._wire._slices import WireEvent, WireObject
from ..errors import InvalidObjectError, ResourceVersionError
from ._checks import key_hint, object_problem, older
from ._states import Cursor, NeedList, RestartCause, State, Watching
from ._steps import Action, Apply, Delay, Pause, Reject, Skip

__all__ = ["APPLY", "on_events"]

_ADDED = WatchEventType.ADDED
_BOOKMARK = WatchEventType.BOOKMARK
# What to do with each event type applied to the store (bookmarks only move the RV), by its
# wire name: one action object per type, as events are the hot path.
APPLY: Final = {
    kind.value: Apply(kind)
    for kind in (
        WatchEventType.ADDED,
        WatchEventType.MODIFIED,
        WatchEventType.DELETED,
        WatchEventType.BOOKMARK,
    )
}


def on_events(
    state: Watching, events: Sequence[WatchEvent | WireEvent]
) -> tuple[list[Action], State]:
    """Events in order: an :class:`Apply` for the known types (the RV follows each event's,
    except during a replay of synthetic ADDED events), a :class:`Skip` for the others, a
    :class:`Reject` for an object that cannot be cached; one new state at the end (the same
    state when nothing changed). An event whose RV goes back ends the run with a
    :class:`Pause` (that event not applied) and the state that relists from the last good RV.
    """
    cursor, replaying, delivered = state.cursor, state.replaying, state.delivered
    current = cursor.resource_version
    actions: list[Action] = []
    append = actions.append
    for event in events:
        apply = APPLY.get(event.type)
        if apply is None:
            append(Skip(event.type))
            continue
        delivered = True
        obj = event.object
        rv: Any
        if obj.__class__ is WireObject:
            rv = obj.resource_version  # checked when it was decoded
        else:
            if obj is None:  # a wire event whose object could not be carried
                obj = event.document  # type: ignore[union-attr]
                if apply.type is not _BOOKMARK:
                    append(_rejected(obj, apply))
                    continue
            metadata = obj.get("metadata") if obj.__class__ is dict else None
            if metadata.__class__ is not dict:
                append(_rejected(obj, apply))
                continue
            rv = metadata.get("resourceVersion")
            if apply.type is _BOOKMARK:
                if rv.__class__ is not str or not rv:
                    append(_rejected(obj, apply))
                    continue
            else:
                name = metadata.get("name")
                namespace = metadata.get("namespace")
                if (
                    name.__class__ is not str
                    or not name
                    or (namespace is not None and namespace.__class__ is not str)
                    or (rv is not None and rv.__class__ is not str)
                ):
                    append(_rejected(obj, apply))
                    continue
        if replaying and apply.type is not _ADDED:
            replaying = False
        if not replaying and rv and rv != current:
            if (len(rv) < len(current) or (len(rv) == len(current) and rv < current)) and older(
                rv, current
            ):
                here = _cursor_at(cursor, current)
                pause, after = _backwards(here, rv, event.type)
                append(pause)
                return actions, after
            current = rv
        append(apply)
    if current != cursor.resource_version:
        cursor = Cursor(current, cursor.unavailable, cursor.paginated)
    if (cursor, replaying, delivered) == (state.cursor, state.replaying, state.delivered):
        return actions, state
    return actions, Watching(cursor, replaying, delivered)


def _cursor_at(cursor: Cursor, rv: str) -> Cursor:
    if rv == cursor.resource_version:
        return cursor
    return Cursor(rv, cursor.unavailable, cursor.paginated)


def _rejected(obj: object, apply: Apply) -> Action:
    if apply.type is _BOOKMARK:
        return Reject(InvalidObjectError("a bookmark without a resourceVersion"))
    reason = object_problem(obj) or "the object is nested too deeply to be stored"
    return Reject(InvalidObjectError(reason, key=key_hint(obj)))


def _backwards(cursor: Cursor, rv: str, event_type: str) -> tuple[Action, State]:
    error = ResourceVersionError(
        f"a {event_type} event went back to resourceVersion {rv!r} after"
        f" {cursor.resource_version!r}; relisting",
        resource_version=rv,
        previous=cursor.resource_version,
    )
    return Pause(Delay.BACKOFF, RestartCause.BACKWARDS, (error,)), NeedList(cursor)
