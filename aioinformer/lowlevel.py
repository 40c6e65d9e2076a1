"""The machinery under the informer, for building a pipeline of your own.

An informer is a :class:`ListerWatcher` (the one I/O seam; :class:`KubeListerWatcher` over a
:class:`~aioinformer.KubeClient`) read by a :class:`Reflector` (client-go's list/watch rules)
into a :class:`DeltaFIFO` (per-key :class:`Delta` s), popped into an :class:`Indexer` (the
writable cache). Each piece works alone: a :class:`Reflector` writes to any
:class:`ReflectorStore`, a :class:`Store` or :class:`Indexer` is a plain synchronous cache.
Most programs need none of this: :class:`~aioinformer.SharedIndexInformer` and
:class:`~aioinformer.SharedInformerFactory` assemble it.
"""

from ._backoff import Backoff as Backoff
from ._cache._delta_fifo import Delta as Delta
from ._cache._delta_fifo import DeltaFIFO as DeltaFIFO
from ._cache._delta_fifo import DeltaType as DeltaType
from ._cache._store import Indexer as Indexer
from ._cache._store import Store as Store
from ._exports import publish as _publish
from ._informer._factory import ListerWatcherFactory as ListerWatcherFactory
from ._listwatch import ListerWatcher as ListerWatcher
from ._listwatch import ListResult as ListResult
from ._listwatch import WatchEvent as WatchEvent
from ._listwatch import WatchEventType as WatchEventType
from ._listwatch import WatchStream as WatchStream
from ._reflector import Reflector as Reflector
from ._reflector import ReflectorStatistics as ReflectorStatistics
from ._reflector import ReflectorStore as ReflectorStore
from ._reflector import RestartCause as RestartCause
from ._wire._transport import KubeListerWatcher as KubeListerWatcher

__all__ = (
    "ListerWatcher",
    "ListerWatcherFactory",
    "ListResult",
    "WatchEvent",
    "WatchEventType",
    "WatchStream",
    "KubeListerWatcher",
    "Reflector",
    "ReflectorStore",
    "ReflectorStatistics",
    "RestartCause",
    "DeltaFIFO",
    "Delta",
    "DeltaType",
    "Store",
    "Indexer",
    "Backoff",
)

_publish(__name__, __all__, globals())
