"""aioinformer: asyncio-native Kubernetes informers.

One LIST+WATCH per resource feeds an indexed, always-fresh local cache; consumers react with
``async for`` and process work through a deduplicating, rate-limited work queue.

The names below are the public API; submodules hold the rest (``aioinformer.errors``,
``aioinformer.workqueue``, ``aioinformer.testing``, ``aioinformer.metrics``,
``aioinformer.integrations``).
"""

from ._backoff import Backoff as Backoff
from ._client import KubeClient as KubeClient
from ._clock import Clock as Clock
from ._config import BackoffPolicy as BackoffPolicy
from ._config import WatchConfig as WatchConfig
from ._controller import Controller as Controller
from ._controller import Result as Result
from ._delta_fifo import Delta as Delta
from ._delta_fifo import DeltaFIFO as DeltaFIFO
from ._delta_fifo import DeltaType as DeltaType
from ._event_stream import Event as Event
from ._event_stream import EventStream as EventStream
from ._event_stream import EventType as EventType
from ._event_stream import Registration as Registration
from ._event_stream import ResourceEventHandlerFuncs as ResourceEventHandlerFuncs
from ._factory import SharedInformerFactory as SharedInformerFactory
from ._informer import SharedIndexInformer as SharedIndexInformer
from ._kubeconfig import connect as connect
from ._leaderelection import LeaderElector as LeaderElector
from ._lifecycle import State as State
from ._lister import Lister as Lister
from ._listwatch import ListerWatcher as ListerWatcher
from ._listwatch import ListOptions as ListOptions
from ._listwatch import ListResult as ListResult
from ._listwatch import Resource as Resource
from ._listwatch import WatchEvent as WatchEvent
from ._listwatch import WatchEventType as WatchEventType
from ._objects import DeletedFinalStateUnknown as DeletedFinalStateUnknown
from ._objects import KubeObject as KubeObject
from ._objects import deletion_handling_meta_namespace_key as deletion_handling_meta_namespace_key
from ._objects import meta_namespace_key as meta_namespace_key
from ._objects import split_meta_namespace_key as split_meta_namespace_key
from ._reflector import Reflector as Reflector
from ._reflector import ReflectorStatistics as ReflectorStatistics
from ._reflector import ReflectorStore as ReflectorStore
from ._reflector import WatchErrorHandler as WatchErrorHandler
from ._selectors import LabelSelector as LabelSelector
from ._selectors import parse_label_selector as parse_label_selector
from ._sharded_controller import ShardedController as ShardedController
from ._sharding import ShardSelector as ShardSelector
from ._sharding import equal_shards as equal_shards
from ._sharding import shard_range as shard_range
from ._sharding._handover import RangeExit as RangeExit
from ._sharding._handover import Timing as ShardTiming
from ._store import NAMESPACE_INDEX as NAMESPACE_INDEX
from ._store import Indexer as Indexer
from ._store import Store as Store
from ._transport import KubeListerWatcher as KubeListerWatcher
from ._verbs import PatchType as PatchType
from ._version import __version__ as __version__
from .errors import InformerError as InformerError

__all__ = [
    "NAMESPACE_INDEX",
    "Backoff",
    "BackoffPolicy",
    "Clock",
    "Controller",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "Event",
    "EventStream",
    "EventType",
    "Indexer",
    "InformerError",
    "KubeClient",
    "KubeListerWatcher",
    "KubeObject",
    "LabelSelector",
    "LeaderElector",
    "ListOptions",
    "ListResult",
    "ListerWatcher",
    "Lister",
    "PatchType",
    "RangeExit",
    "Reflector",
    "ReflectorStatistics",
    "ReflectorStore",
    "Registration",
    "Resource",
    "ResourceEventHandlerFuncs",
    "Result",
    "ShardSelector",
    "ShardTiming",
    "ShardedController",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "State",
    "Store",
    "WatchConfig",
    "WatchErrorHandler",
    "WatchEvent",
    "WatchEventType",
    "__version__",
    "connect",
    "deletion_handling_meta_namespace_key",
    "equal_shards",
    "meta_namespace_key",
    "parse_label_selector",
    "shard_range",
    "split_meta_namespace_key",
]
