"""The fake Kubernetes API server: a protocol-faithful kube-apiserver on 127.0.0.1 for tests.

It is an oracle for the client side, not a mirror of it: it shares no parsing, matching or
error code with the library (the import contracts in ``pyproject.toml`` check it). Its floors,
lowest first: ``_api`` (the served resources, the failure and ``Status`` vocabulary), ``_schema``
(published OpenAPI schemas, typed views, decoding), ``_validation`` / ``_selectors`` / ``_apply``
/ ``_tables`` / ``_protobuf``, ``_registry`` (storage, the watch cache, the write path, deletion
and garbage collection), ``_crd`` (CustomResourceDefinitions, registered into the registry),
``_http`` (the REST face, discovery, OpenAPI), and this package's facade (the server, its
objects, faults and request log)."""
