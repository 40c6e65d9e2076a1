"""Kubernetes Events about objects: the recorder (events.k8s.io/v1 with series, or core/v1
through client-go's correlator) and its pure bookkeeping."""
