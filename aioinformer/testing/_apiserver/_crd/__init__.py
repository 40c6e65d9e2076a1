"""CustomResourceDefinitions: their validation and lifecycle, and the custom resources they
serve."""
