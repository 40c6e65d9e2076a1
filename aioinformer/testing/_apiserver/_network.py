"""The fake API server's listening socket and open connections.

One :class:`Listener` per server: it owns the aiohttp runner and site, binds the socket itself
(so the port picked at the first start is kept when listening resumes), and drops connections
abruptly for the faults that simulate a crashed or restarted server.
"""

from __future__ import annotations

import socket

from aiohttp import web

from ._boundary import LifecycleError

__all__ = ["Listener"]


class Listener:
    """Serves one aiohttp application on ``host``:``port`` (0: a free port, then kept).

    :param host: the address to listen on.
    :param port: the port; 0 picks a free one at the first :meth:`start_listening`.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None
        self._site: web.SockSite | None = None

    async def open(self, app: web.Application) -> None:
        """Prepare to serve ``app`` (not listening yet)."""
        self._runner = web.AppRunner(
            app, handler_cancellation=True, shutdown_timeout=2.0, access_log=None
        )
        await self._runner.setup()

    async def start_listening(self) -> None:
        """Accept connections (again, on the same port).

        :raises LifecycleError: when the server is not running.
        """
        if self._runner is None:
            raise LifecycleError("the server is not running")
        if self._site is not None:
            return
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
            sock.listen(128)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        site = web.SockSite(self._runner, sock)
        await site.start()
        self._site = site

    async def stop_listening(self) -> None:
        """Refuse new connections (ECONNREFUSED); open ones are left to the caller."""
        if self._site is not None:
            site, self._site = self._site, None
            await site.stop()

    def drop_connections(self, *, spare: object = None) -> None:
        """Abort every open connection but the one whose transport is ``spare``."""
        if self._runner is None or self._runner.server is None:
            return
        for connection in self._runner.server.connections:
            transport = connection.transport
            if transport is not None and transport is not spare:
                transport.abort()

    async def close(self) -> None:
        """Stop serving and close every connection (bounded by the runner's 2 s)."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            self._site = None
            await runner.cleanup()
