"""The kubeconfig of a fake API server: what ``server.kubeconfig()`` returns and
``aioinformer fake-apiserver --kubeconfig PATH`` writes.

One cluster, user and context named ``aioinformer-fake``, the context's namespace ``default``.
The user's token is :data:`ADMIN_TOKEN`: the fake needs no credentials (a token it does not
know is ``kubernetes-admin``'s, see :mod:`._http._auth`), but kubectl asks for a user name and
password on a terminal when an ``https://`` cluster's user has none (client-go reads the user's
credentials only for TLS, so over ``http://`` the token is not even sent). The cluster entry is
what every client accepts (kubectl and client-go, the
Python clients, @kubernetes/client-node 2.x):

* ``https://``: ``certificate-authority-data``, the base64 of the CA that signed the server's
  certificate; never ``insecure-skip-tls-verify`` beside it (client-go refuses the pair:
  ``specifying a root certificates file with the insecure flag is not allowed``);
* ``http://``: ``insecure-skip-tls-verify: true`` (a YAML boolean): client-node refuses a plain
  ``http://`` server without it (``HTTP protocol is not allowed when skipTLSVerify is not set or
  false``), kubectl and the Python clients ignore it.
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "ADMIN_TOKEN",
    "KUBECONFIG_NAME",
    "kubeconfig_document",
    "kubeconfig_yaml",
    "write_kubeconfig",
]

#: The name of the cluster, the user and the context.
KUBECONFIG_NAME = "aioinformer-fake"
#: The bearer token of the kubeconfig's user (any token is ``kubernetes-admin`` to the fake).
ADMIN_TOKEN = "aioinformer-fake-admin"


def kubeconfig_document(url: str, *, ca_pem: str | None = None) -> dict[str, Any]:
    """The kubeconfig of the server at ``url`` (``ca_pem``: the CA of an ``https://`` one)."""
    cluster: dict[str, Any] = {"server": url}
    if url.startswith("https://"):
        if ca_pem is None:
            raise ValueError("an https:// server needs the CA that signed its certificate")
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem.encode()).decode()
    else:
        cluster["insecure-skip-tls-verify"] = True
    name = KUBECONFIG_NAME
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": {"token": ADMIN_TOKEN}}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": name, "namespace": "default"}}
        ],
        "current-context": name,
        "preferences": {},
    }


def kubeconfig_yaml(document: dict[str, Any], *, comment: str = "") -> str:
    """The document as YAML (``comment``: a first line, without its ``#``)."""
    import yaml

    body = yaml.safe_dump(document, sort_keys=False)
    return f"# {comment}\n{body}" if comment else body


def write_kubeconfig(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically (a reader sees the old file or the new one), owner
    read and write only (a kubeconfig is a secret in general).

    :raises OSError: when the file cannot be written.
    """
    target = Path(path)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, 0o600)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return target
