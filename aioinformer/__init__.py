"""aioinformer: asyncio-native Kubernetes informers.

One LIST+WATCH per resource feeds an indexed, always-fresh local cache; consumers react with
``async for`` and process work through a deduplicating, rate-limited work queue.
"""

from ._version import __version__ as __version__
from .delta_fifo import Delta as Delta
from .delta_fifo import DeltaFIFO as DeltaFIFO
from .delta_fifo import DeltaType as DeltaType
from .objects import DeletedFinalStateUnknown as DeletedFinalStateUnknown
from .objects import KubeObject as KubeObject
from .objects import deletion_handling_meta_namespace_key as deletion_handling_meta_namespace_key
from .objects import meta_namespace_key as meta_namespace_key
from .objects import split_meta_namespace_key as split_meta_namespace_key
from .store import NAMESPACE_INDEX as NAMESPACE_INDEX
from .store import Indexer as Indexer
from .store import Store as Store

__all__ = [
    "NAMESPACE_INDEX",
    "Delta",
    "DeletedFinalStateUnknown",
    "DeltaFIFO",
    "DeltaType",
    "Indexer",
    "KubeObject",
    "Store",
    "__version__",
    "deletion_handling_meta_namespace_key",
    "meta_namespace_key",
    "split_meta_namespace_key",
]
