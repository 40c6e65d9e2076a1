"""Web framework integrations: run a factory with the app, readiness, liveness, ``/metrics``.

* :mod:`aioinformer.integrations.fastapi`: ``informer_lifespan`` (a FastAPI/Starlette
  ``lifespan=``), ``health_router``, ``metrics_router`` (needs the ``examples`` extra or FastAPI).
* :mod:`aioinformer.integrations.aiohttp`: ``informer_cleanup_ctx`` (for
  ``app.cleanup_ctx``), ``add_health_routes``, ``metrics_handler``.

Both start the informers with the app **without** waiting for sync (``/readyz`` answers 503
until every cache is synced) and stop them when the app shuts down. This package itself
imports neither framework.
"""

from .._exports import publish as _publish
from ._runtime import InformerRuntime as InformerRuntime
from ._runtime import run_factory as run_factory

__all__ = ("InformerRuntime", "run_factory")

_publish(__name__, __all__, globals())
