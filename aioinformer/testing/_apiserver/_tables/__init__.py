"""Server-side ``Table`` answers: the real printers of the common kinds and of CRDs."""
