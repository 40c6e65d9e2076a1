"""Kubeconfig files for tests: how a program finds the fake API server as it would a cluster."""

from __future__ import annotations

from pathlib import Path

from aioinformer._cli._fake_apiserver import write_kubeconfig
from aioinformer.testing import FakeApiServer


def fake_kubeconfig(server: FakeApiServer, path: Path) -> Path:
    """The kubeconfig ``aioinformer fake-apiserver --kubeconfig path`` writes for ``server``
    (context namespace ``default``, no credentials); returns ``path``."""
    write_kubeconfig(path, server.url)
    return path


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


def two_contexts(path: Path, *, current: str | None = "ctx") -> Path:
    """A kubeconfig with the contexts ``ctx`` and ``other`` (and ``current`` as current)."""
    path.write_text(
        """
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: me, user: {}}]
contexts:
- {name: ctx, context: {cluster: c, user: me}}
- {name: other, context: {cluster: c, user: me}}
"""
        + (f"current-context: {current}\n" if current is not None else "")
    )
    return path
