"""Prometheus metrics for work queues and informers (the ``metrics`` extra).

* :class:`PrometheusWorkqueueMetricsProvider` records client-go's ``workqueue_*`` metrics;
  pass it (or :func:`workqueue_metrics_provider`) as a queue's or controller's
  ``metrics_provider``.
* :class:`InformerCollector` (or :func:`register_informer_metrics`) exposes the counters the
  informers keep anyway, read at scrape time: the informer's hot path does no metrics work.
* :func:`render_metrics` renders a registry for a ``/metrics`` endpoint.

Without ``prometheus_client`` this module still imports: :func:`workqueue_metrics_provider`,
:func:`register_informer_metrics` and :func:`render_metrics` do nothing (a no-op provider,
None, an empty body), while the two classes raise an :class:`ImportError` saying what to
install.
"""

from ._exports import publish as _publish
from ._prometheus import InformerCollector as InformerCollector
from ._prometheus import PrometheusWorkqueueMetricsProvider as PrometheusWorkqueueMetricsProvider
from ._prometheus import ShardedControllerCollector as ShardedControllerCollector
from ._prometheus import register_informer_metrics as register_informer_metrics
from ._prometheus import render_metrics as render_metrics
from ._prometheus import workqueue_metrics_provider as workqueue_metrics_provider

__all__ = (
    "PrometheusWorkqueueMetricsProvider",
    "workqueue_metrics_provider",
    "InformerCollector",
    "ShardedControllerCollector",
    "register_informer_metrics",
    "render_metrics",
)

_publish(__name__, __all__, globals())
