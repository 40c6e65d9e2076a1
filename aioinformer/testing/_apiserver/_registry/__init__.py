"""The registry: storage and the global resource version, the watch cache, what each write does
to an object, deletion, garbage collection and the subresources."""
