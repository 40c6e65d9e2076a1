"""Kubeconfig files for tests: how a program finds the fake API server as it would a cluster."""

from __future__ import annotations

from pathlib import Path

from aioinformer.testing import FakeApiServer


def kubeconfig_for(server: FakeApiServer, path: Path, *, namespace: str = "team-a") -> Path:
    """Write a kubeconfig whose current context points at ``server``; returns ``path``."""
    path.write_text(
        f"""
apiVersion: v1
kind: Config
clusters: [{{name: fake, cluster: {{server: "{server.url}"}}}}]
users: [{{name: me, user: {{token: t0ken}}}}]
contexts: [{{name: ctx, context: {{cluster: fake, user: me, namespace: {namespace}}}}}]
current-context: ctx
"""
    )
    return path
