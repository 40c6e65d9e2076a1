"""aioinformer: asyncio-native Kubernetes informers.

One LIST+WATCH per resource feeds an indexed, always-fresh local cache; consumers react with
``async for`` and process work through a deduplicating, rate-limited work queue.

The names below are the public API, with these namespaces: :mod:`aioinformer.errors` (every
exception), :mod:`aioinformer.workqueue` (queues and rate limiters), :mod:`aioinformer.lowlevel`
(the reflector, the delta FIFO, lister-watchers and the writable stores, for building your own
pipeline), :mod:`aioinformer.metrics` (Prometheus), :mod:`aioinformer.integrations` (web
frameworks), :mod:`aioinformer.testing` (the fake API server), :mod:`aioinformer.conditions`
(status conditions) and :mod:`aioinformer.predicates` (watch filters). Every other module is
private.
"""

from . import conditions as conditions
from . import lowlevel as lowlevel
from . import predicates as predicates
from . import workqueue as workqueue
from ._cache._field_index import index_on as index_on
from ._cache._lister import Lister as Lister
from ._cache._selectors import LabelSelector as LabelSelector
from ._cache._selectors import parse_label_selector as parse_label_selector
from ._cache._store import NAMESPACE_INDEX as NAMESPACE_INDEX
from ._cache._view import Cache as Cache
from ._clock import Clock as Clock
from ._config import BackoffPolicy as BackoffPolicy
from ._config import WatchConfig as WatchConfig
from ._control._controller import Controller as Controller
from ._control._controller import ControllerStatistics as ControllerStatistics
from ._control._enqueue import enqueue_keys as enqueue_keys
from ._control._finalizers import Finalizer as Finalizer
from ._control._owners import owner_keys as owner_keys
from ._control._owners import set_controller_reference as set_controller_reference
from ._control._workers import Result as Result
from ._election._elector import ElectorStatistics as ElectorStatistics
from ._election._elector import LeaderElector as LeaderElector
from ._election._leadership import LeadershipTerm as LeadershipTerm
from ._events._recorder import EventRecorder as EventRecorder
from ._events._recorder import EventRecorderStatistics as EventRecorderStatistics
from ._exports import publish as _publish
from ._informer._event_stream import EventStream as EventStream
from ._informer._factory import FactoryStatistics as FactoryStatistics
from ._informer._factory import SharedInformerFactory as SharedInformerFactory
from ._informer._handlers import Registration as Registration
from ._informer._handlers import ResourceEventHandler as ResourceEventHandler
from ._informer._handlers import ResourceEventHandlerFuncs as ResourceEventHandlerFuncs
from ._informer._informer import InformerStatistics as InformerStatistics
from ._informer._informer import SharedIndexInformer as SharedIndexInformer
from ._informer._listener import Event as Event
from ._informer._listener import EventType as EventType
from ._informer._listener import ListenerStatistics as ListenerStatistics
from ._lifecycle import State as State
from ._listwatch import ListOptions as ListOptions
from ._listwatch import Resource as Resource
from ._objects import DeletedFinalStateUnknown as DeletedFinalStateUnknown
from ._objects import KubeObject as KubeObject
from ._objects import meta_namespace_key as meta_namespace_key
from ._objects import split_meta_namespace_key as split_meta_namespace_key
from ._replicas._controller import ShardedController as ShardedController
from ._replicas._handover import RangeExit as RangeExit
from ._replicas._handover import ShardTiming as ShardTiming
from ._sharding import ShardSelector as ShardSelector
from ._sharding import equal_shards as equal_shards
from ._sharding import shard_range as shard_range
from ._version import __version__ as __version__
from ._wire._client import KubeClient as KubeClient
from ._wire._kubeconfig import connect as connect
from ._wire._verbs import PatchType as PatchType

__all__ = (
    # informers and the factory
    "SharedIndexInformer",
    "InformerStatistics",
    "SharedInformerFactory",
    "FactoryStatistics",
    "WatchConfig",
    "BackoffPolicy",
    # consumers
    "Event",
    "EventType",
    "EventStream",
    "ListenerStatistics",
    "Registration",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    # the cache
    "Cache",
    "Lister",
    "NAMESPACE_INDEX",
    "index_on",
    "KubeObject",
    "DeletedFinalStateUnknown",
    "meta_namespace_key",
    "split_meta_namespace_key",
    "LabelSelector",
    "parse_label_selector",
    # controllers and leader election
    "Controller",
    "ControllerStatistics",
    "Result",
    "enqueue_keys",
    "LeaderElector",
    "ElectorStatistics",
    "LeadershipTerm",
    # sharding
    "ShardedController",
    "ShardSelector",
    "shard_range",
    "equal_shards",
    "ShardTiming",
    "RangeExit",
    # the client
    "KubeClient",
    "connect",
    "PatchType",
    "Resource",
    "ListOptions",
    # lifecycle and time
    "State",
    "Clock",
    "__version__",
    # the operator toolkit
    "Finalizer",
    "EventRecorder",
    "EventRecorderStatistics",
    "owner_keys",
    "set_controller_reference",
)

_publish(__name__, __all__, globals())
