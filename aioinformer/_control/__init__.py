"""Controllers: keys from informers into a rate-limiting work queue, worker pools reconciling
them, and workers that run only while elected."""
