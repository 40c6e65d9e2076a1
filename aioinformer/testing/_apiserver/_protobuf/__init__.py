"""``application/vnd.kubernetes.protobuf`` request bodies decoded as a real API server does."""
