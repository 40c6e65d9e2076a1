"""The registry: storage and the global resource version, the watch cache, what each write does
to an object (the per-resource strategy, the built-in kinds' one), deletion, garbage
collection and ``/scale``, and the hook through which a delegate (the CRD package) serves its
resources."""
