"""Work queues with client-go ``util/workqueue`` semantics, and their rate limiters.

* :class:`WorkQueue`: fair, deduplicating; an item is never processed by two workers at once.
* :class:`DelayingQueue`: adds ``add_after(item, delay)``.
* :class:`RateLimitingQueue`: adds ``add_rate_limited``, ``forget`` and ``num_requeues``.

A worker loop::

    while True:
        try:
            key = await queue.get()
        except QueueShutDown:
            return
        try:
            await handle(key)
        except Exception:
            queue.add_rate_limited(key)
        else:
            queue.forget(key)
        finally:
            queue.done(key)
"""

from ._delaying import DelayingQueue as DelayingQueue
from ._limiters import BucketRateLimiter as BucketRateLimiter
from ._limiters import ItemExponentialFailureRateLimiter as ItemExponentialFailureRateLimiter
from ._limiters import ItemFastSlowRateLimiter as ItemFastSlowRateLimiter
from ._limiters import MaxOfRateLimiter as MaxOfRateLimiter
from ._limiters import RateLimiter as RateLimiter
from ._limiters import WithMaxWaitRateLimiter as WithMaxWaitRateLimiter
from ._limiters import default_controller_rate_limiter as default_controller_rate_limiter
from ._limiters import default_item_based_rate_limiter as default_item_based_rate_limiter
from ._metrics import HISTOGRAM_BUCKETS as HISTOGRAM_BUCKETS
from ._metrics import METRIC_HELP as METRIC_HELP
from ._metrics import METRIC_NAMES as METRIC_NAMES
from ._metrics import CounterMetric as CounterMetric
from ._metrics import GaugeMetric as GaugeMetric
from ._metrics import HistogramMetric as HistogramMetric
from ._metrics import MetricsProvider as MetricsProvider
from ._metrics import NoopMetricsProvider as NoopMetricsProvider
from ._metrics import SettableGaugeMetric as SettableGaugeMetric
from ._queue import WorkQueue as WorkQueue
from ._rate_limiting import RateLimitingQueue as RateLimitingQueue

__all__ = [
    "HISTOGRAM_BUCKETS",
    "METRIC_HELP",
    "METRIC_NAMES",
    "BucketRateLimiter",
    "CounterMetric",
    "DelayingQueue",
    "GaugeMetric",
    "HistogramMetric",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "NoopMetricsProvider",
    "RateLimiter",
    "RateLimitingQueue",
    "SettableGaugeMetric",
    "WithMaxWaitRateLimiter",
    "WorkQueue",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
]
