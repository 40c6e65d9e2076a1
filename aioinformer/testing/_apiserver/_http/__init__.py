"""The HTTP face of the fake API server: routing, the handler of every path, list options,
discovery and the OpenAPI documents."""
