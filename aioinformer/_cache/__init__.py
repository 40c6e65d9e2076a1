"""The stores: the indexed cache an informer keeps (dict or compact), its read-only view and
listers, the selectors they filter with, and the DeltaFIFO that feeds it."""
