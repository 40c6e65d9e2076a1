"""Work queues with client-go ``util/workqueue`` semantics, and their rate limiters.

* :class:`WorkQueue`: fair, deduplicating; an item is never processed by two workers at once.
* :class:`DelayingQueue`: adds ``add_after(item, delay)``.
* :class:`RateLimitingQueue`: adds ``add_rate_limited``, ``forget`` and ``num_requeues``.
* Rate limiters (:class:`RateLimiter` and its implementations) say how long a failed item
  waits; :func:`default_controller_rate_limiter` is client-go's default.
* :class:`MetricsProvider`: where a queue's metrics go (client-go's names; see
  :class:`aioinformer.metrics.PrometheusWorkqueueMetricsProvider`).

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

from .._exports import publish as _publish
from ._delaying import DelayingQueue as DelayingQueue
from ._limiters import BucketRateLimiter as BucketRateLimiter
from ._limiters import ItemExponentialFailureRateLimiter as ItemExponentialFailureRateLimiter
from ._limiters import ItemFastSlowRateLimiter as ItemFastSlowRateLimiter
from ._limiters import MaxOfRateLimiter as MaxOfRateLimiter
from ._limiters import RateLimiter as RateLimiter
from ._limiters import WithMaxWaitRateLimiter as WithMaxWaitRateLimiter
from ._limiters import default_controller_rate_limiter as default_controller_rate_limiter
from ._metrics import MetricsProvider as MetricsProvider
from ._queue import WorkQueue as WorkQueue
from ._rate_limiting import RateLimitingQueue as RateLimitingQueue

__all__ = (
    "WorkQueue",
    "DelayingQueue",
    "RateLimitingQueue",
    "RateLimiter",
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "MetricsProvider",
)

_publish(__name__, __all__, globals())
