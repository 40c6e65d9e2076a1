"""The fake API server's certificates: one certificate authority per process, and a serving
certificate for each server that serves HTTPS.

Every cluster has a root CA: kube-apiserver's serving certificate chains to it, and the
``kube-root-ca.crt`` ConfigMap of every namespace publishes it. The fake makes one with
`trustme <https://trustme.readthedocs.io>`_ (ECDSA P-256) the first time one is needed and keeps
it for the life of the process, so every fake server of a test run shares it. A server started
with ``tls=True`` gets a certificate from it for the names a client may dial: ``127.0.0.1``,
``::1``, ``localhost``, the in-cluster names of the ``kubernetes`` Service, and its own host.
Go and Node match an IP host only against IP SANs and a name only against DNS SANs, so both
kinds are there.
"""

from __future__ import annotations

import atexit
import functools
import ipaddress
import os
import ssl
import tempfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import trustme

__all__ = ["ca_file", "ca_pem", "client_context", "server_context", "server_names"]

#: The names every serving certificate carries (kubeadm gives its apiserver the same
#: in-cluster names).
_NAMES = (
    "127.0.0.1",
    "::1",
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)


@functools.cache
def _authority() -> trustme.CA:
    import trustme

    return trustme.CA(organization_name="aioinformer fake API server")


def ca_pem() -> str:
    """The PEM of the process's certificate authority."""
    return _authority().cert_pem.bytes().decode()


@functools.cache
def ca_file() -> str:
    """A file holding the CA's PEM (for clients that take a path, as kubernetes_asyncio's
    ``Configuration.ssl_ca_cert`` does); removed when the process exits."""
    handle, path = tempfile.mkstemp(prefix="aioinformer-fake-ca-", suffix=".crt")
    with os.fdopen(handle, "w", encoding="ascii") as file:
        file.write(ca_pem())
    atexit.register(_remove, path)
    return path


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def server_names(host: str) -> tuple[str, ...]:
    """The subject alternative names of a server listening on ``host``."""
    names = list(_NAMES)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None and address.is_unspecified:
        host = ""
    if host and host not in names:
        names.append(host)
    return tuple(names)


def server_context(host: str) -> ssl.SSLContext:
    """A server-side TLS context with a fresh certificate for ``host`` (TLS 1.2 or later)."""
    leaf = _authority().issue_cert(*server_names(host))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    leaf.configure_cert(context)
    return context


def client_context() -> ssl.SSLContext:
    """A client-side TLS context that trusts the process's certificate authority (and checks
    host names)."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    _authority().configure_trust(context)
    return context
