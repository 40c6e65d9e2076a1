"""A TCP proxy a test can sever: one client's way to a server, cut and healed at will.

:meth:`Proxy.cut` drops every connection through it and holds new ones silent (a black hole:
the client's requests time out, as behind a network partition) until :meth:`Proxy.heal`. The
suite's sharding tests and ``make replicas-chaos`` put one in front of each replica.
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["Proxy"]


class Proxy:
    """Forwards ``127.0.0.1:<port>`` to ``127.0.0.1:<target_port>`` (``port`` is known once
    :meth:`start` returned)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.cut_off = False
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._held: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut_off:
            self._held.add(writer)
            with contextlib.suppress(Exception):
                while await reader.read(65536):
                    pass  # the black hole
            self._held.discard(writer)
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(sink)
            sink.transport.abort()

    def cut(self) -> None:
        """Drop every connection; hold new ones silent until :meth:`heal`."""
        self.cut_off = True
        for writer in list(self._writers):
            writer.transport.abort()

    def heal(self) -> None:
        """Forward again (the held connections are dropped)."""
        self.cut_off = False
        for writer in list(self._held):
            writer.transport.abort()

    async def close(self) -> None:
        """Drop everything and stop listening."""
        self.cut()
        self.heal()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
