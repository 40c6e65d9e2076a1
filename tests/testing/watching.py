"""Helpers for reading watch streams in tests (each read bounded, never sleeping)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import anyio
import orjson

#: Seconds a helper reads before the test fails (rather than hangs).
BOUND = 5.0


async def take(stream: AsyncIterator[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """The next ``n`` events of a kubernetes_asyncio watch stream."""
    events: list[dict[str, Any]] = []
    with anyio.fail_after(BOUND):
        async for event in stream:
            events.append(event)
            if len(events) == n:
                break
    return events


async def drain(stream: AsyncIterator[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every event until a kubernetes_asyncio watch stream ends."""
    with anyio.fail_after(BOUND):
        return [event async for event in stream]


async def raw_lines(response: aiohttp.ClientResponse, n: int | None = None) -> list[bytes]:
    """The next ``n`` lines of a raw watch response (all lines until EOF when None)."""
    lines: list[bytes] = []
    with anyio.fail_after(BOUND):
        while n is None or len(lines) < n:
            line = await response.content.readline()
            if not line:
                break
            lines.append(line)
    return lines


def decode(lines: list[bytes]) -> list[dict[str, Any]]:
    """Watch lines as events."""
    return [orjson.loads(line) for line in lines]


def summary(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(type, name)`` of each event (bookmarks have no name)."""
    out = []
    for event in events:
        obj = event.get("raw_object", event["object"])
        out.append((event["type"], obj.get("metadata", {}).get("name", "")))
    return out
