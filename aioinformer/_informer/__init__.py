"""The informer: one LIST+WATCH shared by many consumers, its handlers and event streams,
their buffers, and the factory that shares informers per resource."""
