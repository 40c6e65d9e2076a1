"""Serving web apps for real on 127.0.0.1 in tests (uvicorn and aiohttp), no polling needed.

Each helper binds and listens on a socket *before* the server starts, so a client can connect
at once: the kernel queues the connection until the server (after its startup) accepts it.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from aiohttp import web


def listening_socket() -> socket.socket:
    """A non-blocking TCP socket listening on a free port of 127.0.0.1."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def _url(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


@asynccontextmanager
async def serve_asgi(app: Any) -> AsyncIterator[str]:
    """Run an ASGI app (lifespan included) with uvicorn in this loop; yields its base URL."""
    sock = listening_socket()
    config = uvicorn.Config(
        app,
        lifespan="on",
        ws="none",
        http="h11",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(server.serve(sockets=[sock]), name="uvicorn")
            try:
                yield _url(sock)
            finally:
                server.should_exit = True
    finally:
        sock.close()


@asynccontextmanager
async def serve_aiohttp(app: web.Application) -> AsyncIterator[str]:
    """Run an aiohttp app (startup and cleanup included); yields its base URL."""
    sock = listening_socket()
    runner = web.AppRunner(app, shutdown_timeout=5.0, access_log=None)
    try:
        await runner.setup()
        try:
            await web.SockSite(runner, sock).start()
            yield _url(sock)
        finally:
            await runner.cleanup()
    finally:
        sock.close()
