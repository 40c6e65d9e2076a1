"""Issue 23, deliverable 7: the fake serves HTTPS, and writes a kubeconfig real clients take.

``FakeApiServer(tls=True)`` / ``aioinformer fake-apiserver --tls --kubeconfig F``: a certificate
for 127.0.0.1, ::1 and localhost from a generated CA, whose PEM the kubeconfig carries as
``certificate-authority-data``. Each test names the client rule it meets (client-go
``transport.TLSConfigFor``, Go's host name verification, @kubernetes/client-node's
``applyHTTPSOptions``); kubectl and client-node run with verification on.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import ssl
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import trustme
import yaml
from kubernetes_asyncio.client import CoreV1Api

from aioinformer.testing import FakeApiServer
from aioinformer.testing._apiserver._tls import client_context, server_names

from .standalone import Standalone

NO_KUBECTL = "kubectl is not on PATH (these tests drive kubectl)"
JS = Path(__file__).resolve().parents[2] / "benchmarks" / "js"


async def test_an_https_server_is_verified_against_the_cluster_ca() -> None:
    """``tls=True`` serves HTTPS with a certificate whose SANs name
    ``127.0.0.1`` and ``::1`` as IP addresses and ``localhost`` as a DNS name (Go and Node
    match an IP host only against IP SANs, a name only against DNS SANs); it chains to the CA
    that ``kube-root-ca.crt`` publishes. A client trusting that CA connects; one trusting only
    the system's roots is refused; kubernetes_asyncio's client (``api_client()``) trusts it."""
    async with FakeApiServer(tls=True) as server:
        assert server.url.startswith("https://127.0.0.1:")
        published = server.objects.get("configmaps", "kube-root-ca.crt")["data"]["ca.crt"]
        assert published == server.ca_pem
        assert server_names("127.0.0.1")[:3] == ("127.0.0.1", "::1", "localhost")
        connector = aiohttp.TCPConnector(ssl=client_context())
        async with (
            aiohttp.ClientSession(connector=connector) as http,
            http.get(f"{server.url}/version") as response,
        ):
            assert response.status == 200
        async with aiohttp.ClientSession() as http:
            with pytest.raises(aiohttp.ClientConnectorCertificateError):
                await http.get(f"{server.url}/version")
        async with server.api_client() as api:
            names = [n.metadata.name for n in (await CoreV1Api(api).list_namespace()).items]
        assert "kube-system" in names


async def test_the_kubeconfig_document_and_file(tmp_path: Path) -> None:
    """``server.kubeconfig(path)``: one cluster, user and context ``aioinformer-fake``
    (namespace ``default``); HTTPS: ``certificate-authority-data`` (base64 of the CA PEM) and
    no ``insecure-skip-tls-verify`` (client-go ``transport.TLSConfigFor`` refuses the pair);
    HTTP: ``insecure-skip-tls-verify: true``, a YAML boolean (client-node's ``newClusters``
    takes only ``true``, and refuses ``http://`` without it). The file is mode 0600."""
    path = tmp_path / "kubeconfig"
    async with FakeApiServer(tls=True) as server:
        document = server.kubeconfig(path)
        cluster = document["clusters"][0]["cluster"]
        assert set(cluster) == {"server", "certificate-authority-data"}
        assert base64.b64decode(cluster["certificate-authority-data"]).decode() == server.ca_pem
        assert document["contexts"][0]["context"]["namespace"] == "default"
        assert yaml.safe_load(path.read_text()) == document
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    async with FakeApiServer() as plain:
        cluster = plain.kubeconfig()["clusters"][0]["cluster"]
        assert cluster == {"server": plain.url, "insecure-skip-tls-verify": True}


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Standalone, Path]]:
    """``aioinformer fake-apiserver --tls --kubeconfig F``, and F."""
    path = tmp_path_factory.mktemp("tls") / "kubeconfig"
    server = Standalone("--tls", "--kubeconfig", str(path))
    try:
        assert server.url.startswith("https://")
        yield server, path
    finally:
        assert server.stop() == 0


