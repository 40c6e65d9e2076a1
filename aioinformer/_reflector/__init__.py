"""The Reflector: a synchronous list/watch state machine (``_machine``, with its states in
``_states`` and its inputs and actions in ``_steps``) driven by a thin async loop
(``_loop``); streaming-list collection lives in ``_streaming``."""

from ._loop import Reflector as Reflector
from ._loop import ReflectorStore as ReflectorStore
from ._loop import WatchErrorHandler as WatchErrorHandler
from ._states import RestartCause as RestartCause
from ._statistics import ReflectorStatistics as ReflectorStatistics
from ._streaming import INITIAL_EVENTS_END as INITIAL_EVENTS_END

__all__ = [
    "INITIAL_EVENTS_END",
    "Reflector",
    "ReflectorStatistics",
    "ReflectorStore",
    "RestartCause",
    "WatchErrorHandler",
]
