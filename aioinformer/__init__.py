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

The layers, lowest first (each imports only from those below it; ``lint-imports`` checks the
contracts in ``pyproject.toml``): ``_redact``, ``_version``; ``errors``; ``_objects``,
``_config``, ``_clock``, ``_exports``, ``_builtin_resources``; ``_listwatch``, ``_backoff``,
``_lifecycle``; ``workqueue``; ``_wire`` (HTTP, client, kubeconfig); ``_cache`` and
``_sharding``; ``_reflector``; ``_informer`` and ``_election``; ``_control``; ``_replicas``;
``_prometheus``; the public faces ``lowlevel``, ``metrics``, ``integrations`` and ``testing``
(the fake API server, which nothing below imports); ``_cli`` on top.

``import aioinformer`` is light: it loads none of the machinery (aiohttp, anyio, the
informers), so an environment where aioinformer is merely installed — a pytest run, whose
plugin lives in this package — does not pay for it. The first public name used loads all
of them at once (as an import of everything did before); kubernetes_asyncio loads only when
:func:`connect` connects, and the fake API server only with :mod:`aioinformer.testing`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._version import __version__ as __version__

if TYPE_CHECKING:
    from . import conditions as conditions
    from . import errors as errors
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

#: Where each public name is defined (relative to this package); ``__getattr__`` imports
#: them on first use. A test checks that this table and the imports above agree.
_DEFINED_IN: dict[str, str] = {
    "index_on": "._cache._field_index",
    "Lister": "._cache._lister",
    "LabelSelector": "._cache._selectors",
    "parse_label_selector": "._cache._selectors",
    "NAMESPACE_INDEX": "._cache._store",
    "Cache": "._cache._view",
    "Clock": "._clock",
    "BackoffPolicy": "._config",
    "WatchConfig": "._config",
    "Controller": "._control._controller",
    "ControllerStatistics": "._control._controller",
    "enqueue_keys": "._control._enqueue",
    "Finalizer": "._control._finalizers",
    "owner_keys": "._control._owners",
    "set_controller_reference": "._control._owners",
    "Result": "._control._workers",
    "ElectorStatistics": "._election._elector",
    "LeaderElector": "._election._elector",
    "LeadershipTerm": "._election._leadership",
    "EventRecorder": "._events._recorder",
    "EventRecorderStatistics": "._events._recorder",
    "EventStream": "._informer._event_stream",
    "FactoryStatistics": "._informer._factory",
    "SharedInformerFactory": "._informer._factory",
    "Registration": "._informer._handlers",
    "ResourceEventHandler": "._informer._handlers",
    "ResourceEventHandlerFuncs": "._informer._handlers",
    "InformerStatistics": "._informer._informer",
    "SharedIndexInformer": "._informer._informer",
    "Event": "._informer._listener",
    "EventType": "._informer._listener",
    "ListenerStatistics": "._informer._listener",
    "State": "._lifecycle",
    "ListOptions": "._listwatch",
    "Resource": "._listwatch",
    "DeletedFinalStateUnknown": "._objects",
    "KubeObject": "._objects",
    "meta_namespace_key": "._objects",
    "split_meta_namespace_key": "._objects",
    "ShardedController": "._replicas._controller",
    "RangeExit": "._replicas._handover",
    "ShardTiming": "._replicas._handover",
    "ShardSelector": "._sharding",
    "equal_shards": "._sharding",
    "shard_range": "._sharding",
    "KubeClient": "._wire._client",
    "connect": "._wire._kubeconfig",
    "PatchType": "._wire._verbs",
}

#: Public namespaces reachable as attributes (``aioinformer.errors.ConfigurationError`` after
#: ``import aioinformer``); each is imported alone, on first use.
_NAMESPACES = ("conditions", "errors", "lowlevel", "predicates", "workqueue")


def _load() -> None:
    """Import every public name into this namespace and say where users import each from
    (:func:`aioinformer._exports.publish`), as an eager ``__init__`` would."""
    from ._exports import publish

    scope = globals()
    for name, module in _DEFINED_IN.items():
        scope[name] = getattr(importlib.import_module(module, __name__), name)
    for namespace in _NAMESPACES:
        scope[namespace] = importlib.import_module(f".{namespace}", __name__)
    publish(__name__, __all__, scope)


if not TYPE_CHECKING:  # for mypy, the imports above define the names (and typos stay errors)

    def __getattr__(name: str) -> object:
        if name in _NAMESPACES:
            module = importlib.import_module(f".{name}", __name__)
            globals()[name] = module
            return module
        if name not in _DEFINED_IN:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        _load()
        return globals()[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_NAMESPACES})
