"""Safe defaults (issue 15): TLS verification is on unless the configuration turns it off, and
credentials and Secret data never reach the logs.

A tiny HTTPS API server of the test's own, with a self-signed certificate made by ``openssl``
for 127.0.0.1, serves Secrets (LIST and a WATCH that sends one event and stays open).
"""

from __future__ import annotations

import base64
import logging
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import orjson
import pytest
from aiohttp import web

import aioinformer
from aioinformer import ListOptions, Resource, SharedIndexInformer
from aioinformer.errors import TransportError
from aioinformer.lowlevel import KubeListerWatcher

from ._web import listening_socket

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")

SECRETS = Resource.parse("v1/secrets")
TOKEN = "tok-9f8e7d6c5b4a-never-logged"
PLAIN = "hunter2-never-logged"
DATA = base64.b64encode(PLAIN.encode()).decode()


def secret(name: str, rv: int) -> dict[str, object]:
    return {
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv)},
        "type": "Opaque",
        "data": {"password": DATA},
    }


@dataclass
class Tls:
    cert: Path
    key: Path


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    """A self-signed certificate for 127.0.0.1."""
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return Tls(cert, key)


@asynccontextmanager
async def https_api(tls: Tls, seen: list[str]) -> AsyncIterator[str]:
    """Serve Secrets over HTTPS on 127.0.0.1; yields the base URL. ``seen`` collects the
    Authorization headers received."""
    closing = anyio.Event()

    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append(request.headers.get("Authorization", ""))
        if request.query.get("watch") not in ("1", "true"):
            body = {"kind": "SecretList", "apiVersion": "v1",
                    "metadata": {"resourceVersion": "5"}, "items": [secret("db", 5)]}  # fmt: skip
            return web.Response(body=orjson.dumps(body), content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        event = {"type": "ADDED", "object": secret("api", 6)}
        await response.write(orjson.dumps(event) + b"\n")
        await closing.wait()
        return response

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/default/secrets", handle)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tls.cert, tls.key)
    sock = listening_socket()
    runner = web.AppRunner(app, shutdown_timeout=1.0, access_log=None)
    try:
        await runner.setup()
        try:
            await web.SockSite(runner, sock, ssl_context=context).start()
            yield f"https://127.0.0.1:{sock.getsockname()[1]}"
        finally:
            closing.set()
            await runner.cleanup()
    finally:
        sock.close()


async def test_tls_is_verified_by_default(tls: Tls, caplog: pytest.LogCaptureFixture) -> None:
    """A server whose certificate nobody vouches for is refused (a typed error naming the
    certificate problem); turning verification off is honoured with a WARNING saying so."""
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    async with https_api(tls, seen) as url:
        async with aioinformer.connect(server=url) as client:
            with pytest.raises(TransportError, match="certificate"):
                await KubeListerWatcher(client, SECRETS, namespace="default").list(ListOptions())
        assert seen == []  # nothing was sent to the unverified server
        assert not [r for r in caplog.records if "verification is OFF" in r.getMessage()]
        async with aioinformer.connect(server=url, insecure_skip_tls_verify=True) as client:
            listed = await KubeListerWatcher(client, SECRETS, namespace="default").list(
                ListOptions()
            )
        assert len(listed.items) == 1
    (warning,) = [r for r in caplog.records if "verification is OFF" in r.getMessage()]
    assert warning.levelno == logging.WARNING


async def test_a_secret_informer_at_debug_logs_no_token_and_no_secret_data(
    tls: Tls, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every log record (all loggers, DEBUG and up) of a Secret informer that lists, watches
    and stops, through a kubeconfig with a bearer token and the server's CA: the token and the
    Secrets' data (encoded or not) appear in none, and no record at INFO or above carries an
    object."""
    caplog.set_level(logging.DEBUG)
    kubeconfig = tmp_path / "config"
    seen: list[str] = []
    async with https_api(tls, seen) as url:
        kubeconfig.write_text(
            f"""
apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "{url}", certificate-authority: "{tls.cert}"}}}}]
users: [{{name: u, user: {{token: {TOKEN}}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u, namespace: default}}}}]
current-context: x
"""
        )
        async with aioinformer.connect(kubeconfig=str(kubeconfig)) as client:
            informer = SharedIndexInformer(
                KubeListerWatcher(client, SECRETS, namespace="default"), name="secrets"
            )
            async with informer:
                with anyio.fail_after(10):  # a fail-safe
                    async for event in informer.events():
                        if event.object["metadata"]["name"] == "api":
                            break
            assert len(informer.lister().list()) == 2
    assert seen and all(header == f"Bearer {TOKEN}" for header in seen)
    assert caplog.records
    for record in caplog.records:
        text = record.getMessage() + (record.exc_text or "")
        for leak in (TOKEN, PLAIN, DATA):
            assert leak not in text, (record.name, record.levelname, text)
        if record.levelno >= logging.INFO:
            assert '"kind": "Secret"' not in text and "'kind': 'Secret'" not in text
