"""Label, field and shard selectors as kube-apiserver parses and applies them (the fake's own)."""
