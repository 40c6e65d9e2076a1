"""aioinformer: asyncio-native Kubernetes informers.

One LIST+WATCH per resource feeds an indexed, always-fresh local cache; consumers react with
``async for`` and process work through a deduplicating, rate-limited work queue.

The names below are the public API; submodules hold the rest (``aioinformer.errors``,
``aioinformer.workqueue``, ``aioinformer.testing``, ``aioinformer.metrics``,
``aioinformer.integrations``).
"""

from ._client import KubeClient as KubeClient
from ._clock import Clock as Clock
from ._config import BackoffPolicy as BackoffPolicy
from ._config import WatchConfig as WatchConfig
from ._lifecycle import State as State
from ._reflector import Reflector as Reflector
from ._reflector import ReflectorStatistics as ReflectorStatistics
from ._reflector import ReflectorStore as ReflectorStore
from ._reflector import WatchErrorHandler as WatchErrorHandler
from ._verbs import PatchType as PatchType
from ._version import __version__ as __version__
from .backoff import Backoff as Backoff
from .controller import Controller as Controller
from .controller import Result as Result
from .delta_fifo import Delta as Delta
from .delta_fifo import DeltaFIFO as DeltaFIFO
from .delta_fifo import DeltaType as DeltaType
from .errors import InformerError as InformerError
from .factory import SharedInformerFactory as SharedInformerFactory
from .informer import SharedIndexInformer as SharedIndexInformer
from .kubeconfig import connect as connect
from .leaderelection import LeaderElector as LeaderElector
from .listener import Event as Event
from .listener import EventStream as EventStream
from .listener import EventType as EventType
from .listener import Registration as Registration
from .listener import ResourceEventHandlerFuncs as ResourceEventHandlerFuncs
from .lister import Lister as Lister
from .listwatch import ListerWatcher as ListerWatcher
from .listwatch import ListOptions as ListOptions
from .listwatch import ListResult as ListResult
from .listwatch import Resource as Resource
from .listwatch import WatchEvent as WatchEvent
from .listwatch import WatchEventType as WatchEventType
from .objects import DeletedFinalStateUnknown as DeletedFinalStateUnknown
from .objects import KubeObject as KubeObject
from .objects import deletion_handling_meta_namespace_key as deletion_handling_meta_namespace_key
from .objects import meta_namespace_key as meta_namespace_key
from .objects import split_meta_namespace_key as split_meta_namespace_key
from .selectors import LabelSelector as LabelSelector
from .selectors import parse_label_selector as parse_label_selector
from .store import NAMESPACE_INDEX as NAMESPACE_INDEX
from .store import Indexer as Indexer
from .store import Store as Store
from .transport import KubeListerWatcher as KubeListerWatcher

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
    "Reflector",
    "ReflectorStatistics",
    "ReflectorStore",
    "Registration",
    "Resource",
    "ResourceEventHandlerFuncs",
    "Result",
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
    "meta_namespace_key",
    "parse_label_selector",
    "split_meta_namespace_key",
]
