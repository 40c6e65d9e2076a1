"""Kubernetes' published OpenAPI schemas as the fake reads them, objects seen through them,
field sets, and request bodies decoded as the Go types decode them."""
