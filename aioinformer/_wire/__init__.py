"""The wire: HTTP to the API server, credentials and kubeconfig, discovery, the client's verbs,
and the lister-watcher over HTTP (list pages, watch framing and decoding)."""
