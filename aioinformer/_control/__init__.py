"""Controllers: keys from informers into a rate-limiting work queue, worker pools reconciling
them, workers that run only while elected, and the fence on their writes."""