def _kubectl(kubeconfig: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    return subprocess.run(
        ["kubectl", "--cache-dir", str(home / "cache"), *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def _foreign_ca(kubeconfig: Path, target: Path) -> Path:
    """The same kubeconfig trusting another CA."""
    document = yaml.safe_load(kubeconfig.read_text())
    other = trustme.CA().cert_pem.bytes()
    document["clusters"][0]["cluster"]["certificate-authority-data"] = base64.b64encode(
        other
    ).decode()
    target.write_text(yaml.safe_dump(document))
    return target


@pytest.mark.skipif(shutil.which("kubectl") is None, reason=NO_KUBECTL)
def test_kubectl_works_over_https_with_the_written_kubeconfig(
    tls_server: tuple[Standalone, Path], tmp_path: Path
) -> None:
    """kubectl with nothing but the written kubeconfig: ``get ns``, ``auth whoami`` and ``auth
    can-i`` over HTTPS with the server's certificate verified (a kubeconfig trusting another
    CA fails with Go's ``x509: certificate signed by unknown authority``). Over TLS client-go
    sends the user's credentials (``client_config.go`` reads them only for a TLS transport), so
    a token from ``kubectl create token`` is the service account and ``--as`` impersonates."""
    _, kubeconfig = tls_server
    listed = _kubectl(kubeconfig, "get", "ns", "-o", "name", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "namespace/kube-system" in listed.stdout.split()
    whoami = json.loads(_kubectl(kubeconfig, "auth", "whoami", "-o", "json", home=tmp_path).stdout)
    assert whoami["status"]["userInfo"]["username"] == "kubernetes-admin"
    assert _kubectl(kubeconfig, "auth", "can-i", "create", "pods", home=tmp_path).stdout == "yes\n"
    token = _kubectl(kubeconfig, "create", "token", "default", home=tmp_path).stdout.strip()
    robot = _kubectl(kubeconfig, "--token", token, "auth", "whoami", "-o", "json", home=tmp_path)
    assert json.loads(robot.stdout)["status"]["userInfo"]["username"] == (
        "system:serviceaccount:default:default"
    )
    alice = _kubectl(kubeconfig, "--as", "alice", "auth", "whoami", "-o", "json", home=tmp_path)
    assert json.loads(alice.stdout)["status"]["userInfo"]["username"] == "alice"
    foreign = _foreign_ca(kubeconfig, tmp_path / "foreign")
    refused = _kubectl(foreign, "get", "ns", home=tmp_path)
    assert refused.returncode != 0
    assert "x509: certificate signed by unknown authority" in refused.stderr


_CHECK = """\
import * as k8s from '@kubernetes/client-node';
const kc = new k8s.KubeConfig();
kc.loadFromFile(process.argv[2]);
const core = kc.makeApiClient(k8s.CoreV1Api);
const authn = kc.makeApiClient(k8s.AuthenticationV1Api);
const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
try {
  const namespaces = await core.listNamespace();
  const made = await core.createNamespacedConfigMap({
    namespace: 'default', body: { metadata: { name: 'from-node' }, data: { a: '1' } } });
  const whoami = await authn.createSelfSubjectReview({
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  const review = await authz.createSelfSubjectAccessReview({
    body: { spec: { resourceAttributes: {
      verb: 'create', resource: 'pods', namespace: 'default' } } } });
  process.stdout.write(JSON.stringify({
    namespaces: namespaces.items.map((n) => n.metadata.name).sort(),
    created: made.metadata.name,
    user: whoami.status.userInfo.username,
    allowed: review.status.allowed,
  }) + '\\n');
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String(err && (err.cause || err)) }) + '\\n');
}
"""


@pytest.fixture(scope="module")
def client_node(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with @kubernetes/client-node installed (``npm ci`` of the benchmarks' lock
    file) and the check script."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not on PATH (this test drives @kubernetes/client-node)")
    where = tmp_path_factory.mktemp("client-node")
    for name in ("package.json", "package-lock.json"):
        shutil.copy(JS / name, where / name)
    installed = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr
    (where / "check.mjs").write_text(_CHECK)
    return where


def _node(where: Path, kubeconfig: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "NODE_TLS_REJECT_UNAUTHORIZED"}
    done = subprocess.run(
        ["node", "check.mjs", str(kubeconfig)],
        cwd=where,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.slow
def test_client_node_works_over_https_with_the_written_kubeconfig(
    tls_server: tuple[Standalone, Path], client_node: Path, tmp_path: Path
) -> None:
    """@kubernetes/client-node (the version ``benchmarks/js`` pins) loads the written
    kubeconfig (``loadFromFile``; ``applyHTTPSOptions`` sets ``ca`` from
    ``certificate-authority-data`` and keeps ``rejectUnauthorized``), lists namespaces, creates a
    ConfigMap and asks ``whoami`` and ``can-i`` over verified HTTPS; trusting another CA, it
    fails (``self-signed certificate in certificate chain`` or ``unable to verify``)."""
    _, kubeconfig = tls_server
    answer = _node(client_node, kubeconfig)
    assert answer == {
        "namespaces": ["default", "kube-node-lease", "kube-public", "kube-system"],
        "created": "from-node",
        "user": "kubernetes-admin",
        "allowed": True,
    }
    refused = _node(client_node, _foreign_ca(kubeconfig, tmp_path / "foreign"))
    assert "error" in refused and "certificate" in refused["error"], refused


def test_tls_settings_never_mix_a_ca_and_the_insecure_flag() -> None:
    """client-go (``transport.TLSConfigFor``): ``specifying a root certificates file with the
    insecure flag is not allowed``: the kubeconfig of an HTTPS server never sets both, and the
    server context is a server's (it does not ask clients for certificates)."""
    server = FakeApiServer(tls=True, port=6443)
    cluster = server.kubeconfig()["clusters"][0]["cluster"]
    assert "insecure-skip-tls-verify" not in cluster
    assert cluster["server"] == "https://127.0.0.1:6443"
    context = server._listener.ssl_context
    assert context is not None and context.verify_mode == ssl.CERT_NONE
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
